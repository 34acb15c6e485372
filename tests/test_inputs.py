"""Input checks: errors name the row and the field, list every bad row at once."""

from __future__ import annotations

import re

import pytest

from editf1.aggregate import UndefinedMetricWarning
from editf1.inputs import (
    CheckedRows,
    InputError,
    check_pairs,
    check_prediction,
    check_reference,
    describe,
    row_errors,
)
from editf1.scorer import EditF1Scorer

OK = "Rest today."


def errors_of(predictions, references):
    with pytest.raises(InputError) as info:
        check_pairs(predictions, references)
    return info.value.errors


@pytest.mark.parametrize(
    ("bad", "described"),
    [
        (None, "None"),
        (42, "int"),
        (3.5, "float"),
        (b"Rest.", "bytes of 5 bytes"),
    ],  # a list of replies is fine
)
def test_non_string_prediction_and_reference(bad, described):
    errors = errors_of([OK, bad], [bad, OK])
    # listed in row order, the value described by type and size, never shown
    assert errors == [
        f"references[0] must be a string, got {described}",
        f"predictions[1] must be a string, got {described}",
    ]


@pytest.mark.parametrize("reference", ["", "   ", "\n\t ", "...", "?! -", "🙂"])
def test_reference_without_a_word(reference):
    errors = errors_of([OK, OK, OK, OK], [OK, OK, OK, reference])
    assert len(errors) == 1
    assert errors[0].startswith("references[3] has no word (empty, whitespace or punctuation")
    assert f"only: str of {len(reference)} character" in errors[0]


@pytest.mark.parametrize("prediction", ["", "   ", "...", "🙂"])
def test_empty_prediction_is_accepted(prediction):
    assert check_prediction(0, prediction) == []
    check_pairs([prediction], [OK])  # does not raise


def test_every_bad_row_is_listed_at_once():
    predictions = [OK, None, OK, 7, OK]
    references = [OK, OK, "", None, "  "]
    errors = errors_of(predictions, references)
    assert [e.split(" ", 1)[0] for e in errors] == [
        "predictions[1]",
        "references[2]",
        "predictions[3]",
        "references[3]",
        "references[4]",
    ]
    with pytest.raises(InputError, match=r"5 bad input\(s\)"):
        check_pairs(predictions, references)


def test_many_bad_rows_are_summarised():
    with pytest.raises(InputError) as info:
        check_pairs([OK] * 25, [""] * 25)
    assert len(info.value.errors) == 25
    message = str(info.value)
    # 10 shown, the rest counted
    assert "references[9]" in message and "references[10]" not in message
    assert "... and 15 more" in message


def test_values_are_described_never_quoted():
    errors = errors_of([OK], ["." * 5000])
    assert errors == [
        "references[0] has no word (empty, whitespace or punctuation only: str of 5000 "
        "characters); edit-F1 needs a clinician reply to compare against"
    ]
    assert errors_of([list(range(10_000))], [OK]) == [
        "predictions[0] must be a string, got list of 10000 items"
    ]


def test_describe():
    assert describe("") == "str of 0 characters"
    assert describe("a") == "str of 1 character"
    assert describe("Chest pain.") == "str of 11 characters"
    assert describe(bytearray(b"a")) == "bytearray of 1 byte"
    assert describe(("a", "b")) == "tuple of 2 items"
    assert describe({"text": "Chest pain."}) == "dict of 1 item"
    assert (describe(True), describe(0.5), describe(None)) == ("bool", "float", "None")
    assert describe(iter([1])) == "list_iterator"


@pytest.mark.parametrize(
    ("text", "character", "code"),
    [("\ud800", 0, "D800"), ("Rest. \udfff Call us.", 6, "DFFF"), ("ok \udc80", 3, "DC80")],
)
def test_lone_surrogates_are_named_by_row_field_and_position(text, character, code):
    problem = f"is not valid Unicode: lone surrogate U+{code} at character {character}"
    errors = errors_of([OK, text, OK], [OK, OK, [OK, text]])
    assert errors == [
        f"predictions[1] {problem} of {len(text)}",
        f"references[2][1] {problem} of {len(text)}",
    ]
    with pytest.raises(InputError, match=re.escape(f"ids[1] {problem} of {len(text)}")):
        check_pairs([OK, OK], [OK, OK], ["a", text])


@pytest.mark.parametrize("value", ["Rest.", b"Rest.", 42, None, {"a": 1}])
def test_a_single_value_instead_of_a_list(value):
    with pytest.raises(TypeError, match="predictions must be a list of strings"):
        check_pairs(value, [OK])
    with pytest.raises(TypeError, match="references must be a list of strings"):
        check_pairs([OK], value)


def test_mismatched_lengths():
    with pytest.raises(ValueError, match="got 2 predictions and 3 references"):
        check_pairs([OK, OK], [OK, OK, OK])


