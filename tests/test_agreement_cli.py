"""Judge agreement statistics (Seegmiller et al. Tables 7 and 8) with case-level bootstrap
CIs, checked by hand on small cases, and the ``edit-f1 agreement`` command."""

from __future__ import annotations

import json
import re

import pytest

from editf1.cli.main import main
from editf1.judges import ThemeJudgement
from editf1.validation.judge_agreement import (
    content_agreement_report,
    format_report,
    judge_content_items,
    label_agreement_report,
    span_overlap,
    theme_label_report,
)
from editf1.validation.labelled import ContentItem, ThemeItem, read_content_items, select_split

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


def _write_labels(path, items):
    with open(path, "w") as handle:
        for item in items:
            row = {
                "case": item.case,
                "prediction": item.prediction,
                "reference": item.reference,
                "match": item.match,
                "annotators": list(item.annotators),
            }
            if item.span:
                row["span"] = item.span
            handle.write(json.dumps(row) + "\n")


def test_agreement_command_prints_statistics_with_cis(tmp_path, capsys):
    labels = tmp_path / "labels.jsonl"
    items = [*ITEMS, ContentItem("y", Y, "Your labs are normal.", True, Y, (True, True))]
    _write_labels(labels, items)
    assert read_content_items(labels) == items
    out_json = tmp_path / "report.json"
    code = main(
        [
            "agreement",
            "content",
            "--labels",
            str(labels),
            "--content-judge",
            "exact",
            "--n-resamples",
            "300",
            "-o",
            str(out_json),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    # the exact judge matches only "Your labs are normal." (same words): 3 of 6 right
    assert "agreement                    0.500 [" in printed
    assert "exact_span_agreement         0.333 [" in printed
    assert "judge: exact-sentence-match" in printed and "human ceiling" in printed
    saved = json.loads(out_json.read_text())
    assert saved["agreement"]["value"] == 0.5 and saved["n_resamples"] == 300
    assert {"low", "high", "n"} <= set(saved["cohen_kappa"])


def test_agreement_labels_command_for_ordinal_scores(tmp_path, capsys):
    scores = tmp_path / "scores.csv"
    scores.write_text("case,expert,model,a,b\nc1,1,1,1,2\nc1,2,2,2,2\nc2,3,4,3,3\nc3,4,4,4,4\n")
    code = main(
        [
            "agreement",
            "labels",
            str(scores),
            "--human-field",
            "expert",
            "--judge-field",
            "model",
            "--annotator-fields",
            "a,b",
            "--case-field",
            "case",
            "--weights",
            "quadratic",
            "--n-resamples",
            "200",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "cohen_kappa                  0.917 [" in printed
    assert "4 items in 3 cases" in printed


def test_bad_labels_name_the_row(tmp_path):
    labels = tmp_path / "bad.jsonl"
    labels.write_text(
        json.dumps({"case": "a", "prediction": "Rest.", "reference": "Rest.", "match": True})
        + "\n"
        + json.dumps(
            {"case": "a", "prediction": "Rest.", "reference": "x", "match": True, "span": "Sleep."}
        )
        + "\n"
    )
    with pytest.raises(ValueError, match=r"bad\.jsonl row 1: field span is not verbatim"):
        read_content_items(labels)
    assert main(["agreement", "content", "--labels", str(labels)]) == 2


def test_theme_labels_without_case_are_their_own_cases(tmp_path, theme_judge_cls):
    from editf1.validation.judge_agreement import judge_theme_items, theme_agreement_report
    from editf1.validation.labelled import read_theme_items

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


@pytest.mark.slow
def test_kqa_held_out_agreement_of_the_embedded_judge_matches_its_shipped_figures(
    shared_data, capsys
):
    from editf1.judges.embedding import load_params
    from editf1.validation.labelled import kqa_content_items

    shipped = load_params("content_judge.json")
    items = select_split(kqa_content_items(shared_data / "kqa"), "test")
    assert len(items) == shipped["split"]["test_items"]
    kqa = str(shared_data / "kqa")
    code = main(["agreement", "content", "--dataset", "kqa", "--data-dir", kqa, "--split", "test"])
    printed = capsys.readouterr().out
    assert code == 0
    value = shipped["agreement"]["agreement"]
    assert f"agreement                    {value['value']:.3f} [{value['low']:.3f}" in printed
    assert "judge vs each of 3 annotators" in printed
