"""Case-level percentile bootstrap confidence intervals (Efron & Tibshirani, *An
Introduction to the Bootstrap*, 1993, §13; cases resampled whole, as in Buckley et al.,
arXiv 2609.12822) and paired tests (§16), on ``scipy.stats.bootstrap``'s resamples.
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

#: The fewest bootstrap resamples B any interval takes (Efron & Tibshirani 1993, §13.3,
#: advise 1,000 or more; every interval of the package uses 2,000 by default).
MIN_RESAMPLES = 100


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap CI: ``value`` on all ``n`` items, ``low`` / ``high``
    bounds (same units) at ``confidence``; ``str`` gives ``0.500 [0.250, 0.750]``.
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


def check_n_resamples(n_resamples, confidence: float | None = None) -> int:
    """Return ``n_resamples`` if it is an integer of at least :data:`MIN_RESAMPLES` and, at
    ``confidence``, at least ``2 / (1 - confidence)`` (a resample beyond each bound); else
    ValueError naming the value given and the minimum.
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
    """Percentile bootstrap CI of ``statistic`` over N items, resampling whole cases (§13),
    with ``value = statistic(all items)``. ``statistic`` maps an int array of item indices
    (with repeats) to a float, NaN where undefined (such resamples are left out); ``groups``:
    the case of each item (default: each item its own case); ``seed``: NumPy's generator's.

    Raises:
        ValueError: for no items, ``groups`` of the wrong length, too few resamples,
            ``confidence`` outside (0, 1), or a statistic undefined on every resample.
    """
    values, quantiles = _resampled(statistic, n_items, groups, n_resamples, confidence, seed)
    if np.isnan(values).all():
        raise ValueError("the statistic is undefined on every bootstrap resample")
    low, high = np.nanquantile(values, quantiles)
    value = float(statistic(np.arange(n_items)))
    return Estimate(value, float(low), float(high), n_items, confidence)


def _resampled(statistic, n_items, groups, n_resamples, confidence, seed):
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    check_n_resamples(n_resamples, confidence)
    values = bootstrap_resamples(
        statistic, n_items, groups=groups, n_resamples=n_resamples, seed=seed
    )
    alpha = (1 - confidence) / 2
    return values, [alpha, 1 - alpha]


def bootstrap_resamples(
    statistic: Callable[[np.ndarray], float],
    n_items: int,
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> np.ndarray:
    """``statistic`` on ``n_resamples`` case-level resamples, a float array of shape ``(B,)``:
    each draws C of the C cases with replacement; their items, in draw order, go to
    ``statistic``. Arguments and errors as :func:`bootstrap`.
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
    """``difference`` (``system − baseline``, with its CI) and the two-sided ``p_value``."""

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
    """Paired bootstrap of ``system − baseline`` on the same resampled items: the percentile
    CI of the B differences ``d*`` (§13) and the p-value ``min(1, 2 min(P(d* <= 0), P(d* >=
    0)))``, each proportion ``(1 + #) / (B + 1)`` (§16). Arguments and errors as
    :func:`bootstrap` (ValueError also if the difference is NaN on a resample).
    """

    def difference(idx: np.ndarray) -> float:
        return system(idx) - baseline(idx)

    values, quantiles = _resampled(difference, n_items, groups, n_resamples, confidence, seed)
    undefined = int(np.isnan(values).sum())
    if undefined:
        raise ValueError(
            f"the difference is undefined on {undefined} of {n_resamples} bootstrap resamples"
        )
    low, high = np.quantile(values, quantiles)
    below = (1 + np.count_nonzero(values <= 0)) / (n_resamples + 1)
    above = (1 + np.count_nonzero(values >= 0)) / (n_resamples + 1)
    observed = float(difference(np.arange(n_items)))
    return PairedBootstrap(
        Estimate(observed, float(low), float(high), n_items, confidence),
        min(1.0, 2 * min(below, above)),
    )
