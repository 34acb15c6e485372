"""editf1.gold.report on the shipped demo set with the exact judge: three estimates of each
figure and the judge's agreement, worked out by hand from the counts."""

from __future__ import annotations

import numpy as np
import pytest

from editf1.gold.labels import PairText, bind_gold
from editf1.gold.report import format_gold_report, gold_report, prediction_powered_difference
from editf1.scorer import EditF1Scorer

# The exact judge on the demo set (EM, ED, EA): demo-02 (5, 1, 0), demo-08 (6, 0, 0),
# demo-09 (0, 13, 6). Gold labels of these three agree with it except one sentence of
# demo-09, which the clinician matched to the draft's first sentence: gold (1, 12, 5).


@pytest.fixture
def scored(exact_demo):
    rows, result = exact_demo
    pairs = [PairText(r["id"], r["prediction"], r["reference"]) for r in rows]
    return EditF1Scorer(content_judge="exact", theme_judge=None), result, pairs


def test_three_estimates_and_the_agreement_by_hand(scored, demo_gold_rows):
    scorer, result, pairs = scored
    gold = bind_gold(demo_gold_rows(result), pairs, scorer.splitter)
    assert [g.content_counts for g in gold.pairs] == [(5, 1, 0), (6, 0, 0), (1, 12, 5)]
    report = gold_report(result, gold, n_resamples=200)
    precision = report.content["precision"]
    # judge only: the corpus figure; gold only: EM 12 / (EM 12 + ED 13)
    assert precision.judge_only.value == pytest.approx(result.precision)
    assert precision.gold_only.value == pytest.approx(12 / 25)
    # PPI++ with the reported lam, from the counts: numerator EM, denominator EM + ED
    judge = np.array([p.content_counts for p in result.pairs], dtype=float)
    labelled = [1, 7, 8]  # rows of demo-02, -08, -09
    unlabelled = [k for k in range(12) if k not in labelled]
    gold_counts = np.array([g.content_counts for g in gold.pairs], dtype=float)
    lam = precision.prediction_powered.lam
    a = gold_counts[:, 0].mean() + lam * (judge[unlabelled, 0].mean() - judge[labelled, 0].mean())
    b = (gold_counts[:, 0] + gold_counts[:, 1]).mean() + lam * (
        (judge[unlabelled, 0] + judge[unlabelled, 1]).mean()
        - (judge[labelled, 0] + judge[labelled, 1]).mean()
    )
    assert 0 <= lam <= 1
    assert precision.prediction_powered.value == pytest.approx(a / b)
    assert precision.prediction_powered.n == 3
    assert precision.prediction_powered.n_unlabelled == (9 if lam else 0)
    # recall's gold only: EM 12 / (EM 12 + EA 5); F1: 24 / (24 + 13 + 5)
    assert report.content["recall"].gold_only.value == pytest.approx(12 / 17)
    assert report.content["f1"].gold_only.value == pytest.approx(24 / 42)
    # 17 reply sentences labelled; the judge disagrees on one (a match it missed)
    agreement = report.content_agreement
    assert (agreement["n"], agreement["pairs"]) == (17, 3)
    assert agreement["agreement"].value == pytest.approx(16 / 17)
    assert agreement["gold_match_rate"].value == pytest.approx(12 / 17)
    assert agreement["judge_match_rate"].value == pytest.approx(11 / 17)
    assert agreement["match_rate_bias"].value == pytest.approx(-1 / 17)
    assert agreement["confusion_matrix"] == [[5, 0], [1, 11]]
    assert report.theme is None and report.theme_agreement is None
    assert report.notes == (
        "the gold labels record no sampling: the estimates assume the labelled pairs are a "
        "uniform random sample of the scored pairs",
    )
    text = format_gold_report(report.to_dict())
    assert "gold labels: 3 of 12 pairs (sampling not recorded); 95% CIs" in text
    line = next(x for x in text.splitlines() if x.lstrip().startswith("content precision"))
    shown = [str(precision.judge_only), str(precision.gold_only), str(precision.prediction_powered)]
    assert line.split()[2:] == [*" ".join(shown).split(), "(lam", f"{lam:.2f})"]


