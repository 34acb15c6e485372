"""The veto every content judge shares: a draft span that contradicts one of the
reference sentence's clinical key terms (:mod:`editf1.judges.key_terms`: a quantity,
frequency, direction, drug or test) or flips one of its negations or conditions
(:mod:`editf1.judges.clauses`), for the kinds a judge names, is never its match. It
reads the whole texts: no model, no window.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from editf1.judges.clauses import CLAUSE_CONFLICT_KINDS, clause_conflicts, clauses
from editf1.judges.key_terms import CONFLICT_KINDS, compare, extract

__all__ = ["veto_kinds", "vetoed"]


def veto_kinds(reference: str, span: str, veto: Sequence[str]) -> tuple[str, ...]:
    """The kinds of ``veto`` on which ``span`` contradicts ``reference``, in
    :data:`~editf1.judges.key_terms.CONFLICT_KINDS` order (empty: not ruled out).

    >>> veto_kinds("Take 20 mg daily.", "Take 40 mg daily.", ("quantity", "negation"))
    ('quantity',)
    >>> veto_kinds("Take 20 mg daily.", "Take 40 mg daily.", ("drug",))
    ()
    """
    found = set(compare(extract(reference), extract(span)).conflicts)
    if set(veto) & set(CLAUSE_CONFLICT_KINDS):
        found |= clause_conflicts(clauses(reference), clauses(span))
    return tuple(k for k in CONFLICT_KINDS if k in found and k in veto)


def vetoed(references: Sequence[str], spans: Sequence[str], veto: Sequence[str]) -> np.ndarray:
    """(R, C) booleans: True where span ``c`` contradicts reference sentence ``r`` on a
    kind of ``veto`` (all False for an empty ``veto``). Each text's terms and clauses are
    read once (both are cached per text)."""
    kinds = set(veto)
    out = np.zeros((len(references), len(spans)), dtype=bool)
    if not kinds or not len(spans):
        return out
    clause_veto = kinds & set(CLAUSE_CONFLICT_KINDS)  # clauses are read only then
    span_terms = [extract(s) for s in spans]
    span_clauses = [clauses(s) for s in spans] if clause_veto else []
    for i, reference in enumerate(references):
        terms = extract(reference)
        reference_clauses = clauses(reference) if clause_veto else None
        for j in range(len(spans)):
            found = set(compare(terms, span_terms[j]).conflicts) & kinds
            if not found and clause_veto:
                found = clause_conflicts(reference_clauses, span_clauses[j]) & clause_veto
            out[i, j] = bool(found)
    return out
