"""Reading a site's own content and theme labels (``editf1.validation.labelled``): every
bad row is named by file, line (JSONL) or row (CSV) and field, never by its text; what
is odd but usable is kept and warned about; and ``edit-f1 agreement`` measures a judge
fitted on the same labels on the cases it held out, never in-sample."""

from __future__ import annotations

import json
import re

import pytest

from editf1.cli.main import main
from editf1.inputs import InputError
from editf1.themes import THEMES
from editf1.validation.labelled import (
    ContentItem,
    items_digest,
    read_content_items,
    read_label_columns,
    read_theme_items,
)

SECRET = "Patient Jane Roe, MRN 5550123"


def _jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _row(**given) -> dict:
    return {"case": "c1", "prediction": "Rest today.", "reference": "Rest.", "match": True} | given


def test_every_bad_row_is_listed_by_line_and_field_without_its_text(tmp_path):
    labels = tmp_path / "mine.jsonl"
    _jsonl(
        labels,
        [
            _row(),  # line 1: fine
            _row(prediction=42),  # line 2
            _row(prediction=None, match=False),  # line 3
            _row(reference=["Rest.", "Sleep."]),  # line 4
            _row(span=5),  # line 5
            _row(case=""),  # line 6
            _row(case=None),  # line 7
            _row(reference=" \u200b "),  # line 8: no word
            _row(span="   "),  # line 9: a span with no word
            _row(prediction=""),  # line 10: a match in an empty draft
            _row(case=SECRET, reference=SECRET, match="maybe"),  # line 11
        ],
    )
    with pytest.raises(InputError) as raised:
        read_content_items(labels)
    assert raised.value.errors == [
        "mine.jsonl, line 2 field prediction: expected text, got int",
        "mine.jsonl, line 3 field prediction: expected text, got None",
        "mine.jsonl, line 4 field reference: expected text, got list of 2 items",
        "mine.jsonl, line 5 field span: expected text, got int",
        "mine.jsonl, line 6 field case: expected a non-empty case id (text or an integer), "
        "got str of 0 characters; a case's items are split and resampled together",
        "mine.jsonl, line 7 field case: expected a non-empty case id (text or an integer), "
        "got None; a case's items are split and resampled together",
        "mine.jsonl, line 8 field reference has no word (str of 3 characters)",
        "mine.jsonl, line 9 field span has no word (str of 3 characters)",
        "mine.jsonl, line 10: match is true but field prediction has no word",
        "mine.jsonl, line 11 field match: expected true or false, got str of 5 characters",
    ]
    assert "Jane" not in str(raised.value)
    # the command says the same, as an error rather than a traceback
    assert main(["agreement", "content", "--labels", str(labels)]) == 2


def test_a_csv_names_its_rows_after_the_header_and_a_file_needs_rows(tmp_path):
    labels = tmp_path / "mine.csv"
    labels.write_text(
        "case,prediction,reference,match\nc1,Rest today.,Rest.,true\n,Rest today.,Rest.,no\n"
    )
    with pytest.raises(InputError, match=r"mine\.csv, line 3 field case"):
        read_content_items(labels)
    empty = tmp_path / "empty.csv"
    empty.write_text("case,prediction,reference,match\n")
    with pytest.raises(ValueError, match=r"empty\.csv has no rows of labels"):
        read_content_items(empty)


def test_repeats_and_a_match_against_its_annotators_are_kept_and_named(tmp_path):
    labels = tmp_path / "mine.jsonl"
    _jsonl(
        labels,
        [
            _row(annotators=[True, True, False]),
            _row(case=7, annotators=[False, False, True]),  # line 2: majority no match
            _row(annotators=[True, False]),  # line 3: a repeat of line 1; a tie
            _row(reference="Sleep.", match=False, annotators=[True, False, False]),
        ],
    )
    with pytest.warns(UserWarning) as caught:
        items = read_content_items(labels)
    messages = [str(w.message) for w in caught]
    assert messages == [
        "1 row(s) repeat the case, prediction and reference of an earlier row (kept, each "
        "counts as an item): mine.jsonl, line 3 repeats mine.jsonl, line 1",
        "1 row(s) have a match that is not their annotators' majority (kept as given): "
        "mine.jsonl, line 2",
    ]
    assert len(items) == 4 and items[1].case == "7"
    assert items[2] == ContentItem("c1", "Rest today.", "Rest.", True, None, (True, False))


