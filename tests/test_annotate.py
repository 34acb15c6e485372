"""The labelling app's session (editf1.integrations.annotate.AnnotationSession), without a
browser: questions in order, every answer saved at once, resuming from the file."""

from __future__ import annotations

import json

import pytest

from editf1.gold.labels import PairText, bind_gold
from editf1.gold.sampling import sample_for_labels
from editf1.integrations.annotate import AnnotationSession, Item, browser_offsets

DRAFT = "Rest today. Drink water. Call us if it gets worse."
REPLY = "Rest today. Take ibuprofen."
PAIRS = [PairText("a", DRAFT, REPLY), PairText("b", "Ice it. Rest.", "Rest. Call us.")]
PLAN = "Medical planning instruction"


def _session(tmp_path, themes=False, **kw) -> AnnotationSession:
    rows = sample_for_labels(PAIRS, 2, seed=0, themes=themes)
    return AnnotationSession(rows, tmp_path / "gold.jsonl", **kw)


def _saved(tmp_path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "gold.jsonl").read_text().splitlines()]


def test_questions_in_the_order_drawn(tmp_path):
    session = _session(tmp_path)
    order = [row["id"] for row in session.rows]
    assert sorted(order) == ["a", "b"]
    # without themes: one question per reply sentence (2 + 2)
    assert session.items() == [Item(0, "reference", 0), Item(0, "reference", 1),
                               Item(1, "reference", 0), Item(1, "reference", 1)]  # fmt: skip
    themed = _session(tmp_path, themes=True)
    drafts = [len(row["prediction_sentences"]) for row in themed.rows]
    assert len(themed.items()) == 4 + sum(drafts)


def test_every_answer_is_saved_at_once_and_resumed(tmp_path):
    session = _session(tmp_path, annotator="dr-a")
    first = session.rows[0]
    span = first["prediction_sentences"][0]
    session.answer(0, match=(span["start"], span["end"]))
    (row,) = _saved(tmp_path)
    assert row["id"] == first["id"] and row["complete"] is False and row["annotator"] == "dr-a"
    assert row["reference_sentences"][0]["match"] == span
    assert "match" not in row["reference_sentences"][1]
    assert session.progress() == (1, 4, 0)
    # no skipping ahead
    with pytest.raises(ValueError, match="in order"):
        session.answer(2, match=None)
    session.answer(1, match=None)
    assert _saved(tmp_path)[0]["complete"] is True
    # a new session on the same file resumes at the first unanswered question
    again = AnnotationSession(session.rows, tmp_path / "gold.jsonl", annotator="dr-a")
    assert again.first_unanswered() == 2 and again.progress() == (2, 4, 1)
    # going back and changing an answer rewrites it
    again.answer(1, match=(span["start"], span["end"]))
    assert _saved(tmp_path)[0]["reference_sentences"][1]["match"] == span
    # the finished pair loads as a gold row, with its sampling record
    gold = bind_gold(_saved(tmp_path), PAIRS)
    assert [g.key for g in gold.pairs] == [first["id"]] and gold.sampling["population"] == 2


def test_answers_are_checked(tmp_path):
    session = _session(tmp_path, themes=True)
    with pytest.raises(ValueError, match="choose the sentence's theme"):
        session.answer(0, match=None)
    with pytest.raises(ValueError, match="choose the draft span"):
        session.answer(0, theme=PLAN)
    space = session.rows[0]["prediction"].index(" ")
    with pytest.raises(ValueError, match="holds no word"):
        session.answer(0, match=(space, space + 1), theme=PLAN)
    assert not (tmp_path / "gold.jsonl").exists()  # nothing saved for refused answers


def test_a_gold_file_of_another_sample_is_refused(tmp_path):
    session = _session(tmp_path)
    session.answer(0, match=None)
    other = sample_for_labels(PAIRS, 2, seed=1)
    for row in other:
        row["sampling"]["seed"] = 7
    with pytest.raises(ValueError, match="labels of another sample"):
        AnnotationSession(other, tmp_path / "gold.jsonl")


def test_browser_offsets_map_utf16_and_line_breaks():
    assert browser_offsets("abc", 1, 3) == (1, 3)
    # "\r\n" is one "\n" in a textarea; "🙂" is two UTF-16 units
    text = "x\r\ny🙂z"
    assert browser_offsets(text, 2, 5) == (3, 5)  # "y🙂"
    assert text[slice(*browser_offsets(text, 5, 6))] == "z"
