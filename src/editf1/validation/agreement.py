"""How far a judge agrees with clinicians, with bootstrap confidence intervals.

Following Buckley et al., "Scaling Clinical Judgment to Evaluate Medical AI" (arXiv
2609.12822): agreement and Cohen's kappa, each with a 95% percentile bootstrap CI from
2,000 resamples over *cases* (all items of a case are drawn together) and a fixed seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from sklearn.metrics import cohen_kappa_score, confusion_matrix

__all__ = [
    "Estimate",
    "agreement",
    "binary_agreement_report",
    "bootstrap",
    "bootstrap_resamples",
    "cohen_kappa",
    "inter_annotator_report",
]


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap confidence interval.

    Attributes:
        value: the statistic on all items.
        low, high: the CI bounds (percentile method).
        n: items the statistic was computed on.
        confidence: the CI's level, e.g. 0.95.
    """

    value: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def agreement(y_true: Sequence, y_pred: Sequence) -> float:
    """Share of items on which the two labelings agree, a fraction in [0, 1].

    >>> agreement([1, 0, 1, 1], [1, 0, 0, 1])
    0.75
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float((y_true == y_pred).mean()) if len(y_true) else 0.0


def cohen_kappa(y_true: Sequence, y_pred: Sequence, weights: str | None = None) -> float:
    """Cohen's kappa (``weights="quadratic"`` for ordinal scores), via scikit-learn:
    (p_o - p_e) / (1 - p_e), the agreement beyond chance (Buckley et al., arXiv
    2609.12822, judge-agreement statistics).

    Args:
        y_true, y_pred: N labels each (any hashable values), e.g. expert and judge.
        weights: ``None``, ``"linear"`` or ``"quadratic"``.

    Returns:
        kappa in [-1, 1]. When both raters use one and the same label on every item,
        kappa is 0/0; it is reported as 1.0 (the raters agree completely, and no
        chance correction applies), never NaN.

    Raises:
        ValueError: if the lengths differ.

    >>> round(cohen_kappa([1, 0, 1, 1], [1, 0, 0, 1]), 4)
    0.5
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"cohen_kappa: {len(y_true)} labels against {len(y_pred)}")
    if len(set(y_true.tolist()) | set(y_pred.tolist())) < 2:
        return 1.0
    value = cohen_kappa_score(y_true, y_pred, weights=weights)
    return 0.0 if np.isnan(value) else float(value)


