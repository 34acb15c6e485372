"""The labelling app's session (editf1.integrations.annotate.AnnotationSession), without a
browser: questions in order, every answer saved at once, resuming from the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editf1.gold.labels import PairText, bind_gold
from editf1.gold.sampling import sample_for_labels
from editf1.integrations.annotate import (
    ANNOTATE_CSS,
    STYLE_JS,
    AnnotationSession,
    Item,
    browser_offsets,
    next_command,
    screen,
    theme_guide,
)
from editf1.themes import THEME_DEFINITIONS, THEME_RULES, THEMES

GUIDE = Path(__file__).resolve().parents[1].parent / "shared" / "ANNOTATION_GUIDE.md"

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


# ---------------------------------------------------------------------- what the app shows


def _answer_all(session: AnnotationSession) -> None:
    for position, item in enumerate(session.items()):
        match = None if item.kind == "reference" else False
        theme = PLAN if session.rows[item.pair]["themes"] else None
        session.answer(position, match=match, theme=theme)


def test_every_theme_has_the_guides_definition_and_example():
    assert list(THEME_DEFINITIONS) == list(THEMES)
    plan = THEME_DEFINITIONS[PLAN]
    assert plan.definition == (
        "what to do medically: tests, treatments, dose changes, urgent evaluation"
    )
    assert plan.example == "Let's get you in for a bloodwork test."
    lines = theme_guide().splitlines()
    entries = [line for line in lines if line]
    assert len(entries) == 9
    assert entries[4] == (
        "**e · Medical planning instruction**: what to do medically: tests, treatments, "
        "dose changes, urgent evaluation; e.g. “Let's get you in for a bloodwork test.”"
    )
    assert entries[8].startswith("**i · Other**: greetings, sign-offs")
    assert THEME_RULES[0].endswith("is Logistics.")


def test_the_definitions_are_the_annotation_guides():
    if not GUIDE.is_file():
        pytest.skip(f"the team's annotation guide is not at {GUIDE}")
    rows = {}
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] in THEMES:
            rows[cells[0]] = (cells[1], cells[2].strip('"'))
    assert rows == {t: tuple(d) for t, d in THEME_DEFINITIONS.items()}


def test_a_reply_sentence_is_marked_in_the_reply_and_the_draft_is_selectable(tmp_path):
    session = _session(tmp_path, themes=True)
    row = session.rows[0]
    shown = screen(session, 0)
    first = row["reference_sentences"][0]
    text = row["reference"]
    assert shown.reply == [(text[: first["start"]], None),
                           (text[first["start"] : first["end"]], "asked"),
                           (text[first["end"] :], None)]  # fmt: skip
    assert shown.draft == row["prediction"] and shown.draft_view is None
    assert shown.candidates[0] == ("0 · NO MATCH", "none") and shown.candidate is None
    assert shown.themes and not shown.done
    # a selection is offered as the last candidate, and chosen
    selected = screen(session, 0, selection=(0, 4))
    label = selected.candidates[-1][0]
    assert label == f"s · your selection: {row['prediction'][:4]}"
    assert selected.candidate == "selection:0:4"


def test_a_draft_sentence_whose_theme_is_asked_is_highlighted_in_the_draft(tmp_path):
    session = _session(tmp_path, themes=True)
    row = session.rows[0]
    n_reply = len(row["reference_sentences"])
    for j, span in enumerate(row["prediction_sentences"]):
        position = n_reply + j
        assert session.items()[position] == Item(0, "prediction", j)
        shown = screen(session, position)
        draft = row["prediction"]
        assert shown.draft_view == [(draft[: span["start"]], None),
                                    (draft[span["start"] : span["end"]], "asked"),
                                    (draft[span["end"] :], None)]  # fmt: skip
        assert f"draft sentence {j + 1} of {len(row['prediction_sentences'])}" in shown.question
        assert shown.draft is None and shown.candidates is None and shown.themes
        assert shown.reply == [(row["reference"], None)]  # no reply sentence is asked


def test_the_last_screen_gives_the_next_command_and_no_empty_panels(tmp_path):
    rows = sample_for_labels(PAIRS, 2, seed=0, score_arguments=["my pairs.jsonl"])
    session = AnnotationSession(rows, tmp_path / "gold.jsonl")
    _answer_all(session)
    assert session.first_unanswered() is None
    shown = screen(session, None)
    command = f"edit-f1 score 'my pairs.jsonl' --gold {tmp_path / 'gold.jsonl'}"
    assert next_command(session) == command
    assert f"```\n{command}\n```" in shown.question
    assert shown.question.startswith("**All 2 pairs are labelled.**")
    assert "PAIRS" not in shown.question
    assert shown.done and shown.reply == [] and shown.draft is None
    assert shown.draft_view is None and shown.candidates is None and not shown.themes
    # sampled by the library, without the pairs' file: a placeholder, explained
    plain = AnnotationSession(sample_for_labels(PAIRS, 2, seed=0), tmp_path / "other.jsonl")
    assert next_command(plain) == f"edit-f1 score PAIRS --gold {tmp_path / 'other.jsonl'}"
    _answer_all(plain)
    assert "(PAIRS: the file of pairs the sample was drawn from.)" in screen(plain, None).question


def test_the_reply_wraps_between_words():
    # Gradio's highlighted text sets word-break: break-all; the page's styles undo it
    assert "break-all" not in ANNOTATE_CSS
    assert "#reply .textfield, #draft-view .textfield {" in ANNOTATE_CSS
    assert "word-break: normal; overflow-wrap: break-word;" in ANNOTATE_CSS
    assert json.dumps(ANNOTATE_CSS) in STYLE_JS


def test_the_app_hides_the_empty_panels_once_all_is_labelled(tmp_path):
    pytest.importorskip("gradio", reason="gradio is not installed (pip install '.[demo]')")
    from editf1.integrations.annotate import build_annotate_app

    session = _session(tmp_path, themes=True)
    app = build_annotate_app(session)
    load = next(f for f in app.fns.values() if f.name == "on_load")
    names = [o.elem_id for o in load.outputs]
    assert names == ["progress", "question", "reply", "draft", "draft-view", "candidates",
                     "theme", "theme-guide", "save-button", "message"]  # fmt: skip
    first = dict(zip(names, load.fn()))
    assert first["draft"]["visible"] and not first["draft-view"]["visible"]
    assert first["theme-guide"]["visible"] and first["save-button"]["visible"]
    _answer_all(session)
    last = dict(zip(names, load.fn()))
    for hidden in ("reply", "draft", "draft-view", "candidates", "theme", "theme-guide",
                   "save-button"):  # fmt: skip
        assert last[hidden]["visible"] is False, hidden
    assert next_command(session) in last["question"]
