"""Case-level bootstrap CIs and the paired bootstrap test of editf1.stats, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from editf1.stats import (
    MIN_RESAMPLES,
    Estimate,
    bootstrap,
    bootstrap_resamples,
    check_n_resamples,
    paired_bootstrap,
)


def mean_of(values):
    values = np.asarray(values, dtype=float)
    return lambda idx: float(values[idx].mean())


# ---------------------------------------------------------------- bootstrap


def test_a_constant_statistic_has_a_zero_width_ci():
    estimate = bootstrap(lambda idx: 0.25, 7, groups=[0, 0, 1, 1, 2, 2, 3], n_resamples=100)
    assert estimate == Estimate(0.25, 0.25, 0.25, 7, 0.95)
    assert str(estimate) == "0.250 [0.250, 0.250]"


def test_bootstrap_same_seed_same_ci():
    values = np.random.default_rng(1).random(40)
    first = bootstrap(mean_of(values), 40, n_resamples=300, seed=7)
    again = bootstrap(mean_of(values), 40, n_resamples=300, seed=7)
    other = bootstrap(mean_of(values), 40, n_resamples=300, seed=8)
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)


def test_resamples_are_the_documented_draws_of_the_seeded_generator():
    # one case per item: resample b is rng.integers(0, 5, size=5) of default_rng(3)
    rng = np.random.default_rng(3)
    expected = [rng.integers(0, 5, size=5) for _ in range(100)]
    drawn = bootstrap_resamples(
        lambda idx: float(idx @ 10 ** np.arange(5)), 5, n_resamples=100, seed=3
    )
    assert drawn.tolist() == [float(e @ 10 ** np.arange(5)) for e in expected]
    again = bootstrap_resamples(
        lambda idx: float(idx @ 10 ** np.arange(5)), 5, n_resamples=100, seed=3
    )
    assert np.array_equal(drawn, again)


def test_bootstrap_ci_contains_the_value():
    values = np.random.default_rng(2).random(50)
    estimate = bootstrap(mean_of(values), 50, n_resamples=400, confidence=0.9)
    assert estimate.value == pytest.approx(values.mean())
    assert estimate.low <= estimate.value <= estimate.high
    assert (estimate.n, estimate.confidence) == (50, 0.9)
    assert str(estimate).count("[") == 1


def test_two_groups_are_resampled_whole():
    # case A: one item of value 0; case B: three items of value 1. A resample draws two
    # cases: AA (mean 0), AB or BA (mean 3/4), BB (mean 1), with probabilities 1/4, 1/2,
    # 1/4; items resampled one by one would also give 1/4 and 1/2.
    values, groups = [0, 1, 1, 1], ["A", "B", "B", "B"]
    by_case = bootstrap_resamples(mean_of(values), 4, groups=groups, n_resamples=400)
    assert set(by_case.tolist()) == {0.0, 0.75, 1.0}
    assert np.mean(by_case == 0.75) == pytest.approx(1 / 2, abs=0.08)
    by_item = bootstrap_resamples(mean_of(values), 4, n_resamples=400)
    assert {0.25, 0.5} <= set(by_item.tolist())
    # a quarter of the resamples at each end: the 95% CI spans [0, 1]
    estimate = bootstrap(mean_of(values), 4, groups=groups, n_resamples=400)
    assert (estimate.value, estimate.low, estimate.high) == (0.75, 0.0, 1.0)


def test_cluster_resampling_keeps_a_case_together():
    # 6 cases of 4 items each
    groups = np.repeat(np.arange(6), 4)

    def whole_cases(idx):
        # 1.0 when every case contributes all of its 4 items the same number of times
        counts = np.bincount(idx, minlength=24).reshape(6, 4)
        return float((counts == counts[:, :1]).all())

    by_case = bootstrap(whole_cases, 24, groups=groups, n_resamples=200)
    by_item = bootstrap(whole_cases, 24, n_resamples=200)
    assert (by_case.low, by_case.high) == (1.0, 1.0)
    assert by_item.low == 0.0  # resampling items splits cases up


def test_cluster_resampling_widens_the_ci_of_correlated_items():
    # 10 cases; items of one case are identical (a case is all 0 or all 1), 10 items each
    case_values = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 0])
    groups = np.repeat(np.arange(10), 10)
    values = np.repeat(case_values, 10)
    by_case = bootstrap(mean_of(values), 100, groups=groups, n_resamples=500)
    by_item = bootstrap(mean_of(values), 100, n_resamples=500)
    # 10 effective draws vs 100: the case-level CI is much wider (about sqrt(10) times)
    assert by_case.value == by_item.value == pytest.approx(0.6)
    assert (by_case.high - by_case.low) > 2 * (by_item.high - by_item.low)


def test_bootstrap_errors():
    with pytest.raises(ValueError, match="undefined on every bootstrap resample"):
        bootstrap(lambda idx: float("nan"), 5, n_resamples=100)
    with pytest.raises(ValueError, match="at least one item"):
        bootstrap(mean_of([]), 0)
    with pytest.raises(ValueError, match="groups has 2 entries for 3 items"):
        bootstrap(mean_of([1, 2, 3]), 3, groups=[0, 1])
    with pytest.raises(ValueError, match="n_resamples must be an integer of at least 100"):
        bootstrap(mean_of([1, 2, 3]), 3, n_resamples=0)
    with pytest.raises(ValueError, match=r"confidence must lie in \(0, 1\), got 95"):
        bootstrap(mean_of([1, 2, 3]), 3, confidence=95)


def test_bootstrap_skips_resamples_where_the_statistic_is_undefined():
    positive = np.array([True] + [False] * 9)

    def share_positive_found(idx):  # undefined when the one positive item is not drawn
        kept = idx[positive[idx]]
        return 1.0 if len(kept) else float("nan")

    estimate = bootstrap(share_positive_found, 10, n_resamples=200)
    assert (estimate.value, estimate.low, estimate.high) == (1.0, 1.0, 1.0)


# ---------------------------------------------------------------- paired bootstrap


def test_identical_runs_differ_by_zero_with_p_value_one():
    values = np.random.default_rng(4).random(12)
    result = paired_bootstrap(mean_of(values), mean_of(values), 12, n_resamples=100)
    assert result.difference == Estimate(0.0, 0.0, 0.0, 12, 0.95)
    # every d* is 0: P(d* <= 0) = P(d* >= 0) = (1 + 100)/(100 + 1) = 1 → p = min(1, 2) = 1
    assert result.p_value == 1.0


def test_a_system_better_on_every_resample_by_hand():
    # the system is the baseline + 0.1 on the same items: every d* is 0.1 (paired), so
    # P(d* <= 0) = (1 + 0)/(100 + 1) and p = 2/101; the CI has zero width
    values = np.random.default_rng(5).random(8)
    base = mean_of(values)
    difference, p_value = paired_bootstrap(base, lambda i: base(i) + 0.1, 8, n_resamples=100)
    assert difference.value == pytest.approx(0.1)
    assert difference.low == pytest.approx(0.1) and difference.high == pytest.approx(0.1)
    assert p_value == pytest.approx(2 / 101)


def test_paired_bootstrap_is_seeded_and_resamples_cases():
    rng = np.random.default_rng(6)
    a, b = rng.random(20), rng.random(20)
    groups = np.repeat(np.arange(5), 4)
    kw = {"groups": groups, "n_resamples": 200, "seed": 2}
    first = paired_bootstrap(mean_of(a), mean_of(b), 20, **kw)
    assert first == paired_bootstrap(mean_of(a), mean_of(b), 20, **kw)
    # the interval is the percentile interval of the same resampled differences
    d = bootstrap_resamples(lambda i: mean_of(b)(i) - mean_of(a)(i), 20, **kw)
    low, high = np.quantile(d, [0.025, 0.975])
    assert (first.difference.low, first.difference.high) == pytest.approx((low, high))
    below = (1 + np.count_nonzero(d <= 0)) / 201
    above = (1 + np.count_nonzero(d >= 0)) / 201
    assert first.p_value == pytest.approx(min(1.0, 2 * min(below, above)))


def test_paired_bootstrap_refuses_an_undefined_difference():
    first = np.array([True] + [False] * 5)

    def undefined_without_item_0(idx):
        return 1.0 if first[idx].any() else float("nan")

    with pytest.raises(ValueError, match=r"undefined on \d+ of 100 bootstrap resamples"):
        paired_bootstrap(mean_of(np.zeros(6)), undefined_without_item_0, 6, n_resamples=100)


# ---------------------------------------------------------------- against SciPy


def test_bootstrap_is_scipys_percentile_bootstrap_over_cases():
    """The CI is SciPy's percentile bootstrap over the cases (the case indices as its one
    sample, the same seeded generator): the same distribution, and bounds equal to SciPy's
    own to 1e-12 (NumPy's quantile, not scipy.stats.quantile: last-bit differences)."""
    import scipy.stats

    values = np.random.default_rng(5).random(24)
    groups = np.repeat(np.arange(8), 3)

    def case_mean(cases):
        return float(values[np.concatenate([np.flatnonzero(groups == c) for c in cases])].mean())

    ours = bootstrap(mean_of(values), 24, groups=groups, n_resamples=999, seed=11)
    theirs = scipy.stats.bootstrap(
        (np.arange(8),),
        case_mean,
        n_resamples=999,
        vectorized=False,
        method="percentile",
        rng=np.random.default_rng(11),
    )
    distribution = bootstrap_resamples(mean_of(values), 24, groups=groups, n_resamples=999, seed=11)
    assert np.allclose(distribution, theirs.bootstrap_distribution, rtol=0, atol=1e-15)
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=1e-12)


