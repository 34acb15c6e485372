"""The README quotes figures from the shipped judge files: check they agree."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW_README = (ROOT / "README.md").read_text(encoding="utf-8")
README = " ".join(RAW_README.split())  # figures may wrap across lines
DATA = ROOT / "src" / "editf1" / "data"


def _ci(estimate: dict) -> str:
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"


def test_content_judge_agreement_in_readme_matches_shipped_file():
    params = json.loads((DATA / "content_judge.json").read_text())
    for key in ("agreement", "cohen_kappa", "match_agreement", "non_match_agreement"):
        assert _ci(params["agreement"][key]) in README, key
    for key in ("agreement", "cohen_kappa"):
        assert _ci(params["human_ceiling"][key]) in README, key
    assert f"{params['split']['test_items']} held-out items" in README


def test_theme_judge_cross_validation_in_readme_matches_shipped_file():
    params = json.loads((DATA / "theme_judge.json").read_text())
    report = params["cross_validation"]
    assert f"macro {report['macro_f1']:.3f}, accuracy {report['accuracy']:.3f}" in README
    for theme, scores in report["per_label"].items():
        assert f"{theme} {scores['f1-score']:.3f}" in README, theme


def test_readme_opens_with_the_two_commands_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    blocks = RAW_README.split("```bash\n")
    setup, tests = blocks[1].split("\n```")[0], blocks[2].split("\n```")[0]
    assert "edit-f1 score" in setup and "pytest" in tests
    assert tests in ci