def bootstrap(
    statistic: Callable[[np.ndarray], float],
    n_items: int,
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Percentile bootstrap CI of ``statistic`` over items, resampling whole cases.

    Args:
        statistic: maps an array of item indices (with repeats) to a float.
        n_items: number of items.
        groups: the case of each item (length ``n_items``); cases are resampled with
            replacement and bring all their items. Default: each item is its own case.
        n_resamples: bootstrap resamples (Buckley et al. use 2,000).
        confidence: CI level in (0, 1).
        seed: seed of the NumPy generator; the same seed gives the same CI.

    Returns:
        :class:`Estimate` with ``value = statistic(all items)``.

    Raises:
        ValueError: if there are no items or ``groups`` has the wrong length.
    """
    values = bootstrap_resamples(
        statistic, n_items, groups=groups, n_resamples=n_resamples, seed=seed
    )
    alpha = (1 - confidence) / 2
    if np.isnan(values).all():
        raise ValueError("the statistic is undefined on every bootstrap resample")
    # A resample can hold no item of a class (e.g. no human match): it is skipped.
    low, high = np.nanquantile(values, [alpha, 1 - alpha])
    return Estimate(
        float(statistic(np.arange(n_items))), float(low), float(high), n_items, confidence
    )


def bootstrap_resamples(
    statistic: Callable[[np.ndarray], float],
    n_items: int,
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> np.ndarray:
    """``statistic`` on ``n_resamples`` case-level bootstrap resamples of the items.

    The resampling behind :func:`bootstrap`, for callers that need the whole
    distribution (e.g. a paired bootstrap test, :mod:`editf1.analysis.compare`). The same seed
    and arguments draw the same resamples as :func:`bootstrap`.

    Args:
        statistic: maps an array of item indices (with repeats) to a float (NaN where
            undefined on a resample).
        n_items: number of items.
        groups: the case of each item (length ``n_items``); default: one case per item.
        n_resamples: bootstrap resamples.
        seed: seed of the NumPy generator.

    Returns:
        Array of shape ``(n_resamples,)``.

    Raises:
        ValueError: if there are no items or ``groups`` has the wrong length.
    """
    if n_items < 1:
        raise ValueError("bootstrap needs at least one item")
    group_ids = np.arange(n_items) if groups is None else np.asarray(groups)
    if len(group_ids) != n_items:
        raise ValueError(f"groups has {len(group_ids)} entries for {n_items} items")
    cases, inverse = np.unique(group_ids, return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(len(cases))]
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples)
    for b in range(n_resamples):
        drawn = rng.integers(0, len(cases), size=len(cases))
        values[b] = statistic(np.concatenate([members[k] for k in drawn]))
    return values


def binary_agreement_report(
    human: Sequence[bool],
    judge: Sequence[bool],
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Agreement of a match / no-match judge with human labels (Table 7 style).

    Args:
        human, judge: N booleans, True for "the draft contains this sentence".
        groups: the case of each item, for the bootstrap.

    Returns:
        ``{"agreement", "cohen_kappa", "match_agreement", "non_match_agreement":
        Estimate, "confusion_matrix": [[TN, FP], [FN, TP]], "n": N}``;
        match_agreement is the judge's agreement on items the humans call a match
        (recall), non_match_agreement on items they call no match.
    """
    h, j = np.asarray(human, dtype=bool), np.asarray(judge, dtype=bool)

    def on(mask_value: bool):
        def stat(idx):
            keep = idx[h[idx] == mask_value]
            return agreement(h[keep], j[keep]) if len(keep) else np.nan

        return stat

    kw = {"groups": groups, "n_resamples": n_resamples, "seed": seed}
    return {
        "agreement": bootstrap(lambda i: agreement(h[i], j[i]), len(h), **kw),
        "cohen_kappa": bootstrap(lambda i: cohen_kappa(h[i], j[i]), len(h), **kw),
        "match_agreement": bootstrap(on(True), len(h), **kw),
        "non_match_agreement": bootstrap(on(False), len(h), **kw),
        "confusion_matrix": confusion_matrix(h, j, labels=[False, True]).tolist(),
        "n": len(h),
    }


def inter_annotator_report(
    labels: Sequence[Sequence],
    *,
    groups: Sequence | None = None,
    weights: str | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Agreement among several humans on the same items: the ceiling for a judge.

    Args:
        labels: A lists (one per annotator) of N labels each.
        groups: the case of each item, for the bootstrap.
        weights: ``None`` or ``"quadratic"`` for Cohen's kappa.

    Returns:
        ``{"agreement", "cohen_kappa": Estimate}``, each the mean over the A(A-1)/2
        annotator pairs, plus ``"pairs"``: the same per pair.
    """
    matrix = np.asarray(labels)
    pairs = list(combinations(range(len(matrix)), 2))
    if not pairs:
        raise ValueError("inter-annotator agreement needs at least two annotators")
    kw = {"groups": groups, "n_resamples": n_resamples, "seed": seed}
    n = matrix.shape[1]

    def mean_over_pairs(fn):
        return lambda i: float(np.mean([fn(matrix[a][i], matrix[b][i]) for a, b in pairs]))

    return {
        "agreement": bootstrap(mean_over_pairs(agreement), n, **kw),
        "cohen_kappa": bootstrap(mean_over_pairs(lambda x, y: cohen_kappa(x, y, weights)), n, **kw),
        "pairs": {
            f"{a}-{b}": {
                "agreement": agreement(matrix[a], matrix[b]),
                "cohen_kappa": cohen_kappa(matrix[a], matrix[b], weights),
            }
            for a, b in pairs
        },
    }
