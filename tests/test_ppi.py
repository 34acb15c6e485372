"""PPI++ estimators of editf1.ppi: by hand on tiny arrays, against the authors' ppi_py,
and on a simulated case whose answer is known."""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest
from scipy.stats import norm, t

from editf1.ppi import (
    UndefinedEstimateError,
    classical_ratio,
    ppi_mean,
    ppi_ratio,
    ppi_ratio_difference,
    ratio_columns,
)

# Three labelled pairs (gold a, b), the judge on them, and four unlabelled pairs.
GOLD = [[1, 2], [0, 2], [2, 2]]
JUDGE = [[1, 2], [1, 2], [2, 2]]
UNLABELLED = [[0, 2], [2, 2], [1, 2], [1, 2]]
Z = norm.ppf(0.975)


def _var(values, ddof: int = 0) -> Fr:  # variance with divisor n - ddof, exactly
    mean = sum(values, Fr(0)) / len(values)
    return sum(((v - mean) ** 2 for v in values), Fr(0)) / (len(values) - ddof)


def test_ratio_with_lam_fixed_by_hand():
    # mean gold a = 1, judge a = 4/3 on the labelled pairs, 1 on the unlabelled; b = 2.
    # lam = 1/2: mean a = 1 + (1 - 4/3)/2 = 5/6, theta = 5/12.
    theta = Fr(5, 12)
    # gradient (1/b, -theta/b): psi = a/2 - 5/12, phi likewise with the judge's a
    psi = [Fr(a, 2) - theta for a in (1, 0, 2)]
    phi = [Fr(a, 2) - theta for a in (1, 1, 2)]
    phi_u = [Fr(a, 2) - theta for a in (0, 2, 1, 1)]
    rectifier = [p - Fr(1, 2) * f for p, f in zip(psi, phi)]  # (1/24, -11/24, 7/24)
    # the normal interval of PPI++ (divisors n and m, z quantile), as ppi_py
    variance = _var(rectifier) / 3 + Fr(1, 4) * _var(phi_u) / 4
    assert variance == Fr(7, 216) + Fr(1, 128)
    e = ppi_ratio(GOLD, JUDGE, UNLABELLED, lam=0.5, small_sample=False)
    assert e.value == pytest.approx(5 / 12)
    assert e.standard_error == pytest.approx(float(variance) ** 0.5)
    half = Z * e.standard_error
    assert (e.low, e.high) == pytest.approx((5 / 12 - half, 5 / 12 + half))
    assert (e.n, e.n_unlabelled, e.lam) == (3, 4, 0.5)
    # the default: t quantile with n - 1 = 2 df, divisors n - 1 and m - 1, and
    # Var(psi - lam phi) the larger of the labelled pairs' own (7/48) and the one with
    # the judge's part from all 7 pairs: Var(psi - phi) + (1 - lam)^2 Var(phi) +
    # 2 (1 - lam) Cov(psi - phi, phi) = 1/12 + (1/4)(5/42) + 1/24 = 13/84
    error = [p - f for p, f in zip(psi, phi)]  # (0, -1/2, 0)
    mean_e, mean_f = sum(error, Fr(0)) / 3, sum(phi, Fr(0)) / 3
    covariance = sum(((e - mean_e) * (f - mean_f) for e, f in zip(error, phi)), Fr(0)) / 2
    pooled = _var(error, 1) + Fr(1, 4) * _var(phi + phi_u, 1) + covariance
    assert (_var(rectifier, 1), pooled) == (Fr(7, 48), Fr(13, 84))
    small = max(_var(rectifier, 1), pooled) / 3 + Fr(1, 4) * _var(phi_u, 1) / 4
    e = ppi_ratio(GOLD, JUDGE, UNLABELLED, lam=0.5)
    assert e.standard_error == pytest.approx(float(small) ** 0.5)
    half = t.ppf(0.975, 2) * e.standard_error
    assert (e.low, e.high) == pytest.approx((max(0.0, 5 / 12 - half), min(1.0, 5 / 12 + half)))


