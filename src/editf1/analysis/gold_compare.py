"""Prediction-powered comparisons of two runs scored with gold labels of the same pairs
(PPI++, :func:`editf1.gold.report.prediction_powered_difference`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from editf1.aggregate import pair_counts
from editf1.analysis.compare import (
    _DEFAULT_METRICS,
    ScoredRun,
    _aligned,
    _value,
    reference_mismatch,
)
from editf1.validation.agreement import to_jsonable

__all__ = ["PredictionPoweredDifference", "compare_with_gold"]


@dataclass(frozen=True)
class PredictionPoweredDifference:
    """``system − baseline`` for one micro-averaged metric from the judge's counts of
    every pair and the gold counts of the labelled ones.

    Attributes:
        difference: the prediction-powered :class:`~editf1.ppi.PPIEstimate`, in [-1, 1].
        gold_only: the same from the labelled pairs' gold counts alone (``lam = 0``).
        judge_only: the judge's difference over all pairs (uncorrected).
        n_labelled, n_pairs: labelled pairs, and all pairs.
    """

    metric: str
    baseline: str
    system: str
    difference: object
    gold_only: object
    judge_only: float
    n_labelled: int
    n_pairs: int

    def to_dict(self) -> dict:
        return to_jsonable(dict(self.__dict__))


_GOLD_COUNTS = {
    "content": ("expected_matches", "expected_deletions", "expected_additions"),
    "theme": ("theme_true_positives", "theme_false_positives", "theme_false_negatives"),
}


def _gold_reason(baseline: ScoredRun, system: ScoredRun) -> str | None:
    """Why two runs have no prediction-powered comparison, or ``None``."""
    if not (baseline.gold and system.gold):
        return "not both were scored with gold labels (edit-f1 score --gold)"
    if set(baseline.gold) != set(system.gold):
        return "their gold labels are of different pairs; label the same pairs of both systems"
    for run in (baseline, system):
        records = {json.dumps(g.get("sampling"), sort_keys=True) for g in run.gold.values()}
        sampling = next(iter(run.gold.values())).get("sampling")
        if len(records) > 1:
            return f"the gold labels of {run.name!r} hold different sampling records"
        if sampling and sampling.get("population") not in (None, len(run.pairs)):
            return f"the gold labels of {run.name!r} were sampled from other pairs"
    return reference_mismatch(baseline, system)


def compare_with_gold(
    baseline: ScoredRun,
    system: ScoredRun,
    *,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    confidence: float = 0.95,
) -> tuple[list[PredictionPoweredDifference], str | None]:
    """``(differences, reason)``: prediction-powered CIs of ``system − baseline`` for two
    runs scored with gold labels of the same pairs (each system's drafts labelled), or
    ``[]`` and why there are none; theme metrics only where both runs' gold entries hold
    theme counts."""
    from editf1.gold.report import prediction_powered_difference
    from editf1.ppi import UndefinedEstimateError

    reason = _gold_reason(baseline, system)
    if reason:
        return [], reason
    aligned = _aligned(baseline, system)
    labelled = [i for i, key in enumerate(baseline.keys) if key in baseline.gold]
    keys = [baseline.keys[i] for i in labelled]
    out = []
    for metric in metrics:
        level = "theme" if metric.startswith("theme_") else "content"
        names = _GOLD_COUNTS[level]
        entries = [run.gold[k] for run in (baseline, system) for k in keys]
        if level == "theme" and not (
            baseline.has_themes and system.has_themes and all(names[0] in e for e in entries)
        ):
            continue
        judge = [pair_counts(pairs, level) for pairs in (baseline.pairs, aligned)]
        gold = [
            np.array([[run.gold[k][n] for n in names] for k in keys]) for run in (baseline, system)
        ]
        args = (*judge, *gold, labelled, metric.removeprefix("theme_"))
        try:
            tuned, gold_only = (
                prediction_powered_difference(*args, lam=lam, confidence=confidence)
                for lam in (None, 0.0)
            )
        except UndefinedEstimateError:
            continue
        judge_only = _value(aligned, metric) - _value(baseline.pairs, metric)
        found = (tuned, gold_only, judge_only, len(keys), len(aligned))
        out.append(PredictionPoweredDifference(metric, baseline.name, system.name, *found))
    return out, None
