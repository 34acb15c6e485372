"""Step 4 of the pipeline: judged pairs → corpus scores, in one public step.

:func:`aggregate` turns judged pairs (:class:`~editf1.results.PairResult`) into the
:class:`~editf1.results.CorpusResult` and its warnings; the scorer, the distributed path
and the training reward all aggregate through it. It is built on
:class:`CorpusAccumulator`, whose ``add`` / ``merge`` / ``result`` are the update /
merge / compute of torchmetrics: processes that judged shares of a corpus each add their
pairs, the accumulators (counts, not pairs) are merged, and the main process alone calls
``result`` with ``warn=True``, so each warning is issued once and names the rows by their
numbers in the whole input.

Aggregation only sums: a pair's content counts come from :func:`editf1.count.count_content`
and its theme counts from :func:`editf1.count.count_themes`, stored in the pair. Corpus
scores are micro-averaged: the counts of all pairs are summed first, then divided
(Seegmiller et al., arXiv 2601.11344, §3.1).

Undefined ratios (Notes)
------------------------
* ``tp + fp + fn == 0``: nothing was expected and nothing was given, so precision,
  recall and F1 are all 1.0 (e.g. a theme that neither the reply nor the draft has).
* otherwise a ratio whose denominator is 0 (precision of an empty draft against a
  non-empty reply) takes the value of ``zero_division``; with ``"warn"`` (default) that
  value is 0.0 and :func:`aggregate` issues one :class:`UndefinedMetricWarning` naming
  the rows.
* F1 is 0.0 when precision + recall is 0.
* Per-theme corpus scores follow the same rules without a warning: each comes with the
  counts of replies and drafts containing the theme, which show when a ratio was
  undefined.

No score is ever NaN.
"""

from __future__ import annotations

import bisect
import dataclasses
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import numpy as np

from editf1.options import ZeroDivision, check_zero_division
from editf1.results import PRF, CorpusResult, PairResult, ThemeScore
from editf1.segment import NON_LATIN_LIMIT, non_latin_share

__all__ = [
    "CorpusAccumulator",
    "NonLatinTextWarning",
    "RowsWarning",
    "UndefinedMetricWarning",
    "UnusableJudgementWarning",
    "ZeroDivision",
    "aggregate",
    "check_zero_division",
    "micro_prf",
    "pair_counts",
    "prf",
    "warn_undefined",
]


class RowsWarning(UserWarning):
    """A warning about some rows of a corpus, which it names by number (from 0):
    ``[0, 3, ...]``. A shell that knows the rows by other names (``edit-f1``: file and
    line) rewrites it with :meth:`naming`.

    Args:
        template: the message, with ``{rows}`` where the rows go and further
            ``{fields}`` filled from ``words``.
        rows: the first rows named (at most :data:`SHOWN_ROWS`), numbers or labels.
        count: how many rows in all.
        words: the default value of each further field of ``template``.
    """

    def __init__(self, template: str, rows: Sequence = (), count: int = 0, **words: str) -> None:
        self.template, self.rows, self.count, self.words = template, list(rows), count, words
        super().__init__(self.naming())

    def naming(self, rows_text: Callable[[list, int], str] | None = None, **words: str) -> str:
        """The message, the rows named by ``rows_text(rows, count)`` (default
        ``[0, 3, ...]``: ``...`` when ``count`` is more than the rows named) and the
        template's other fields by ``words`` where given.

        >>> RowsWarning("{rows} ({n})", [0, 3], 12, n="twelve").naming(n="12")
        '[0, 3, ...] (12)'
        """
        named = (rows_text or _numbered)(self.rows, self.count)
        return self.template.format(rows=named, **{**self.words, **words})


def _numbered(rows: list, count: int) -> str:
    return f"[{', '.join(map(str, rows))}{', ...' if count > len(rows) else ''}]"


class UndefinedMetricWarning(RowsWarning):
    """A ratio had a zero denominator; see the ``zero_division`` parameter to silence it."""


class UnusableJudgementWarning(RowsWarning):
    """A judge produced output that could not be used; see ``unusable_judgements``."""


class NonLatinTextWarning(RowsWarning):
    """Rows whose draft or reply has more than :data:`editf1.segment.NON_LATIN_LIMIT` of
    its letters outside Latin script (:func:`editf1.segment.non_latin_share`); the judges
    were fitted and checked on English replies."""