def test_custom_field_names():
    assert check_prediction(4, None, "draft") == ["draft[4] must be a string, got None"]
    assert check_reference(4, 3, "reply") == ["reply[4] must be a string, got int"]


def test_several_replies_are_checked_one_by_one():
    assert check_reference(1, [OK, OK]) == []
    assert check_reference(1, []) == ["references[1] is an empty list; give at least one reply"]
    assert check_reference(1, [OK, None]) == ["references[1][1] must be a string, got None"]
    # a list of replies holds replies, not lists (was accepted, then crashed the splitter)
    assert check_reference(1, [[OK]]) == ["references[1][0] must be a string, got list of 1 item"]


def test_row_errors_checks_id_draft_and_reply_once():
    seen = {}
    assert row_errors(0, "m1", OK, OK, seen) == []
    assert row_errors(1, "m1", None, [" "], seen, prediction_field="draft") == [
        "ids[1] repeats ids[0]",
        "draft[1] must be a string, got None",
        "references[1][0] has no word (empty, whitespace or punctuation only: str of 1 "
        "character); edit-F1 needs a clinician reply to compare against",
    ]


# ---------------------------------------------------------------- through the scorer


@pytest.fixture
def scorer(content_judge_cls, theme_judge_cls):
    return EditF1Scorer(content_judge_cls(), theme_judge_cls())


def test_scorer_checks_everything_before_scoring(scorer):
    with pytest.raises(InputError) as info:
        scorer.score([OK, OK, None, OK], [OK, OK, OK, "  "])
    assert [e.split(" ", 1)[0] for e in info.value.errors] == ["predictions[2]", "references[3]"]
    assert scorer.content_judge.calls == 0  # no judge ran


def test_scorer_rejects_single_string_and_length_mismatch(scorer):
    with pytest.raises(TypeError, match="predictions must be a list"):
        scorer.score("Rest today.", [OK])
    with pytest.raises(ValueError, match="same length"):
        scorer.score([OK], [OK, OK])
    with pytest.raises(ValueError, match="ids has 1 items for 2 predictions"):
        scorer.score([OK, OK], [OK, OK], ids=["a"])


def test_scorer_empty_corpus_raises(scorer):
    with pytest.raises(ValueError, match="no pairs to score"):
        scorer.score([], [])


def test_score_stream_names_rows_of_the_bad_batch(content_judge_cls, theme_judge_cls):
    scorer = EditF1Scorer(content_judge_cls(), theme_judge_cls(), batch_size=2)
    rows = [(None, OK, OK), (None, OK, OK), (None, OK, OK), (None, 3, OK)]
    seen = []
    with pytest.raises(InputError, match=r"predictions\[3\] must be a string, got int$"):
        scorer.score_stream(iter(rows), sink=seen.append)
    assert [p.row for p in seen] == [0, 1]  # the batch before the bad one was scored


def test_scorer_accepts_an_empty_prediction(scorer):
    with pytest.warns(UndefinedMetricWarning, match=r"1 row\(s\) \[0\]"):
        result = scorer.score([""], [OK], keep_pairs=True)
    assert result.n_pairs == 1 and result.pairs[0].content.precision == 0.0


def test_ids_are_optional_non_empty_and_unique(scorer):
    drafts, replies = ["Rest.", "Rest.", "Rest."], ["Rest.", "Rest.", "Rest."]
    with pytest.raises(InputError) as caught:
        scorer.score(drafts, replies, ids=["m1", "m1", ""])
    assert caught.value.errors == [
        "ids[1] repeats ids[0]",
        "ids[2] must be a non-empty string, got str of 0 characters",
    ]
    with pytest.raises(InputError, match=r"ids\[0\] must be a non-empty string, got int\n"):
        scorer.score(drafts, replies, ids=[1, 2, 3])
    result = scorer.score(drafts, replies, ids=["m1", None, "m2"])
    assert [p.id for p in result.pairs] == ["m1", None, "m2"]


# ---------------------------------------------------------------- one door: once per row


@pytest.fixture
def row_checks(monkeypatch):
    """The rows :func:`editf1.inputs.row_errors` checked, in call order."""
    import editf1.inputs

    checked = []
    real = editf1.inputs.row_errors

    def counting(row, *args, **kwargs):
        checked.append(row)
        return real(row, *args, **kwargs)

    monkeypatch.setattr(editf1.inputs, "row_errors", counting)
    return checked


DRAFTS = ["Rest today. Call us.", "Drink water.", ""]
REPLIES = ["Rest today.", ["Drink water.", "Rest."], "Call us."]
EXACT = {"content_judge": "exact", "theme_judge": None, "zero_division": 0.0}


