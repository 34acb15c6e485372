"""The pairs on which two systems differ most, with each system's alignment: why
system B beat system A, pair by pair (the per-pair view of ``edit-f1 report``).

Both runs must hold the same pairs scored against the same references
(:func:`editf1.analysis.compare.reference_mismatch`). A pair's alignment is read from
its :class:`~editf1.results.PairResult`, as ``edit-f1 score`` writes it per row: the
reference sentences the content judge matched (each with its draft span), the
reference sentences left unmatched (expected additions) and the draft sentences left
over (expected deletions), Algorithm 1 of Seegmiller et al. (arXiv 2601.11344).

These hold the texts of the pairs: they are for a page the user asked for, never for
logs or error messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from editf1.analysis.compare import ScoredRun, reference_mismatch
from editf1.results import PairResult

__all__ = ["PairAlignment", "PairContrast", "alignment_of", "differing_pairs"]


@dataclass(frozen=True)
class PairAlignment:
    """One system's alignment of one pair, as a reader sees it.

    Attributes:
        system: the run's name.
        f1: the pair's content edit-F1, a fraction in [0, 1].
        counts: ``(EM, EA, ED)``: expected matches, additions and deletions.
        reply: with several replies, the 0-based index of the one the draft was scored
            against (its best-matching); ``None`` with one reply.
        matches: ``(reference sentence, draft span)`` for each matched reference
            sentence, in reference order.
        additions: ``(reference sentence, note)`` for each reference sentence left
            unmatched, in reference order; the note is ``""``, or ``"judge output
            unusable"`` where the judge's answer could not be used.
        deletions: the draft sentences left over, in draft order.
    """

    system: str
    f1: float
    counts: tuple[int, int, int]
    reply: int | None
    matches: tuple[tuple[str, str], ...]
    additions: tuple[tuple[str, str], ...]
    deletions: tuple[str, ...]


@dataclass(frozen=True)
class PairContrast:
    """One pair under two systems: its key and each system's :class:`PairAlignment`."""

    key: str
    baseline: PairAlignment
    system: PairAlignment

    @property
    def difference(self) -> float:
        """``system.f1 - baseline.f1``, in [-1, 1]."""
        return self.system.f1 - self.baseline.f1


def alignment_of(system: str, pair: PairResult) -> PairAlignment:
    """The :class:`PairAlignment` of ``pair`` as scored for ``system`` (a run's name)."""
    matches, additions = [], []
    for a in pair.alignment:
        if a.status == "match":
            matches.append((a.reference.text, a.match.text))
        else:
            additions.append(
                (a.reference.text, "judge output unusable" if a.status == "unusable" else "")
            )
    return PairAlignment(
        system=system,
        f1=pair.content.f1,
        counts=(pair.expected_matches, pair.expected_additions, pair.expected_deletions),
        reply=pair.best_reference,
        matches=tuple(matches),
        additions=tuple(additions),
        deletions=tuple(s.text for s in pair.expected_deletion_sentences),
    )


def differing_pairs(
    baseline: ScoredRun, system: ScoredRun, top: int = 10
) -> tuple[list[PairContrast], int]:
    """The ``top`` pairs whose content edit-F1 differs most between two runs.

    Args:
        baseline, system: runs of the same pairs against the same references.
        top: how many to return (an int >= 0).

    Returns:
        ``(contrasts, differing)``: at most ``top`` :class:`PairContrast`, largest
        ``|system F1 - baseline F1|`` first (ties in the baseline's file order); pairs
        whose F1 is the same in both are left out; ``differing`` counts the pairs whose
        F1 differs.

    Raises:
        ValueError: for ``top`` that is not an int >= 0, or runs that cannot be compared
            pair by pair (the reason, :func:`~editf1.analysis.compare.reference_mismatch`).
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ValueError(f"top must be an int >= 0, got {top!r}")
    reason = reference_mismatch(baseline, system)
    if reason:
        raise ValueError(f"cannot contrast {baseline.name!r} with {system.name!r}: {reason}")
    theirs = dict(zip(system.keys, system.pairs))
    differing = [
        (key, ours, theirs[key])
        for key, ours in zip(baseline.keys, baseline.pairs)
        if theirs[key].content.f1 != ours.content.f1
    ]
    ranked = sorted(
        enumerate(differing),
        key=lambda item: (-abs(item[1][2].content.f1 - item[1][1].content.f1), item[0]),
    )
    contrasts = [
        PairContrast(key, alignment_of(baseline.name, ours), alignment_of(system.name, other))
        for _, (key, ours, other) in ranked[:top]
    ]
    return contrasts, len(differing)
