"""The edit-f1 command: the demo, files of pairs, bad input, and real OncQA data."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from editf1.cli.main import main

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_oncqa = pytest.mark.skipif(
    not (SHARED_DATA / "oncqa" / "stage1.csv").is_file(),
    reason="../shared/data/oncqa is absent (the team's read-only copy of AIM-Harvard/OncQA)",
)
README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
FAST = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_demo_runs_with_embedded_judges(tmp_path, capsys):
    out = tmp_path / "demo.jsonl"
    assert (
        main(["score", "--no-progress", "-o", str(out), "--summary-json", str(tmp_path / "s.json")])
        == 0
    )
    printed = capsys.readouterr().out
    assert "edit-F1 on 12 pair(s)" in printed and "Contingency planning" in printed
    rows = _jsonl(out)
    assert [r["row"] for r in rows] == list(range(12))
    summary = json.loads((tmp_path / "s.json").read_text())
    for key in ("precision", "recall", "f1", "theme_precision", "theme_recall", "theme_f1"):
        assert 0.0 <= summary[key] <= 1.0
    # The demo has one row whose draft is identical to the reply: it scores 1.0.
    assert any(r["f1"] == 1.0 and r["expected_deletions"] == 0 for r in rows)
    assert sum(r["expected_matches"] for r in rows) == summary["expected_matches"]


def test_jsonl_with_custom_fields_hand_computed(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    source.write_text(
        json.dumps(
            {
                "key": "a",
                "draft": "Rest today. Drink water. Call us.",
                "reply": "Rest today. Take ibuprofen.",
            }
        )
        + "\n\n"
        + json.dumps({"key": "b", "draft": "", "reply": "Rest today."})
        + "\n"
    )
    out = tmp_path / "scores.jsonl"
    code = main(
        [
            "score",
            str(source),
            "--prediction-field",
            "draft",
            "--reference-field",
            "reply",
            "--id-field",
            "key",
            "-o",
            str(out),
            "--zero-division",
            "0",
            *FAST,
        ]
    )
    assert code == 0
    first, second = _jsonl(out)
    # Row a: EM 1, EA 1, ED 2 -> P 1/3, R 1/2, F1 0.4.  Row b: empty draft -> P 0, R 0.
    assert (first["id"], first["precision"], first["recall"]) == ("a", 1 / 3, 0.5)
    assert [d["text"] for d in first["expected_deletion_sentences"]] == ["Drink water.", "Call us."]
    assert (second["id"], second["precision"], second["f1"]) == ("b", 0.0, 0.0)
    # Corpus: EM 1, EA 2, ED 2 -> P 1/3, R 1/3, F1 1/3.
    assert "precision 0.333  recall 0.333  F1 0.333" in capsys.readouterr().out


def test_csv_input(tmp_path):
    source = tmp_path / "pairs.csv"
    with open(source, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "prediction", "reference"])
        writer.writerow(["1", "Take 2.5 mg b.i.d.\nCall Dr. Lee.", "Take 2.5 mg b.i.d."])
    out = tmp_path / "scores.jsonl"
    assert main(["score", str(source), "-o", str(out), *FAST]) == 0
    (row,) = _jsonl(out)
    # EM 1 ("Take 2.5 mg b.i.d."), ED 1 ("Call Dr. Lee.") -> P 0.5, R 1.
    assert (row["precision"], row["recall"]) == (0.5, 1.0)


def test_bad_rows_exit_2_naming_every_row(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    source.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"prediction": "ok.", "reference": "ok."},
                {"prediction": None, "reference": "ok."},
                {"prediction": "ok.", "reference": " "},
            ]
        )
    )
    assert main(["score", str(source), *FAST, "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "prediction[1] must be a string, got NoneType None" in err
    assert "reference[2] has no word" in err
    assert not (tmp_path / "o.jsonl").exists()  # nothing is scored before input is checked


def test_missing_column_and_bad_json_are_named(tmp_path, capsys):
    source = tmp_path / "pairs.csv"
    source.write_text("draft,reply\na,b\n")
    assert main(["score", str(source), *FAST]) == 2
    assert "no column ['prediction', 'reference']; the header has ['draft', 'reply']" in (
        capsys.readouterr().err
    )
    broken = tmp_path / "pairs.jsonl"
    broken.write_text('{"prediction": "a", "reference": "b"}\n{oops\n[1]\n{"prediction": "c"}\n')
    assert main(["score", str(broken), *FAST]) == 2
    err = capsys.readouterr().err
    assert "3 bad input(s)" in err and "line 2: not valid JSON" in err
    assert "line 3: expected a JSON object, got list" in err
    assert "line 4: no field ['reference']; the row has ['prediction']" in err


def test_ids_must_be_unique_and_a_named_id_field_must_exist(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    rows = [{"id": "a", "prediction": "ok.", "reference": "ok."}] * 2
    source.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "o.jsonl"
    assert main(["score", str(source), *FAST, "-o", str(out)]) == 2
    assert "ids[1] repeats ids[0] 'a'" in capsys.readouterr().err
    assert main(["score", str(source), *FAST, "-o", str(out), "--id-field", "case"]) == 2
    assert "--id-field 'case': no such field in row(s) [0, 1]" in capsys.readouterr().err
    assert not out.exists()


def test_limit_scores_the_first_rows_after_checking_all(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    rows = [{"prediction": f"Rest {i}.", "reference": f"Rest {i}."} for i in range(3)]
    source.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "o.jsonl"
    assert main(["score", str(source), *FAST, "-o", str(out), "--limit", "2"]) == 0
    assert [r["row"] for r in _jsonl(out)] == [0, 1]
    source.write_text("\n".join(json.dumps(r) for r in [*rows, {"prediction": "a."}]))
    assert main(["score", str(source), *FAST, "--limit", "1"]) == 2  # row 3 is checked
    assert "line 4: no field ['reference']" in capsys.readouterr().err


def test_output_may_not_overwrite_the_input(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    source.write_text(json.dumps({"prediction": "ok.", "reference": "ok."}))
    assert main(["score", str(source), *FAST, "-o", str(source)]) == 2
    assert "would overwrite the input file" in capsys.readouterr().err
    assert json.loads(source.read_text()) == {"prediction": "ok.", "reference": "ok."}


def test_csv_with_a_byte_order_mark_repeated_columns_or_extra_cells(tmp_path, capsys):
    bom = tmp_path / "excel.csv"
    bom.write_bytes("prediction,reference\nRest today.,Rest today.\n".encode("utf-8-sig"))
    out = tmp_path / "o.jsonl"
    assert main(["score", str(bom), *FAST, "-o", str(out)]) == 0
    assert _jsonl(out)[0]["f1"] == 1.0
    repeated = tmp_path / "repeated.csv"
    repeated.write_text("prediction,reference,reference\na.,b.,c.\n")
    assert main(["score", str(repeated), *FAST]) == 2
    assert "the header repeats column(s) ['reference']" in capsys.readouterr().err
    extra = tmp_path / "extra.csv"
    extra.write_text("prediction,reference\na.,b.\nTake it.,Take it.,Extra stuff.\n")
    assert main(["score", str(extra), *FAST]) == 2
    err = capsys.readouterr().err
    assert "line 3: 3 cells for 2 columns" in err and "Extra" not in err


@needs_oncqa
@pytest.mark.slow
@pytest.mark.parametrize("setting", ["own_reply", "edited"])
def test_oncqa_scores_offline(setting, tmp_path, capsys):
    out, summary_path = tmp_path / f"{setting}.jsonl", tmp_path / "summary.json"
    code = main(
        [
            "score",
            "--dataset",
            "oncqa",
            "--setting",
            setting,
            "--data-dir",
            str(SHARED_DATA / "oncqa"),
            "-o",
            str(out),
            "--no-progress",
            "--summary-json",
            str(summary_path),
        ]
    )
    assert code == 0
    s = json.loads(summary_path.read_text())
    row = " | ".join(
        [
            *(f"{s[k]:.3f}" for k in ("precision", "recall", "f1")),
            *(str(s[k]) for k in ("expected_matches", "expected_additions", "expected_deletions")),
            *(f"{s[k]:.3f}" for k in ("theme_precision", "theme_recall", "theme_f1")),
        ]
    )
    assert f"| {row} |" in README, "the README's OncQA table is out of date"
    rows = _jsonl(out)
    assert len(rows) == 100 and len({r["id"] for r in rows}) == 100
    assert all(math.isfinite(r["f1"]) for r in rows)
    printed = capsys.readouterr().out
    assert "edit-F1 on 100 pair(s)" in printed
    if setting == "edited":
        # An edited draft keeps most of the draft: far above the own-reply setting.
        assert sum(r["expected_matches"] for r in rows) > sum(r["expected_additions"] for r in rows)