def test_a_second_annotator_gives_the_human_ceiling(scored, demo_gold_rows):
    scorer, result, pairs = scored
    first = bind_gold(demo_gold_rows(result), pairs, scorer.splitter)
    second = bind_gold(demo_gold_rows(result, matched_first=()), pairs, scorer.splitter)
    report = gold_report(result, first, second=second, n_resamples=200)
    ceiling = report.inter_annotator
    assert (ceiling["pairs"], ceiling["sentences"]) == (3, 17)
    assert ceiling["content"]["agreement"].value == pytest.approx(16 / 17)


def test_the_result_must_hold_the_pairs_the_labels_were_checked_against(scored, demo_gold_rows):
    scorer, result, pairs = scored
    gold = bind_gold(
        demo_gold_rows(result), [*pairs, PairText("extra", "Hi.", "Hi.")], scorer.splitter
    )
    with pytest.raises(ValueError, match="checked against 13 pairs, the result holds 12 pairs"):
        gold_report(result, gold)


def test_difference_of_two_systems_by_hand():
    # 4 pairs, rows 0 and 1 labelled; at lam 0 the gold figures alone: baseline precision
    # (0 + 1)/(2 + 2) = 1/4, system (2 + 1)/(2 + 2) = 3/4. Per pair, psi = system's
    # (a - 3/4 b)/2 - baseline's (a - 1/4 b)/2 = (1/4 + 1/4, -1/4 - 1/4): Var 1/2 (divisor
    # n - 1), se = sqrt(1/2 / 2)
    baseline = [[0, 2, 1], [1, 1, 1], [1, 1, 1], [0, 1, 0]]
    system = [[2, 0, 0], [1, 1, 0], [1, 0, 0], [1, 1, 0]]
    d = prediction_powered_difference(
        baseline, system, baseline[:2], system[:2], [0, 1], "precision", lam=0
    )
    assert d.value == pytest.approx(0.5)
    assert d.standard_error == pytest.approx(0.5)
    tuned = prediction_powered_difference(baseline, system, baseline[:2], system[:2], [0, 1])
    assert 0 <= tuned.lam <= 1 and -1 <= tuned.low <= tuned.value <= tuned.high <= 1
    with pytest.raises(ValueError, match="differ in shape"):
        prediction_powered_difference(baseline, system[:3], baseline[:2], system[:2], [0, 1])


def test_theme_estimates_and_agreement_by_hand(theme_judge_cls):
    plan, logistics, contingency = (
        "Medical planning instruction",
        "Logistics",
        "Contingency planning",
    )
    pairs = [
        PairText("a", "Rest today.", "Rest today. Book a visit."),
        PairText("b", "Call us if worse.", "Rest today."),
        PairText("c", "Rest.", "Rest."),
        PairText("d", "Rest.", "Rest."),
    ]
    scorer = EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(default=plan))
    result = scorer.score(
        [p.prediction for p in pairs], [p.reference for p in pairs], ids=[p.key for p in pairs]
    )
    rows = [
        {
            "id": "a",
            "reference_sentences": [
                {"start": 0, "end": 11, "match": {"start": 0, "end": 11}, "theme": plan},
                {"start": 12, "end": 25, "match": None, "theme": logistics},
            ],
            "prediction_sentences": [{"start": 0, "end": 11, "theme": plan}],
        },
        {
            "id": "b",
            "reference_sentences": [{"start": 0, "end": 11, "match": None, "theme": plan}],
            "prediction_sentences": [{"start": 0, "end": 17, "theme": contingency}],
        },
    ]
    gold = bind_gold(rows, pairs, scorer.splitter)
    report = gold_report(result, gold, n_resamples=100)
    # gold themes: a reply {plan, logistics} vs draft {plan}: tp 1, fn 1; b reply {plan}
    # vs draft {contingency}: fp 1, fn 1. precision 1/2, recall 1/3, F1 2/(2 + 1 + 2)
    theme = report.theme
    assert theme["precision"].gold_only.value == pytest.approx(1 / 2)
    assert theme["recall"].gold_only.value == pytest.approx(1 / 3)
    assert theme["f1"].gold_only.value == pytest.approx(2 / 5)
    # the judge labels every sentence planning: each pair tp 1, so 1.0 on all four
    assert theme["precision"].judge_only.value == pytest.approx(1.0)
    # theme agreement on the 5 labelled sentences: planning is right on 3
    assert report.theme_agreement["micro_f1"].value == pytest.approx(3 / 5)
    assert report.theme_agreement["n"] == 5
