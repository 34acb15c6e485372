"""The veto every content judge shares: a draft span that contradicts the reference
sentence's key terms (:mod:`editf1.judges.key_terms`) or clauses
(:mod:`editf1.judges.clauses`), on a kind the judge names, is never its match.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from editf1.judges.base import ContentJudgement, VetoedSpan
from editf1.judges.clauses import CLAUSE_CONFLICT_KINDS, clause_conflicts, clauses
from editf1.judges.key_terms import CONFLICT_KINDS, compare, extract
from editf1.segment import Sentence

__all__ = ["decide", "veto_kinds", "vetoed"]

#: float32 rounding of a probability: a tie within it goes to the earliest span.
_TIE = 1e-6


def veto_kinds(reference: str, span: str, veto: Sequence[str]) -> tuple[str, ...]:
    """The kinds of ``veto`` on which ``span`` contradicts ``reference``, in
    :data:`~editf1.judges.key_terms.CONFLICT_KINDS` order (empty: not ruled out).

    >>> veto_kinds("Take 20 mg daily.", "Take 40 mg daily.", ("quantity", "negation"))
    ('quantity',)
    """
    found = set(compare(extract(reference), extract(span)))
    if set(veto) & set(CLAUSE_CONFLICT_KINDS):
        found |= clause_conflicts(clauses(reference), clauses(span))
    return tuple(k for k in CONFLICT_KINDS if k in found and k in veto)


def vetoed(references: Sequence[str], spans: Sequence[str], veto: Sequence[str]) -> np.ndarray:
    """(R, C) booleans: :func:`veto_kinds` of each reference sentence and span is not empty."""
    rows = [[bool(veto and veto_kinds(r, s, veto)) for s in spans] for r in references]
    return np.array(rows, dtype=bool).reshape(len(references), len(spans))


def _best(row: np.ndarray) -> int:
    return int(np.flatnonzero(row >= row.max() - _TIE)[0])


def decide(
    reference: str,
    spans: Sequence[Sentence],
    probability: np.ndarray,
    unvetoed: np.ndarray,
    threshold: float,
    veto: Sequence[str],
) -> ContentJudgement:
    """One reference sentence's judgement from its (C,) span ``probability`` (0 where
    vetoed) and ``unvetoed``: the most probable span (ties within 1e-6: the earliest)
    matches if it reaches ``threshold``; a NO MATCH names the span the veto ruled out that
    would have matched. ``score`` is the best probability (0.0 without spans).

    >>> span = Sentence("Take 40 mg.", 0, 11)
    >>> decide("Take 20 mg.", [span], np.zeros(1), np.ones(1), 0.5, ("quantity",)).vetoed.kinds
    ('quantity',)
    """
    if not len(probability):
        return ContentJudgement("no_match", None, 0.0)
    best = _best(probability)
    p = float(np.clip(probability[best], 0.0, 1.0))
    if p >= threshold:
        return ContentJudgement("match", spans[best], p)
    top = _best(unvetoed)
    ruled_out = None
    if unvetoed[top] >= threshold and probability[top] < unvetoed[top]:
        kinds = veto_kinds(reference, spans[top].text, veto)
        ruled_out = VetoedSpan(spans[top], kinds, float(min(unvetoed[top], 1.0)))
    return ContentJudgement("no_match", None, p, vetoed=ruled_out)
