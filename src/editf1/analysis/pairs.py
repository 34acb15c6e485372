"""The pairs on which two runs of the same references differ most, with each system's
alignment (Algorithm 1 of Seegmiller et al., arXiv 2601.11344). These hold the pairs'
texts: for a page the user asked for, never for logs or error messages.
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
        f1: the pair's content edit-F1, in [0, 1]; ``counts``: ``(EM, EA, ED)``.
        reply: with several replies, the 0-based index of the best-matching one.
        matches: ``(reference sentence, draft span)`` per matched reference sentence.
        additions: ``(reference sentence, note)`` per unmatched one; the note is ``""``
            or ``"judge output unusable"``.
        deletions: the draft sentences left over.
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
    additions = tuple(
        (a.reference.text, "judge output unusable" if a.status == "unusable" else "")
        for a in pair.alignment
        if a.status != "match"
    )
    return PairAlignment(
        system=system,
        f1=pair.content.f1,
        counts=(pair.expected_matches, pair.expected_additions, pair.expected_deletions),
        reply=pair.best_reference,
        matches=tuple(
            (a.reference.text, a.match.text) for a in pair.alignment if a.status == "match"
        ),
        additions=additions,
        deletions=tuple(s.text for s in pair.expected_deletion_sentences),
    )


def differing_pairs(
    baseline: ScoredRun, system: ScoredRun, top: int = 10
) -> tuple[list[PairContrast], int]:
    """``(contrasts, differing)``: the ``top`` (an int >= 0) pairs whose content edit-F1
    differs most between two runs, largest ``|system F1 - baseline F1|`` first (ties in
    the baseline's order), and the number of pairs whose F1 differs.

    Raises:
        ValueError: for a bad ``top``, or runs not comparable pair by pair.
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
    # sorted is stable: ties stay in the baseline's order
    ranked = sorted(differing, key=lambda d: -abs(d[2].content.f1 - d[1].content.f1))
    contrasts = [
        PairContrast(key, alignment_of(baseline.name, ours), alignment_of(system.name, other))
        for key, ours, other in ranked[:top]
    ]
    return contrasts, len(differing)
