"""Decision scoring: a probability for every allowed answer (each ending in EOS), without
generating. An option's probability is the product over its tokens of the next-token
probability renormalised over the tokens that continue some option there (the options'
trie): the probabilities sum to 1, and it is the distribution constrained decoding draws from.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from editf1.judges.generative.decoding import _cache_argument, _left_padded, prefix_caches
from editf1.judges.progress import judged

__all__ = ["Item", "score_options", "score_options_one_at_a_time"]


@dataclass(frozen=True)
class Item:
    """One prompt, ``prefixes[prefix] + suffix``, and its ``options`` (token ids, distinct,
    none a prefix of another: end each with EOS).
    """

    prefix: int
    suffix: tuple[int, ...]
    options: tuple[tuple[int, ...], ...]


#: One factor of an option's probability: at ``position`` of step 3's ``row`` (``None``: after
#: the prompt), ``token``'s log-probability renormalised over ``allowed``.
_Read = namedtuple("_Read", "option row position allowed token")


def _children(options: Sequence[tuple[int, ...]]) -> dict[tuple[int, ...], set[int]]:
    """Every answer-so-far of the options' trie and the tokens that may follow it."""
    if not all(options) or len(set(options)) != len(options):
        raise ValueError("options must be non-empty and distinct")
    children: dict[tuple[int, ...], set[int]] = {}
    for option in options:
        for t in range(len(option)):
            children.setdefault(option[:t], set()).add(option[t])
    if any(option in children for option in options):
        raise ValueError("an option is a prefix of another (end every option with EOS)")
    return children


def _plan(options: Sequence[tuple[int, ...]]) -> tuple[list[tuple[int, ...]], list[_Read]]:
    """The rows step 3 runs (answers-so-far, none a prefix of another) and every read."""
    children = _children(options)
    branching = {node for node, tokens in children.items() if len(tokens) > 1}
    needed = {o[:t] for o in options for t in range(1, len(o)) if o[:t] in branching}
    rows: list[tuple[int, ...]] = []
    for answer in sorted(needed, key=len, reverse=True):
        if not any(row[: len(answer)] == answer for row in rows):
            rows.append(answer)
    where = {}
    for i, row in enumerate(rows):
        for t in range(1, len(row) + 1):
            where.setdefault(row[:t], (i, t - 1))
    reads = []
    for k, option in enumerate(options):
        for t in range(len(option)):
            node = option[:t]
            if node in branching:
                row, position = where[node] if t else (None, 0)
                reads.append(_Read(k, row, position, tuple(sorted(children[node])), option[t]))
    return rows, reads


#: Step 3's rows ``rows`` of item ``item``: one batch's share.
_Piece = namedtuple("_Piece", "item prefix suffix rows")


def _batches(items: Sequence[Item], plans, batch_size: int) -> list[list[_Piece]]:
    """Batches of at most ``batch_size`` step-3 rows (an item without rows counts as one)."""
    batches: list[list[_Piece]] = [[]]
    room = batch_size
    for k, (item, (rows, _)) in enumerate(zip(items, plans)):
        for start in range(0, max(1, len(rows)), batch_size):
            chunk = tuple(range(start, min(start + batch_size, len(rows))))
            if max(1, len(chunk)) > room:
                batches.append([])
                room = batch_size
            batches[-1].append(_Piece(k, item.prefix, item.suffix, chunk))
            room -= max(1, len(chunk))
    return [batch for batch in batches if batch]


def _log_renormalised(logits: torch.Tensor, read: _Read) -> float:
    allowed = logits[list(read.allowed)].float()
    return float(logits[read.token].float() - torch.logsumexp(allowed, dim=0))