def test_where_scipy_gives_nan_or_refuses_the_wrapper_answers():
    """A statistic undefined on some resamples: SciPy's interval is NaN, ours skips those
    resamples (the percentiles of the defined ones). One case: SciPy refuses it, ours
    gives the statistic on that case for every resample."""
    import warnings

    import scipy.stats

    values = np.array([0.0, 0.2, 0.4, 0.9])

    def undefined_high(idx):
        return float("nan") if values[idx].mean() > 0.5 else float(values[idx].mean())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = scipy.stats.bootstrap(
            (np.arange(4),),
            lambda cases: undefined_high(cases.astype(int)),
            n_resamples=200,
            vectorized=False,
            method="percentile",
            rng=np.random.default_rng(0),
        )
    assert np.isnan(theirs.confidence_interval.low)
    distribution = theirs.bootstrap_distribution
    defined = distribution[~np.isnan(distribution)]
    ours = bootstrap(undefined_high, 4, n_resamples=200, seed=0)
    assert (ours.low, ours.high) == tuple(np.quantile(defined, [0.025, 0.975]))
    with pytest.raises(ValueError):
        scipy.stats.bootstrap((np.arange(1),), np.mean, method="percentile")
    assert (
        bootstrap_resamples(
            lambda idx: float(len(idx)), 3, groups=[7, 7, 7], n_resamples=100
        ).tolist()
        == [3.0] * 100
    )


