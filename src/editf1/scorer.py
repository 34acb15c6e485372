"""The one core every shell calls: segment → judge → count → aggregate, in batches, streaming
:class:`~editf1.results.PairResult` objects (constant memory when they go to disk).
"""

from __future__ import annotations

import bisect
import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, islice

from tqdm.auto import tqdm

from editf1.aggregate import (
    CorpusAccumulator,
    NonLatinTextWarning,
    UnusableJudgementWarning,
    aggregate,
    prf,
)
from editf1.count import claim_copies, count_content, count_themes, leave_out
from editf1.inputs import CheckedRows, Row, check_pairs, check_rows
from editf1.judges import JudgeRequest, load_content_judge, load_theme_judge
from editf1.judges.contract import ThemeCache, judge_content
from editf1.judges.progress import reporting
from editf1.options import ScoringOptions
from editf1.results import CorpusResult, PairResult, SentenceAlignment, reproducibility_of
from editf1.segment import SentenceSplitter
from editf1.themes import CLINICAL_THEMES, THEMES
from editf1.versions import installed_versions

# the warnings live with the aggregation that issues them; importable from here too
__all__ = [
    "EditF1Scorer",
    "NonLatinTextWarning",
    "UnusableJudgementWarning",
    "reproducibility_of",
]

#: The libraries whose versions a run records.
_LIBRARIES = ("edit-f1", "nltk", "torch", "transformers", "sentence-transformers")


def _json_ready(value):
    # a path as text, other objects as <TypeName>: never a repr, which may hold text
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return f"<{type(value).__name__}>"


