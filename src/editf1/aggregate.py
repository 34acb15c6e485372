"""Step 4 of the pipeline: judged pairs → corpus scores, micro averages of the summed
counts (Seegmiller et al., arXiv 2601.11344, §3.1), through :class:`CorpusAccumulator`
(``add`` / ``merge`` / ``result``, as torchmetrics' update / merge / compute).
"""

from __future__ import annotations

import dataclasses
import heapq
import warnings
from collections import Counter, defaultdict
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
    """A warning naming the first ``rows`` of ``count`` in its ``template`` (``{rows}``)."""

    def __init__(self, template: str, rows: Sequence = (), count: int = 0, **words: str) -> None:
        self.template, self.rows, self.count, self.words = template, list(rows), count, words
        super().__init__(self.naming())

    def naming(self, rows_text: Callable[[list, int], str] | None = None, **words: str) -> str:
        """The message, rows named by ``rows_text(rows, count)``, other fields by ``words``."""
        named = (rows_text or _numbered)(self.rows, self.count)
        return self.template.format(rows=named, **{**self.words, **words})


def _numbered(rows: list, count: int) -> str:
    return f"[{', '.join(map(str, rows))}{', ...' if count > len(rows) else ''}]"


class UndefinedMetricWarning(RowsWarning):
    """A ratio had a zero denominator; see the ``zero_division`` parameter to silence it."""


class UnusableJudgementWarning(RowsWarning):
    """A judge produced output that could not be used; see ``unusable_judgements``."""


class NonLatinTextWarning(RowsWarning):
    """Rows whose draft or reply has more than :data:`editf1.segment.NON_LATIN_LIMIT` of its
    letters outside Latin script; the judges were fitted on English replies.
    """


def prf(tp: int, fp: int, fn: int, zero_division: ZeroDivision = "warn") -> PRF:
    """Precision tp/(tp+fp), recall tp/(tp+fn) and their harmonic mean, a :class:`PRF` in
    [0, 1] (content edit-F1, Algorithm 1: tp = EM, fp = ED, fn = EA); never warns, never NaN.
    With ``tp + fp + fn == 0`` all three are 1.0; otherwise a zero denominator gives
    ``zero_division`` (``"warn"``: 0.0, and the caller warns); F1 is 0.0 when P + R is 0.
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
    """The (tp, fp, fn) of every pair as an (N, 3) int array, for re-aggregating subsets.

    Raises:
        ValueError: for an unknown level, or theme counts of pairs scored without themes.
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
    """Micro-averaged precision, recall and F1 of (N, 3) ``counts`` rows (§3.1)."""
    tp, fp, fn = (int(c) for c in np.asarray(counts).reshape(-1, 3).sum(axis=0))
    return prf(tp, fp, fn, zero_division)


