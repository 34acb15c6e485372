"""The labelling app in a real browser: headless Debian chromium driven by Playwright
against the app served on 127.0.0.1. Label a pair with the keyboard (a candidate by its
number, a span selected in the draft, NO MATCH, themes by letter), check the gold file
after every answer, reload the page and restart the app: labelling resumes where it
stopped.

Needs the ``demo`` and ``browser`` extras and ``/usr/bin/chromium`` (``.ci/run``
installs Debian's ``chromium``); skips with the reason otherwise (the ``browser`` and
``serve_app`` fixtures of conftest). Set
``EDITF1_SCREENSHOT_DIR`` to keep the screenshot.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from editf1.gold.labels import PairText, bind_gold
from editf1.gold.sampling import sample_for_labels
from editf1.integrations.annotate import AnnotationSession, build_annotate_app

gradio = pytest.importorskip("gradio", reason="gradio is not installed (pip install '.[demo]')")

DRAFT = "Rest today. Drink water. Call us if it gets worse."
REPLY = "Rest today. Take fluids."
PAIRS = [PairText("knee", DRAFT, REPLY), PairText("cough", "Use honey. Rest.", "Rest. Call us.")]
PLAN, OTHER, CONTINGENCY = "Medical planning instruction", "Other", "Contingency planning"


def _open(browser, url):
    page = browser.new_page(viewport={"width": 1300, "height": 1200})
    page.set_default_timeout(60_000)
    page.goto(url, wait_until="domcontentloaded")
    page.locator("#candidates input[type=radio]").first.wait_for()
    return page


def _wait_question(page, text: str) -> None:
    page.locator("#question").get_by_text(text).wait_for()


def _checked(page, element: str) -> list[bool]:
    return page.evaluate(
        f"[...document.querySelectorAll('#{element} input[type=radio]')].map(r => r.checked)"
    )


def _saved(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _answer(page, *keys: str) -> None:
    for key in keys:
        page.keyboard.press(key)
    page.wait_for_timeout(300)  # the radios' change events reach the server
    page.keyboard.press("Enter")


def test_label_with_the_keyboard_reload_and_resume(browser, serve_app, tmp_path):
    rows = sample_for_labels(PAIRS, 2, seed=1, themes=True)
    assert [r["id"] for r in rows] == ["knee", "cough"]  # the order drawn with seed 1
    output = tmp_path / "gold.jsonl"
    url = serve_app(build_annotate_app(AnnotationSession(rows, output, annotator="dr-a")))
    page = _open(browser, url)
    assert "0 of 9 answers saved" in page.locator("#progress").inner_text()
    _wait_question(page, "Pair 1 of 2 · reply sentence 1 of 2")
    labels = page.locator("#candidates label").all_inner_texts()
    assert labels == ["0 · NO MATCH", "1 · Rest today.", "2 · Drink water.",
                      "3 · Call us if it gets worse."]  # fmt: skip
    # the reply wraps between words, not inside them (Gradio's own style is break-all)
    style = "getComputedStyle(document.querySelector('#reply .textfield'))"
    assert page.evaluate(f"[{style}.wordBreak, {style}.display]") == ["normal", "block"]
    # every theme's definition and example beside the choices
    guide = page.locator("#theme-guide").inner_text()
    assert "e · Medical planning instruction: what to do medically" in guide
    assert "“Let's get you in for a bloodwork test.”" in guide
    # candidate 1 and theme e (planning); Enter saves at once
    page.locator("body").click()
    _answer(page, "1", "e")
    _wait_question(page, "reply sentence 2 of 2")
    (row,) = _saved(output)
    assert row["reference_sentences"][0] == {
        "start": 0, "end": 11, "match": {"start": 0, "end": 11}, "theme": PLAN,
    }  # fmt: skip
    assert row["complete"] is False
    # a span selected in the draft: "Drink water" (characters 12-23)
    page.evaluate(
        "() => { const t = document.querySelector('#draft textarea'); t.focus();"
        " t.setSelectionRange(12, 23); t.dispatchEvent(new Event('select')); }"
    )
    page.locator("#candidates").get_by_text("s · your selection: Drink water").wait_for()
    assert _checked(page, "candidates") == [False] * 4 + [True]
    _answer(page, "e")
    _wait_question(page, "draft sentence 1 of 3")
    assert _saved(output)[0]["reference_sentences"][1]["match"] == {"start": 12, "end": 23}
    # the draft sentence asked about is highlighted in the draft; no span to select now
    page.locator("#draft-view").get_by_text("Rest today.").wait_for()
    assert not page.locator("#draft textarea").is_visible()
    assert not page.locator("#candidates").is_visible()
    # the draft's three sentences: themes only
    for key, then in (("e", "draft sentence 2 of 3"), ("e", "draft sentence 3 of 3"),
                      ("h", "Pair 2 of 2 · reply sentence 1 of 2")):  # fmt: skip
        _answer(page, key)
        _wait_question(page, then)
    (row,) = _saved(output)
    assert row["complete"] is True
    assert [s["theme"] for s in row["prediction_sentences"]] == [PLAN, PLAN, CONTINGENCY]
    assert "pairs complete 1 of 2" in page.locator("#progress").inner_text()
    # NO MATCH by key, then close the tab mid-pair
    _answer(page, "0", "i")
    _wait_question(page, "Pair 2 of 2 · reply sentence 2 of 2")
    assert _saved(output)[1]["reference_sentences"][0]["match"] is None
    page.screenshot(path=str(tmp_path / "annotate.png"), full_page=True)
    page.close()
    # reopening the page resumes at the first unanswered question
    page = _open(browser, url)
    _wait_question(page, "Pair 2 of 2 · reply sentence 2 of 2")
    # Backspace goes back to the last answer, shown as saved
    page.locator("body").click()
    page.keyboard.press("Backspace")
    _wait_question(page, "Pair 2 of 2 · reply sentence 1 of 2")
    assert _checked(page, "candidates")[0] is True
    assert _checked(page, "theme")[-1] is True  # i · Other
    page.close()
    # a new session and app on the same gold file (a crash, a restart) resume from it
    url = serve_app(build_annotate_app(AnnotationSession(rows, output, annotator="dr-a")))
    page = _open(browser, url)
    _wait_question(page, "Pair 2 of 2 · reply sentence 2 of 2")
    assert "6 of 9 answers saved" in page.locator("#progress").inner_text()
    page.close()
    # the finished pair is a gold row: EM 2 (both reply sentences), EA 0; what is left of
    # the draft is "." of "Drink water." (no word) and "Call us if it gets worse.": ED 1
    gold = bind_gold(_saved(output), PAIRS)
    assert [g.key for g in gold.pairs] == ["knee"] and gold.in_progress == ("cough",)
    assert gold.pairs[0].content_counts == (2, 1, 0)
    assert gold.has_themes and gold.pairs[0].annotator == "dr-a"
    folder = os.environ.get("EDITF1_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / "annotate.png", Path(folder) / "edit_f1_annotate.png")


def test_the_last_screen_gives_the_next_command(browser, serve_app, tmp_path):
    rows = sample_for_labels(PAIRS, 2, seed=1, themes=False, score_arguments=["pairs.jsonl"])
    session = AnnotationSession(rows, tmp_path / "gold.jsonl")
    for position in range(len(session.items())):
        session.answer(position, match=None)
    page = browser.new_page(viewport={"width": 1300, "height": 1200})
    page.set_default_timeout(60_000)
    page.goto(serve_app(build_annotate_app(session)), wait_until="domcontentloaded")
    page.locator("#question").get_by_text("All 2 pairs are labelled.").wait_for()
    command = f"edit-f1 score pairs.jsonl --gold {tmp_path / 'gold.jsonl'}"
    assert command in page.locator("#question").inner_text()
    for hidden in ("#reply", "#draft", "#draft-view", "#candidates", "#theme", "#save-button"):
        assert not page.locator(hidden).is_visible(), hidden
    assert page.locator("#back-button").is_visible()
    page.close()
