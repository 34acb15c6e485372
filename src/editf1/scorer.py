"""The one core every shell calls: segment → judge → count → aggregate.

:class:`EditF1Scorer` holds the splitter and the judges (loaded once), scores pairs in
batches and streams :class:`~editf1.results.PairResult` objects, so a corpus of any
size is scored in constant memory when the pairs go to disk. The ``evaluate`` module,
the CLI, the demo and the training callback are thin shells over it.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice

from tqdm.auto import tqdm

from editf1.aggregate import (
    CorpusAccumulator,
    ZeroDivision,
    check_zero_division,
    prf,
    warn_undefined,
)
from editf1.count import count_content
from editf1.judges import (
    ContentJudge,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
    load_content_judge,
    load_theme_judge,
)
from editf1.results import CorpusResult, PairResult, SentenceAlignment
from editf1.segment import SentenceSplitter
from editf1.themes import CLINICAL_THEMES, THEMES
from editf1.validate import InputError, check_id, check_ids, check_pair, check_pairs
from editf1.versions import installed_versions

__all__ = ["EditF1Scorer", "UnusableJudgementWarning"]

Row = tuple  # (id or None, prediction, reference)


class UnusableJudgementWarning(UserWarning):
    """A judge produced output that could not be used; see ``unusable_judgements``."""


class EditF1Scorer:
    """Content- and theme-level edit-F1 (Seegmiller et al., arXiv 2601.11344, §3).

    Args:
        content_judge: a name (``"embedding"``, the offline default; ``"exact"``) or a
            :class:`~editf1.judges.ContentJudge`.
        theme_judge: a name (``"embedding"``), a :class:`~editf1.judges.ThemeJudge`, or
            ``None`` to skip theme-level scores.
        content_judge_options, theme_judge_options: keyword arguments for a named
            judge (e.g. ``{"threshold": 0.7}``).
        splitter: default :class:`~editf1.segment.SentenceSplitter`.
        include_other: count the ninth theme, Other, in theme-level scores. Default
            False, as in the paper's Tables 5, 14 and 15, which score the 8 clinical
            themes.
        zero_division: ``"warn"`` (default: 0.0 and one warning naming the rows), 0.0
            or 1.0, for undefined ratios; see :mod:`editf1.aggregate`.
        batch_size: pairs handed to the judges at once.
        progress: show a progress bar.

    Raises:
        ValueError: for an unknown judge name or a bad ``zero_division``.

    Example:
        >>> scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
        >>> result = scorer.score(
        ...     predictions=["Rest today. Drink water. Call us."],
        ...     references=["Rest today. Take ibuprofen."],
        ... )
        >>> result.expected_matches, result.expected_additions, result.expected_deletions
        (1, 1, 2)
        >>> round(result.precision, 4), round(result.recall, 4), round(result.f1, 4)
        (0.3333, 0.5, 0.4)
    """

    def __init__(
        self,
        content_judge: str | ContentJudge = "embedding",
        theme_judge: str | ThemeJudge | None = "embedding",
        *,
        content_judge_options: dict | None = None,
        theme_judge_options: dict | None = None,
        splitter: SentenceSplitter | None = None,
        include_other: bool = False,
        zero_division: ZeroDivision = "warn",
        batch_size: int = 128,
        progress: bool = False,
        theme_cache_size: int = 200_000,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.zero_division = check_zero_division(zero_division)
        self.content_judge = load_content_judge(content_judge, content_judge_options)
        self.theme_judge = (
            None if theme_judge is None else load_theme_judge(theme_judge, theme_judge_options)
        )
        self.splitter = splitter or SentenceSplitter()
        self.include_other = bool(include_other)
        self.themes_scored = THEMES if self.include_other else CLINICAL_THEMES
        self.batch_size = batch_size
        self.progress = progress
        self._theme_cache: OrderedDict[str, ThemeJudgement] = OrderedDict()
        self._theme_cache_size = theme_cache_size

    @property
    def reproducibility(self) -> str:
        """Names judges, splitter, options and library versions, e.g. for a paper."""
        theme = self.theme_judge.fingerprint if self.theme_judge else "none"
        libraries = ("edit-f1", "nltk", "torch", "transformers", "sentence-transformers")
        return "|".join(
            [
                f"content:{self.content_judge.fingerprint}",
                f"theme:{theme}",
                f"splitter:{self.splitter.fingerprint}",
                f"include_other:{self.include_other}",
                f"zero_division:{self.zero_division}",
                *(f"{name}:{v}" for name, v in installed_versions(*libraries).items()),
            ]
        )

    def score(
        self,
        predictions: Sequence[str],
        references: Sequence[str],
        *,
        ids: Sequence[str] | None = None,
        keep_pairs: bool = True,
    ) -> CorpusResult:
        """Score N (prediction, reference) pairs.

        Args:
            predictions: N drafts (strings; an empty draft is allowed).
            references: N clinician replies (strings with at least one word).
            ids: N row ids to carry into the results, optional: non-empty strings,
                each used once.
            keep_pairs: keep every :class:`PairResult` in the result.

        Returns:
            A :class:`~editf1.results.CorpusResult`: micro-averaged scores in [0, 1].

        Raises:
            TypeError, ValueError: for non-list arguments or different lengths.
            InputError: listing every bad row and field (and every missing or repeated
                id), before any model runs.
        """
        check_pairs(predictions, references)
        check_ids(ids, len(predictions))
        rows = zip(ids if ids is not None else [None] * len(predictions), predictions, references)
        return self.score_stream(rows, total=len(predictions), keep_pairs=keep_pairs)

    def score_stream(
        self,
        rows: Iterable[Row],
        *,
        total: int | None = None,
        keep_pairs: bool = False,
        sink: Callable[[PairResult], None] | None = None,
    ) -> CorpusResult:
        """Score ``(id, prediction, reference)`` rows as they come; memory stays flat.

        Args:
            rows: an iterable of ``(id or None, prediction, reference)``.
            total: number of rows, for the progress bar.
            keep_pairs: keep every pair in the result (memory grows with the corpus).
            sink: called with each :class:`PairResult` in row order (e.g. to write JSONL).

        Returns:
            The corpus result; issues one warning for all undefined pair scores and
            one for unusable judge outputs.

        Raises:
            InputError: for the first batch with bad rows (rows before it are scored).
        """
        accumulator = CorpusAccumulator(self.themes_scored, self.zero_division, keep_pairs)
        empty_rows, themeless_rows, unusable_rows = [], [], []
        for pair in self.iter_pairs(rows, total=total):
            accumulator.add(pair)
            if pair.content.undefined:  # an empty draft: its theme scores are named with it
                empty_rows.append(pair.row)
            elif pair.theme is not None and pair.theme.undefined:
                themeless_rows.append(pair.row)
            if pair.unusable_judgements or pair.unusable_theme_judgements:
                unusable_rows.append(pair.row)
            if sink is not None:
                sink(pair)
        warn_undefined(
            "precision (prediction has no sentence; theme scores too)",
            empty_rows,
            self.zero_division,
        )
        warn_undefined(
            "theme precision or recall (prediction or reference has none of the scored themes)",
            themeless_rows,
            self.zero_division,
        )
        if unusable_rows:
            warnings.warn(
                f"the judges produced {accumulator.unusable} unusable content and "
                f"{accumulator.unusable_theme} unusable theme judgement(s) in "
                f"{len(unusable_rows)} row(s) (first: {unusable_rows[:10]}); they count as "
                "NO MATCH / no theme and are reported as unusable_judgements",
                UnusableJudgementWarning,
                stacklevel=2,
            )
        # corpus precision is undefined only if every row's is: those rows were named above
        return accumulator.result(self.reproducibility, warn=not empty_rows)

    def iter_pairs(self, rows: Iterable[Row], *, total: int | None = None) -> Iterator[PairResult]:
        """Yield one :class:`PairResult` per ``(id, prediction, reference)`` row, in order.

        Rows are checked and judged ``batch_size`` at a time.

        Raises:
            InputError: naming each bad row and field of a batch, and each id that is
                not a non-empty string or repeats an earlier row's.
        """
        numbered = enumerate(tqdm(rows, total=total, disable=not self.progress, unit="pair"))
        seen_ids: dict[str, int] = {}
        while batch := list(islice(numbered, self.batch_size)):
            errors = [
                e
                for i, (row_id, p, r) in batch
                for e in check_id(i, row_id, seen_ids) + check_pair(i, p, r)
            ]
            if errors:
                raise InputError(errors)
            yield from self._score_batch(batch)

    def _score_batch(self, batch: list[tuple[int, Row]]) -> list[PairResult]:
        requests = [
            JudgeRequest(
                tuple(self.splitter.split(reference)),
                prediction,
                tuple(self.splitter.split(prediction)),
            )
            for _, (_, prediction, reference) in batch
        ]
        judgements = self.content_judge.match(requests)
        _check_judgements(self.content_judge, requests, judgements)
        themes = self._themes(requests)
        return [
            self._pair_result(row, row_id, request, pair_judgements, themes)
            for (row, (row_id, _, _)), request, pair_judgements in zip(batch, requests, judgements)
        ]

    def _themes(self, requests: list[JudgeRequest]) -> dict[str, ThemeJudgement]:
        if self.theme_judge is None:
            return {}
        texts = {
            s.text: None
            for r in requests
            for s in (*r.reference_sentences, *r.prediction_sentences)
        }
        missing = [t for t in texts if t not in self._theme_cache]
        if missing:
            labels = self.theme_judge.classify(missing)
            if len(labels) != len(missing):
                raise RuntimeError(
                    f"theme judge {self.theme_judge.fingerprint} returned {len(labels)} "
                    f"labels for {len(missing)} sentences"
                )
            self._theme_cache.update(zip(missing, labels))
        found = {}
        for text in texts:
            found[text] = self._theme_cache[text]
            self._theme_cache.move_to_end(text)
        while len(self._theme_cache) > self._theme_cache_size:
            self._theme_cache.popitem(last=False)
        return found

    def _pair_result(self, row, row_id, request, judgements, themes) -> PairResult:
        counts = count_content(
            request.prediction, request.prediction_sentences, judgements, self.splitter
        )
        content = prf(
            counts.expected_matches,
            counts.expected_deletions,
            counts.expected_additions,
            self.zero_division,
        )
        reference_labels = [themes[s.text] if themes else None for s in request.reference_sentences]
        prediction_labels = [
            themes[s.text] if themes else None for s in request.prediction_sentences
        ]
        alignment = tuple(
            SentenceAlignment(
                reference=sentence,
                status=judgement.status,
                match=judgement.span,
                score=judgement.score,
                theme=label.theme if label else None,
                judge_output=judgement.raw,
            )
            for sentence, judgement, label in zip(
                request.reference_sentences, judgements, reference_labels
            )
        )
        theme_prf, reference_themes, prediction_themes, unusable_themes = None, set(), set(), 0
        if self.theme_judge is not None:
            scored = set(self.themes_scored)
            reference_themes = {j.theme for j in reference_labels if j.theme in scored}
            prediction_themes = {j.theme for j in prediction_labels if j.theme in scored}
            unusable_themes = sum(not j.usable for j in (*reference_labels, *prediction_labels))
            theme_prf = prf(
                len(reference_themes & prediction_themes),
                len(prediction_themes - reference_themes),
                len(reference_themes - prediction_themes),
                self.zero_division,
            )
        notes = []
        if content.undefined:
            notes.append(
                f"prediction has no sentence: {' and '.join(content.undefined)} set to "
                f"{content.precision}"
            )
        if counts.unusable:
            notes.append(f"{counts.unusable} content judgement(s) unusable, counted as NO MATCH")
        return PairResult(
            row=row,
            id=row_id,
            expected_matches=counts.expected_matches,
            expected_additions=counts.expected_additions,
            expected_deletions=counts.expected_deletions,
            content=content,
            alignment=alignment,
            expected_deletion_sentences=counts.deletions,
            prediction_sentences=request.prediction_sentences,
            prediction_sentence_themes=tuple(j.theme if j else None for j in prediction_labels),
            reference_themes=frozenset(reference_themes),
            prediction_themes=frozenset(prediction_themes),
            theme=theme_prf,
            unusable_judgements=counts.unusable,
            unusable_theme_judgements=unusable_themes,
            warnings=tuple(notes),
        )


def _check_judgements(judge, requests, judgements) -> None:
    """Judges are plug-ins: check that one kept the interface's promises."""
    if len(judgements) != len(requests):
        raise RuntimeError(
            f"content judge {judge.fingerprint} answered {len(judgements)} of {len(requests)} pairs"
        )
    for request, answers in zip(requests, judgements):
        if len(answers) != len(request.reference_sentences):
            raise RuntimeError(
                f"content judge {judge.fingerprint} answered {len(answers)} of "
                f"{len(request.reference_sentences)} reference sentences"
            )
        for answer in answers:
            span = answer.span
            if span is not None and request.prediction[span.start : span.end] != span.text:
                raise RuntimeError(
                    f"content judge {judge.fingerprint} returned a span that is not verbatim "
                    f"in the draft: {span}"
                )