@torch.inference_mode()
def score_options(
    model,
    prefixes: Sequence[Sequence[int]],
    items: Sequence[Item],
    *,
    pad_id: int,
    batch_size: int = 16,
) -> list[np.ndarray]:
    """Per item, a float64 array of its options' natural-log probabilities: (1) the distinct
    prefixes (>= 1 token) of a batch run once (:func:`.decoding.prefix_caches`), (2) the
    suffixes on their prefix's cache, (3) the answers-so-far where options part ways, one
    row per longest one, at most ``batch_size`` (>= 1) rows a batch.

    Raises:
        ValueError: for ``batch_size < 1``, an empty suffix, or bad options.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    for k, item in enumerate(items):
        if not item.suffix:
            raise ValueError(f"item {k} has an empty suffix")
    plans = [_plan(item.options) for item in items]
    out = [np.zeros(len(item.options)) for item in items]
    first_piece = set()
    batches = _batches(items, plans, batch_size)
    last_batch = {piece.item: b for b, batch in enumerate(batches) for piece in batch}
    for b, (batch, cache, prefix_mask) in enumerate(
        prefix_caches(model, prefixes, batches, pad_id)
    ):
        last, logits = _forward_batch(model, cache, prefix_mask, batch, plans, pad_id)
        for p, piece in enumerate(batch):
            rows = {row: i for i, row in enumerate(piece.rows)}
            for read in plans[piece.item][1]:
                if read.row is None and piece.item not in first_piece:
                    out[piece.item][read.option] += _log_renormalised(last[p], read)
                elif read.row in rows:
                    row = logits[p][rows[read.row], read.position]
                    out[piece.item][read.option] += _log_renormalised(row, read)
            first_piece.add(piece.item)
        judged(sum(last_batch[piece.item] == b for piece in batch))  # items completed
    return out


def _forward_batch(model, cache, prefix_mask, pieces: Sequence[_Piece], plans, pad_id: int):
    """Steps 2 and 3: last suffix logits ``[pieces, V]``, each piece's ``[rows, W, V]``."""
    device = model.device
    argument = _cache_argument(model)
    ids, suffix_mask, positions = _left_padded([p.suffix for p in pieces], pad_id, device)
    positions = positions + prefix_mask.sum(dim=1, keepdim=True)
    mask = torch.cat([prefix_mask, suffix_mask], dim=1)
    last = model(
        input_ids=ids, attention_mask=mask, position_ids=positions, **{argument: cache}
    ).logits[:, -1]
    answers = [plans[p.item][0][r] for p in pieces for r in p.rows]
    if not answers:
        return last, [None] * len(pieces)
    owner = torch.tensor([i for i, p in enumerate(pieces) for _ in p.rows], device=device)
    cache.batch_select_indices(owner)
    width = max(map(len, answers))
    inputs = torch.full((len(answers), width), pad_id, dtype=torch.long, device=device)
    seen = torch.zeros((len(answers), width), dtype=torch.long, device=device)
    for row, answer in enumerate(answers):
        inputs[row, : len(answer)] = torch.tensor(answer, device=device)
        seen[row, : len(answer)] = 1
    logits = model(
        input_ids=inputs,
        attention_mask=torch.cat([mask[owner], seen], dim=1),
        position_ids=positions[owner, -1:] + 1 + torch.arange(width, device=device),
        **{argument: cache},
    ).logits
    split = logits.split([len(p.rows) for p in pieces])
    return last, [part if len(part) else None for part in split]


@torch.inference_mode()
def score_options_one_at_a_time(
    model, prefixes: Sequence[Sequence[int]], items: Sequence[Item]
) -> list[np.ndarray]:
    """The baseline of :func:`score_options`: one uncached forward pass per option."""
    out = []
    for k, item in enumerate(items):
        if not item.suffix:
            raise ValueError(f"item {k} has an empty suffix")
        children = _children(item.options)
        prompt = [*prefixes[item.prefix], *item.suffix]
        values = []
        for option in item.options:
            ids = torch.tensor([[*prompt, *option]], device=model.device)
            logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1]
            total = 0.0
            for t, token in enumerate(option):
                allowed = children[option[:t]]
                if len(allowed) > 1:
                    read = _Read(0, None, 0, tuple(sorted(allowed)), token)
                    total += _log_renormalised(logits[t], read)
            values.append(total)
        out.append(np.array(values))
        judged(1)
    return out
