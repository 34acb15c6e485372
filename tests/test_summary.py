"""The plain-text summary `edit-f1 score` prints: per-theme figures that nothing defines
are shown as "–", not as the 1.0 the result stores for them."""

from __future__ import annotations

import re

import pytest

from editf1.cli.summary import format_summary
from editf1.scorer import EditF1Scorer, UnusableJudgementWarning
from tests.conftest import ScriptedContentJudge, ScriptedThemeJudge

REPLY = "Take one tablet daily. Call us if it gets worse."
DRAFT = "Take one tablet daily. We will see you next week."


def _per_theme_lines(text: str) -> dict[str, list[str]]:
    rows = text.split("content recall  reply sentences\n")[1].split("\n\n")[0].splitlines()
    cells = [re.split(r"\s{2,}", line.strip()) for line in rows if not line.startswith("  –")]
    return {row[0]: row[1:] for row in cells}


def test_a_theme_judge_without_usable_labels_shows_no_perfect_theme():
    content = ScriptedContentJudge({"Take one tablet daily.": "Take one tablet daily."})
    scorer = EditF1Scorer(content, ScriptedThemeJudge(default=None))
    with pytest.warns(UnusableJudgementWarning):
        summary = scorer.score([DRAFT], [REPLY]).summary()
    # every label unusable: no theme on either side; stored as 1.0 (nothing expected,
    # nothing given), which the table must not show as a perfect theme score
    assert all(s["f1"] == 1.0 and s["content_recall"] == 1.0 for s in summary["per_theme"].values())
    text = format_summary(summary)
    rows = _per_theme_lines(text)
    assert len(rows) == 8
    assert all(cells == ["–", "0.0", "0.0", "–", "0"] for cells in rows.values())
    assert "–: no reply or draft has the theme (F1), no reply sentence has it" in text
    assert "unusable judge outputs: 4" in text  # 2 reply + 2 draft sentences
    # content: EM 1, EA 1, ED 1 → 0.5 each
    assert "precision 0.500  recall 0.500  F1 0.500" in text


def test_themes_that_are_defined_show_their_figures():
    content = ScriptedContentJudge({"Take one tablet daily.": "Take one tablet daily."})
    themes = ScriptedThemeJudge(
        {
            "Take one tablet daily.": "Medical planning instruction",
            "Call us if it gets worse.": "Contingency planning",
            "We will see you next week.": "Logistics",
        }
    )
    text = format_summary(EditF1Scorer(content, themes).score([DRAFT], [REPLY]).summary())
    rows = _per_theme_lines(text)
    # medication: in reply and draft, its one reply sentence matched
    assert rows["Medical planning instruction"] == ["1.000", "100.0", "100.0", "1.000", "1"]
    # contingency: reply only, its sentence unmatched → F1 0, content recall 0/1
    assert rows["Contingency planning"] == ["0.000", "100.0", "0.0", "0.000", "1"]
    # logistics: draft only → F1 0; no reply sentence → content recall undefined
    assert rows["Logistics"] == ["0.000", "0.0", "100.0", "–", "0"]
