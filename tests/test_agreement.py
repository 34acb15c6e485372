"""The agreement module: agreement, Cohen's kappa and the judge-agreement reports
(Seegmiller et al. Tables 7 and 8) with case-level bootstrap CIs, checked by hand."""

from __future__ import annotations

import json
import re

import pytest
from sklearn.metrics import cohen_kappa_score

from editf1.judges import ThemeJudgement
from editf1.stats import Estimate
from editf1.validation.agreement import (
    agreement,
    binary_agreement_report,
    cohen_kappa,
    content_agreement_report,
    format_report,
    inter_annotator_report,
    judge_content_items,
    judge_theme_items,
    label_agreement_report,
    span_overlap,
    theme_agreement_report,
    theme_label_report,
    to_jsonable,
)
from editf1.validation.labelled import ContentItem, ThemeItem, read_theme_items

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


def test_binary_agreement_report_when_the_humans_say_match_only():
    # humans: 4 matches; judge misses item 2: agreement = match agreement = 3/4, and
    # with no human NO MATCH the non-match agreement is undefined (None, not NaN)
    report = binary_agreement_report([True] * 4, [True, True, False, True], n_resamples=100)
    assert report["agreement"].value == report["match_agreement"].value == 0.75
    assert report["match_agreement"] == report["agreement"]
    assert report["non_match_agreement"] is None
    # p_o = 3/4 = p_e = 1 * 3/4 (humans always say match): kappa 0
    assert report["cohen_kappa"].value == 0.0
    assert report["confusion_matrix"] == [[0, 0], [1, 3]]


def test_binary_agreement_report_when_the_humans_say_no_match_only():
    report = binary_agreement_report([False, False], [False, True], n_resamples=100)
    assert report["non_match_agreement"].value == 0.5 and report["match_agreement"] is None
    assert report["confusion_matrix"] == [[1, 1], [0, 0]]
    # one label on both sides: complete agreement, kappa 1.0
    same = binary_agreement_report([False] * 3, [False] * 3, n_resamples=100)
    assert (same["agreement"].value, same["cohen_kappa"].value) == (1.0, 1.0)


def test_binary_agreement_report_errors():
    with pytest.raises(ValueError, match="3 human labels against 2 judge labels"):
        binary_agreement_report([True, False, True], [True, False])
    with pytest.raises(ValueError, match="at least one item"):
        binary_agreement_report([], [])


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


# ---------------------------------------------------------------- judge reports

X = "Rest today. Drink water. Call us."
Y = "Your labs are normal."
ITEMS = [
    ContentItem("x", X, "Rest.", True, "Rest today.", (True, True)),
    ContentItem("x", X, "Hydrate.", True, "Drink water.", (True, False)),
    ContentItem("x", X, "Take ibuprofen.", False, None, (False, False)),
    ContentItem("y", Y, "Labs normal.", True, None, (True, True)),
    ContentItem("y", Y, "See you soon.", False, None, (False, False)),
]
ANSWERS = {"Rest.": "Rest today.", "Hydrate.": "Drink", "Take ibuprofen.": "Call us."}


@pytest.fixture
def report(content_judge_cls):
    judgements = judge_content_items(content_judge_cls(ANSWERS), ITEMS)
    return content_agreement_report(ITEMS, judgements, n_resamples=500, seed=0)


def test_content_agreement_by_hand(report):
    # human [T, T, F, T, F], judge [T, T, T, F, F]
    assert report["agreement"].value == pytest.approx(3 / 5)
    assert report["match_agreement"].value == pytest.approx(2 / 3)
    assert report["non_match_agreement"].value == pytest.approx(1 / 2)
    # p_o = 0.6, p_e = 0.6 * 0.6 + 0.4 * 0.4 = 0.52
    assert report["cohen_kappa"].value == pytest.approx((0.6 - 0.52) / (1 - 0.52))
    assert report["confusion_matrix"] == [[1, 1], [1, 2]]
    # spans annotated on items 1 and 2: exact on item 1; "Drink" covers 5 of the 11
    # non-space characters of "Drink water."
    assert report["spans_annotated"] == 2
    assert report["exact_span_agreement"].value == pytest.approx(1 / 2)
    assert report["span_overlap"].value == pytest.approx((1 + 5 / 11) / 2)
    assert (report["unusable"], report["n"], report["cases"]) == (0, 5, 2)


def test_judge_against_each_annotator_and_the_human_ceiling(report):
    assert report["annotators"] == 2
    # annotators agree on 4 of 5 items; the judge agrees with them on 3/5 and 2/5
    assert report["human_ceiling"]["agreement"].value == pytest.approx(4 / 5)
    assert report["judge_vs_annotators"]["agreement"].value == pytest.approx((3 / 5 + 2 / 5) / 2)


def test_every_figure_has_a_reproducible_case_level_ci(report, content_judge_cls):
    for key in ("agreement", "cohen_kappa", "match_agreement", "exact_span_agreement"):
        estimate = report[key]
        assert estimate.low <= estimate.value <= estimate.high and estimate.n == 5
    again = content_agreement_report(
        ITEMS, judge_content_items(content_judge_cls(ANSWERS), ITEMS), n_resamples=500, seed=0
    )
    assert again["agreement"] == report["agreement"]
    # two cases: agreement 2/3 on case x, 1/2 on case y; any resample lies between
    assert report["agreement"].low >= 1 / 2 - 1e-9 and report["agreement"].high <= 2 / 3 + 1e-9