class EditF1Scorer:
    """Content- and theme-level edit-F1 (Seegmiller et al., arXiv 2601.11344, §3), with the
    options of :class:`~editf1.options.ScoringOptions` (example: :meth:`score`).

    Raises:
        TypeError, ValueError: from :class:`~editf1.options.ScoringOptions`; an unknown judge name.
    """

    def __init__(self, *args, splitter: SentenceSplitter | None = None, **options) -> None:
        self.options = o = ScoringOptions(*args, **options)
        self.zero_division = o.zero_division
        self.content_judge = load_content_judge(o.content_judge, o.content_judge_options)
        theme = o.theme_judge
        self.theme_judge = None if theme is None else load_theme_judge(theme, o.theme_judge_options)
        self.splitter = splitter or SentenceSplitter()
        self.themes_scored = THEMES if o.include_other else CLINICAL_THEMES
        self.theme_cache = ThemeCache(o.theme_cache_size)

    @property
    def reproducibility(self) -> str:
        return reproducibility_of(self.provenance)

    @property
    def provenance(self) -> dict:
        """The run record, JSON-ready (``edit-f1 score`` writes it as ``run``):
        ``{"content_judge": {"name", "fingerprint", "options"}, "theme_judge": the same or
        None, "options": {"splitter", "include_other", "zero_division"}, "versions": {library:
        version}}``. ``batch_size`` and ``progress`` change no figure and are left out.
        """
        o, out = self.options, {}
        for kind in ("content", "theme"):
            judge, name = getattr(self, f"{kind}_judge"), getattr(o, f"{kind}_judge")
            out[f"{kind}_judge"] = judge and {
                "name": name if isinstance(name, str) else type(name).__name__,
                "fingerprint": judge.fingerprint,
                "options": _json_ready(getattr(o, f"{kind}_judge_options") or {}),
            }
        out["options"] = {
            "splitter": self.splitter.fingerprint,
            "include_other": o.include_other,
            "zero_division": self.zero_division,
        }
        if o.leave_out_other:  # recorded only when set: earlier records stay the same
            out["options"]["leave_out_other"] = True
        out["versions"] = installed_versions(*_LIBRARIES)
        return out

    def score(
        self,
        predictions: Sequence[str],
        references: Sequence[str | Sequence[str]],
        *,
        ids: Sequence[str] | None = None,
        keep_pairs: bool = True,
    ) -> CorpusResult:
        """Score N drafts (strings, may be empty) against N clinician replies, or lists of
        replies to the same message (:class:`~editf1.results.PairResult` says which is the
        pair); ``ids``: N non-empty strings, each used once. Scores are in [0, 1].

        Raises:
            TypeError, ValueError: for non-list arguments or different lengths.
            InputError: listing every bad row and field, before any model runs.

        >>> scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
        >>> result = scorer.score(
        ...     ["Rest today. Drink water."],
        ...     [["Rest today. Take ibuprofen.", "Drink water. Rest today."]],
        ... )
        >>> pair = result.pairs[0]
        >>> pair.best_reference, round(pair.mean.f1, 4), result.f1
        (1, 0.75, 1.0)
        >>> round(result.all_references.f1, 4)
        0.75
        """
        rows = check_pairs(predictions, references, ids)
        return self.score_stream(rows, total=len(rows), keep_pairs=keep_pairs)

    def score_stream(
        self,
        rows: Iterable[Row],
        *,
        total: int | None = None,
        keep_pairs: bool = False,
        sink: Callable[[PairResult], None] | None = None,
    ) -> CorpusResult:
        """Score ``(id, prediction, reference)`` rows as they come (:meth:`iter_pairs`, then
        :meth:`aggregate`); ``total`` rows for the progress bar.
        """
        return self.aggregate(self.iter_pairs(rows, total=total), keep_pairs=keep_pairs, sink=sink)

    @property
    def judges(self) -> str:
        """The judges' fingerprints, as warnings name them."""
        theme = self.theme_judge.fingerprint if self.theme_judge else "none"
        return f"content: {self.content_judge.fingerprint}; theme: {theme}"

    def accumulator(self, *, keep_pairs: bool = False) -> CorpusAccumulator:
        return CorpusAccumulator(self.themes_scored, self.zero_division, keep_pairs)

    def aggregate(
        self,
        pairs: Iterable[PairResult],
        *,
        keep_pairs: bool = False,
        sink: Callable[[PairResult], None] | None = None,
        warn: bool = True,
    ) -> CorpusResult:
        """:func:`editf1.aggregate.aggregate` with this scorer's themes, ``zero_division``, run
        record and judges.
        """
        return aggregate(
            pairs,
            themes_scored=self.themes_scored,
            zero_division=self.zero_division,
            provenance=self.provenance,
            judges=self.judges,
            keep_pairs=keep_pairs,
            sink=sink,
            warn=warn,
        )

    def iter_pairs(self, rows: Iterable[Row], *, total: int | None = None) -> Iterator[PairResult]:
        """Yield one :class:`PairResult` per row, in order, judged ``batch_size`` at a time;
        rows not :class:`~editf1.inputs.CheckedRows` are checked a batch at a time (InputError).
        """
        checked = isinstance(rows, CheckedRows)
        numbered = enumerate(rows)
        seen_ids: dict[str, int] = {}
        with tqdm(total=total, disable=not self.options.progress, unit="pair") as bar:
            while batch := list(islice(numbered, self.options.batch_size)):
                if not checked:
                    check_rows((row for _, row in batch), first_row=batch[0][0], seen=seen_ids)
                start = bar.n
                pairs = self._score_batch(batch, None if bar.disable else bar)
                bar.update(start + len(pairs) - bar.n)
                bar.set_postfix_str("", refresh=False)
                yield from pairs

    def _score_batch(self, batch: list[tuple[int, Row]], bar=None) -> list[PairResult]:
        # one request per (row, reply): a row with K replies gives K requests
        owners, requests = [], []
        for b, (_, (_, prediction, reference)) in enumerate(batch):
            predicted = tuple(self.splitter.split(prediction))
            for reply in reference if isinstance(reference, (list, tuple)) else (reference,):
                owners.append(b)
                replied = tuple(self.splitter.split(reply))
                requests.append(JudgeRequest(replied, prediction, predicted))
        progress = None if bar is None else _BatchProgress(bar, owners, requests)
        with reporting(progress and progress.content):
            judgements = judge_content(self.content_judge, requests)
        texts = (
            s.text for r in requests for s in (*r.reference_sentences, *r.prediction_sentences)
        )
        with reporting(progress and progress.themes):
            themes = (
                {} if self.theme_judge is None else self.theme_cache.labels(self.theme_judge, texts)
            )
        grouped: list[list[PairResult]] = [[] for _ in batch]
        for b, request, pair_judgements in zip(owners, requests, judgements):
            row, (row_id, _, _) = batch[b]
            grouped[b].append(self._pair_result(row, row_id, request, pair_judgements, themes))
        return [
            _best_of(group) if isinstance(reference, (list, tuple)) else group[0]
            for (_, (_, _, reference)), group in zip(batch, grouped)
        ]

    def _pair_result(self, row, row_id, request, judgements, themes) -> PairResult:
        judgements = claim_copies(request.prediction, judgements)
        predicted = request.prediction_sentences
        counts = count_content(request.prediction, predicted, judgements, self.splitter)
        reference_labels = [themes.get(s.text) for s in request.reference_sentences]
        prediction_labels = [themes.get(s.text) for s in predicted]
        reference_themes = [label and label.theme for label in reference_labels]
        prediction_themes = [label and label.theme for label in prediction_labels]
        if self.options.leave_out_other:
            reference_out = [theme == "Other" for theme in reference_themes]
            prediction_out = [theme == "Other" for theme in prediction_themes]
            counts = leave_out(counts, judgements, reference_out, predicted, prediction_out)
        em, ea, ed = counts.expected_matches, counts.expected_additions, counts.expected_deletions
        content = prf(em, ed, ea, self.zero_division)
        alignment = tuple(
            SentenceAlignment(
                reference=sentence,
                status=judgement.status,
                match=judgement.span,
                score=judgement.score,
                theme=theme,
                judge_output=judgement.raw,
                vetoed=judgement.vetoed,
            )
            for sentence, judgement, theme in zip(
                request.reference_sentences, judgements, reference_themes
            )
        )
        theme_prf, theme_counts, unusable_themes = None, None, 0
        if self.theme_judge is not None:
            unusable_themes = sum(not j.usable for j in (*reference_labels, *prediction_labels))
            matched = [j.status == "match" for j in judgements]
            theme_counts = count_themes(
                reference_themes, prediction_themes, matched, self.themes_scored
            )
            theme_prf = prf(*theme_counts.as_tuple(), self.zero_division)
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
            expected_matches=em,
            expected_additions=ea,
            expected_deletions=ed,
            content=content,
            alignment=alignment,
            expected_deletion_sentences=counts.deletions,
            prediction_sentences=request.prediction_sentences,
            prediction_sentence_themes=tuple(prediction_themes),
            theme_counts=theme_counts,
            theme=theme_prf,
            unusable_judgements=counts.unusable,
            unusable_theme_judgements=unusable_themes,
            warnings=tuple(notes),
        )


class _BatchProgress:
    """A batch's share of the progress bar: pairs whose reference sentences are all judged."""

    def __init__(self, bar, owners: list[int], requests: list[JudgeRequest]) -> None:
        self.bar, self.start = bar, bar.n
        done = accumulate(len(r.reference_sentences) for r in requests)
        self.ends = list(dict(zip(owners, done)).values())
        self.total = self.ends[-1]
        self.judged = self.labelled = 0

    def content(self, n: int) -> None:
        self.judged += n
        rows = bisect.bisect_right(self.ends, self.judged)
        self.bar.set_postfix_str(f"{self.judged}/{self.total} sentences judged", refresh=False)
        self.bar.update(self.start + rows - self.bar.n)

    def themes(self, n: int) -> None:
        self.labelled += n
        self.bar.set_postfix_str(f"{self.labelled} sentences' themes labelled")


def _best_of(group: list[PairResult]) -> PairResult:
    """The pair of the best-matching reply (highest F1, then recall, then the earlier reply)."""
    best = max(range(len(group)), key=lambda k: (group[k].content.f1, group[k].content.recall, -k))
    return dataclasses.replace(group[best], best_reference=best, per_reference=tuple(group))