def test_ratio_with_lam_tuned_by_hand():
    # At the plain-PPI estimate (lam 1): theta = 1/3, psi = a/2 - 1/3 = (1/6, -1/3, 2/3),
    # phi = (1/6, 1/6, 2/3); Cov (divisor n) = 1/12. Var of phi over all seven pairs
    # (divisor n - 1) = 5/42. lam = (1/12) / ((1 + 3/4) 5/42) = 2/5.
    e = ppi_ratio(GOLD, JUDGE, UNLABELLED)
    assert e.lam == pytest.approx(0.4)
    assert e.value == pytest.approx(13 / 30)  # (1 + (2/5)(1 - 4/3)) / 2


def test_lam_zero_is_the_gold_labels_alone():
    gold_only = ppi_ratio(GOLD, JUDGE, UNLABELLED, lam=0)
    classical = classical_ratio(GOLD)
    assert gold_only.value == classical.value == pytest.approx(0.5)
    # psi = (a - b/2)/2 = (0, -1/2, 1/2): Var = 1/4 (divisor n - 1), se = sqrt(1/12)
    assert gold_only.standard_error == classical.standard_error == pytest.approx((1 / 12) ** 0.5)
    normal = classical_ratio(GOLD, small_sample=False)  # divisor n: Var = 1/6
    assert normal.standard_error == pytest.approx((1 / 18) ** 0.5)
    assert gold_only.n_unlabelled == 0


def test_a_perfect_judge_takes_lam_near_one_and_narrows_the_interval():
    rng = np.random.default_rng(0)
    b = rng.integers(1, 6, size=300)
    a = rng.binomial(b, 0.3)
    counts = np.column_stack([a, b])
    tuned = ppi_ratio(counts[:30], counts[:30], counts[300 - 270 :])
    # judge = gold: the plain-PPI start is the unlabelled pairs' ratio, and
    # lam = Var_labelled(psi) / ((1 + 30/270) Var_all(psi)), clipped to 1
    theta = counts[30:, 0].sum() / counts[30:, 1].sum()
    psi = counts[:, 0] - theta * counts[:, 1]
    expected = np.var(psi[:30]) / ((1 + 30 / 270) * np.var(psi, ddof=1))
    assert tuned.lam == pytest.approx(min(1.0, expected))
    assert 0.6 < tuned.lam <= 1
    assert tuned.high - tuned.low < 0.5 * (
        classical_ratio(counts[:30]).high - classical_ratio(counts[:30]).low
    )


def test_estimates_are_clipped_to_the_ratios_range():
    # lam 1: mean a = 0 + (0 - 3/2) < 0, theta = -3/4; rectifier psi - phi = (-1, -1/2):
    # se = sqrt(1/16 / 2) (unclipped), theta + 1.96 se < 0: everything clips to 0
    e = ppi_ratio([[0, 2], [0, 2]], [[2, 2], [1, 2]], [[0, 2]] * 5, lam=1, small_sample=False)
    assert (e.value, e.low, e.high) == (0.0, 0.0, 0.0)
    assert e.standard_error == pytest.approx((1 / 32) ** 0.5)


