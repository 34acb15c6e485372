"""agreement, Cohen's kappa, case-level bootstrap CIs and the agreement reports."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from editf1.validation.agreement import (
    Estimate,
    agreement,
    binary_agreement_report,
    bootstrap,
    cohen_kappa,
    inter_annotator_report,
)

Y_TRUE = [1, 1, 0, 0, 1, 0, 1, 1]
Y_PRED = [1, 0, 0, 0, 1, 1, 1, 1]


def test_agreement_by_hand():
    # items 1 and 5 differ: 6/8
    assert agreement(Y_TRUE, Y_PRED) == pytest.approx(0.75)
    assert agreement([], []) == 0.0
    assert agreement(["a", "b"], ["a", "b"]) == 1.0


def test_cohen_kappa_by_hand_and_sklearn():
    # p_o = 6/8; both raters say 1 on 5/8 items:
    # p_e = (5/8)(5/8) + (3/8)(3/8) = 34/64; kappa = (48/64 - 34/64)/(1 - 34/64) = 14/30
    assert cohen_kappa(Y_TRUE, Y_PRED) == pytest.approx(7 / 15)
    assert cohen_kappa(Y_TRUE, Y_PRED) == pytest.approx(cohen_kappa_score(Y_TRUE, Y_PRED))


def test_weighted_kappa_matches_sklearn():
    a = [1, 2, 3, 4, 5, 3, 2, 4]
    b = [1, 3, 3, 5, 4, 2, 2, 4]
    expected = cohen_kappa_score(a, b, weights="quadratic")
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(expected)
    assert cohen_kappa(a, b, weights="quadratic") > cohen_kappa(a, b)


def test_cohen_kappa_degenerate_cases():
    # one and the same label everywhere: 0/0, reported as complete agreement
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0
    # rater 2 always says 1, rater 1 varies: p_o = 1/2, p_e = 1/2 → 0, never NaN
    assert cohen_kappa([0, 1], [1, 1]) == 0.0
    with pytest.raises(ValueError, match="2 labels against 1"):
        cohen_kappa([1, 1], [1])


# ---------------------------------------------------------------- bootstrap


def mean_of(values):
    values = np.asarray(values, dtype=float)
    return lambda idx: float(values[idx].mean())


def test_bootstrap_same_seed_same_ci():
    values = np.random.default_rng(1).random(40)
    first = bootstrap(mean_of(values), 40, n_resamples=300, seed=7)
    again = bootstrap(mean_of(values), 40, n_resamples=300, seed=7)
    other = bootstrap(mean_of(values), 40, n_resamples=300, seed=8)
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)


def test_bootstrap_ci_contains_the_value():
    values = np.random.default_rng(2).random(50)
    estimate = bootstrap(mean_of(values), 50, n_resamples=400, confidence=0.9)
    assert estimate.value == pytest.approx(values.mean())
    assert estimate.low <= estimate.value <= estimate.high
    assert (estimate.n, estimate.confidence) == (50, 0.9)
    assert str(estimate).count("[") == 1


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
        bootstrap(lambda idx: float("nan"), 5, n_resamples=20)
    with pytest.raises(ValueError, match="at least one item"):
        bootstrap(mean_of([]), 0)
    with pytest.raises(ValueError, match="groups has 2 entries for 3 items"):
        bootstrap(mean_of([1, 2, 3]), 3, groups=[0, 1])


def test_bootstrap_skips_resamples_where_the_statistic_is_undefined():
    positive = np.array([True] + [False] * 9)

    def share_positive_found(idx):  # undefined when the one positive item is not drawn
        kept = idx[positive[idx]]
        return 1.0 if len(kept) else float("nan")

    estimate = bootstrap(share_positive_found, 10, n_resamples=200)
    assert (estimate.value, estimate.low, estimate.high) == (1.0, 1.0, 1.0)


# ---------------------------------------------------------------- reports


HUMAN = [True, True, True, True, False, False, False, False, False, False]
JUDGE = [True, True, True, False, False, False, False, False, True, True]


def test_binary_agreement_report_by_hand():
    report = binary_agreement_report(HUMAN, JUDGE, n_resamples=200)
    # TN: items 4-7 = 4; FP: items 8, 9 = 2; FN: item 3 = 1; TP: items 0-2 = 3
    assert report["confusion_matrix"] == [[4, 2], [1, 3]]
    assert report["n"] == 10
    # agreement (4 + 3)/10; match agreement 3/(3+1); non-match agreement 4/(4+2)
    assert report["agreement"].value == pytest.approx(0.7)
    assert report["match_agreement"].value == pytest.approx(0.75)
    assert report["non_match_agreement"].value == pytest.approx(2 / 3)
    # kappa: p_o 0.7; humans say match on 4/10, judge on 5/10:
    # p_e = 0.4*0.5 + 0.6*0.5 = 0.5 → (0.7 - 0.5)/(1 - 0.5) = 0.4
    assert report["cohen_kappa"].value == pytest.approx(0.4)
    for key in ("agreement", "cohen_kappa", "match_agreement", "non_match_agreement"):
        estimate = report[key]
        assert isinstance(estimate, Estimate)
        assert estimate.low <= estimate.value <= estimate.high


def test_binary_agreement_report_groups_and_seed():
    groups = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    first = binary_agreement_report(HUMAN, JUDGE, groups=groups, n_resamples=100, seed=3)
    again = binary_agreement_report(HUMAN, JUDGE, groups=groups, n_resamples=100, seed=3)
    assert first == again


def test_inter_annotator_report_three_annotators_by_hand():
    a = [1, 1, 0, 0, 1, 0]
    b = [1, 0, 0, 0, 1, 0]
    c = [1, 1, 0, 1, 1, 0]
    report = inter_annotator_report([a, b, c], n_resamples=100)
    pairs = report["pairs"]
    # a-b differ on item 1: 5/6; a-c on item 3: 5/6; b-c on items 1, 3: 4/6
    assert pairs["0-1"]["agreement"] == pytest.approx(5 / 6)
    assert pairs["0-2"]["agreement"] == pytest.approx(5 / 6)
    assert pairs["1-2"]["agreement"] == pytest.approx(4 / 6)
    assert report["agreement"].value == pytest.approx(14 / 18)  # (5 + 5 + 4)/18
    # kappas: a-b: p_e = (3/6)(2/6) + (3/6)(4/6) = 1/2 → (5/6 - 1/2)/(1/2) = 2/3
    #         a-c: p_e = (3/6)(4/6) + (3/6)(2/6) = 1/2 → 2/3
    #         b-c: p_e = (2/6)(4/6) + (4/6)(2/6) = 4/9 → (2/3 - 4/9)/(5/9) = 2/5
    assert pairs["0-1"]["cohen_kappa"] == pytest.approx(2 / 3)
    assert pairs["0-2"]["cohen_kappa"] == pytest.approx(2 / 3)
    assert pairs["1-2"]["cohen_kappa"] == pytest.approx(0.4)
    # mean (10/15 + 10/15 + 6/15)/3 = 26/45
    assert report["cohen_kappa"].value == pytest.approx(26 / 45)
    assert pairs["1-2"]["cohen_kappa"] == pytest.approx(cohen_kappa_score(b, c))


def test_inter_annotator_report_needs_two_annotators():
    with pytest.raises(ValueError, match="at least two annotators"):
        inter_annotator_report([[1, 0, 1]])
