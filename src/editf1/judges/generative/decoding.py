"""Greedy constrained decoding of many short answers that share one prompt prefix.

All reference sentences of a pair share the draft, and all sentences given to the theme
judge share the instructions. :func:`decode_shared_prefix` runs the model over the
shared prefix once, repeats its key/value cache for every sentence (a batch of rows),
runs all the sentences' suffixes in one padded forward pass and then decodes every row
together, one token per step. :func:`decode_per_sentence` is the plain baseline: one
``model.generate`` call per sentence over its whole prompt. Both apply the same
:class:`~.constraints.ConstraintLogitsProcessor` and greedy choice, so they give the
same answers (up to floating-point rounding); the batched path exists for speed and is
the default, the baseline for benchmarks and as a reference.

Layout of a batch in :func:`decode_shared_prefix` (P prefix tokens, S = longest
suffix)::

    row r:  [ prefix (cached, shared) | pad ... pad  suffix_r | answer_r ... ]
    mask:   [ 1 ...                 1 | 0 ...   0  1 ...    1 | 1 ...        ]
    positions of suffix_r: P .. P + len(suffix_r) - 1, then the answer's follow on.

Padding is masked and positions are given explicitly, so every row sees exactly the
token sequence ``prefix + suffix_r + answer_r`` at the positions it would have alone.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import GenerationConfig

from editf1.judges.generative.constraints import ConstraintLogitsProcessor

__all__ = ["Answer", "decode_per_sentence", "decode_shared_prefix"]


@dataclass(frozen=True)
class Answer:
    """One decoded answer.

    Attributes:
        tokens: the answer's token ids, without the final EOS.
        finished: True if the answer ended with EOS within ``max_new_tokens``.
        probe: the first step's probability (after the constraint's mask, so
            renormalised over the allowed tokens) of the probe token, or ``None``.
        logprob: sum of the log-probabilities of the chosen tokens (EOS included),
            under the constrained distribution: the answer's log-probability.
    """

    tokens: tuple[int, ...]
    finished: bool
    probe: float | None
    logprob: float


class _Collector:
    """Collects greedy choices of a batch of rows, step by step."""

    def __init__(self, rows: int, eos_id: int, probes: Sequence[int | None]) -> None:
        self.tokens: list[list[int]] = [[] for _ in range(rows)]
        self.finished = [False] * rows
        self.logprob = [0.0] * rows
        self.probe: list[float | None] = [None] * rows
        self.probes = list(probes)
        self.eos_id = eos_id

    def step(self, scores: torch.Tensor, chosen: torch.Tensor, first: bool) -> None:
        logprobs = torch.log_softmax(scores.float(), dim=-1)
        for row, token in enumerate(chosen.tolist()):
            if self.finished[row]:
                continue
            if first and self.probes[row] is not None:
                self.probe[row] = float(logprobs[row, self.probes[row]].exp())
            self.logprob[row] += float(logprobs[row, token])
            if token == self.eos_id:
                self.finished[row] = True
            else:
                self.tokens[row].append(token)

    def answers(self) -> list[Answer]:
        return [
            Answer(tuple(t), f, p, lp)
            for t, f, p, lp in zip(self.tokens, self.finished, self.probe, self.logprob)
        ]


@torch.inference_mode()
def decode_shared_prefix(
    model,
    prefix: Sequence[int],
    suffixes: Sequence[Sequence[int]],
    constraints: Sequence,
    *,
    eos_id: int,
    pad_id: int,
    max_new_tokens: int,
    batch_size: int = 16,
    probes: Sequence[int | None] | None = None,
) -> list[Answer]:
    """Greedy answers for ``prefix + suffix`` of every suffix, computing the prefix once.

    Args:
        model: a causal LM that accepts a cache (``cache``, formerly
            ``past_key_values``), ``attention_mask`` and
            ``position_ids`` (every ``transformers`` decoder-only model does).
        prefix: P >= 1 token ids shared by all rows.
        suffixes: R lists of token ids (each >= 1 token).
        constraints: R constraints (``allowed(generated) -> token ids``) or ``None``.
        eos_id, pad_id: end-of-answer and padding token ids.
        max_new_tokens: longest answer, EOS included.
        batch_size: rows decoded together (the prefix cache is repeated this often).
        probes: R token ids whose first-step probability to report, or ``None``s.

    Returns:
        R :class:`Answer` objects, in order.
    """
    if not suffixes:
        return []
    probes = list(probes) if probes is not None else [None] * len(suffixes)
    device = model.device
    prefix_ids = torch.tensor([list(prefix)], device=device)
    argument = _cache_argument(model)
    shared = getattr(model(input_ids=prefix_ids, use_cache=True), argument)
    answers: list[Answer] = []
    for start in range(0, len(suffixes), batch_size):
        stop = start + batch_size
        cache = _repeat(shared, len(suffixes[start:stop]))
        answers += _decode_rows(
            model,
            cache,
            len(prefix),
            suffixes[start:stop],
            ConstraintLogitsProcessor(constraints[start:stop], 0, eos_id),
            _Collector(len(suffixes[start:stop]), eos_id, probes[start:stop]),
            pad_id=pad_id,
            max_new_tokens=max_new_tokens,
        )
    return answers


#: The name a model class gives its cache argument: ``cache`` since transformers 5.2x,
#: ``past_key_values`` before (filled in by :func:`_cache_argument`).
_CACHE_ARGUMENT: dict[type, str] = {}


def _cache_argument(model) -> str:
    name = _CACHE_ARGUMENT.get(type(model))
    if name is None:
        parameters = inspect.signature(model.forward).parameters
        name = "cache" if "cache" in parameters else "past_key_values"
        _CACHE_ARGUMENT[type(model)] = name
    return name


def _repeat(cache, rows: int):
    """A copy of a one-row cache, repeated for ``rows`` rows."""
    repeated = copy.deepcopy(cache)
    if rows > 1:
        repeated.batch_repeat_interleave(rows)
    return repeated


def _decode_rows(
    model, cache, prefix_length, suffixes, processor, collector, *, pad_id, max_new_tokens
):
    device = model.device
    rows, width = len(suffixes), max(map(len, suffixes))
    ids = torch.full((rows, width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((rows, prefix_length + width), dtype=torch.long, device=device)
    mask[:, :prefix_length] = 1
    positions = torch.full((rows, width), prefix_length, dtype=torch.long, device=device)
    for row, suffix in enumerate(suffixes):
        n = len(suffix)
        ids[row, width - n :] = torch.tensor(list(suffix), device=device)
        mask[row, prefix_length + width - n :] = 1
        positions[row, width - n :] = torch.arange(prefix_length, prefix_length + n)
    next_position = positions[:, -1] + 1
    argument = _cache_argument(model)
    logits = model(
        input_ids=ids, attention_mask=mask, position_ids=positions, **{argument: cache}
    ).logits[:, -1]
    answered = torch.zeros((rows, 0), dtype=torch.long, device=device)
    for step in range(max_new_tokens):
        scores = processor(answered, logits.float())
        chosen = scores.argmax(dim=-1)
        collector.step(scores, chosen, first=step == 0)
        if all(collector.finished):
            break
        answered = torch.cat([answered, chosen[:, None]], dim=1)
        mask = torch.cat([mask, mask.new_ones((rows, 1))], dim=1)
        logits = model(
            input_ids=chosen[:, None],
            attention_mask=mask,
            position_ids=next_position[:, None],
            **{argument: cache},
        ).logits[:, -1]
        next_position = next_position + 1
    return collector.answers()


@torch.inference_mode()
def decode_per_sentence(
    model,
    prefix: Sequence[int],
    suffixes: Sequence[Sequence[int]],
    constraints: Sequence,
    *,
    eos_id: int,
    pad_id: int,
    max_new_tokens: int,
    probes: Sequence[int | None] | None = None,
) -> list[Answer]:
    """The baseline: one ``model.generate`` call per sentence, same arguments and
    answers as :func:`decode_shared_prefix` (the prefix is recomputed every time)."""
    probes = list(probes) if probes is not None else [None] * len(suffixes)
    config = GenerationConfig(
        do_sample=False,
        num_beams=1,
        max_new_tokens=max_new_tokens,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        output_scores=True,
        return_dict_in_generate=True,
    )
    answers = []
    for suffix, constraint, probe in zip(suffixes, constraints, probes):
        prompt = torch.tensor([[*prefix, *suffix]], device=model.device)
        out = model.generate(
            input_ids=prompt,
            attention_mask=torch.ones_like(prompt),
            generation_config=config,
            logits_processor=[ConstraintLogitsProcessor([constraint], prompt.shape[1], eos_id)],
        )
        collector = _Collector(1, eos_id, [probe])
        for step, scores in enumerate(out.scores):
            collector.step(scores, out.sequences[:, prompt.shape[1] + step], first=step == 0)
        answers += collector.answers()
    return answers
