"""Greedy constrained decoding of many short answers whose prompts (a :class:`Row`: a shared
prefix, a draft or the theme instructions, plus its own suffix) share prefixes. Padding is
masked and positions given explicitly, so the shared-prefix path and the one-by-one baseline
give the same answers (up to rounding).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import GenerationConfig

from editf1.judges.generative.constraints import ConstraintLogitsProcessor
from editf1.judges.progress import judged

__all__ = ["Answer", "Row", "decode_per_sentence", "decode_shared_prefix", "prefix_caches"]


@dataclass(frozen=True)
class Answer:
    """One decoded answer: ``tokens`` (without EOS), ``finished`` (ended with EOS in time),
    and under the constraint ``probe`` (the probe token's, step 1) and ``logprob`` (with EOS)."""

    tokens: tuple[int, ...]
    finished: bool
    probe: float | None
    logprob: float


@dataclass(frozen=True)
class Row:
    """One prompt, ``prefixes[prefix] + suffix``, with its ``constraint`` (or ``None``),
    ``max_new_tokens`` (EOS included) and ``probe`` token.
    """

    prefix: int
    suffix: tuple[int, ...]
    constraint: object | None
    max_new_tokens: int
    probe: int | None = None


class _Collector:
    """Greedy choices of a batch of rows; a row stops at EOS or its ``max_new_tokens``."""

    def __init__(self, rows: Sequence[Row], eos_id: int) -> None:
        self.tokens: list[list[int]] = [[] for _ in rows]
        self.finished = [False] * len(rows)
        self.logprob = [0.0] * len(rows)
        self.probe: list[float | None] = [None] * len(rows)
        self.rows, self.steps, self.eos_id = rows, 0, eos_id

    def stopped(self, row: int) -> bool:
        return self.finished[row] or self.steps >= self.rows[row].max_new_tokens

    def step(self, scores: torch.Tensor, chosen: torch.Tensor, live: Sequence[int]) -> None:
        logprobs = torch.log_softmax(scores.float(), dim=-1)
        for i, (row, token) in enumerate(zip(live, chosen.tolist())):
            if self.stopped(row):
                continue
            if self.steps == 0 and self.rows[row].probe is not None:
                self.probe[row] = float(logprobs[i, self.rows[row].probe].exp())
            self.logprob[row] += float(logprobs[i, token])
            if token == self.eos_id:
                self.finished[row] = True
            else:
                self.tokens[row].append(token)
        self.steps += 1

    def answers(self) -> list[Answer]:
        return list(map(Answer, map(tuple, self.tokens), self.finished, self.probe, self.logprob))


@torch.inference_mode()
def decode_shared_prefix(
    model,
    prefixes: Sequence[Sequence[int]],
    rows: Sequence[Row],
    *,
    eos_id: int,
    pad_id: int,
    batch_size: int = 16,
) -> list[Answer]:
    """Greedy answers for ``rows``, in order, computing each prefix (>= 1 token) once per batch
    of ``batch_size`` rows (:func:`prefix_caches`); a batch may mix several drafts.
    """
    answers: list[Answer] = []
    batches = [rows[start : start + batch_size] for start in range(0, len(rows), batch_size)]
    for batch, cache, mask in prefix_caches(model, prefixes, batches, pad_id):
        answers += _decode_rows(model, cache, mask, batch, eos_id=eos_id, pad_id=pad_id)
        judged(len(batch))
    return answers


def prefix_caches(model, prefixes: Sequence[Sequence[int]], batches: Sequence[Sequence], pad_id):
    """Yield ``(batch, cache, mask)`` per batch of rows: its rows' prefixes' key/value cache
    (one row per batch row, the caller's to extend) and mask ``[rows, P]``, each computed once.
    """
    kept = None  # (prefixes, cache, mask) of the last batch, kept when the next needs them
    for k, batch in enumerate(batches):
        used = _prefixes_of(batch)
        if kept is not None and kept[0] == used:
            cache, mask = kept[1], kept[2]
        else:
            ids, mask, positions = _left_padded([prefixes[i] for i in used], pad_id, model.device)
            out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True)
            cache = getattr(out, _cache_argument(model))
        following = batches[k + 1] if k + 1 < len(batches) else ()
        kept = (used, copy.deepcopy(cache), mask) if _prefixes_of(following) == used else None
        index = torch.tensor([used.index(row.prefix) for row in batch], device=model.device)
        if len(batch) > 1:
            cache.batch_select_indices(index)
        yield batch, cache, mask[index]