def test_agreement_output_is_checked_before_any_work(tmp_path, capsys):
    labels = tmp_path / "mine.jsonl"
    _jsonl(labels, [_row(), _row(case="c2", reference="Sleep.", match=False)])
    before = labels.read_bytes()
    assert main(["agreement", "content", "--labels", str(labels), "-o", str(labels)]) == 2
    assert "would overwrite the input file" in capsys.readouterr().err
    assert labels.read_bytes() == before
    assert main(["agreement", "content", "--labels", str(labels), "-o", str(tmp_path)]) == 2
    assert main(["agreement", "content", "--labels", str(labels), "--test-size", "1.5"]) == 2
    assert "--test-size must be a share in (0, 1), got 1.5" in capsys.readouterr().err


def test_agreement_to_standard_output_is_the_json_report_alone(tmp_path, capsys):
    """``-o -``: the report on standard output, the human text on standard error; the
    exact judge matches the verbatim sentence and not the other (2 of 2 agree)."""
    labels = tmp_path / "mine.jsonl"
    _jsonl(
        labels,
        [_row(reference="Rest today."), _row(case="c2", reference="Sleep.", match=False)],
    )
    args = ["agreement", "content", "--labels", str(labels), "--content-judge", "exact"]
    assert main([*args, "--n-resamples", "100", "-o", "-"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["n"] == 2 and report["agreement"]["value"] == 1.0
    assert "agreement" in err and not (tmp_path / "-").exists()


def test_agreement_warns_that_one_case_gives_no_interval(tmp_path, capsys):
    labels = tmp_path / "mine.jsonl"
    _jsonl(labels, [_row(reference="Rest today."), _row(reference="Sleep.", match=False)])
    args = ["agreement", "content", "--labels", str(labels), "--content-judge", "exact"]
    with pytest.warns(UserWarning, match=r"1 case\(s\): the bootstrap over cases"):
        assert main([*args, "--n-resamples", "100"]) == 0
    assert "2 items in 1 case;" in capsys.readouterr().out


@pytest.mark.parametrize("given", ["-1", "4294967296", "x"])
def test_a_seed_outside_what_numpy_takes_is_refused_by_the_option(given, capsys):
    assert main(["train-judge", "embedding-content", "--seed", given, "-o", "out.json"]) == 2
    assert (
        f"argument --seed: a seed is an integer in [0, 2**32 - 1], got {given!r}"
        in capsys.readouterr().err
    )


def test_a_judge_fitted_on_these_labels_is_measured_on_its_own_split(tmp_path, capsys):
    """The parameters record the labels' digest and the split's seed and share: a
    held-out measurement with another seed would count fitting cases, and is refused
    before the judge loads; other labels, or the whole set, are not checked."""
    from editf1.judges.embedding.config import load_params

    labels = tmp_path / "mine.jsonl"
    rows = [_row(case=f"c{k}", reference="Rest." if k % 2 else "Sleep.") for k in range(4)]
    _jsonl(labels, rows)
    items = read_content_items(labels)
    params = load_params("content_judge_veto_nc.json")
    params["split"] = {"seed": 3, "test_size": 0.4, "items_digest": items_digest(items)}
    fitted = tmp_path / "fitted.json"
    fitted.write_text(json.dumps(params))
    args = ["agreement", "content", "--labels", str(labels), "--split", "test",
            "--content-judge-option", f"params_file={fitted}"]  # fmt: skip
    assert main(args) == 2
    assert (
        f"params_file {fitted} was fitted on these labels with split seed 3 and test share "
        "0.4; --split test with --seed 0 --test-size 0.4 would mix its fitting cases into "
        "the held-out ones: give --seed 3 --test-size 0.4"
    ) in capsys.readouterr().err
    # the digest covers the labels: change one and the file is not these labels' fit
    # with the recorded seed its held-out side is measured: c1 and c3 (seed 0: c2, c3)
    assert main([*args, "--seed", "3", "--n-resamples", "100"]) == 0
    assert "2 items in 2 cases" in capsys.readouterr().out
    # the digest covers the labels: change one and the file is not these labels' fit
    other = [*items[:3], ContentItem("c3", "Rest today.", "Sleep.", True)]
    assert items_digest(other) != items_digest(items)


def test_a_parameter_file_that_is_not_json_names_itself(tmp_path):
    from editf1.judges.embedding.config import load_params

    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"a": 1}\n{"b": 2}\n')
    with pytest.raises(ValueError, match=rf"params_file {bad}: not a JSON parameter file "
                       r"\(Extra data at line 2, column 1\)"):  # fmt: skip
        load_params(str(bad))
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"expected a JSON object, got list"):
        load_params(str(listed))