def test_unusable_judgements_count_as_no_match(content_judge_cls, unusable):
    judgements = judge_content_items(content_judge_cls({"Rest.": unusable}), ITEMS[:2])
    out = content_agreement_report(ITEMS[:2], judgements, n_resamples=100)
    assert out["unusable"] == 1 and out["match_agreement"].value == 0.0


def test_content_report_when_the_humans_say_no_match_only(content_judge_cls):
    # items 2 and 4 are human NO MATCH; the judge matches item 2 ("Call us.") only
    items = [ITEMS[2], ITEMS[4]]
    out = content_agreement_report(
        items, judge_content_items(content_judge_cls(ANSWERS), items), n_resamples=100
    )
    assert out["non_match_agreement"].value == 0.5 and out["match_agreement"] is None
    assert out["exact_span_agreement"] is None and out["span_overlap"] is None
    assert out["confusion_matrix"] == [[1, 1], [0, 0]] and out["cases"] == 2


def test_span_overlap_counts_non_space_characters():
    text = "ab cd ef"
    assert span_overlap((0, 5), (0, 5), text) == 1.0
    assert span_overlap((0, 2), (6, 8), text) == 0.0
    assert span_overlap((0, 5), (3, 8), text) == pytest.approx(2 / 6)


def test_theme_agreement_by_hand():
    human = ["Logistics", "Logistics", "Other", "Care coordination"]
    judge = ["Logistics", "Other", "Other", None]
    out = theme_label_report(human, judge, n_resamples=200)
    f1 = {t: e["f1"] for t, e in out["per_theme"].items()}
    assert f1["Logistics"].value == pytest.approx(2 / 3)  # tp 1, fn 1
    assert f1["Other"].value == pytest.approx(2 / 3)  # tp 1, fp 1
    assert f1["Care coordination"].value == 0.0  # fn 1 (unusable)
    assert f1["Contingency planning"] is None  # neither side used it
    assert out["micro_f1"].value == 0.5
    # the 8 clinical themes, Other no class: tp 1 (Logistics), fn 2 (a Logistics called
    # Other, a Care coordination unusable), fp 0 (Other called Other counts nowhere)
    assert out["clinical_micro_f1"].value == pytest.approx(2 * 1 / (2 * 1 + 0 + 2))
    assert out["macro_f1"].value == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)
    assert out["unusable"] == 1
    care = out["labels"].index("Care coordination")
    assert out["confusion_matrix"][care][out["labels"].index("(unusable)")] == 1
    assert len(out["confusion_matrix"]) == 9 and len(out["labels"]) == 10


def test_quadratic_weighted_kappa_for_ordinal_scores_by_hand():
    out = label_agreement_report([1, 2, 3, 4], [1, 2, 4, 4], weights="quadratic", n_resamples=200)
    # sum(w * observed) = 1/4; sum(w * expected) = 3 (marginals 1/4 each vs 1/4,1/4,0,1/2)
    assert out["cohen_kappa"].value == pytest.approx(1 - 0.25 / 3)
    assert out["agreement"].value == 0.75
    assert out["confusion_matrix"][2] == [0, 0, 0, 1]
    with pytest.raises(ValueError, match="numeric"):
        label_agreement_report(["low", "high"], ["low", "low"], weights="quadratic")


def test_the_report_prints_each_figure_with_its_ci(report):
    text = format_report(report | {"judge": "scripted"})
    assert "agreement                    0.600 [" in text
    assert "human ceiling" in text and "unusable judgements: 0 of 5" in text
    assert re.search(r"\n\s+1\s+1\s+0: no match\n\s+1\s+2\s+1: match", text)


def test_a_single_label_report_reads_back_from_json_and_prints_n_a():
    report = binary_agreement_report([True] * 4, [True, True, False, True], n_resamples=100)
    saved = json.loads(json.dumps(to_jsonable(report | {"cases": 4})))
    assert saved["match_agreement"] == {
        "value": 0.75,
        "low": report["match_agreement"].low,
        "high": report["match_agreement"].high,
        "n": 4,
        "confidence": 0.95,
    }
    assert saved["non_match_agreement"] is None and saved["n"] == 4
    text = format_report(saved)
    assert re.search(r"non_match_agreement\s+n/a", text)
    assert "match_agreement              0.750 [" in text


def test_theme_labels_without_case_are_their_own_cases(tmp_path, theme_judge_cls):
    path = tmp_path / "themes.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "text": "Call the desk.",
                    "theme": "Logistics",
                    "annotators": ["Logistics", "Other"],
                },
                {"text": "Hello!", "theme": "Other", "annotators": ["Other", "Other"]},
            ]
        )
    )
    items = read_theme_items(path)
    assert [i.case for i in items] == ["row-0", "row-1"]
    judge = theme_judge_cls({"Call the desk.": "Logistics", "Hello!": None})
    out = theme_agreement_report(items, judge_theme_items(judge, items), n_resamples=100)
    assert out["micro_f1"].value == 0.5 and out["unusable"] == 1
    assert out["human_ceiling"]["agreement"].value == 0.5
    assert isinstance(judge_theme_items(judge, items)[1], ThemeJudgement)
    assert items[0] == ThemeItem("row-0", "Call the desk.", "Logistics", ("Logistics", "Other"))
