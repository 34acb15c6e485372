"""The Gradio demo in a real browser: headless Debian chromium driven by Playwright
against the app served on 127.0.0.1. Type a pair, press Score, read the scores, the
highlighted draft, the expected additions and the sentence themes from the page, and
save a screenshot.

Needs the ``demo`` and ``browser`` extras and ``/usr/bin/chromium`` (``.ci/run``
installs Debian's ``chromium``); skips with the reason otherwise (the ``browser`` and
``serve_app`` fixtures of conftest). Set
``EDITF1_SCREENSHOT_DIR`` to keep the screenshots.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from editf1.judges import ThemeJudge, ThemeJudgement
from editf1.scorer import EditF1Scorer

gradio = pytest.importorskip("gradio", reason="gradio is not installed (pip install '.[demo]')")
MATCHED_COLOR, DELETION_COLOR = "rgba(76, 175, 80, 0.5)", "rgba(239, 83, 80, 0.5)"
PLAN, CONTINGENCY = "Medical planning instruction", "Contingency planning"


class KeywordThemeJudge(ThemeJudge):
    """Scripted themes: "call" -> contingency planning, anything else -> planning."""

    fingerprint = "keyword-theme"

    def classify(self, sentences):
        return [ThemeJudgement(CONTINGENCY if "call" in s.lower() else PLAN) for s in sentences]


@pytest.fixture(scope="module")
def app_url(serve_app):
    from editf1.integrations.demo import build_demo

    scorer = EditF1Scorer(content_judge="exact", theme_judge=KeywordThemeJudge(),
                          zero_division=0.0)  # fmt: skip
    return serve_app(build_demo(scorer))


@pytest.fixture
def page(browser, app_url):
    page = browser.new_page(viewport={"width": 1300, "height": 1300})
    page.set_default_timeout(60_000)
    page.goto(app_url, wait_until="domcontentloaded")
    page.locator("#score-button").wait_for()
    yield page
    page.close()


@pytest.fixture
def screenshot_dir(tmp_path) -> Path:
    folder = Path(os.environ.get("EDITF1_SCREENSHOT_DIR", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _score(page) -> None:
    page.locator("#score-button").click()
    page.locator("#scores table").wait_for()
    page.locator("#draft-highlights .token").first.wait_for()


def _table(page, selector: str) -> list[list[str]]:
    rows = page.locator(f"{selector} tbody tr")
    return [
        [c.strip() for c in rows.nth(i).locator("td").all_inner_texts()]
        for i in range(rows.count())
    ]


def _highlights(page) -> list[tuple[str, str | None]]:
    """(text, label) of every highlighted draft token, the label read from its color."""
    labels = {MATCHED_COLOR: "matched", DELETION_COLOR: "expected deletion"}
    tokens = page.locator("#draft-highlights .token.highlighted")
    return [
        (
            tokens.nth(i).locator(".text").inner_text().strip(),
            labels.get(tokens.nth(i).evaluate("e => e.style.backgroundColor")),
        )
        for i in range(tokens.count())
    ]


def test_type_a_pair_and_read_the_scores_and_highlights(page, screenshot_dir):
    page.locator("#message textarea").fill("My knee hurts after my run. What should I do?")
    page.locator("#draft textarea").press_sequentially(
        "Rest today. Drink water. Call us if it gets worse."
    )
    page.locator("#reply textarea").press_sequentially(
        "Rest today. Take ibuprofen. Call us if it gets worse."
    )
    _score(page)
    # By hand: EM 2 (rest, call), EA 1 (ibuprofen), ED 1 (water): P = R = F1 = 2/3.
    # Themes: draft {planning, contingency} = reply {planning, contingency}: 1.0.
    assert _table(page, "#scores") == [
        ["content", "0.667", "0.667", "0.667"],
        ["theme", "1.000", "1.000", "1.000"],
    ]
    assert "expected matches 2, expected additions 1, expected deletions 1" in (
        page.locator("#scores").inner_text()
    )
    assert _highlights(page) == [
        ("Rest today.", "matched"),
        ("Drink water.", "expected deletion"),
        ("Call us if it gets worse.", "matched"),
    ]
    assert page.locator("#expected-additions li").all_inner_texts() == [f"Take ibuprofen. — {PLAN}"]
    page.locator("#sentence-themes").get_by_text("Drink water.").wait_for()
    themes = page.locator("#sentence-themes").inner_text()
    for sentence in ("Take ibuprofen.", "Drink water.", "Call us if it gets worse."):
        assert sentence in themes
    assert "expected addition" in themes and "expected deletion" in themes
    assert CONTINGENCY in themes
    path = screenshot_dir / "edit_f1_demo_typed_pair.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_preloaded_example_scores_in_the_browser(page):
    page.get_by_role("button", name="demo-02").click()
    draft = page.locator("#draft textarea")
    page.wait_for_function("document.querySelector('#draft textarea').value.includes('Raj')")
    assert "90-day refills" in draft.input_value()
    _score(page)
    # The draft is the reply (5 sentences, all matched) plus one extra sentence:
    # P = 5/6, R = 1, F1 = 10/11.
    assert _table(page, "#scores")[0] == ["content", "0.833", "1.000", "0.909"]
    assert ("They should be ready for pickup within 24 hours.", "expected deletion") in (
        _highlights(page)
    )
    assert "None: every sentence of the reply is in the draft." in (
        page.locator("#expected-additions").inner_text()
    )


def test_an_empty_reply_shows_an_error(page):
    page.locator("#draft textarea").fill("Rest today.")
    page.locator("#score-button").click()
    page.get_by_text("The clinician reply needs at least one word.").first.wait_for()


@pytest.mark.slow
def test_embedded_judges_highlight_a_real_draft(browser, serve_app, screenshot_dir):
    """The Space as shipped (embedded judges) on demo-01: matches and deletions shown."""
    from editf1.integrations.demo import build_demo

    url = serve_app(build_demo(EditF1Scorer(zero_division=0.0)))
    page = browser.new_page(viewport={"width": 1300, "height": 1500})
    page.set_default_timeout(120_000)
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_role("button", name="demo-01").click()
    page.wait_for_function("document.querySelector('#draft textarea').value.length > 0")
    _score(page)
    labels = {label for _, label in _highlights(page)}
    assert labels == {"matched", "expected deletion"}
    content = _table(page, "#scores")[0]
    assert content[0] == "content" and all(0 < float(x) < 1 for x in content[1:])
    page.screenshot(path=str(screenshot_dir / "edit_f1_demo_embedded.png"), full_page=True)
    page.close()
