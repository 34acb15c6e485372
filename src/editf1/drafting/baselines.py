"""Drafting baselines (Seegmiller et al., arXiv 2601.11344, §4.1.2): a causal LM answers
each patient message with 0-shot, thematic or 5-shot retrieval-augmented prompting
(``edit-f1 draft``)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence

import numpy as np

from editf1.drafting.prompts import (
    DRAFT_PROMPT,
    STRATEGIES,
    few_shot_messages,
    thematic_messages,
    zero_shot_messages,
)

__all__ = ["draft_rows", "nearest_examples", "require_columns"]

_WORD = re.compile(r"[^\W_]")


def require_columns(rows: Sequence[dict], fields: Sequence[str], where: str = "") -> None:
    """Raise ``KeyError`` naming a missing column and (up to ten of) the rows without it."""
    for field in dict.fromkeys(fields):
        if lacking := [i for i, row in enumerate(rows) if field not in row]:
            raise KeyError(f"{where}column {field!r} is missing from row(s) {lacking[:10]}")


def nearest_examples(
    queries: Sequence[str], pool: Sequence[str], k: int = 5, encoder=None
) -> list[list[int]]:
    """For each of Q ``queries``, the indices of at most ``k`` >= 0 ``pool`` texts nearest
    to it by cosine similarity of the sentence encoder's embeddings (default: the
    package's), most similar first (ties: the earlier), one per distinct pool text, never
    a text equal to the query.

    Raises:
        ValueError: for k < 0.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if not queries or not pool or k == 0:
        return [[] for _ in queries]
    if encoder is None:
        from editf1.judges.encoder import default_encoder

        encoder = default_encoder()
    similarity = encoder.encode(list(queries)) @ encoder.encode(list(pool)).T
    nearest = []
    for q, query in enumerate(queries):
        first: dict[str, int] = {}  # each distinct pool text's nearest index
        for i in np.argsort(-similarity[q], kind="stable"):
            first.setdefault(pool[i], int(i))
        first.pop(query, None)
        nearest.append(list(first.values())[:k])
    return nearest


def draft_rows(
    rows: Sequence[dict],
    generator,
    strategy: str,
    *,
    examples: Sequence[dict] | None = None,
    shots: int = 5,
    num_drafts: int = 1,
    id_field: str = "id",
    message_field: str = "message",
    ehr_field: str = "ehr_summary",
    reference_field: str = "reference",
    encoder=None,
) -> list[dict]:
    """Draft a reply to every row's message; each distinct (message, EHR summary) is drafted
    once, and each input row gives its own rows (its id, reply and other columns kept).

    Args:
        rows: N dicts: message, optional EHR summary, clinician reply, optional id
            (default: the row number).
        generator: ``generate(conversations, num_return_sequences=K)``, K replies per
            conversation (:mod:`editf1.drafting.generators`).
        strategy: one of :data:`~editf1.drafting.prompts.STRATEGIES`.
        examples: the few-shot pool (default: ``rows``).
        shots: examples per prompt (few-shot), >= 0; the paper uses 5.
        num_drafts: K drafts per message, >= 1 (K > 1: the generator must sample).

    Returns:
        N·K dicts: ``id`` (``<id>-d<j>`` for K > 1), ``message_id``, ``message``,
        ``ehr_summary``, ``reference``, ``prediction``, ``strategy``, ``generator``
        (its fingerprint), ``prompt_version``, ``shots`` (pool indices), then the row's
        other columns (``input_<name>`` where the output has ``<name>``).

    Warns:
        UserWarning: naming the rows whose draft holds no word (kept).

    Raises:
        ValueError: a bad strategy, count or id, or an ``input_<name>`` column clash.
        KeyError: naming the first rows without a message or reply.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}, got {strategy!r}")
    if shots < 0 or num_drafts < 1:
        raise ValueError(f"need shots >= 0 and num_drafts >= 1, got {shots}, {num_drafts}")
    pool = rows if examples is None else examples
    for name, table in (("rows", rows), ("examples", pool)):
        require_columns(table, (message_field, reference_field), f"{name}: ")
    ids = [str(row.get(id_field, i)) for i, row in enumerate(rows)]
    if len(set(ids)) < len(ids):
        raise ValueError(f"column {id_field!r} repeats ids; each row needs its own")
    keys = [(row[message_field], row.get(ehr_field)) for row in rows]
    messages = list(dict.fromkeys(keys))  # each distinct message is drafted once
    chosen: list[list[int]] = [[] for _ in messages]
    if strategy == "few-shot":
        chosen = nearest_examples(
            [m for m, _ in messages], [row[message_field] for row in pool], shots, encoder
        )
        shot = [(e[message_field], e.get(ehr_field), e[reference_field]) for e in pool]
        prompts = [
            few_shot_messages(m, ehr, [shot[i] for i in near])
            for (m, ehr), near in zip(messages, chosen)
        ]
    else:
        build = zero_shot_messages if strategy == "zero-shot" else thematic_messages
        prompts = [build(message, ehr) for message, ehr in messages]
    drafts = dict(zip(messages, generator.generate(prompts, num_return_sequences=num_drafts)))
    empty = [i for i, key in zip(ids, keys) if any(not _WORD.search(d) for d in drafts[key])]
    if empty:
        warnings.warn(
            f"{len(empty)} of {len(ids)} row(s) got a draft without a word (ids "
            f"{empty[:10]}{' ...' if len(empty) > 10 else ''}): kept as empty drafts, "
            "which score precision 0",
            stacklevel=2,
        )
    shots_of = dict(zip(messages, chosen))
    used = {id_field, message_field, ehr_field, reference_field}
    out = []
    for row_id, key, row in zip(ids, keys, rows):
        for j, draft in enumerate(drafts[key]):
            drafted = {
                "id": row_id if num_drafts == 1 else f"{row_id}-d{j}",
                "message_id": row_id,
                "message": key[0],
                "ehr_summary": key[1],
                "reference": row[reference_field],
                "prediction": draft,
                "strategy": strategy,
                "generator": generator.fingerprint,
                "prompt_version": DRAFT_PROMPT,
                "shots": shots_of[key],
            }
            # the row's other columns, ``input_<name>`` where the output has ``<name>``
            if clash := [n for n in row if n not in used and n in drafted and f"input_{n}" in row]:
                raise ValueError(
                    f"column {clash[0]!r} would be kept as 'input_{clash[0]}', which the input "
                    "also has; rename one of them"
                )
            kept = {f"input_{n}" if n in drafted else n: v for n, v in row.items() if n not in used}
            out.append(drafted | kept)
    return out
