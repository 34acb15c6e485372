"""Prediction-powered inference (Angelopoulos et al., *Science* 382, 2023) for edit-F1's corpus
ratios of means, a judge scoring every pair and clinicians a few, with PPI++'s power tuning
(Angelopoulos, Duchi & Zrnic, arXiv 2311.01453, Example 6.1: the tuned ``lam`` clipped to
[0, 1], its gradient taken at ``lam = 1`` as ``ppi_py`` does) and delta-method variances.

By default (``small_sample=True``) the interval is Student-t with n - 1 degrees of
freedom, variances have divisors n - 1 and m - 1, and ``Var(psi - lam phi)`` (``psi``,
``phi``: gold and judge values times the estimand's gradient) is at least ``Var(psi -
phi) + (1 - lam)^2 Var(phi) + 2 (1 - lam) Cov(psi - phi, phi)`` with ``Var(phi)`` over
all pairs, which guards against a small sample that misses the rare pairs holding most
errors; ``small_sample=False`` is PPI++'s normal interval as ``ppi_py`` computes it. On
the team's fully labelled pairs (``benchmarks/ppi_simulation.py``, 1,000 draws per n)
that normal interval covered OncQA's all-gold F1 in 93.4% of draws with 20 labelled
pairs and ExpertQA's recall (most pairs perfect, a few carrying the errors) in 73.8%; the
default covered every set, figure and n in 93.0% of draws or more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, t

from editf1.stats import Estimate

__all__ = [
    "MIN_LABELLED",
    "PPIEstimate",
    "UndefinedEstimateError",
    "classical_ratio",
    "ppi_mean",
    "ppi_ratio",
    "ppi_ratio_difference",
    "ratio_columns",
]


#: The fewest labelled pairs an estimate takes (a variance needs two).
MIN_LABELLED = 2


class UndefinedEstimateError(ValueError):
    """The estimand's denominator is 0 on the data: the ratio is undefined."""


@dataclass(frozen=True)
class PPIEstimate(Estimate):
    """An :class:`~editf1.stats.Estimate` from ``n`` labelled pairs and ``n_unlabelled``
    judge-only ones, with the delta-method ``standard_error`` (before clipping) and ``lam``.
    """

    standard_error: float = 0.0
    lam: float = 0.0
    n_unlabelled: int = 0


def _as_matrix(values, name: str, k: int) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim == 1 and k == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[1] != k:
        raise ValueError(f"{name} must have shape (rows, {k}), got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds a value that is not a finite number")
    return array


#: An estimand ``theta = h(E[Y])``: the columns of ``Y``, ``h``, its gradient, its range.
Estimand = tuple[int, Callable, Callable, tuple[float, float]]


def _smooth(
    estimand: Estimand, gold, judge, judge_unlabelled, lam, confidence, small_sample
) -> PPIEstimate:
    """PPI++ for ``theta = h(E[Y])`` (the module docstring)."""
    k, h, gradient, bounds = estimand
    named = {"gold": gold, "judge": judge, "judge_unlabelled": judge_unlabelled}
    gold, judge, judge_unlabelled = (_as_matrix(v, name, k) for name, v in named.items())
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    n, m = len(gold), len(judge_unlabelled)
    if n < MIN_LABELLED:
        raise ValueError(
            f"prediction-powered inference needs at least {MIN_LABELLED} labelled pairs, got {n}"
        )
    if len(judge) != n:
        raise ValueError(f"{n} gold rows but {len(judge)} judge rows for the labelled pairs")
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError(f"lam must lie in [0, 1], got {lam}")
    if m == 0:
        lam = 0.0
    if lam is None:
        start = gold.mean(0) + judge_unlabelled.mean(0) - judge.mean(0)  # plain PPI, lam = 1
        try:
            g = gradient(start)
        except UndefinedEstimateError:
            g = gradient(gold.mean(0))
        psi, phi = gold @ g, judge @ g
        covariance = float(np.mean((psi - psi.mean()) * (phi - phi.mean())))
        variance = float(np.var(np.concatenate([phi, judge_unlabelled @ g]), ddof=1))
        lam = float(np.clip(covariance / ((1 + n / m) * variance), 0, 1)) if variance > 0 else 0.0
    mu = gold.mean(0) + (lam * (judge_unlabelled.mean(0) - judge.mean(0)) if lam else 0.0)
    theta, g = h(mu), gradient(mu)
    ddof = int(small_sample)
    psi, phi, phi_unlabelled = gold @ g, judge @ g, judge_unlabelled @ g
    spread = float(np.var(psi - lam * phi, ddof=ddof))
    if small_sample and m and lam:  # the pooled variance of the module docstring
        error, every_phi = psi - phi, np.concatenate([phi, phi_unlabelled])
        pooled = float(np.var(error, ddof=1)) + (1 - lam) ** 2 * float(np.var(every_phi, ddof=1))
        spread = max(spread, pooled + 2 * (1 - lam) * float(np.cov(error, phi)[0, 1]))
    variance = spread / n
    if lam and m > ddof:
        variance += lam**2 * float(np.var(phi_unlabelled, ddof=ddof)) / m
    level = 1 - (1 - confidence) / 2
    q = float(t.ppf(level, n - 1) if small_sample else norm.ppf(level))
    se = float(np.sqrt(variance))
    value, low, high = (float(x) for x in np.clip([theta, theta - q * se, theta + q * se], *bounds))
    return PPIEstimate(value, low, high, n, confidence, se, float(lam), m if lam else 0)


