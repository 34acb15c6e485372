"""The edit-f1 command: the demo, files of pairs, bad input, and real OncQA data; its
conventions (one error format and exit status 2, ``-`` for standard input and output,
--quiet, --version) and its outputs (atomic, never an input, complete runs only)."""

from __future__ import annotations

import csv
import importlib.metadata
import io
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from editf1.cli.main import main

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_oncqa = pytest.mark.skipif(
    not (SHARED_DATA / "oncqa" / "stage1.csv").is_file(),
    reason="../shared/data/oncqa is absent (the team's read-only copy of AIM-Harvard/OncQA)",
)
#: The validity benchmark's results: the OncQA figures the documentation's tables show.
VALIDITY = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "validity.json"
FAST = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


EM_EA_ED = ("expected_matches", "expected_additions", "expected_deletions")


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
    # the summary is the micro average of the rows' own counts (and theme sets)
    em, ea, ed = (sum(r[k] for r in rows) for k in EM_EA_ED)
    assert summary["precision"] == pytest.approx(em / (em + ed))
    assert summary["recall"] == pytest.approx(em / (em + ea))
    tp = sum(len(set(r["reference_themes"]) & set(r["prediction_themes"])) for r in rows)
    predicted = sum(len(r["prediction_themes"]) for r in rows)
    assert summary["theme_precision"] == pytest.approx(tp / predicted)
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
    assert capsys.readouterr().err.splitlines() == [
        "edit-f1: error: 2 bad input(s):",
        f"  {source}, line 2: field 'prediction' must be a string, got None",
        f"  {source}, line 3: field 'reference' has no word (empty, whitespace or punctuation "
        "only: str of 1 character); edit-F1 needs a clinician reply to compare against",
    ]
    assert not (tmp_path / "o.jsonl").exists()  # nothing is scored before input is checked


def test_missing_column_and_bad_json_are_named(tmp_path, capsys):
    source = tmp_path / "pairs.csv"
    source.write_text("draft,reply\na,b\n")
    assert main(["score", str(source), *FAST]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: {source}: no column 'prediction' (--prediction-field) or 'reference' "
        "(--reference-field); the header has ['draft', 'reply']\n"
    )
    source.write_text("Draft 1,reference\na,b\n")  # one column asked for: a header, shown
    assert main(["score", str(source), *FAST]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: {source}: no column 'prediction' (--prediction-field); the header "
        "has ['Draft 1', 'reference']\n"
    )
    broken = tmp_path / "pairs.jsonl"
    broken.write_text('{"prediction": "a", "reference": "b"}\n{oops\n[1]\n{"prediction": "c"}\n')
    assert main(["score", str(broken), *FAST]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "edit-f1: error: 3 bad input(s):",
        f"  {broken}, line 2: not valid JSON (Expecting property name enclosed in double "
        "quotes at column 2)",
        f"  {broken}, line 3: expected a JSON object, got list",
        f"  {broken}: no field 'reference' (--reference-field) on line 4; those lines have "
        "['prediction']",
    ]