def prf(tp: int, fp: int, fn: int, zero_division: ZeroDivision = "warn") -> PRF:
    """Precision tp/(tp+fp), recall tp/(tp+fn) and their harmonic mean.

    Pure: it never warns (:func:`aggregate` issues one warning for many rows).

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


def warn_undefined(what: str, rows: Sequence, zero_division: ZeroDivision, n_rows=None) -> None:
    """Issue one :class:`UndefinedMetricWarning` for ``rows`` if ``zero_division="warn"``.

    Args:
        what: the score and its cause, e.g. ``"precision (empty prediction)"``.
        rows: the row numbers (or other labels) concerned, or the first of them;
            nothing happens if empty.
        zero_division: the policy in force.
        n_rows: how many rows there are in all (default ``len(rows)``).
    """
    if not rows or zero_division != "warn":
        return
    n_rows = len(rows) if n_rows is None else n_rows
    what = what.replace("{", "{{").replace("}", "}}")
    template = (
        f"{what} is undefined (zero denominator) for {n_rows} row(s) {{rows}} and set to 0.0; "
        "pass {zero_division} to choose the value and silence this warning"
    )
    choose = "zero_division=0.0 or 1.0"
    warning = UndefinedMetricWarning(template, rows[:SHOWN_ROWS], n_rows, zero_division=choose)
    warnings.warn(warning, stacklevel=4)


#: Rows a warning names; it counts the others.
SHOWN_ROWS = 10


class _Rows:
    """The rows of one warning: how many, and the first :data:`SHOWN_ROWS` row numbers."""

    def __init__(self) -> None:
        self.count, self.first = 0, []

    def add(self, row) -> None:
        self.count += 1
        bisect.insort(self.first, row)
        del self.first[SHOWN_ROWS:]

    def merge(self, other: _Rows) -> None:
        self.count += other.count
        self.first = sorted(self.first + other.first)[:SHOWN_ROWS]


class _Counts:
    """Summed counts of pairs: content (EM, EA, ED), themes, unusable judgements."""

    def __init__(self, themes_scored: tuple[str, ...]) -> None:
        self.themes_scored = themes_scored
        self.n_pairs = self.empty_predictions = 0
        self.em = self.ea = self.ed = 0
        self.unusable = self.unusable_theme = 0
        self.has_themes = False
        self.theme_tp = self.theme_fp = self.theme_fn = 0
        # per theme: replies and drafts containing it, both, its reply sentences, matched
        self.reference_count, self.prediction_count = Counter(), Counter()
        self.both_count = Counter()
        self.reference_sentences, self.matched_sentences = Counter(), Counter()

    def add(self, pair: PairResult) -> None:
        self.n_pairs += 1
        self.empty_predictions += not pair.prediction_sentences
        self.em += pair.expected_matches
        self.ea += pair.expected_additions
        self.ed += pair.expected_deletions
        self.unusable += pair.unusable_judgements
        self.unusable_theme += pair.unusable_theme_judgements
        counts = pair.theme_counts
        if counts is None:
            return
        self.has_themes = True
        self.theme_tp += counts.true_positives
        self.theme_fp += counts.false_positives
        self.theme_fn += counts.false_negatives
        self.reference_count.update(counts.reference_themes)
        self.prediction_count.update(counts.prediction_themes)
        self.both_count.update(counts.reference_themes & counts.prediction_themes)
        self.reference_sentences.update(counts.reference_sentences)
        self.matched_sentences.update(counts.matched_sentences)

    def merge(self, other: _Counts) -> None:
        for name, value in vars(other).items():
            if name == "has_themes":
                self.has_themes |= value
            elif name != "themes_scored":
                setattr(self, name, getattr(self, name) + value)

    def result(self, provenance: dict, zero_division: ZeroDivision, pairs) -> CorpusResult:
        if not self.n_pairs:
            raise ValueError("no pairs to score: predictions and references are empty")
        theme, per_theme = None, {}
        if self.has_themes:
            theme = prf(self.theme_tp, self.theme_fp, self.theme_fn, zero_division)
            per_theme = {t: self._theme_score(t, zero_division) for t in self.themes_scored}
        return CorpusResult(
            n_pairs=self.n_pairs,
            content=prf(self.em, self.ed, self.ea, zero_division),
            expected_matches=self.em,
            expected_additions=self.ea,
            expected_deletions=self.ed,
            theme=theme,
            per_theme=per_theme,
            unusable_judgements=self.unusable,
            unusable_theme_judgements=self.unusable_theme,
            themes_scored=self.themes_scored if self.has_themes else (),
            provenance=provenance,
            pairs=pairs,
            empty_predictions=self.empty_predictions,
        )

    def _theme_score(self, theme: str, zero_division: ZeroDivision) -> ThemeScore:
        both, in_reference = self.both_count[theme], self.reference_count[theme]
        in_prediction = self.prediction_count[theme]
        scores = prf(both, in_prediction - both, in_reference - both, zero_division)
        total, matched = self.reference_sentences[theme], self.matched_sentences[theme]
        return ThemeScore(
            precision=scores.precision,
            recall=scores.recall,
            f1=scores.f1,
            reference_count=in_reference,
            prediction_count=in_prediction,
            reference_proportion=in_reference / self.n_pairs,
            prediction_proportion=in_prediction / self.n_pairs,
            reference_sentences=total,
            content_recall=prf(matched, 0, total - matched).recall,
        )


class CorpusAccumulator:
    """Sums streamed :class:`~editf1.results.PairResult` objects into a corpus result:
    ``add`` (update), ``merge`` and ``result`` (compute), as torchmetrics' metrics do.

    It keeps the summed counts of the pairs (and of every (draft, reply) pair, for
    ``all_references`` where drafts have several replies) and the rows each warning
    will name (how many, and the first :data:`SHOWN_ROWS`); memory does not grow with
    the number of pairs unless ``keep_pairs`` is True.

    Args:
        themes_scored: themes counted in the theme scores (8 clinical, or 9 with Other).
        zero_division: policy for undefined corpus ratios; see the module Notes.
        keep_pairs: keep every pair for :attr:`CorpusResult.pairs`.
    """

    def __init__(self, themes_scored, zero_division: ZeroDivision = "warn", keep_pairs=True):
        self.themes_scored = tuple(themes_scored)
        self.zero_division = check_zero_division(zero_division)
        self.pairs: list[PairResult] | None = [] if keep_pairs else None
        self.counts = _Counts(self.themes_scored)
        self.every_reply = _Counts(self.themes_scored)
        self.several_replies = False
        self.rows = {kind: _Rows() for kind in ("empty", "themeless", "unusable", "non_latin")}

    @property
    def n_pairs(self) -> int:
        return self.counts.n_pairs

    def add(self, pair: PairResult) -> None:
        """Add one pair's counts (and the pair itself if ``keep_pairs``): its row number
        is what the warnings will name."""
        self.counts.add(pair)
        for reply in pair.per_reference or (pair,):
            self.every_reply.add(reply)
        self.several_replies |= bool(pair.per_reference)
        if pair.content.undefined:  # an empty draft: its theme scores are named with it
            self.rows["empty"].add(pair.row)
        elif pair.theme is not None and pair.theme.undefined:
            self.rows["themeless"].add(pair.row)
        if pair.unusable_judgements or pair.unusable_theme_judgements:
            self.rows["unusable"].add(pair.row)
        if _non_latin(pair):
            self.rows["non_latin"].add(pair.row)
        if self.pairs is not None:
            self.pairs.append(pair)

    def merge(self, other: CorpusAccumulator) -> None:
        """Add everything ``other`` holds (e.g. another process's share): its counts,
        the rows its warnings name, and its pairs (after this one's: merge shares in
        input order to keep the pairs in order).

        Raises:
            ValueError: if the two score different themes or under another
                ``zero_division`` policy.
        """
        if (other.themes_scored, other.zero_division) != (self.themes_scored, self.zero_division):
            raise ValueError(
                "cannot merge accumulators of different themes or zero_division policies: "
                f"{self.themes_scored}/{self.zero_division!r} and "
                f"{other.themes_scored}/{other.zero_division!r}"
            )
        self.counts.merge(other.counts)
        self.every_reply.merge(other.every_reply)
        self.several_replies |= other.several_replies
        for kind, rows in other.rows.items():
            self.rows[kind].merge(rows)
        if self.pairs is not None and other.pairs is not None:
            self.pairs += other.pairs
        else:
            self.pairs = None

    def result(
        self, provenance: dict | None = None, *, judges: str | None = None, warn: bool = True
    ) -> CorpusResult:
        """The :class:`~editf1.results.CorpusResult` of everything added so far, with
        ``all_references`` where a draft had several replies.

        Args:
            provenance: the run record (the scorer's
                :attr:`~editf1.scorer.EditF1Scorer.provenance`), carried into the result;
                default none.
            judges: names the judges in use (e.g. their fingerprints) in the warning
                about text outside Latin script.
            warn: issue the warnings (undefined ratios, unusable judgements, text
                outside Latin script), each once, naming the rows; ``False`` on the
                processes other than the main one after a merge.

        Raises:
            ValueError: if no pair was added.
        """
        provenance = provenance or {}
        result = self.counts.result(provenance, self.zero_division, self.pairs)
        if warn:
            self._warn(result, judges)
        if self.several_replies:
            every = self.every_reply.result(provenance, self.zero_division, None)
            result = dataclasses.replace(result, all_references=every)
        return result

    def _warn(self, result: CorpusResult, judges: str | None) -> None:
        empty, themeless = self.rows["empty"], self.rows["themeless"]
        unusable, non_latin = self.rows["unusable"], self.rows["non_latin"]
        zero_division = self.zero_division
        warn_undefined(
            "precision (prediction has no sentence; theme precision too if the reply has a theme)",
            empty.first,
            zero_division,
            empty.count,
        )
        warn_undefined(
            "theme precision or recall (prediction or reference has none of the scored themes)",
            themeless.first,
            zero_division,
            themeless.count,
        )
        if result.content.undefined and not empty.count:  # else those rows were named
            what = "corpus " + " and ".join(result.content.undefined)
            warn_undefined(what, ["all"], zero_division)
        if unusable.count:
            template = (
                f"the judges produced {result.unusable_judgements} unusable content and "
                f"{result.unusable_theme_judgements} unusable theme judgement(s) in "
                f"{unusable.count} row(s) (first: {{rows}}); they count as "
                "NO MATCH / no theme and are reported as unusable_judgements"
            )
            warnings.warn(
                UnusableJudgementWarning(template, unusable.first, unusable.count),
                stacklevel=3,
            )
        if non_latin.count:
            in_use = f" ({judges})" if judges else ""
            template = (
                f"{non_latin.count} row(s) (first: {{rows}}) have a draft or reply with more "
                f"than {NON_LATIN_LIMIT:.0%} of its letters outside Latin script; the judges "
                f"in use{in_use.replace('{', '{{').replace('}', '}}')} were developed and "
                "checked on English replies: their content matches and themes for these rows "
                "may be unreliable"
            )
            warnings.warn(
                NonLatinTextWarning(template, non_latin.first, non_latin.count),
                stacklevel=3,
            )


def aggregate(
    pairs: Iterable[PairResult],
    *,
    themes_scored: Sequence[str],
    zero_division: ZeroDivision = "warn",
    provenance: dict | None = None,
    judges: str | None = None,
    keep_pairs: bool = False,
    sink: Callable[[PairResult], None] | None = None,
    warn: bool = True,
) -> CorpusResult:
    """Judged pairs → the corpus result and its warnings: step 4 of the pipeline.

    What :meth:`~editf1.scorer.EditF1Scorer.score_stream` does after judging, and what
    the distributed path and the training reward call: the pairs' counts are summed
    (:class:`CorpusAccumulator`) and divided once (micro averages, §3.1); with several
    replies per draft the result's ``all_references`` sums every (draft, reply) pair.

    Args:
        pairs: judged pairs in input order, numbered by their input row (the warnings
            name these numbers).
        themes_scored: the themes of the theme scores (the scorer's).
        zero_division: ``"warn"``, 0.0 or 1.0 (module Notes).
        provenance: the run record (the scorer's), carried into the result; default none.
        judges: names the judges in use (e.g. their fingerprints) in the warning about
            text outside Latin script.
        keep_pairs: keep every pair in the result (memory grows with the corpus).
        sink: called with each pair, in order (e.g. to write JSONL).
        warn: issue the warnings, each once: one :class:`UndefinedMetricWarning` for
            the rows with an empty draft and one for rows without a scored theme (with
            ``zero_division="warn"``), one :class:`UnusableJudgementWarning` and one
            :class:`NonLatinTextWarning`, each naming the first rows.

    Returns:
        :class:`~editf1.results.CorpusResult`, scores in [0, 1].

    Raises:
        ValueError: for no pairs, or a bad ``zero_division``.

    Example (two pairs judged already; by hand: EM 1+1, ED 2+0, EA 1+0):
        >>> from editf1.scorer import EditF1Scorer
        >>> scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
        >>> pairs = scorer.iter_pairs([(None, "Rest today. Drink water. Call us.",
        ...                             "Rest today. Take ibuprofen."), (None, "Rest.", "Rest.")])
        >>> result = aggregate(pairs, themes_scored=scorer.themes_scored)
        >>> result.expected_matches, result.expected_deletions, result.expected_additions
        (2, 2, 1)
        >>> round(result.precision, 4), round(result.recall, 4), round(result.f1, 4)
        (0.5, 0.6667, 0.5714)
    """
    accumulator = CorpusAccumulator(themes_scored, zero_division, keep_pairs)
    for pair in pairs:
        accumulator.add(pair)
        if sink is not None:
            sink(pair)
    return accumulator.result(provenance, judges=judges, warn=warn)


def _non_latin(pair: PairResult) -> bool:
    """Whether the draft or a reply of ``pair`` (its sentences) has more than
    :data:`editf1.segment.NON_LATIN_LIMIT` of its letters outside Latin script."""
    texts = [" ".join(s.text for s in pair.prediction_sentences)] + [
        " ".join(a.reference.text for a in reply.alignment)
        for reply in pair.per_reference or (pair,)
    ]
    return any(non_latin_share(text) > NON_LATIN_LIMIT for text in texts)