def _ratio(mu: np.ndarray, what: str = "the ratio") -> float:
    if mu[1] <= 0:
        raise UndefinedEstimateError(f"{what} is undefined: its denominator is 0 on these pairs")
    return float(mu[0] / mu[1])


def _ratio_gradient(mu: np.ndarray) -> np.ndarray:
    return np.array([1.0, -_ratio(mu)]) / mu[1]


_RATIO: Estimand = (2, _ratio, _ratio_gradient, (0.0, 1.0))
_DIFFERENCE: Estimand = (
    4,
    lambda mu: _ratio(mu[:2], "the system's ratio") - _ratio(mu[2:], "the baseline's ratio"),
    lambda mu: np.concatenate([_ratio_gradient(mu[:2]), -_ratio_gradient(mu[2:])]),
    (-1.0, 1.0),
)


def ppi_mean(
    gold,
    judge,
    judge_unlabelled,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    small_sample: bool = True,
) -> PPIEstimate:
    """PPI++ estimate and CI of a mean (PPI++ Example 6.1), not clipped: ``gold``, ``judge`` of
    shape (n,), ``judge_unlabelled`` (m,); ``lam`` in [0, 1] (``None`` tunes it);
    ``small_sample``: the module docstring.

    Raises:
        ValueError: fewer than 2 labelled items, mismatched lengths, a non-finite value,
            ``lam`` outside [0, 1] or ``confidence`` outside (0, 1).
    """
    mean = (1, lambda mu: float(mu[0]), lambda mu: np.ones(1), (-np.inf, np.inf))
    return _smooth(mean, gold, judge, judge_unlabelled, lam, confidence, small_sample)


def ratio_columns(counts, metric: str) -> np.ndarray:
    """The (numerator, denominator) of a precision, recall or F1 for each pair's (tp, fp, fn),
    an (N, 2) float array (the corpus figure is ``sum(col 0) / sum(col 1)``); ValueError for
    another metric or counts not of shape (N, 3).
    """
    tp, fp, fn = _as_matrix(counts, "counts", 3).T
    columns = {
        "precision": (tp, tp + fp),
        "recall": (tp, tp + fn),
        "f1": (2 * tp, 2 * tp + fp + fn),
    }
    if metric not in columns:
        raise ValueError(f"metric must be 'precision', 'recall' or 'f1', got {metric!r}")
    return np.column_stack(columns[metric])


def ppi_ratio(
    gold,
    judge,
    judge_unlabelled,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    small_sample: bool = True,
) -> PPIEstimate:
    """PPI++ estimate and CI of ``E[a] / E[b]``, clipped to [0, 1]: ``gold``, ``judge`` (n, 2)
    (a, b) of the labelled pairs (:func:`ratio_columns`), ``judge_unlabelled`` (m, 2); options
    and ValueError as :func:`ppi_mean`; UndefinedEstimateError for a mean denominator <= 0.
    """
    return _smooth(_RATIO, gold, judge, judge_unlabelled, lam, confidence, small_sample)


def classical_ratio(values, *, confidence: float = 0.95, small_sample: bool = True) -> PPIEstimate:
    """The delta-method CI of a ratio of means from one labelling of every (n, 2) pair
    (``lam = 0``); options and errors as :func:`ppi_ratio`.
    """
    y = _as_matrix(values, "values", 2)
    return _smooth(_RATIO, y, y, y[:0], 0.0, confidence, small_sample)


def ppi_ratio_difference(
    gold,
    judge,
    judge_unlabelled,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    small_sample: bool = True,
) -> PPIEstimate:
    """PPI++ estimate and CI of ``E[a1]/E[b1] - E[a2]/E[b2]`` (a system's ratio minus a
    baseline's on the same pairs), clipped to [-1, 1]: ``gold``, ``judge`` (n, 4), the
    system's (a, b) then the baseline's; ``judge_unlabelled`` (m, 4); one ``lam`` for both;
    options and errors as :func:`ppi_ratio`.
    """
    return _smooth(_DIFFERENCE, gold, judge, judge_unlabelled, lam, confidence, small_sample)