def test_editf1_score_and_the_scorer_check_each_row_once(row_checks):
    import editf1

    editf1.score(predictions=DRAFTS, references=REPLIES, ids=["a", "b", "c"], **EXACT)
    assert row_checks == [0, 1, 2]
    row_checks.clear()
    EditF1Scorer(**EXACT).score(DRAFTS, REPLIES)
    assert row_checks == [0, 1, 2]


def test_a_stream_of_rows_is_checked_once_and_checked_rows_never_again(row_checks):
    scorer = EditF1Scorer(**EXACT, batch_size=2)
    rows = list(zip([None] * 3, DRAFTS, REPLIES))
    scorer.score_stream(iter(rows))
    assert row_checks == [0, 1, 2]  # a batch at a time, numbered across batches
    row_checks.clear()
    scorer.score_stream(CheckedRows(rows))
    assert row_checks == []


def test_evaluate_compute_checks_each_row_once(row_checks):
    import evaluate

    from editf1.integrations.hf_metric import metric_path

    metric = evaluate.load(str(metric_path()), "exact+none")
    single = [r if isinstance(r, str) else r[0] for r in REPLIES]
    metric.compute(predictions=DRAFTS, references=single, zero_division=0.0)
    assert row_checks == [0, 1, 2]
    row_checks.clear()
    metric.add_batch(predictions=DRAFTS[:2], references=single[:2])
    metric.add(prediction=DRAFTS[2], reference=single[2])
    metric.compute(zero_division=0.0)
    assert row_checks == [0, 1, 2]  # numbered across add_batch and add


def test_the_training_callback_checks_each_row_once_per_evaluation(row_checks):
    from editf1.integrations.callback import EditF1Callback

    examples = [{"message": "Hi.", "reference": r} for r in REPLIES]
    callback = EditF1Callback(None, examples, scorer=EditF1Scorer(**EXACT))
    assert row_checks == []  # the examples are checked without drafts: not yet rows
    callback.generate = lambda model, tokenizer: list(DRAFTS)
    callback.evaluate(model=None, tokenizer=object())
    assert row_checks == [0, 1, 2]


def test_edit_f1_score_checks_each_row_once(row_checks, tmp_path):
    import json

    from editf1.cli.main import main

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"prediction": d, "reference": r}) + "\n" for d, r in zip(DRAFTS, REPLIES)
        )
    )
    options = ["--content-judge", "exact", "--theme-judge", "none", "--zero-division", "0"]
    out = tmp_path / "out.jsonl"
    assert main(["score", str(pairs), "-o", str(out), "-q", *options]) == 0
    assert [place.line for place in row_checks] == [1, 2, 3]  # named by file and line
    row_checks.clear()
    assert main(["score", str(pairs), "-o", str(out), "-q", "--limit", "1", *options]) == 0
    assert [place.line for place in row_checks] == [1, 2, 3]  # all checked, one scored
    assert len(out.read_text().splitlines()) == 1


def test_several_reply_columns_are_named_by_column(tmp_path, capsys):
    import json

    from editf1.cli.main import main

    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"prediction": "Rest.", "a": "Rest.", "b": "Call."},
        {"prediction": 3, "a": " ", "b": None},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fields = ["--reference-field", "a", "--reference-field", "b"]
    code = main(["score", str(pairs), "-o", str(tmp_path / "o.jsonl"), "-q", *fields])
    assert code == 2
    assert capsys.readouterr().err.splitlines()[1:] == [
        f"  {pairs}, line 2: field 'prediction' must be a string, got int",
        f"  {pairs}, line 2: field 'a' has no word (empty, whitespace or punctuation only: str "
        "of 1 character); edit-F1 needs a clinician reply to compare against",
        f"  {pairs}, line 2: field 'b' must be a string, got None",
    ]


def test_checked_rows_slice_and_never_show_their_text():
    rows = check_pairs(["Rest.", "Call."], [OK, OK], ["a", "b"])
    assert isinstance(rows[1:], CheckedRows) and list(rows[1:]) == [("b", "Call.", OK)]
    assert rows[0] == ("a", "Rest.", OK) and len(rows) == 2
    assert repr(rows) == "CheckedRows(<2 rows>)"


@pytest.mark.parametrize(
    ("given", "read"),
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        ("true", True),
        ("False", False),
        (" YES ", True),
        ("no", False),
        ("1", True),
        ("0", False),
    ],
)
def test_read_bool_takes_the_documented_spellings(given, read):
    from editf1.inputs import read_bool

    assert read_bool("allow_remote", given) is read


@pytest.mark.parametrize("bad", ["flase", "off", "", "2", 2, -1, 0.0, [], None])
def test_read_bool_refuses_anything_else_naming_the_option(bad):
    from editf1.inputs import read_bool

    with pytest.raises(ValueError, match=r"^allow_remote must be true or false \(or yes/no"):
        read_bool("allow_remote", bad)
    assert read_bool("chat_template", None, optional=True) is None
