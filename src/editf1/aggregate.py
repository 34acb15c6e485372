"""Precision, recall and F1 from counts: step 4 of the pipeline.

Pure functions over plain counts. Corpus scores are micro-averaged: the counts of all
pairs are summed first, then divided (Seegmiller et al., arXiv 2601.11344, §3.1).

Undefined ratios (Notes)
------------------------
* ``tp + fp + fn == 0``: nothing was expected and nothing was given, so precision,
  recall and F1 are all 1.0 (e.g. a theme that neither the reply nor the draft has).
* otherwise a ratio whose denominator is 0 (precision of an empty draft against a
  non-empty reply) takes the value of ``zero_division``; with ``"warn"`` (default) that
  value is 0.0 and the scorer issues one :class:`UndefinedMetricWarning` naming the rows.
* F1 is 0.0 when precision + recall is 0.
* Per-theme corpus scores (:class:`CorpusAccumulator`) follow the same rules without a
  warning: each comes with the counts of replies and drafts containing the theme, which
  show when a ratio was undefined.

No score is ever NaN.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np

from editf1.results import PRF, CorpusResult, PairResult, ThemeScore

__all__ = [
    "CorpusAccumulator",
    "UndefinedMetricWarning",
    "ZeroDivision",
    "check_zero_division",
    "micro_prf",
    "pair_counts",
    "prf",
    "warn_undefined",
]

ZeroDivision = Literal["warn"] | float


class UndefinedMetricWarning(UserWarning):
    """A ratio had a zero denominator; see the ``zero_division`` parameter to silence it."""


def check_zero_division(zero_division: ZeroDivision) -> ZeroDivision:
    """Return ``zero_division`` if it is ``"warn"``, 0.0 or 1.0.

    Raises:
        ValueError: for any other value.
    """
    if zero_division == "warn" or (
        not isinstance(zero_division, (bool, str)) and zero_division in (0, 1)
    ):
        return zero_division
    raise ValueError(f"zero_division must be 'warn', 0.0 or 1.0, got {zero_division!r}")


def prf(tp: int, fp: int, fn: int, zero_division: ZeroDivision = "warn") -> PRF:
    """Precision tp/(tp+fp), recall tp/(tp+fn) and their harmonic mean.

    Pure: it never warns. Callers that use ``zero_division="warn"`` pass the result to
    :func:`warn_undefined`, which issues one warning for many rows.

    Args:
        tp, fp, fn: non-negative counts. For content edit-F1, tp = expected matches,
            fp = expected deletions, fn = expected additions (Algorithm 1).
        zero_division: ``"warn"`` (acts as 0.0), 0.0 or 1.0; see the module Notes.

    Returns:
        A :class:`PRF` of fractions in [0, 1], never NaN.

    >>> prf(2, 1, 1).f1
    0.6666666666666666
    >>> prf(0, 0, 0)
    PRF(precision=1.0, recall=1.0, f1=1.0, undefined=())
    >>> prf(0, 0, 3)
    PRF(precision=0.0, recall=0.0, f1=0.0, undefined=('precision',))
    """
    if tp + fp + fn == 0:
        return PRF(1.0, 1.0, 1.0)
    fill = 0.0 if zero_division == "warn" else float(zero_division)
    precision = tp / (tp + fp) if tp + fp else fill
    recall = tp / (tp + fn) if tp + fn else fill
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    undefined = tuple(
        name for name, den in (("precision", tp + fp), ("recall", tp + fn)) if not den
    )
    return PRF(precision, recall, f1, undefined)


def pair_counts(pairs: Sequence[PairResult], level: Literal["content", "theme"]) -> np.ndarray:
    """The (tp, fp, fn) of every pair, for re-aggregating subsets (e.g. bootstrap resamples).

    Args:
        pairs: N scored pairs; for ``level="theme"`` each must have theme scores.
        level: ``"content"`` (EM, ED, EA; Algorithm 1) or ``"theme"`` (§3.2).

    Returns:
        An (N, 3) int array.

    Raises:
        ValueError: for an unknown level, or theme counts of a pair scored without themes.
    """
    if level == "content":
        rows = [p.content_counts for p in pairs]
    elif level == "theme":
        if any(p.theme_counts is None for p in pairs):
            raise ValueError("theme counts need pairs scored with a theme judge")
        rows = [p.theme_counts.as_tuple() for p in pairs]
    else:
        raise ValueError(f"level must be 'content' or 'theme', got {level!r}")
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), 3)


def micro_prf(counts: np.ndarray, zero_division: ZeroDivision = 0.0) -> PRF:
    """Micro-averaged precision, recall and F1 of the pairs whose counts are the rows of
    ``counts``: the counts are summed first, then divided (§3.1).

    Args:
        counts: a (N, 3) array of (tp, fp, fn), e.g. ``pair_counts(pairs, "content")[idx]``.
        zero_division: as for :func:`prf` (default 0.0: resampling code does not warn).

    >>> round(micro_prf(np.array([[1, 0, 1], [1, 2, 0]])).f1, 4)  # P 2/4, R 2/3
    0.5714
    """
    tp, fp, fn = (int(c) for c in np.asarray(counts).reshape(-1, 3).sum(axis=0))
    return prf(tp, fp, fn, zero_division)


def warn_undefined(what: str, rows: list, zero_division: ZeroDivision) -> None:
    """Issue one :class:`UndefinedMetricWarning` for ``rows`` if ``zero_division="warn"``.

    Args:
        what: the score and its cause, e.g. ``"precision (empty prediction)"``.
        rows: the row indices (or other labels) concerned; nothing happens if empty.
        zero_division: the policy in force.
    """
    if not rows or zero_division != "warn":
        return
    shown = ", ".join(map(str, rows[:10])) + (", ..." if len(rows) > 10 else "")
    warnings.warn(
        f"{what} is undefined (zero denominator) for {len(rows)} row(s) [{shown}] and set "
        "to 0.0; pass zero_division=0.0 or 1.0 to choose the value and silence this warning",
        UndefinedMetricWarning,
        stacklevel=3,
    )


class CorpusAccumulator:
    """Sums the counts of streamed :class:`~editf1.results.PairResult` objects.

    Memory does not grow with the number of pairs unless ``keep_pairs`` is True.

    Args:
        themes_scored: themes counted in the theme scores (8 clinical, or 9 with Other).
        zero_division: policy for undefined corpus ratios; see the module Notes.
        keep_pairs: keep every pair for :attr:`CorpusResult.pairs`.
    """

    def __init__(self, themes_scored, zero_division: ZeroDivision = "warn", keep_pairs=True):
        self.themes_scored = tuple(themes_scored)
        self.zero_division = zero_division
        self.pairs = [] if keep_pairs else None
        self.n_pairs = 0
        self.em = self.ea = self.ed = 0
        self.unusable = self.unusable_theme = 0
        self.has_themes = False
        zeros = dict.fromkeys(self.themes_scored, 0)
        self.theme_tp, self.theme_fp, self.theme_fn = dict(zeros), dict(zeros), dict(zeros)
        self.ref_count, self.pred_count = dict(zeros), dict(zeros)
        self.ref_sentences, self.ref_matched = dict(zeros), dict(zeros)

    def add(self, pair) -> None:
        """Add one pair's counts (and the pair itself if ``keep_pairs``)."""
        self.n_pairs += 1
        self.em += pair.expected_matches
        self.ea += pair.expected_additions
        self.ed += pair.expected_deletions
        self.unusable += pair.unusable_judgements
        self.unusable_theme += pair.unusable_theme_judgements
        if self.pairs is not None:
            self.pairs.append(pair)
        if pair.theme is None:
            return
        self.has_themes = True
        for theme in self.themes_scored:
            in_ref, in_pred = theme in pair.reference_themes, theme in pair.prediction_themes
            self.theme_tp[theme] += in_ref and in_pred
            self.theme_fp[theme] += in_pred and not in_ref
            self.theme_fn[theme] += in_ref and not in_pred
            self.ref_count[theme] += in_ref
            self.pred_count[theme] += in_pred
        for sentence in pair.alignment:
            if sentence.theme in self.ref_sentences:
                self.ref_sentences[sentence.theme] += 1
                self.ref_matched[sentence.theme] += sentence.status == "match"

    def result(self, reproducibility: str, *, warn: bool = True):
        """The :class:`~editf1.results.CorpusResult` of everything added so far.

        ``warn=False`` skips the corpus-level :class:`UndefinedMetricWarning` (for a
        caller that already warned about the rows that caused it).
        """
        if not self.n_pairs:
            raise ValueError("no pairs to score: predictions and references are empty")
        content = prf(self.em, self.ed, self.ea, self.zero_division)
        if content.undefined and warn:
            warn_undefined("corpus " + " and ".join(content.undefined), ["all"], self.zero_division)
        theme, per_theme = None, {}
        if self.has_themes:
            tp, fp, fn = (sum(d.values()) for d in (self.theme_tp, self.theme_fp, self.theme_fn))
            theme = prf(tp, fp, fn, self.zero_division)
            for t in self.themes_scored:
                scores = prf(
                    self.theme_tp[t], self.theme_fp[t], self.theme_fn[t], self.zero_division
                )
                matched, total = self.ref_matched[t], self.ref_sentences[t]
                per_theme[t] = ThemeScore(
                    precision=scores.precision,
                    recall=scores.recall,
                    f1=scores.f1,
                    reference_count=self.ref_count[t],
                    prediction_count=self.pred_count[t],
                    reference_proportion=self.ref_count[t] / self.n_pairs,
                    prediction_proportion=self.pred_count[t] / self.n_pairs,
                    reference_sentences=total,
                    content_recall=prf(matched, 0, total - matched).recall,
                )
        return CorpusResult(
            n_pairs=self.n_pairs,
            content=content,
            expected_matches=self.em,
            expected_additions=self.ea,
            expected_deletions=self.ed,
            theme=theme,
            per_theme=per_theme,
            unusable_judgements=self.unusable,
            unusable_theme_judgements=self.unusable_theme,
            themes_scored=self.themes_scored if self.has_themes else (),
            reproducibility=reproducibility,
            pairs=self.pairs,
        )