def test_undefined_and_bad_inputs():
    with pytest.raises(UndefinedEstimateError, match="denominator is 0"):
        classical_ratio([[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="at least 2 labelled pairs"):
        ppi_ratio([[1, 2]], [[1, 2]], [[1, 2]])
    with pytest.raises(ValueError, match="shape"):
        ppi_ratio([[1, 2, 3]] * 2, [[1, 2, 3]] * 2, [[1, 2, 3]])
    with pytest.raises(ValueError, match="finite"):
        ppi_ratio([[1, np.nan]] * 2, [[1, 2]] * 2, [[1, 2]])
    with pytest.raises(ValueError, match="lam must lie"):
        ppi_ratio(GOLD, JUDGE, UNLABELLED, lam=1.5)


def test_ratio_columns_of_counts():
    counts = [[2, 1, 3], [0, 4, 1]]  # (tp, fp, fn)
    assert ratio_columns(counts, "precision").tolist() == [[2, 3], [0, 4]]
    assert ratio_columns(counts, "recall").tolist() == [[2, 5], [0, 1]]
    assert ratio_columns(counts, "f1").tolist() == [[4, 8], [0, 5]]
    with pytest.raises(ValueError, match="metric"):
        ratio_columns(counts, "accuracy")


def test_difference_by_hand():
    # system gold a/b = (1 + 1)/(2 + 2) = 1/2, baseline 1/4: difference 1/4 at lam 0
    gold = [[1, 2, 0, 2], [1, 2, 1, 2]]
    e = ppi_ratio_difference(gold, gold, [[1, 2, 0, 2]], lam=0, small_sample=False)
    assert e.value == pytest.approx(0.25)
    # psi = (a1 - b1/2)/2 - (a2 - b2/4)/2 = (0 - (-1/4), 0 - 1/4) = (1/4, -1/4): se = 1/4/sqrt(2)
    assert e.standard_error == pytest.approx(0.25 / 2**0.5)
    # the same system twice: the difference is exactly 0, whatever lam
    same = [[1, 2, 1, 2], [0, 3, 0, 3], [2, 2, 2, 2]]
    zero = ppi_ratio_difference(same, same, same)
    assert (zero.value, zero.low, zero.high) == (0.0, 0.0, 0.0)


#: ppi_py 0.2.3's ``ppi_mean_pointestimate`` and ``ppi_mean_ci(alpha=0.1)`` on the data of
#: :func:`_crosscheck_data`, by lam (None: tuned): value, low, high. Recorded with the
#: authors' package (the ``crosscheck`` extra), so the check runs where it is not installed.
PPI_PY_MEAN = {
    None: (0.1538196252844376, -0.02565917547055771, 0.33329842603943294),
    0.0: (-0.041112513627908596, -0.3428885729486091, 0.26066354569279193),
    0.3: (0.027113817765099274, -0.19247938366495398, 0.24670701919515253),
    1.0: (0.1863085910154509, -0.017207266123623804, 0.38982444815452555),
}


def _crosscheck_data():
    rng = np.random.default_rng(3)
    y = rng.normal(size=40)
    f = y + rng.normal(scale=0.7, size=40) + 0.2
    u = rng.normal(size=500) + 0.2 + rng.normal(scale=0.7, size=500)
    return y, f, u


@pytest.mark.parametrize("lam", list(PPI_PY_MEAN))
def test_mean_matches_the_authors_ppi_py_recorded(lam):
    ours = ppi_mean(*_crosscheck_data(), lam=lam, confidence=0.9, small_sample=False)
    assert (ours.value, ours.low, ours.high) == pytest.approx(PPI_PY_MEAN[lam], abs=1e-12)


def test_mean_matches_the_authors_ppi_py_live():
    ppi_py = pytest.importorskip(
        "ppi_py", reason="ppi-python is not installed (the crosscheck extra)"
    )
    y, f, u = _crosscheck_data()
    for lam, recorded in PPI_PY_MEAN.items():
        low, high = ppi_py.ppi_mean_ci(y, f, u, alpha=0.1, lam=lam)
        point = ppi_py.ppi_mean_pointestimate(y, f, u, lam=lam)
        assert (float(np.squeeze(point)), float(low[0]), float(high[0])) == pytest.approx(
            recorded, abs=1e-12
        )


def test_coverage_near_nominal_on_a_simulated_ratio():
    # pairs: b ~ 1 + Poisson(3) sentences, each matched with p = 0.3 (gold); the judge
    # misses a third of the matches and adds false ones at 10%: biased, informative.
    # theta = E[a] / E[b] = 0.3 exactly.
    rng = np.random.default_rng(11)
    covered, widths, gold_widths = 0, [], []
    draws = 300
    for _ in range(draws):
        b = 1 + rng.poisson(3, size=1000)
        a = rng.binomial(b, 0.3)
        judged = rng.binomial(a, 2 / 3) + rng.binomial(b - a, 0.1)
        gold, judge = np.column_stack([a, b]), np.column_stack([judged, b])
        e = ppi_ratio(gold[:60], judge[:60], judge[60:])
        covered += e.low <= 0.3 <= e.high
        widths.append(e.high - e.low)
        classical = classical_ratio(gold[:60])
        gold_widths.append(classical.high - classical.low)
    assert 0.92 <= covered / draws <= 0.98  # binomial SE at 0.95 and 300 draws: 0.013
    assert np.mean(widths) < 0.9 * np.mean(gold_widths)