# ---------------------------------------------------------------- how many resamples


def test_one_or_two_resamples_are_refused():
    """Why: the mean of the items [0, 1] is 0.5. With seed 4 the first two resamples draw
    items (1, 1) and (1, 1) (``default_rng(4).integers(0, 2, 2)`` twice, the documented
    draws), both of mean 1: an interval from 1 or 2 resamples would be [1, 1], which
    excludes its own estimate 0.5."""
    rng = np.random.default_rng(4)
    assert [rng.integers(0, 2, size=2).tolist() for _ in range(2)] == [[1, 1], [1, 1]]
    values = [0.0, 1.0]
    for n in (1, 2, MIN_RESAMPLES - 1):
        with pytest.raises(ValueError) as caught:
            bootstrap(mean_of(values), 2, n_resamples=n, seed=4)
        message = str(caught.value)
        assert message.startswith("n_resamples must be an integer of at least 100 (")
        assert message.endswith(f"got {n}")
        with pytest.raises(ValueError, match="n_resamples must be an integer of at least 100"):
            paired_bootstrap(mean_of(values), mean_of(values), 2, n_resamples=n)
        with pytest.raises(ValueError, match="n_resamples must be an integer of at least 100"):
            bootstrap_resamples(mean_of(values), 2, n_resamples=n)
    estimate = bootstrap(mean_of(values), 2, n_resamples=MIN_RESAMPLES, seed=4)
    assert estimate.value == 0.5 and estimate.low <= 0.5 <= estimate.high


def test_the_minimum_grows_with_the_confidence_level():
    # at least one resample beyond each bound: B (1 - confidence) / 2 >= 1
    assert MIN_RESAMPLES == 100
    assert check_n_resamples(100, 0.95) == 100  # 2 / 0.05 = 40 < 100
    assert check_n_resamples(200, 0.99) == 200  # 2 / 0.01 = 200
    with pytest.raises(ValueError, match="at least 200 for a 99% bootstrap interval"):
        check_n_resamples(199, 0.99)
    with pytest.raises(ValueError, match=r"at least 2000 for a 99\.9% bootstrap interval"):
        bootstrap(mean_of([1, 2, 3]), 3, n_resamples=1999, confidence=0.999)
    assert check_n_resamples(np.int64(150)) == 150
    for wrong in (True, 100.0, "100", None):
        with pytest.raises(ValueError, match="n_resamples must be an integer of at least 100"):
            check_n_resamples(wrong)