def _cache_argument(model) -> str:
    """A model's cache argument: ``cache`` (recent transformers) or ``past_key_values``."""
    parameters = inspect.signature(model.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


def _left_padded(sequences: Sequence[Sequence[int]], pad_id: int, device):
    """``(ids, mask, positions)``, ``[len(sequences), longest]``, left-padded."""
    width = max(map(len, sequences))
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((len(sequences), width), dtype=torch.long, device=device)
    for row, tokens in enumerate(sequences):
        if tokens:
            ids[row, width - len(tokens) :] = torch.tensor(list(tokens), device=device)
            mask[row, width - len(tokens) :] = 1
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    return ids, mask, positions


def _prefixes_of(batch: Sequence[Row]) -> tuple[int, ...]:
    """The distinct prefixes of a batch's rows, in order of first use."""
    return tuple(dict.fromkeys(row.prefix for row in batch))


def _decode_rows(model, cache, prefix_mask, rows: Sequence[Row], *, eos_id, pad_id):
    device = model.device
    inputs, suffix_mask, positions = _left_padded([row.suffix for row in rows], pad_id, device)
    positions = positions + prefix_mask.sum(dim=1, keepdim=True)
    mask = torch.cat([prefix_mask, suffix_mask], dim=1)
    argument = _cache_argument(model)
    collector = _Collector(rows, eos_id)
    live = list(range(len(rows)))  # rows still decoding, in the cache's order
    processor = ConstraintLogitsProcessor([row.constraint for row in rows], 0, eos_id)
    answered = torch.zeros((len(rows), 0), dtype=torch.long, device=device)
    while True:
        out = model(
            input_ids=inputs, attention_mask=mask, position_ids=positions, **{argument: cache}
        )
        scores = processor(answered, out.logits[:, -1].float())
        chosen = scores.argmax(dim=-1)
        collector.step(scores, chosen, live)
        keep = [i for i, row in enumerate(live) if not collector.stopped(row)]
        if not keep:
            return collector.answers()
        if len(live) - len(keep) >= max(1, len(live) // 4):
            # drop finished rows (and their cache) once a quarter are done
            index = torch.tensor(keep, device=device)
            cache.batch_select_indices(index)
            live = [live[i] for i in keep]
            chosen, answered, mask, positions = (
                t[index] for t in (chosen, answered, mask, positions)
            )
            processor = ConstraintLogitsProcessor([rows[r].constraint for r in live], 0, eos_id)
        answered = torch.cat([answered, chosen[:, None]], dim=1)
        mask = torch.cat([mask, mask.new_ones((len(live), 1))], dim=1)
        inputs, positions = chosen[:, None], positions[:, -1:] + 1


@torch.inference_mode()
def decode_per_sentence(
    model, prefixes: Sequence[Sequence[int]], rows: Sequence[Row], *, eos_id: int, pad_id: int
) -> list[Answer]:
    """The baseline: one ``model.generate`` per row (the prefix recomputed each time)."""
    answers = []
    for row in rows:
        config = GenerationConfig(
            do_sample=False,
            num_beams=1,
            max_new_tokens=row.max_new_tokens,
            eos_token_id=eos_id,
            pad_token_id=pad_id,
            output_scores=True,
            return_dict_in_generate=True,
        )
        prompt = torch.tensor([[*prefixes[row.prefix], *row.suffix]], device=model.device)
        out = model.generate(
            input_ids=prompt,
            attention_mask=torch.ones_like(prompt),
            generation_config=config,
            logits_processor=[ConstraintLogitsProcessor([row.constraint], prompt.shape[1], eos_id)],
        )
        collector = _Collector([row], eos_id)
        for step, scores in enumerate(out.scores):
            collector.step(scores, out.sequences[:, prompt.shape[1] + step], [0])
        answers += collector.answers()
        judged(1)
    return answers
