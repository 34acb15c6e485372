"""The statistics of edit-F1: case-level bootstrap confidence intervals and paired tests.

Every interval in the package is a percentile bootstrap interval (Efron & Tibshirani,
*An Introduction to the Bootstrap*, 1993, §13) from 2,000 resamples over *cases*
(all items of a case, e.g. every sentence of one patient message, are drawn together)
with a fixed seed, as in Buckley et al., arXiv 2609.12822; a paired comparison of two
systems adds the two-sided bootstrap p-value that inverts that interval (§16).

The resamples are drawn by ``scipy.stats.bootstrap`` (the cases' indices are its data,
``method="percentile"``, a seeded ``numpy.random.default_rng``); this module is a thin
wrapper around it for three things it does otherwise: a resample on which the statistic
is undefined (NaN, e.g. no human match) is left out of the interval here, where SciPy's
interval becomes NaN; the bounds are NumPy's quantiles of SciPy's bootstrap distribution
(``scipy.stats.quantile`` differs in the last bit, so published CIs would move); and a
single case is accepted (every resample is that case), where SciPy refuses one
observation. The draws are SciPy's, the same as this module drew before it used SciPy
(tests/test_stats.py compares them), so no published figure moved. ``permutation_test``
tests another null hypothesis (sign flips of paired differences) and would change
published p-values, so paired p-values invert the bootstrap interval instead.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.stats

__all__ = [
    "MIN_RESAMPLES",
    "Estimate",
    "PairedBootstrap",
    "bootstrap",
    "bootstrap_resamples",
    "check_n_resamples",
    "paired_bootstrap",
]

#: The fewest bootstrap resamples B any interval takes. A percentile interval's bounds are
#: the (1 - confidence) / 2 quantiles of the B resamples: with B = 100 a 95% interval has
#: 2.5 resamples beyond each bound, with B = 1 or 2 its bounds are single resamples that
#: need not hold the estimate. Efron & Tibshirani (1993, §13.3) advise B of 1,000 or more
#: for percentile intervals; every interval of the package uses 2,000 by default.
MIN_RESAMPLES = 100


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap confidence interval.

    Attributes:
        value: the statistic on all items (in the statistic's units, e.g. a fraction
            in [0, 1] for an agreement or an F1).
        low, high: the CI bounds (percentile method), same units.
        n: items the statistic was computed on.
        confidence: the CI's level, e.g. 0.95.

    >>> str(Estimate(0.5, 0.25, 0.75, 8))
    '0.500 [0.250, 0.750]'
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


def _alpha(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return (1 - confidence) / 2


def check_n_resamples(n_resamples, confidence: float | None = None) -> int:
    """Return ``n_resamples`` if it is enough resamples for a percentile bootstrap CI.

    Enough is an integer of at least :data:`MIN_RESAMPLES` and, for an interval at
    ``confidence``, at least ``2 / (1 - confidence)``, so that at least one resample lies
    beyond each bound (200 at 99%, 2,000 at 99.9%).

    Raises:
        ValueError: naming ``n_resamples``, the value given and the minimum.

    >>> check_n_resamples(2000)
    2000
    >>> check_n_resamples(200, confidence=0.99)  # 100 would leave 0.5 beyond each bound
    200
    """
    least = MIN_RESAMPLES
    if confidence is not None and 0 < confidence < 1:
        least = max(least, math.ceil(round(2 / (1 - confidence), 6)))
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise ValueError(
            f"n_resamples must be an integer of at least {least}, got {type(n_resamples).__name__}"
        )
    if n_resamples < least:
        why = (
            f"for a {100 * confidence:g}% bootstrap interval (at least one resample beyond "
            "each bound)"
            if least > MIN_RESAMPLES
            else "(a percentile interval from fewer rests on a handful of resamples and "
            "need not hold its own estimate)"
        )
        raise ValueError(
            f"n_resamples must be an integer of at least {least} {why}, got {n_resamples}"
        )
    return int(n_resamples)


def bootstrap(
    statistic: Callable[[np.ndarray], float],
    n_items: int,
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Percentile bootstrap CI of ``statistic`` over items, resampling whole cases
    (Efron & Tibshirani 1993, §13).

    Args:
        statistic: maps an int array of item indices (with repeats, any length) to a
            float; NaN where it is undefined on a resample (e.g. no item of a class).
        n_items: number of items N.
        groups: the case of each item (length N, any hashable values); cases are
            resampled with replacement and bring all their items. Default: each item
            is its own case.
        n_resamples: bootstrap resamples B (Buckley et al. use 2,000); at least
            :data:`MIN_RESAMPLES` (:func:`check_n_resamples`).
        confidence: CI level in (0, 1).
        seed: seed of the NumPy generator; the same seed gives the same CI.

    Returns:
        :class:`Estimate` with ``value = statistic(all items)``; resamples on which the
        statistic is NaN are left out of the interval.

    Raises:
        ValueError: if there are no items, ``groups`` has the wrong length,
            ``n_resamples`` is too few (:func:`check_n_resamples`), ``confidence`` is
            outside (0, 1), or the statistic is undefined on every resample.

    >>> bootstrap(lambda idx: 0.5, 4, n_resamples=100)
    Estimate(value=0.5, low=0.5, high=0.5, n=4, confidence=0.95)
    """
    alpha = _alpha(confidence)
    check_n_resamples(n_resamples, confidence)
    values = bootstrap_resamples(
        statistic, n_items, groups=groups, n_resamples=n_resamples, seed=seed
    )
    if np.isnan(values).all():
        raise ValueError("the statistic is undefined on every bootstrap resample")
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

    The resampling behind :func:`bootstrap` and :func:`paired_bootstrap`, for callers
    that need the whole distribution. ``scipy.stats.bootstrap`` draws, for resample b, C
    case indices uniformly with replacement (C = number of distinct cases) from
    ``numpy.random.default_rng(seed)``; the items of the drawn cases, in draw order, go
    to ``statistic``. The same seed and arguments draw the same resamples.

    Args:
        statistic: maps an int array of item indices (with repeats) to a float (NaN
            where undefined on a resample).
        n_items: number of items N.
        groups: the case of each item (length N); default: one case per item.
        n_resamples: bootstrap resamples B, at least :data:`MIN_RESAMPLES`.
        seed: seed of the NumPy generator.

    Returns:
        Float array of shape ``(B,)``.

    Raises:
        ValueError: if there are no items, ``groups`` has the wrong length or
            ``n_resamples`` is too few (:func:`check_n_resamples`).
    """
    if n_items < 1:
        raise ValueError("bootstrap needs at least one item")
    n_resamples = check_n_resamples(n_resamples)
    group_ids = np.arange(n_items) if groups is None else np.asarray(groups)
    if len(group_ids) != n_items:
        raise ValueError(f"groups has {len(group_ids)} entries for {n_items} items")
    cases, inverse = np.unique(group_ids, return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(len(cases))]
    if len(cases) == 1:  # SciPy refuses one observation; every resample is the case
        return np.full(n_resamples, float(statistic(members[0])))

    def on_cases(drawn: np.ndarray) -> float:
        return statistic(np.concatenate([members[k] for k in drawn]))

    with warnings.catch_warnings():  # an undefined or constant statistic: handled above
        warnings.simplefilter("ignore", scipy.stats.DegenerateDataWarning)
        result = scipy.stats.bootstrap(
            (np.arange(len(cases)),),
            on_cases,
            n_resamples=n_resamples,
            vectorized=False,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return np.asarray(result.bootstrap_distribution, dtype=float)


class PairedBootstrap(NamedTuple):
    """The result of :func:`paired_bootstrap`.

    Attributes:
        difference: ``system − baseline`` on all items, with its percentile CI
            (``n`` is the number of items).
        p_value: two-sided bootstrap p-value for "no difference", in (0, 1].
    """

    difference: Estimate
    p_value: float


def paired_bootstrap(
    baseline: Callable[[np.ndarray], float],
    system: Callable[[np.ndarray], float],
    n_items: int,
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedBootstrap:
    """Paired bootstrap of ``system − baseline`` on the same items, with a p-value.

    Each resample draws cases with replacement (:func:`bootstrap_resamples`) and
    evaluates *both* statistics on the same items; the B differences ``d*`` give the
    percentile CI (Efron & Tibshirani 1993, §13) and the two-sided p-value
    ``min(1, 2 min(P(d* <= 0), P(d* >= 0)))``, each proportion counted as
    ``(1 + #) / (B + 1)`` (§16). It inverts the interval: p < 1 - confidence exactly
    when the CI excludes 0, up to the resolution of B resamples.

    Args:
        baseline, system: each maps an int array of item indices (with repeats) to a
            float, e.g. a micro-averaged F1 in [0, 1]; both must be defined on every
            resample.
        n_items: number of items N (the same items in both).
        groups: the case of each item (length N); default: one case per item.
        n_resamples: bootstrap resamples B (:func:`check_n_resamples`).
        confidence: CI level in (0, 1).
        seed: seed of the NumPy generator; the same seed gives the same CI and p-value.

    Returns:
        :class:`PairedBootstrap` ``(difference, p_value)``.

    Raises:
        ValueError: as :func:`bootstrap_resamples`, for ``confidence`` outside (0, 1),
            or if the difference is NaN on a resample.

    >>> same = paired_bootstrap(lambda i: 0.5, lambda i: 0.5, 3, n_resamples=100)
    >>> same.difference.value, same.p_value
    (0.0, 1.0)
    """
    alpha = _alpha(confidence)
    check_n_resamples(n_resamples, confidence)

    def difference(idx: np.ndarray) -> float:
        return system(idx) - baseline(idx)

    values = bootstrap_resamples(
        difference, n_items, groups=groups, n_resamples=n_resamples, seed=seed
    )
    undefined = int(np.isnan(values).sum())
    if undefined:
        raise ValueError(
            f"the difference is undefined on {undefined} of {n_resamples} bootstrap resamples"
        )
    low, high = np.quantile(values, [alpha, 1 - alpha])
    below = (1 + np.count_nonzero(values <= 0)) / (n_resamples + 1)
    above = (1 + np.count_nonzero(values >= 0)) / (n_resamples + 1)
    observed = float(difference(np.arange(n_items)))
    return PairedBootstrap(
        Estimate(observed, float(low), float(high), n_items, confidence),
        min(1.0, 2 * min(below, above)),
    )