def warn_undefined(what: str, rows: Sequence, zero_division: ZeroDivision, n_rows=None) -> None:
    """One :class:`UndefinedMetricWarning` for ``rows`` (of ``n_rows``) if ``zero_division``
    is ``"warn"`` and ``rows`` is not empty.
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
    def __init__(self) -> None:
        self.count, self.first = 0, []

    def merge(self, rows: Iterable, count: int) -> None:
        self.count += count
        self.first = heapq.nsmallest(SHOWN_ROWS, [*self.first, *rows])


class _Counts:
    def __init__(self, themes_scored: tuple[str, ...]) -> None:
        self.themes_scored = themes_scored
        self.sums: Counter = Counter()
        # per theme: replies and drafts containing it, both, its reply sentences, matched
        self.per_theme: defaultdict[str, Counter] = defaultdict(Counter)

    def add(self, pair: PairResult) -> None:
        counts = pair.theme_counts
        self.sums.update(
            n_pairs=1,
            empty=int(not pair.prediction_sentences),
            em=pair.expected_matches,
            ea=pair.expected_additions,
            ed=pair.expected_deletions,
            unusable=pair.unusable_judgements,
            unusable_theme=pair.unusable_theme_judgements,
            themed=int(counts is not None),
        )
        if counts is None:
            return
        self.sums.update(dict(zip(("tp", "fp", "fn"), counts.as_tuple())))
        reference, prediction = counts.reference_themes, counts.prediction_themes
        self.per_theme["reference"].update(reference)
        self.per_theme["prediction"].update(prediction)
        self.per_theme["both"].update(reference & prediction)
        self.per_theme["sentences"].update(counts.reference_sentences)
        self.per_theme["matched"].update(counts.matched_sentences)

    def merge(self, other: _Counts) -> None:
        self.sums.update(other.sums)
        for name, counter in other.per_theme.items():
            self.per_theme[name].update(counter)

    def result(self, provenance: dict, zero_division: ZeroDivision, pairs) -> CorpusResult:
        s = self.sums
        if not s["n_pairs"]:
            raise ValueError("no pairs to score: predictions and references are empty")
        theme, per_theme = None, {}
        if s["themed"]:
            theme = prf(s["tp"], s["fp"], s["fn"], zero_division)
            per_theme = {t: self._theme_score(t, zero_division) for t in self.themes_scored}
        return CorpusResult(
            n_pairs=s["n_pairs"],
            content=prf(s["em"], s["ed"], s["ea"], zero_division),
            expected_matches=s["em"],
            expected_additions=s["ea"],
            expected_deletions=s["ed"],
            theme=theme,
            per_theme=per_theme,
            unusable_judgements=s["unusable"],
            unusable_theme_judgements=s["unusable_theme"],
            themes_scored=self.themes_scored if s["themed"] else (),
            provenance=provenance,
            pairs=pairs,
            empty_predictions=s["empty"],
        )

    def _theme_score(self, theme: str, zero_division: ZeroDivision) -> ThemeScore:
        in_reference, in_prediction, both, total, matched = (
            self.per_theme[name][theme]
            for name in ("reference", "prediction", "both", "sentences", "matched")
        )
        n_pairs = self.sums["n_pairs"]
        return ThemeScore(
            *prf(both, in_prediction - both, in_reference - both, zero_division).as_tuple(),
            reference_count=in_reference,
            prediction_count=in_prediction,
            reference_proportion=in_reference / n_pairs,
            prediction_proportion=in_prediction / n_pairs,
            reference_sentences=total,
            content_recall=prf(matched, 0, total - matched).recall,
        )


#: The undefined ratios each kind of row gives.
_UNDEFINED = {
    "empty": "precision (prediction has no sentence; theme precision too if the reply has a theme)",
    "themeless": "theme precision or recall "
    "(prediction or reference has none of the scored themes)",
}


class CorpusAccumulator:
    """Sums streamed :class:`~editf1.results.PairResult` objects into a corpus result; memory
    does not grow with the pairs unless ``keep_pairs``. ``zero_division``: :func:`prf` (its
    ``"warn"`` warns here, once, naming the rows).
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
        return self.counts.sums["n_pairs"]

    def add(self, pair: PairResult) -> None:
        """Add one pair (its ``row`` is what the warnings name)."""
        self.counts.add(pair)
        for reply in pair.per_reference or (pair,):
            self.every_reply.add(reply)
        self.several_replies |= bool(pair.per_reference)
        kinds = {
            "empty": pair.content.undefined,  # an empty draft: its theme scores named with it
            "themeless": not pair.content.undefined and pair.theme and pair.theme.undefined,
            "unusable": pair.unusable_judgements or pair.unusable_theme_judgements,
            "non_latin": _non_latin(pair),
        }
        for kind, concerned in kinds.items():
            if concerned:
                self.rows[kind].merge([pair.row], 1)
        if self.pairs is not None:
            self.pairs.append(pair)

    def merge(self, other: CorpusAccumulator) -> None:
        """Add everything ``other`` holds (pairs after this one's: merge in input order).

        Raises:
            ValueError: if the two differ in themes or ``zero_division``.
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
            self.rows[kind].merge(rows.first, rows.count)
        if self.pairs is not None and other.pairs is not None:
            self.pairs += other.pairs
        else:
            self.pairs = None

    def result(
        self, provenance: dict | None = None, *, judges: str | None = None, warn: bool = True
    ) -> CorpusResult:
        """The :class:`~editf1.results.CorpusResult` so far; ``warn`` issues the warnings, each
        once (``False`` on non-main processes), the one about text outside Latin script naming
        the ``judges``. ValueError if no pair was added.
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
        rows, zero_division = self.rows, self.zero_division
        for kind, what in _UNDEFINED.items():
            warn_undefined(what, rows[kind].first, zero_division, rows[kind].count)
        if result.content.undefined and not rows["empty"].count:  # else those rows were named
            warn_undefined(
                "corpus " + " and ".join(result.content.undefined), ["all"], zero_division
            )
        in_use = f" ({judges})" if judges else ""
        messages = {
            "unusable": (
                UnusableJudgementWarning,
                f"the judges produced {result.unusable_judgements} unusable content and "
                f"{result.unusable_theme_judgements} unusable theme judgement(s) in "
                f"{rows['unusable'].count} row(s) (first: {{rows}}); they count as "
                "NO MATCH / no theme and are reported as unusable_judgements",
            ),
            "non_latin": (
                NonLatinTextWarning,
                f"{rows['non_latin'].count} row(s) (first: {{rows}}) have a draft or reply with "
                f"more than {NON_LATIN_LIMIT:.0%} of its letters outside Latin script; the "
                f"judges in use{in_use.replace('{', '{{').replace('}', '}}')} were developed "
                "and checked on English replies: their content matches and themes for these "
                "rows may be unreliable",
            ),
        }
        for kind, (warning, template) in messages.items():
            if rows[kind].count:
                warnings.warn(warning(template, rows[kind].first, rows[kind].count), stacklevel=3)


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
    """Judged pairs (in input order; warnings name their ``row``) → the corpus result and its
    warnings, each pair handed to ``sink`` in turn; the other arguments as
    :class:`CorpusAccumulator` and its :meth:`~CorpusAccumulator.result`. ValueError for
    no pairs, or a bad ``zero_division``.
    """
    accumulator = CorpusAccumulator(themes_scored, zero_division, keep_pairs)
    for pair in pairs:
        accumulator.add(pair)
        if sink is not None:
            sink(pair)
    return accumulator.result(provenance, judges=judges, warn=warn)


def _non_latin(pair: PairResult) -> bool:
    texts = [" ".join(s.text for s in pair.prediction_sentences)] + [
        " ".join(a.reference.text for a in reply.alignment)
        for reply in pair.per_reference or (pair,)
    ]
    return any(non_latin_share(text) > NON_LATIN_LIMIT for text in texts)
