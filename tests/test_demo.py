"""What the demo shows for one pair, without a browser: hand-computed scores, highlight
segments, expected additions and sentence judgements."""

from __future__ import annotations

import pytest

from editf1.inputs import InputError
from editf1.integrations.demo import EXPECTED_DELETION, MATCHED, explain_pair
from editf1.scorer import EditF1Scorer

PLAN, CONTINGENCY = "Medical planning instruction", "Contingency planning"


@pytest.fixture
def scorer(theme_judge_cls):
    themes = {"Rest today.": PLAN, "Take ibuprofen.": PLAN, "Drink water.": PLAN,
              "Call us if it gets worse.": CONTINGENCY}  # fmt: skip
    return EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(themes),
                        zero_division=0.0)  # fmt: skip


def test_explain_pair_hand_computed(scorer):
    draft = "Rest today. Drink water.\nCall us if it gets worse."
    reply = "Rest today. Take ibuprofen. Call us if it gets worse."
    view = explain_pair(scorer, draft, reply)
    # EM 2 (rest, call), EA 1 (ibuprofen), ED 1 (water): P = R = F1 = 2/3.
    assert "| content | 0.667 | 0.667 | 0.667 |" in view.scores_markdown
    # Themes: draft {plan, contingency} = reply {plan, contingency}: 1.0.
    assert "| theme | 1.000 | 1.000 | 1.000 |" in view.scores_markdown
    assert "expected matches 2, expected additions 1, expected deletions 1" in view.scores_markdown
    assert view.highlights == [
        ("Rest today.", MATCHED),
        (" ", None),
        ("Drink water.", EXPECTED_DELETION),
        ("\n", None),
        ("Call us if it gets worse.", MATCHED),
    ]
    assert "".join(text for text, _ in view.highlights) == draft
    assert view.additions == [("Take ibuprofen.", PLAN)]
    assert view.sentences == [
        ["reply", "Rest today.", PLAN, MATCHED],
        ["reply", "Take ibuprofen.", PLAN, "expected addition"],
        ["reply", "Call us if it gets worse.", CONTINGENCY, MATCHED],
        ["draft", "Rest today.", PLAN, "kept"],
        ["draft", "Drink water.", PLAN, EXPECTED_DELETION],
        ["draft", "Call us if it gets worse.", CONTINGENCY, "kept"],
    ]
    assert view.notes == ()


def test_partial_match_leaves_the_rest_of_the_sentence_deleted(content_judge_cls):
    judge = content_judge_cls({"You should rest.": "you should rest"})
    scorer = EditF1Scorer(content_judge=judge, theme_judge=None)
    view = explain_pair(scorer, "I think you should rest today.", "You should rest.")
    # The span is removed; "I think ... today." is one expected deletion.
    assert view.highlights == [
        ("I think", EXPECTED_DELETION),
        (" ", None),
        ("you should rest", MATCHED),
        (" ", None),
        ("today.", EXPECTED_DELETION),
    ]
    assert view.sentences[-1] == ["draft", "I think you should rest today.", "",
                                  "kept, partly deleted"]  # fmt: skip
    assert "| content | 0.500 | 1.000 | 0.667 |" in view.scores_markdown


def test_empty_draft_gets_a_note_and_bad_reply_an_error(scorer):
    view = explain_pair(scorer, "", "Rest today.")
    assert view.highlights == [] and view.additions == [("Rest today.", PLAN)]
    assert "| content | 0.000 | 0.000 | 0.000 |" in view.scores_markdown
    assert any("prediction has no sentence" in note for note in view.notes)
    with pytest.raises(InputError, match="has no word"):
        explain_pair(scorer, "Rest today.", "  ")


def test_demo_command_launches_the_app_on_the_given_address(monkeypatch):
    import editf1.integrations.demo
    from editf1.cli.main import main

    launched = {}

    class App:
        def launch(self, **kwargs):
            launched.update(kwargs)

    monkeypatch.setattr(editf1.integrations.demo, "build_demo", lambda: App())
    assert main(["demo", "--port", "7999"]) == 0
    assert launched == {"server_name": "127.0.0.1", "server_port": 7999, "share": False}
