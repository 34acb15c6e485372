"""Gold labels attached to a corpus score, while scoring or to a result already scored:
both check labels and options before any work and set the result's ``gold`` to
:func:`editf1.gold.report.gold_report`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editf1.gold.labels import PairText, load_gold, pair_keys
from editf1.gold.report import check_report_options, gold_report
from editf1.inputs import CheckedRows
from editf1.results import CorpusResult
from editf1.scorer import EditF1Scorer
from editf1.segment import SentenceSplitter

__all__ = ["pair_texts", "score_with_gold", "with_gold"]


def pair_texts(rows) -> list[PairText]:
    """The :class:`~editf1.gold.labels.PairText` of checked ``(id, prediction, reference)``
    rows; ValueError for a reference that is a list of replies."""
    if several := [i for i, (_, _, r) in enumerate(rows) if isinstance(r, (list, tuple))]:
        raise ValueError(
            f"gold labels need one reply per draft; the references of rows {several[:10]} are lists"
        )
    keys = pair_keys([row_id for row_id, _, _ in rows])
    return [PairText(k, p, r) for k, (_, p, r) in zip(keys, rows)]


def score_with_gold(
    scorer: EditF1Scorer,
    rows: CheckedRows,
    gold,
    *,
    second=None,
    keep_pairs: bool = True,
    **report_options,
) -> CorpusResult:
    """Score the pairs and report what the gold labels of some of them say.

    Args:
        rows: the N checked ``(id, prediction, reference)`` rows, one reply each.
        gold: the gold labels (a JSON Lines file or rows, :mod:`editf1.gold.labels`) of
            a uniform random sample of the pairs, named by id (else row number from 0).
        second: a second annotator's gold labels (file or rows), for the human ceiling.
        **report_options: as :func:`~editf1.gold.report.gold_report`.

    Raises:
        InputError, TypeError, ValueError: as ``load_gold`` and ``gold_report``.
    """
    pairs = pair_texts(rows)
    labels = load_gold(gold, pairs, scorer.splitter)
    other = None if second is None else load_gold(second, pairs, scorer.splitter)
    check_report_options(labels, **report_options)
    result = scorer.score_stream(rows, total=len(rows), keep_pairs=True)
    report = gold_report(result, labels, second=other, **report_options)
    return replace(result, gold=report, pairs=result.pairs if keep_pairs else None)


def with_gold(
    result: CorpusResult,
    gold,
    *,
    predictions: Sequence[str],
    references: Sequence[str],
    ids: Sequence[str] | None = None,
    second=None,
    splitter: SentenceSplitter | None = None,
    **report_options,
) -> CorpusResult:
    """Apply gold labels to a result already scored, without judging again (the report
    of :func:`score_with_gold`). The texts are needed: a result keeps only offsets and
    counts, and the labels name the texts they were made on.

    Args:
        result: the scored result, with its pairs.
        gold, second, **report_options: as :func:`score_with_gold`.
        predictions, references, ids: what the result was scored on.
        splitter: the scorer's splitter (default :class:`~editf1.segment.SentenceSplitter`).

    Raises:
        TypeError, ValueError, InputError: for bad pairs, and as :func:`score_with_gold`.

    Example:
        >>> import editf1
        >>> drafts = ["Rest today. Drink water.", "Ice it.", "Call us."]
        >>> replies = ["Rest today.", "Ice it. Rest.", "Call us."]
        >>> ids = ["a", "b", "c"]
        >>> result = editf1.score(predictions=drafts, references=replies, ids=ids,
        ...                       content_judge="exact", theme_judge=None)
        >>> gold = [  # the clinician's decisions on pairs a and b, by character offsets
        ...     {"id": "a", "reference_sentences": [
        ...         {"start": 0, "end": 11, "match": {"start": 0, "end": 11}}]},
        ...     {"id": "b", "reference_sentences": [
        ...         {"start": 0, "end": 7, "match": {"start": 0, "end": 7}},
        ...         {"start": 8, "end": 13, "match": None}]},
        ... ]
        >>> labelled = with_gold(result, gold, predictions=drafts, references=replies,
        ...                      ids=ids, n_resamples=100)
        >>> report = labelled.gold  # gold counts (EM, ED, EA): a (1, 1, 0), b (1, 0, 1)
        >>> report.n_labelled, round(report.content["f1"].gold_only.value, 4)  # 4 / 6
        (2, 0.6667)
    """
    from editf1.inputs import check_pairs

    pairs = pair_texts(check_pairs(predictions, references, ids))
    labels = load_gold(gold, pairs, splitter)
    other = None if second is None else load_gold(second, pairs, splitter)
    check_report_options(labels, **report_options)
    return replace(result, gold=gold_report(result, labels, second=other, **report_options))
