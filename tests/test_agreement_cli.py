"""The ``edit-f1 agreement`` command (its statistics are tested in test_agreement.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editf1.cli.main import main
from editf1.validation.labelled import ContentItem, read_content_items, select_split

X = "Rest today. Drink water. Call us."
Y = "Your labs are normal."
ITEMS = [
    ContentItem("x", X, "Rest.", True, "Rest today.", (True, True)),
    ContentItem("x", X, "Hydrate.", True, "Drink water.", (True, False)),
    ContentItem("x", X, "Take ibuprofen.", False, None, (False, False)),
    ContentItem("y", Y, "Labs normal.", True, None, (True, True)),
    ContentItem("y", Y, "See you soon.", False, None, (False, False)),
]

ROOT = Path(__file__).resolve().parents[1]


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
    with pytest.raises(ValueError, match=r"bad\.jsonl, line 2: field span is not verbatim"):
        read_content_items(labels)
    assert main(["agreement", "content", "--labels", str(labels)]) == 2


@pytest.mark.slow
def test_kqa_held_out_agreement_of_the_embedded_judge_matches_its_shipped_figures(
    shared_data, capsys
):
    from editf1.judges.embedding import load_params
    from editf1.validation.labelled import kqa_content_items

    shipped = load_params("content_judge_veto_nc.json")
    items = select_split(kqa_content_items(shared_data / "kqa"), "test")
    assert len(items) == shipped["split"]["test_items"]
    kqa = str(shared_data / "kqa")
    code = main(["agreement", "content", "--dataset", "kqa", "--data-dir", kqa, "--split", "test"])
    printed = capsys.readouterr().out
    assert code == 0
    # the committed report (docs, model card) is this run: re-measured after the splitter
    # fix of sentences joined without a space, with the shipped weights
    report = json.loads(
        (ROOT / "cards" / "reports" / "embedding-content.kqa-test.json").read_text()
    )
    value = report["agreement"]
    assert f"agreement                    {value['value']:.3f} [{value['low']:.3f}" in printed
    assert "judge vs each of 3 annotators" in printed


@pytest.mark.slow
def test_train_content_judge_on_own_labels_and_measure_it_on_the_same_held_out_cases(
    tmp_path, capsys, own_content_labels
):
    """``train-judge embedding-content --data my_labels.jsonl``: the fit's held-out
    agreement is what ``agreement content --split test`` measures with the written
    parameters, and the shipped default's printed beside it is what the same command
    measures with the default judge: the same held-out cases."""
    from editf1.judges import load_content_judge

    labels, fitted = tmp_path / "mine.jsonl", tmp_path / "mine_judge.json"
    labels.write_text("".join(json.dumps(row) + "\n" for row in own_content_labels))
    code = main(["train-judge", "embedding-content", "--data", str(labels), "-o", str(fitted)])
    printed = capsys.readouterr().out
    assert code == 0
    report = json.loads(printed[printed.index("{") : printed.rindex("}") + 1])
    params = json.loads(fitted.read_text())
    assert params["fitted_on"] == "content labels mine.jsonl" and params["human_ceiling"] is None
    assert params["split"]["by"] == "case"
    assert (params["split"]["train_cases"], params["split"]["test_cases"]) == (6, 4)
    assert (params["split"]["train_items"], params["split"]["test_items"]) == (12, 8)
    assert 0 < params["threshold"] < 1 and params["threshold_choice"]["folds"] == 5
    assert report["agreement"] == params["agreement"]
    # these paraphrases and unrelated sentences: the fit gets all 8 held-out items right
    assert params["agreement"]["confusion_matrix"] == [[4, 0], [0, 4]]
    assert report["shipped_default"]["judge"] == load_content_judge("embedding").fingerprint
    for options, expected in (
        (["--content-judge-option", f"params_file={fitted}"], params["agreement"]),
        ([], report["shipped_default"]),
    ):
        out = tmp_path / "agreement.json"
        assert main(["agreement", "content", "--labels", str(labels), "--split", "test",
                     *options, "-o", str(out)]) == 0  # fmt: skip
        measured = json.loads(out.read_text())
        assert measured["n"] == expected["n"] == 8
        for key in ("agreement", "cohen_kappa"):
            assert measured[key]["value"] == pytest.approx(expected[key]["value"]), key