def _theme_row(**given) -> dict:
    return {"text": "Call the front desk.", "theme": "Logistics"} | given


def test_every_bad_theme_row_is_listed_without_its_text(tmp_path):
    labels = tmp_path / "themes.jsonl"
    _jsonl(
        labels,
        [
            _theme_row(case="c1"),  # line 1: fine
            _theme_row(case="c1", text=42),  # line 2
            _theme_row(case="c2", text="  !! "),  # line 3: no word
            _theme_row(case="c2", theme="contingency  planning"),  # line 4: a near miss
            _theme_row(case="c3", theme=SECRET),  # line 5: described, not quoted
            _theme_row(),  # line 6: no case where the others have one
            _theme_row(case=1.5),  # line 7
            _theme_row(case="c4", annotators="Other"),  # line 8: not a JSON list
            _theme_row(case="c4", annotators=["Other", None]),  # line 9
        ],
    )
    with pytest.raises(InputError) as raised:
        read_theme_items(labels)
    themes = f"expected one of {list(THEMES)}"
    case = "a case's items are split and resampled together"
    assert raised.value.errors == [
        "themes.jsonl, line 2 field text: expected text, got int",
        "themes.jsonl, line 3 field text has no word (str of 5 characters)",
        "themes.jsonl, line 4 field theme: not a theme (str of 21 characters); did you mean "
        "'Contingency planning'?",
        f"themes.jsonl, line 5 field theme: not a theme (str of 29 characters); {themes}",
        "themes.jsonl, line 6 field case: expected a non-empty case id (text or an integer), "
        f"got None; {case}",
        "themes.jsonl, line 7 field case: expected a non-empty case id (text or an integer), "
        f"got float; {case}",
        "themes.jsonl, line 8 field annotators: expected a JSON list, got str of 5 characters",
        f"themes.jsonl, line 9 field annotators: not a theme (None); {themes}",
        "field annotators: every row needs the same number of annotator themes, none or two "
        "or more (for the human ceiling); 0 first at themes.jsonl, line 1, 2 first at "
        "themes.jsonl, line 9",
    ]
    assert "Jane" not in str(raised.value)


def test_theme_repeats_and_a_theme_against_its_annotators_are_kept_and_named(tmp_path):
    labels = tmp_path / "themes.csv"
    labels.write_text(
        "text,theme,annotators\n"
        'Call the desk.,Logistics,"[""Logistics"", ""Logistics""]"\n'
        'Call the desk.,Other,"[""Logistics"", ""Logistics""]"\n'
        'How are you?,Other,"[""Other"", ""Logistics""]"\n'
    )
    with pytest.warns(UserWarning) as caught:
        items = read_theme_items(labels)
    # without a case column each row is its own case, so a repeat is the same sentence
    assert [str(w.message) for w in caught] == [
        "1 row(s) repeat the sentence of an earlier row (kept, each counts as an item): "
        "themes.csv, line 3 repeats themes.csv, line 2",
        "1 row(s) have a theme that is not their annotators' majority (kept): themes.csv, line 3",
    ]
    assert [it.case for it in items] == ["row-0", "row-1", "row-2"]
    assert items[2].annotators == ("Other", "Logistics")  # a tie is no majority