def test_a_file_keyed_otherwise_is_one_line_naming_its_fields(tmp_path, capsys):
    """1,000 rows of draft/reply: one line naming the options and the file's fields,
    never a value; --prediction-field / --reference-field then read it."""
    source = tmp_path / "pairs.jsonl"
    source.write_text((json.dumps({"draft": "Rest.", "reply": "Rest today."}) + "\n") * 1000)
    assert main(["score", str(source), *FAST]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: {source}: no field 'prediction' (--prediction-field) or 'reference' "
        "(--reference-field) on any of its 1000 lines; its rows have ['draft', 'reply']\n"
    )
    fields = ["--prediction-field", "draft", "--reference-field", "reply"]
    out = tmp_path / "o.jsonl"
    assert main(["score", str(source), *FAST, *fields, "-q", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1000


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_bad_rows_are_named_by_file_and_line_as_an_editor_counts(tmp_path, capsys, kind):
    """JSONL: the line of the object (blank lines counted); CSV: the header is line 1 and
    a quoted line break moves the next row down. Ids repeat by line, never by index."""
    if kind == "jsonl":
        source = tmp_path / "pairs.jsonl"
        rows = [
            {"id": "a", "prediction": "Rest.", "reference": "Rest now."},
            {"id": "b", "prediction": "Rest.", "reference": "..."},
            {"id": "a", "prediction": "Rest.\nCall.", "reference": "Rest now."},
            {"id": "c", "prediction": 5, "reference": ["Rest now.", " "]},
        ]
        lines = [json.dumps(rows[0]), json.dumps(rows[1]), "", json.dumps(rows[2])]
        source.write_text("\n".join([*lines, json.dumps(rows[3])]) + "\n")
        last = [
            f"  {source}, line 5: field 'prediction' must be a string, got int",
            f"  {source}, line 5: field 'reference' item 2 has no word (empty, whitespace or "
            "punctuation only: str of 1 character); edit-F1 needs a clinician reply to compare "
            "against",
        ]
    else:
        source = tmp_path / "pairs.csv"
        source.write_text(
            'id,prediction,reference\na,Rest.,Rest now.\nb,Rest.,...\n\na,"Rest.\nCall.",Rest '
            "now.\nc,,\n"
        )
        last = [
            f"  {source}, line 7: field 'reference' has no word (empty, whitespace or "
            "punctuation only: str of 0 characters); edit-F1 needs a clinician reply to compare "
            "against"
        ]
    first, repeated = (2, "line 4: field 'id' repeats the id of line 1")
    if kind == "csv":
        first, repeated = (3, "line 5: field 'id' repeats the id of line 2")
    assert main(["score", str(source), *FAST, "-o", str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"edit-f1: error: {len(last) + 2} bad input(s):",
        f"  {source}, line {first}: field 'reference' has no word (empty, whitespace or "
        "punctuation only: str of 3 characters); edit-F1 needs a clinician reply to compare "
        "against",
        f"  {source}, {repeated}",
        *last,
    ]


def test_ids_must_be_unique_and_a_named_id_field_must_exist(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    rows = [{"id": "a", "prediction": "ok.", "reference": "ok."}] * 2
    source.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "o.jsonl"
    assert main(["score", str(source), *FAST, "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: {source}, line 2: field 'id' repeats the id of line 1\n"
    )
    assert main(["score", str(source), *FAST, "-o", str(out), "--id-field", "case"]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: --id-field 'case': {source} has no such field; its rows have "
        "['id', 'prediction', 'reference']\n"
    )
    source.write_text(source.read_text() + "\n" + json.dumps({"case": "c", **rows[0]}))
    assert main(["score", str(source), *FAST, "-o", str(out), "--id-field", "case"]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: --id-field 'case': no such field on {source}, lines 1 and 2\n"
    )
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
    assert capsys.readouterr().err == (
        f"edit-f1: error: {source}: no field 'reference' (--reference-field) on line 4; those "
        "lines have ['prediction']\n"
    )


def test_output_may_not_overwrite_the_input(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    source.write_text(json.dumps({"prediction": "ok.", "reference": "ok."}))
    assert main(["score", str(source), *FAST, "-o", str(source)]) == 2
    assert "would overwrite the input file" in capsys.readouterr().err
    assert json.loads(source.read_text()) == {"prediction": "ok.", "reference": "ok."}


@pytest.mark.parametrize("name", ["scores.csv", "scores.TSV", "scores.parquet", "s.xlsx"])
def test_per_row_results_are_never_written_under_a_table_name(tmp_path, capsys, name):
    """A user asking for scores.csv would get JSON Lines under that name (Excel shows
    garbage): refused before any work, and nothing is written."""
    source = tmp_path / "pairs.jsonl"
    source.write_text(json.dumps({"prediction": "ok.", "reference": "ok."}))
    assert main(["score", str(source), *FAST, "-o", str(tmp_path / name)]) == 2
    assert f"-o {tmp_path / name}: the per-row results are JSON Lines" in (capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.jsonl"]


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
            "--config",
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
    committed = json.loads(VALIDITY.read_text())[setting]["metrics"]["edit-F1"]["corpus_f1"]
    assert s["f1"] == pytest.approx(committed["value"], abs=1e-6), "validity.json is out of date"
    em, ea, ed = (s[k] for k in EM_EA_ED)
    assert s["f1"] == pytest.approx(2 * em / (2 * em + ea + ed))
    rows = _jsonl(out)
    assert len(rows) == 100 and len({r["id"] for r in rows}) == 100
    assert all(math.isfinite(r["f1"]) for r in rows)
    printed = capsys.readouterr().out
    assert "edit-F1 on 100 pair(s)" in printed
    if setting == "edited":
        # An edited draft keeps most of the draft: far above the own-reply setting.
        assert sum(r["expected_matches"] for r in rows) > sum(r["expected_additions"] for r in rows)


# -- conventions: one error format, standard input and output, --quiet, --version ---------
PAIRS = [
    {"id": "a", "prediction": "Rest today. Drink water.", "reference": "Rest today."},
    {"id": "b", "prediction": "Call us.", "reference": "Call us. Take ibuprofen."},
    {"id": "c", "prediction": "Rest today.", "reference": "Rest today."},
]


@pytest.fixture
def pairs(tmp_path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in PAIRS))
    return path


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("edit-f1: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def _user_errors(tmp_path: Path, pairs: Path) -> dict[str, tuple[list[str], str]]:
    """Case -> (arguments, part of the one-line message)."""
    (tmp_path / "sub").mkdir()
    os.link(pairs, tmp_path / "hard.jsonl")
    os.symlink(pairs, tmp_path / "soft.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"prediction": "caf\xe9", "reference": "x"}\n')
    (tmp_path / "open.csv").write_text('prediction,reference\n"Rest.,Rest.\nCall.,Call.\n')
    score = ["score", str(pairs), *FAST]
    return {
        "bad option value": (
            [*score, "--zero-division", "x"],
            "argument --zero-division: expected warn, 0 or 1, got 'x'",
        ),
        "zero division between 0 and 1": (
            [*score, "--zero-division", "0.5"],
            "argument --zero-division: expected warn, 0 or 1, got '0.5'",
        ),
        "unknown option": ([*score, "--frobnicate"], "unrecognized arguments: --frobnicate"),
        "removed --setting": ([*score, "--setting", "edited"], "unrecognized arguments"),
        "unknown judge option": (
            [*score, "--content-judge-option", "foo=1"],
            "content judge 'exact' does not take option(s) ['foo']",
        ),
        "unknown judge": ([*score, "--content-judge", "nosuch"], "content_judge must be one of"),
        "missing file": (["score", str(tmp_path / "absent.jsonl"), *FAST], "absent.jsonl: No such"),
        "unknown suffix": (["score", str(tmp_path / "x.txt"), *FAST], "cannot tell the format"),
        "not UTF-8": (
            ["score", str(tmp_path / "latin1.jsonl"), *FAST],
            "latin1.jsonl, line 1: byte 0xe9 at column 20 is not UTF-8",
        ),
        "unclosed quote": (
            ["score", str(tmp_path / "open.csv"), *FAST],
            "open.csv, line 2: a quoted cell that starts in this row is never closed",
        ),
        "limit": ([*score, "--limit", "0"], "--limit must be >= 1, got 0"),
        "input and dataset": ([*score, "--dataset", "demo"], "give an input file or --dataset"),
        "dataset without data": (
            ["score", "--dataset", "oncqa", *FAST],
            "dataset oncqa needs --data-dir",
        ),
        "output is a folder": ([*score, "-o", str(tmp_path)], "is a folder; give a file name"),
        "output under a file": (
            [*score, "-o", str(pairs / "out.jsonl")],
            "pairs.jsonl is a file, not a folder",
        ),
        "output is the input by a hard link": (
            [*score, "-o", str(tmp_path / "hard.jsonl")],
            "would overwrite the input file",
        ),
        "output is the input by a symbolic link": (
            [*score, "-o", str(tmp_path / "soft.jsonl")],
            "would overwrite the input file",
        ),
        "output is the input by ..": (
            [*score, "-o", str(tmp_path / "sub" / ".." / "pairs.jsonl")],
            "would overwrite the input file",
        ),
        "summary is the input": (
            [
                *score,
                "-o",
                str(tmp_path / "o.jsonl"),
                "--summary-json",
                str(tmp_path / "hard.jsonl"),
            ],
            "--summary-json",
        ),
        "summary is the per-row output": (
            [*score, "-o", str(tmp_path / "o.jsonl"), "--summary-json", str(tmp_path / "o.jsonl")],
            "are the same file",
        ),
        "both to standard output": (
            [*score, "-o", "-", "--summary-json", "-"],
            "-o and --summary-json cannot both be - (standard output)",
        ),
        "train-judge without data": (
            ["train-judge", "embedding-content", "-o", str(tmp_path / "j.json")],
            "needs --data",
        ),
        "veto on the theme judge": (
            ["train-judge", "embedding-theme", "--veto", "drug", "-o", str(tmp_path / "j.json")],
            "--veto applies to embedding-content only",
        ),
        "unknown veto kind": (
            [
                "train-judge",
                "embedding-content",
                "--data",
                str(tmp_path),
                "--veto",
                "dose",
                "-o",
                str(tmp_path / "j.json"),
            ],
            "unknown veto kind(s) ['dose']",
        ),
        "report of a missing run": (["report", str(tmp_path / "absent.jsonl")], "absent.jsonl"),
    }


USER_ERRORS = [
    "bad option value",
    "zero division between 0 and 1",
    "unknown option",
    "removed --setting",
    "unknown judge option",
    "unknown judge",
    "missing file",
    "unknown suffix",
    "not UTF-8",
    "unclosed quote",
    "limit",
    "input and dataset",
    "dataset without data",
    "output is a folder",
    "output under a file",
    "output is the input by a hard link",
    "output is the input by a symbolic link",
    "output is the input by ..",
    "summary is the input",
    "summary is the per-row output",
    "both to standard output",
    "train-judge without data",
    "veto on the theme judge",
    "unknown veto kind",
    "report of a missing run",
]


@pytest.mark.parametrize("case", USER_ERRORS)
def test_every_user_error_is_one_line_and_exit_2(case, tmp_path, pairs, capsys):
    argv, message = _user_errors(tmp_path, pairs)[case]
    before = pairs.read_bytes()
    assert main(argv) == 2
    assert message in _one_error_line(capsys)
    assert pairs.read_bytes() == before
    assert not (tmp_path / "o.jsonl").exists()  # outputs are checked before any work


def test_bad_rows_list_one_line_per_row_without_their_text(tmp_path, capsys):
    source = tmp_path / "pairs.jsonl"
    source.write_text('{"prediction": "Secret words.", "reference": 3}\n["Secret words."]\n')
    assert main(["score", str(source), *FAST]) == 2
    assert capsys.readouterr().err == (  # one bad input: one line
        f"edit-f1: error: {source}, line 2: expected a JSON object, got list\n"
    )


def _run(*argv: str, stdin: bytes = b"", cwd=None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "editf1.cli", *argv]
    return subprocess.run(command, input=stdin, capture_output=True, cwd=cwd, timeout=300)


def test_exit_status_and_stderr_of_the_installed_command(tmp_path, pairs):
    bad = _run("score", str(pairs), *FAST, "--limit", "-3")
    assert bad.returncode == 2 and bad.stdout == b""
    assert bad.stderr.decode() == "edit-f1: error: --limit must be >= 1, got -3\n"
    missing = _run("report", str(tmp_path / "nothing.jsonl"))
    assert missing.returncode == 2 and b"Traceback" not in missing.stderr
    assert missing.stderr.decode().count("\n") == 1
    usage = _run("score", "--zero-division")
    assert usage.returncode == 2 and usage.stderr.decode() == (
        "edit-f1: error: argument --zero-division: expected one argument "
        "(see: edit-f1 score --help)\n"
    )


def test_version():
    done = _run("--version")
    assert done.returncode == 0
    assert done.stdout.decode() == f"edit-f1 {importlib.metadata.version('edit-f1')}\n"


def test_standard_input_in_summary_json_out_human_text_to_stderr(tmp_path, pairs):
    out = tmp_path / "o.jsonl"
    done = _run(
        "score", "-", "-o", str(out), "--summary-json", "-", *FAST, stdin=pairs.read_bytes()
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)  # standard output holds the summary only
    # EM: a 1, b 1, c 1 = 3; EA: b 1; ED: a 1 -> P 3/4, R 3/4.
    assert (summary["n_pairs"], summary["precision"], summary["recall"]) == (3, 0.75, 0.75)
    assert "edit-F1 on 3 pair(s)" in done.stderr.decode()
    assert [r["id"] for r in _jsonl(out)] == ["a", "b", "c"]


def test_per_row_results_to_standard_output(monkeypatch, pairs, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(pairs.read_bytes())))
    assert main(["score", "-", "-o", "-", *FAST]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert [(r["id"], r["precision"], r["recall"]) for r in rows] == [
        ("a", 0.5, 1.0),
        ("b", 1.0, 0.5),
        ("c", 1.0, 1.0),
    ]
    assert "edit-F1 on 3 pair(s)" in captured.err and "standard output" in captured.err


def test_csv_from_standard_input_needs_input_format(monkeypatch, tmp_path, capsys):
    data = b"prediction,reference\nRest today.,Rest today.\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = tmp_path / "o.jsonl"
    assert main(["score", "-", "--input-format", "csv", "-o", str(out), *FAST]) == 0
    assert _jsonl(out)[0]["f1"] == 1.0
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["score", "-", "-o", str(out), *FAST]) == 2  # JSONL by default
    assert "<stdin>, line 1: not valid JSON" in capsys.readouterr().err


def test_quiet_prints_nothing_and_silences_the_libraries_bars(tmp_path, pairs, capsys):
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars

    enable_progress_bars()
    try:
        out = tmp_path / "o.jsonl"
        assert main(["score", str(pairs), "-o", str(out), "--quiet", *FAST[:4]]) == 0
        assert capsys.readouterr() == ("", "")
        assert len(_jsonl(out)) == 3
        assert are_progress_bars_disabled()
    finally:
        enable_progress_bars()


def test_a_csv_without_a_header_row_is_never_quoted(tmp_path, capsys):
    """Issue 22, class 5: the first row of a file without a header row is a patient's
    text; no message quotes it."""
    first = "I have had chest pain since Monday,Please call 911 now"
    source = tmp_path / "pairs.csv"
    source.write_text(f"{first}\nRest today.,Rest today.\n")
    assert main(["score", str(source), *FAST]) == 2
    err = capsys.readouterr().err
    assert "chest pain" not in err and "911" not in err
    assert "the header has 2 cells, not shown" in err and err.count("\n") == 1
    source.write_text("Rest,Rest\nRest today.,Rest today.\n")  # a first row repeating a cell
    assert main(["score", str(source), *FAST]) == 2
    err = capsys.readouterr().err
    assert "Rest" not in err and "repeats cells (columns [1, 2])" in err


# -- outputs: atomic, complete runs only --------------------------------------------------


def test_the_default_output_says_when_it_replaces_an_earlier_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    row = {"prediction": "Rest today.", "reference": "Rest today."}
    (tmp_path / "a.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "a.csv").write_text("prediction,reference\nRest.,Rest today.\n")
    argv = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]
    assert main(["score", "a.jsonl", *argv]) == 0
    assert capsys.readouterr().out.rstrip().endswith("per-row results: runs/a.edit_f1.jsonl")
    assert main(["score", "a.csv", *argv]) == 0  # the same default name
    note = "runs/a.edit_f1.jsonl (replaced an earlier run's; give -o to keep both)"
    assert capsys.readouterr().out.rstrip().endswith(f"per-row results: {note}")


def test_a_failed_or_killed_run_leaves_the_previous_output(monkeypatch, tmp_path, pairs):
    from editf1.scorer import EditF1Scorer

    out = tmp_path / "o.jsonl"
    out.write_text("previous\n")

    def one_pair_then(stop):
        def score_stream(self, rows, *, sink, **kwargs):
            sink(type("Pair", (), {"to_dict": lambda self: {"row": 0}})())
            stop()

        return score_stream

    def crash():
        raise RuntimeError("a judge crashed")

    monkeypatch.setattr(EditF1Scorer, "score_stream", one_pair_then(crash))
    with pytest.raises(RuntimeError):  # a bug still raises
        main(["score", str(pairs), "-o", str(out), *FAST])
    assert out.read_text() == "previous\n"
    monkeypatch.setattr(
        EditF1Scorer, "score_stream", one_pair_then(lambda: os.kill(os.getpid(), signal.SIGTERM))
    )
    assert main(["score", str(pairs), "-o", str(out), *FAST]) == 143
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.jsonl", "pairs.jsonl"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is restored


@pytest.mark.parametrize("name", ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGALRM"])
def test_every_termination_signal_leaves_no_temporary_file(monkeypatch, tmp_path, pairs, name):
    """Issue 22, class 5: a closed terminal (SIGHUP) and the other catchable signals
    clean up as SIGTERM does: no hidden temporary file of patient text is left."""
    from editf1.scorer import EditF1Scorer

    number = getattr(signal, name, None)
    if number is None:
        pytest.skip(f"{name} does not exist on this platform")
    out = tmp_path / "o.jsonl"

    def score_stream(self, rows, *, sink, **kwargs):
        sink(type("Pair", (), {"to_dict": lambda self: {"row": 0, "text": "Chest pain."}})())
        os.kill(os.getpid(), number)

    monkeypatch.setattr(EditF1Scorer, "score_stream", score_stream)
    # a signal the process started with ignored (nohup: SIGHUP; a shell's background job:
    # SIGQUIT) stays ignored by the command, as it should: give it its default here
    inherited = signal.signal(number, signal.SIG_DFL)
    try:
        assert main(["score", str(pairs), "-o", str(out), *FAST]) == 128 + number
        assert signal.getsignal(number) is signal.SIG_DFL  # the handler is restored
    finally:
        signal.signal(number, inherited)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.jsonl"]


@pytest.fixture
def run(tmp_path, pairs) -> tuple[Path, Path]:
    out, summary = tmp_path / "run.edit_f1.jsonl", tmp_path / "run.summary.json"
    assert main(["score", str(pairs), "-o", str(out), "--summary-json", str(summary), *FAST]) == 0
    return out, summary


def test_report_refuses_a_run_that_is_not_complete(tmp_path, run, capsys):
    out, summary = run
    capsys.readouterr()
    lines = out.read_text().splitlines(keepends=True)
    report = ["report", "--n-resamples", "100", "-o", str(tmp_path / "report")]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:2]))  # cut at a line break: only the summary tells
    assert main([*report, str(cut), "--summary", str(summary)]) == 2
    err = _one_error_line(capsys)
    assert "cut.jsonl give 0.666" in err and "they are not from the same run" in err  # P 2/3
    gap = tmp_path / "gap.jsonl"
    gap.write_text(lines[0] + lines[2])
    assert main([*report, str(gap)]) == 2
    assert "gap.jsonl: pair 2 is row 2, expected row 1" in _one_error_line(capsys)
    short = tmp_path / "short.jsonl"
    short.write_text("".join(lines).rstrip("\n"))
    assert main([*report, str(short)]) == 2
    assert "short.jsonl: the last line is cut short" in _one_error_line(capsys)
    assert not (tmp_path / "report").exists()
    assert main([*report, str(out), "--summary", str(summary)]) == 0
    assert (tmp_path / "report" / "report.md").is_file()


def test_report_never_replaces_its_inputs(tmp_path, run, capsys):
    out, _ = run
    inside = tmp_path / "report"
    inside.mkdir()
    os.replace(out, inside / "report.md")  # a run file with a report file's name
    before = (inside / "report.md").read_bytes()
    assert (
        main(["report", str(inside / "report.md"), "-o", str(inside), "--n-resamples", "100"]) == 2
    )
    assert "would replace the input" in _one_error_line(capsys)
    assert (inside / "report.md").read_bytes() == before
    assert sorted(p.name for p in inside.iterdir()) == ["report.md"]


def test_export_replaces_a_previous_export_whole_and_keeps_other_files(tmp_path, capsys):
    folder = tmp_path / "demo"
    assert main(["export-dataset", "demo", "-o", str(folder), "--format", "jsonl"]) == 0
    written = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert "README.md" in written and any(name.startswith("data/") for name in written)
    (folder / "data" / "stale.jsonl").write_text("old")
    (folder / "notes.txt").write_text("mine")
    assert main(["export-dataset", "demo", "-o", str(folder), "--format", "jsonl"]) == 2
    assert "is not empty" in _one_error_line(capsys)
    argv = ["export-dataset", "demo", "-o", str(folder), "--format", "jsonl", "--overwrite"]
    assert main(argv) == 0
    again = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert again == sorted([*written, "notes.txt"])  # data/stale.jsonl went with the old data/
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]  # no staging folder left
    (tmp_path / "file").write_text("x")
    assert main(["export-dataset", "demo", "-o", str(tmp_path / "file")]) == 2
    assert "file is a file; give a folder" in _one_error_line(capsys)


def test_a_download_without_network_is_one_line(monkeypatch, capsys):
    import editf1.cli.datasets

    url = "https://raw.githubusercontent.com/org/set/0123abc/data.jsonl"

    def offline(args, reference_fields):
        raise FileNotFoundError(url)  # what fsspec raises when the host cannot be reached

    monkeypatch.setattr(editf1.cli.datasets, "dataset_rows", offline)
    assert main(["score", "--dataset", "kqa", "--download", *FAST]) == 2
    assert f"cannot download {url} (no network" in _one_error_line(capsys)


def test_a_missing_optional_library_is_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gradio", None)  # as if the demo extra were absent
    assert main(["demo"]) == 2
    err = _one_error_line(capsys)
    assert "gradio" in err and "pip install 'edit-f1[all]'" in err


# ---------------------------------------------------------------- several replies per draft


def test_score_against_several_reply_columns_and_a_list_valued_column(tmp_path, capsys):
    rows = [
        {"id": "a", "prediction": "Rest today. Drink water.", "reply_1": "Rest today. Eat.",
         "reply_2": "Drink water. Rest today.", "replies": ["Rest today. Eat.", "Call us."]},
        {"id": "b", "prediction": "Call us.", "reply_1": "Call us.", "reply_2": "Eat.",
         "replies": ["Call us."]},
    ]  # fmt: skip
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, summary = tmp_path / "out.jsonl", tmp_path / "s.json"
    args = ["score", str(source), "-o", str(out), "--summary-json", str(summary), *FAST]
    assert main([*args, "--reference-field", "reply_1", "--reference-field", "reply_2"]) == 0
    scored = _jsonl(out)
    # a: vs reply_1 EM 1 EA 1 ED 1 (F1 0.5); vs reply_2 EM 2 (F1 1): best is reply_2.
    # b: vs reply_1 F1 1, vs reply_2 F1 0: best is reply_1.
    assert [r["best_reference"] for r in scored] == [1, 0]
    assert [[p["f1"] for p in r["per_reference"]] for r in scored] == [[0.5, 1.0], [1.0, 0.0]]
    s = json.loads(summary.read_text())
    assert (s["expected_matches"], s["expected_additions"], s["expected_deletions"]) == (3, 0, 0)
    every = s["all_references"]  # EM 4, EA 2 (Eat., Eat.), ED 2 (Drink water., Call us.)
    assert (every["expected_matches"], every["expected_additions"]) == (4, 2)
    assert every["expected_deletions"] == 2 and every["n_pairs"] == 4
    # one column holding lists: a has 2 replies, b has 1
    assert main([*args, "--reference-field", "replies"]) == 0
    assert [r["n_references"] for r in _jsonl(out)] == [2, 1]
    capsys.readouterr()


def test_several_reply_columns_name_the_bad_column(tmp_path, capsys):
    # one clinician or two (OncQA's shape): an empty cell is no reply, and it is said
    source, out = tmp_path / "pairs.jsonl", tmp_path / "o.jsonl"
    rows = [{"prediction": "Rest.", "r1": "Rest.", "r2": " "},
            {"prediction": "Rest.", "r1": None, "r2": "Eat."},
            {"prediction": "Rest.", "r1": "Rest.", "r2": "Eat."}]  # fmt: skip
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    columns = ["--reference-field", "r1", "--reference-field", "r2"]
    fewer = r"2 row\(s\) have a reply in fewer than all of \['r1', 'r2'\] \(.*"
    fewer += r"pairs.jsonl, lines 1 and 2\): an empty cell is no reply"
    with pytest.warns(UserWarning, match=fewer):
        assert main(["score", str(source), "-o", str(out), *FAST, *columns]) == 0
    assert [r["n_references"] for r in _jsonl(out)] == [1, 1, 2]
    assert [r["recall"] for r in _jsonl(out)] == [1.0, 0.0, 1.0]
    # no reply in any column, or a cell that is not text: every such cell is named
    rows = [
        {"prediction": "Rest.", "r1": "", "r2": " "},
        {"prediction": "Rest.", "r1": "Rest.", "r2": ["Eat."]},
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", str(source), "-o", str(out), *FAST, *columns]) == 2
    no_word = (
        "has no word (empty, whitespace or punctuation only: str of {} character{}); edit-F1 "
        "needs a clinician reply to compare against"
    )
    assert capsys.readouterr().err.splitlines() == [
        "edit-f1: error: 3 bad input(s):",
        f"  {source}, line 1: field 'r1' {no_word.format(0, 's')}",
        f"  {source}, line 1: field 'r2' {no_word.format(1, '')}",
        f"  {source}, line 2: field 'r2' must be a string, got list of 1 item",
    ]
    assert main(["score", str(source), *FAST, "--reference-field", "r1",
                 "--reference-field", "r1"]) == 2  # fmt: skip
    assert "names a column twice" in capsys.readouterr().err


def test_an_error_in_one_process_share_is_reported_by_that_process(monkeypatch, capsys):
    """Under several processes only the main one reports errors, except an error of one
    process's own share (ProcessError): that process names itself, on one line."""
    import editf1.cli.scoring
    from editf1.cli.conventions import ProcessError

    def fails(args):
        raise ProcessError("process 1 of 2", OSError(5, "Input/output error", "share-1.jsonl"))

    monkeypatch.setattr(editf1.cli.scoring, "_score", fails)
    monkeypatch.setenv("RANK", "1")  # not the main process
    assert main(["score"]) == 2
    assert capsys.readouterr().err == (
        "edit-f1: error: process 1 of 2: share-1.jsonl: Input/output error\n"
    )
    monkeypatch.setattr(editf1.cli.scoring, "_score", _shared_error)
    assert main(["score"]) == 2
    assert capsys.readouterr().err == ""  # a shared error: the main process reports it


def _shared_error(args):
    raise ValueError("a bad option")


# -- the command line a person expects (issue 24 §5) ----------------------------------


def _options_without_help(parser, path: str) -> list[str]:
    import argparse

    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += _options_without_help(sub, f"{path} {name}")
        elif not action.help and not isinstance(action, argparse._HelpAction):
            missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_option_of_every_command_has_a_help_text():
    """Walks the whole parser, subcommands and their subcommands included."""
    from editf1.cli.main import build_parser

    parser = build_parser()
    assert _options_without_help(parser, "edit-f1") == []
    # the walk reaches nested commands: a nested option it can see
    commands = next(a for a in parser._actions if a.dest == "command")
    agreement = commands.choices["agreement"]
    labels = next(a for a in agreement._actions if a.dest == "kind").choices["labels"]
    assert any("--human-field" in a.option_strings for a in labels._actions)


#: The judges that cannot run without an option, and the option their error names.
NEEDS = {
    ("content", "server"): "base_url",
    ("theme", "server"): "base_url",
    ("content", "llm"): "base",
    ("theme", "llm"): "base",
}


def test_every_judge_that_needs_an_option_says_which_in_one_line(tmp_path, capsys):
    """Each registered judge either runs without options or, without the one it needs,
    ends with one line naming it and exit status 2 (no traceback); a judge whose config
    has a field without a default is in NEEDS."""
    import dataclasses

    from editf1.judges import CONTENT_JUDGES, THEME_JUDGES, config_class

    for kind, registry in (("content", CONTENT_JUDGES), ("theme", THEME_JUDGES)):
        for name in registry:
            config = config_class(kind, name)
            fields = [] if config.SETTINGS_FROM else dataclasses.fields(config)
            missing = dataclasses.MISSING
            required = [f.name for f in fields if f.default is f.default_factory is missing]
            assert not required or NEEDS.get((kind, name)) == required[0], (kind, name)
    for (kind, name), option in NEEDS.items():
        other = "theme" if kind == "content" else "content"
        argv = ["score", f"--{kind}-judge", name, f"--{other}-judge"]
        argv += ["exact" if other == "content" else "none", "--no-progress"]
        assert main([*argv, "-o", str(tmp_path / "out.jsonl")]) == 2, (kind, name)
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("edit-f1: error: "), err
        assert option in err and "Traceback" not in err
        if name == "server":
            assert f"--{kind}-judge-option base_url=" in err


def test_offline_hub_downloads_name_the_revision_and_the_next_step(tmp_path, capsys, monkeypatch):
    """--dataset org/x --download --revision SHA and SyPPM's --hub-repo, with the Hub
    unreachable: one line naming the repository, the revision, the hf download command
    and the ways to score it offline (a folder / --data-dir, or a kept --cache-dir)."""
    import datasets
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    def unreachable(*args, **kwargs):
        raise ConnectionError("Couldn't reach 'org/x' on the Hub (OfflineModeIsEnabled)")

    def not_cached(*args, **kwargs):
        raise LocalEntryNotFoundError("Cannot find an appropriate cached snapshot folder")

    monkeypatch.setattr(datasets, "load_dataset", unreachable)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", not_cached)
    sha = "0123456789abcdef0123456789abcdef01234567"
    out = ["--no-progress", "-o", str(tmp_path / "out.jsonl")]
    assert main(["score", "--dataset", "org/x", "--download", "--revision", sha, *out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--dataset org/x (revision {sha})" in err
    assert f"hf download org/x --repo-type dataset --revision {sha} --local-dir DIR" in err
    assert "--dataset DIR (no --download)" in err and "--cache-dir DIR" in err
    syppm = ["score", "--dataset", "syppm", "--download", "--hub-repo", "org/x"]
    assert main([*syppm, "--revision", sha, *out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"SyPPM org/x at revision {sha}" in err
    assert "--data-dir DIR" in err and "--cache-dir DIR" in err


def test_a_warning_is_one_line_naming_file_and_line_and_the_option(tmp_path):
    """An empty draft: one line (no source line, not twice), the row by file and line,
    the option as the command line spells it; the library's own warning is unchanged."""
    source = tmp_path / "pairs.jsonl"
    rows = [{"prediction": "Rest.", "reference": "Rest."}, {"prediction": "", "reference": "Rest."}]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = _run("score", str(source), *FAST, "-q", "-o", str(tmp_path / "o.jsonl"))
    assert done.returncode == 0
    assert done.stderr.decode() == (
        "edit-f1: warning: precision (prediction has no sentence; theme precision too if the "
        f"reply has a theme) is undefined (zero denominator) for 1 row(s) ({source}, line 2) "
        "and set to 0.0; pass --zero-division 0 or 1 to choose the value and silence this "
        "warning\n"
    )
    import editf1
    from editf1.aggregate import UndefinedMetricWarning

    with pytest.warns(UndefinedMetricWarning) as caught:
        editf1.score(
            predictions=["Rest.", ""],
            references=["Rest.", "Rest."],
            content_judge="exact",
            theme_judge=None,
        )
    assert [str(w.message) for w in caught] == [
        "precision (prediction has no sentence; theme precision too if the reply has a theme) "
        "is undefined (zero denominator) for 1 row(s) [1] and set to 0.0; pass "
        "zero_division=0.0 or 1.0 to choose the value and silence this warning"
    ]


def test_help_lists_the_commands_in_workflow_order_each_with_an_example(capsys):
    """edit-f1 --help: the sections of SECTIONS in order, every command once; each
    command's help ends with (score: starts with) an example that parses."""
    import argparse
    import shlex

    from editf1.cli.main import SECTIONS, build_parser

    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    headings = [text.index(f"\n{title}:\n") for title, _ in SECTIONS]
    assert headings == sorted(headings)
    listed = [name for _, names in SECTIONS for name in names]
    assert listed[:4] == ["score", "report", "sample-for-labels", "annotate"]
    positions = [text.index(f"\n  {name} ") for name in listed]
    assert positions == sorted(positions)
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(commands.choices) == sorted(listed)
    for name, sub in commands.choices.items():
        shown = sub.format_help()
        block = shown.split("example:\n" if "example:\n" in shown else "examples:\n")[1]
        examples = [line.strip() for line in block.split("\n\n")[0].splitlines()]
        assert examples and all(e.startswith(f"edit-f1 {name}") for e in examples), name
        for example in examples:
            argv = shlex.split(example.split(" < ")[0])[1:]
            assert build_parser().parse_args(argv).command == name, example
    score_help = commands.choices["score"].format_help()
    assert score_help.startswith("usage: edit-f1 score [INPUT] [options]\n")
    # the examples come before the options, and the common options first
    assert score_help.index("examples:") < score_help.index("options:")
    groups = ["input:", "output:", "judges and scores:", "gold labels", "a known dataset"]
    assert [score_help.index(f"\n{g}") for g in groups] == sorted(
        score_help.index(f"\n{g}") for g in groups
    )


def test_help_imports_no_model_or_data_library():
    """What keeps edit-f1 --help quick (benchmarks/cli_help.py times it)."""
    heavy = ("datasets", "torch", "transformers", "sentence_transformers", "nltk", "scipy")
    code = (
        "import sys; from editf1.cli.main import build_parser; build_parser(); "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "[]\n", done.stderr