def test_a_theme_judge_fitted_on_labels_is_not_measured_on_them(tmp_path, capsys):
    """``train-judge embedding-theme --data``: cross-validated by case (a case's two
    sentences in one fold), the labels' digest recorded; ``agreement theme`` on the
    same labels is refused as in-sample, and runs on other labels."""
    from editf1.validation.labelled import shipped_theme_items

    shipped = shipped_theme_items()
    chosen = [it for t in THEMES for it in [x for x in shipped if x.theme == t][:6]]
    rows = [
        {"case": f"c{k // 2}", "text": it.text, "theme": it.theme} for k, it in enumerate(chosen)
    ]
    labels, judge = tmp_path / "themes.jsonl", tmp_path / "theme_judge.json"
    _jsonl(labels, rows)
    assert main(["train-judge", "embedding-theme", "--data", str(labels), "-o", str(judge)]) == 0
    params = json.loads(judge.read_text())
    assert params["cross_validation"]["by"] == "case" and params["n_sentences"] == 54
    assert params["items_digest"] == items_digest(read_theme_items(labels))
    assert params["fitted_on"] == "theme labels themes.jsonl"
    option = ["--theme-judge-option", f"params_file={judge}"]
    assert main(["agreement", "theme", "--labels", str(labels), *option]) == 2
    assert f"params_file {judge} was fitted on all of these labels" in capsys.readouterr().err
    other = tmp_path / "other.jsonl"
    _jsonl(other, rows[:-1])
    assert (
        main(["agreement", "theme", "--labels", str(other), "--n-resamples", "100", *option]) == 0
    )
    printed = capsys.readouterr().out
    assert "clinical_micro_f1" in printed
    assert re.search(r"\n    Medication-related follow-up questions +\d\.\d{3} \[", printed)


def test_a_theme_with_fewer_sentences_than_folds_is_named_before_encoding(tmp_path, capsys):
    labels = tmp_path / "themes.jsonl"
    _jsonl(labels, [_theme_row(text=f"Desk {t} {k}.", theme=t) for t in THEMES for k in range(4)])
    assert main(["train-judge", "embedding-theme", "--data", str(labels), "-o", "x.json"]) == 2
    assert "every theme needs at least 5 sentences for the 5-fold" in capsys.readouterr().err


def test_label_columns_name_every_bad_cell_and_read_one_label_one_way(tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text("case,expert,model\nc1,3,3\nc1,high,2\nc2,,4\nc2,nan,inf\nc3,2.5,1\n")
    with pytest.raises(InputError) as raised:
        read_label_columns(scores, "expert", "model", case="case", numeric=True)
    number = "expected a finite number, got"
    assert raised.value.errors == [
        f"scores.csv, line 3 field expert: {number} str of 4 characters",
        f"scores.csv, line 4 field expert: {number} str of 0 characters",
        f"scores.csv, line 5 field expert: {number} str of 3 characters",
        f"scores.csv, line 5 field model: {number} str of 3 characters",
    ]
    kept = tmp_path / "kept.csv"
    kept.write_text("case,expert,model\nc1,3,3.0\nc2,2.5,1\n")
    read = read_label_columns(kept, "expert", "model", case="case", numeric=True)
    assert read == {"human": [3, 2.5], "judge": [3, 1], "annotators": None, "groups": ["c1", "c2"]}
    # categorical: 1 and "1" are one label; null, a list and an empty case are named
    labels = tmp_path / "labels.jsonl"
    _jsonl(
        labels,
        [
            {"case": "c1", "h": 1, "j": "1", "a1": "yes", "a2": "no"},
            {"case": "", "h": None, "j": ["yes"], "a1": "yes", "a2": ""},
        ],
    )
    with pytest.raises(InputError) as raised:
        read_label_columns(labels, "h", "j", annotators=["a1", "a2"], case="case")
    label = "expected a label (non-empty text or an integer), got"
    assert raised.value.errors == [
        f"labels.jsonl, line 2 field h: {label} None",
        f"labels.jsonl, line 2 field j: {label} list of 1 item",
        f"labels.jsonl, line 2 field a2: {label} str of 0 characters",
        "labels.jsonl, line 2 field case: expected a non-empty case id (text or an "
        "integer), got str of 0 characters; a case's items are split and resampled together",
    ]
    _jsonl(labels, [{"h": 1, "j": "1"}, {"h": "2", "j": 3}])
    assert read_label_columns(labels, "h", "j")["human"] == ["1", "2"]
    assert read_label_columns(labels, "h", "j")["judge"] == ["1", "3"]
    with pytest.raises(ValueError, match=r"a column is given twice among \['h', 'h'\]"):
        read_label_columns(labels, "h", "h")


def test_agreement_labels_reports_a_bad_cell_not_a_traceback(tmp_path, capsys):
    scores = tmp_path / "scores.csv"
    scores.write_text("expert,model\n3,3\nhigh,2\n")
    args = ["agreement", "labels", str(scores), "--human-field", "expert", "--judge-field"]
    assert main([*args, "model", "--weights", "quadratic"]) == 2
    err = capsys.readouterr().err
    assert "scores.csv, line 3 field expert: expected a finite number" in err
    assert "high" not in err
    assert main([*args, "expert"]) == 2
