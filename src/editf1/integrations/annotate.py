"""The labelling app (``edit-f1 annotate``): clinicians' gold labels, one sentence at a time.

A local Gradio app asks, for every pair of an annotation file (:mod:`editf1.gold.sampling`)
in the order drawn, which draft span says what each reply sentence says and, where asked,
each sentence's theme. No pair can be skipped, so the completed pairs are a uniform sample
(``docs/gold-labels.md``).
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
import shlex
import string
from dataclasses import dataclass
from pathlib import Path

from editf1.gold.sampling import gold_row, read_annotation
from editf1.integrations import static_text
from editf1.themes import THEME_DEFINITIONS, THEME_RULES, THEMES

__all__ = [
    "ANNOTATE_CSS",
    "KEYBOARD_JS",
    "AnnotationSession",
    "Item",
    "Screen",
    "browser_offsets",
    "build_annotate_app",
    "next_command",
    "screen",
    "theme_guide",
]

#: The keys that pick each theme, in :data:`editf1.themes.THEMES` order.
THEME_KEYS = "abcdefghi"
NO_MATCH = "none"


@dataclass(frozen=True)
class Item:
    """One question: a reply sentence's match (and theme), or a draft sentence's theme;
    ``pair`` indexes the annotation file, ``sentence`` the ``kind`` text's sentences."""

    pair: int
    kind: str
    sentence: int


def browser_offsets(text: str, start: int, end: int) -> tuple[int, int]:
    """Code-point offsets into ``text`` of a selection a browser reports in a textarea
    holding it (the textarea counts UTF-16 units and reads ``\\r\\n`` as ``\\n``).

    >>> browser_offsets("a\\r\\nb🙂c", 2, 5)  # the browser sees "a\\nb🙂c": "b🙂" is 2-5
    (3, 5)
    """
    widths = [
        0 if char == "\r" and text[i + 1 : i + 2] == "\n" else 2 if ord(char) > 0xFFFF else 1
        for i, char in enumerate(text)
    ]
    units = [0, *itertools.accumulate(widths)]  # units[i]: where character i starts there
    return bisect.bisect_left(units, start), bisect.bisect_left(units, end)


class AnnotationSession:
    """The answers of one annotator to one annotation file, each saved at once: the
    gold-label file ``output`` (:mod:`editf1.gold.labels`) is rewritten atomically.

    Args:
        annotation: the annotation rows (:func:`editf1.gold.sampling.read_annotation`),
            or the annotation file.
        output: if it exists, its answers are loaded and labelling resumes after them.
        annotator: recorded in every gold row.

    Raises:
        ValueError: if ``output`` holds a pair the annotation file does not, answers of
            another sample, or answers whose sentences differ from the annotation's.
    """

    def __init__(self, annotation, output: str | os.PathLike, annotator: str | None = None):
        self.rows = annotation if isinstance(annotation, list) else read_annotation(annotation)
        self.output = Path(output)
        self.annotator = annotator
        self.matches = [[False] * len(r["reference_sentences"]) for r in self.rows]
        self.reference_themes = [[None] * len(r["reference_sentences"]) for r in self.rows]
        self.prediction_themes = [[None] * len(r["prediction_sentences"]) for r in self.rows]
        if self.output.exists():
            self._resume()

    def _resume(self) -> None:
        from editf1.io import read_jsonl

        index = {row["id"]: k for k, row in enumerate(self.rows)}
        for line, saved in read_jsonl(self.output, ["id", "reference_sentences"]):
            where = f"{self.output.name}, line {line}"
            k = index.get(saved["id"])
            if k is None:
                raise ValueError(f"{where}: its pair is not in the annotation file")
            row = self.rows[k]
            if saved.get("sampling") != row["sampling"]:
                raise ValueError(f"{where}: labels of another sample (its sampling record differs)")
            spans = [(s["start"], s["end"]) for s in saved["reference_sentences"]]
            if spans != [(s["start"], s["end"]) for s in row["reference_sentences"]]:
                raise ValueError(f"{where}: its sentences are not the annotation file's")
            for j, entry in enumerate(saved["reference_sentences"]):
                if "match" in entry:
                    m = entry["match"]
                    self.matches[k][j] = None if m is None else (m["start"], m["end"])
                self.reference_themes[k][j] = entry.get("theme")
            for j, entry in enumerate(saved.get("prediction_sentences", [])):
                self.prediction_themes[k][j] = entry.get("theme")

    def items(self) -> list[Item]:
        """Every question, in the order asked."""
        out = []
        for k, row in enumerate(self.rows):
            out += [Item(k, "reference", j) for j in range(len(row["reference_sentences"]))]
            if row["themes"]:
                out += [Item(k, "prediction", j) for j in range(len(row["prediction_sentences"]))]
        return out

    def answered(self, item: Item) -> bool:
        """Whether ``item`` has its answer (a match and, where asked, a theme)."""
        k, j = item.pair, item.sentence
        if item.kind == "prediction":
            return self.prediction_themes[k][j] is not None
        themed = not self.rows[k]["themes"] or self.reference_themes[k][j] is not None
        return self.matches[k][j] is not False and themed

    def first_unanswered(self) -> int | None:
        """The position (into :meth:`items`) to resume at, or ``None`` when all is done."""
        return next((k for k, item in enumerate(self.items()) if not self.answered(item)), None)

    def progress(self) -> tuple[int, int, int]:
        """``(answers given, questions, pairs complete)``."""
        items = self.items()
        done = [self.answered(item) for item in items]
        unfinished = {item.pair for item, d in zip(items, done) if not d}
        return sum(done), len(items), len(self.rows) - len(unfinished)

    def answer(self, position: int, match=False, theme: str | None = None) -> None:
        """Record the answer to question ``position`` (into :meth:`items`, at most
        :meth:`first_unanswered`) and save at once; ``match``: for a reply sentence,
        ``(start, end)`` of the draft span or ``None`` for NO MATCH.

        Raises:
            ValueError: for a skipped question, a missing answer, a span outside the
                draft or without a word, or an unknown theme.
        """
        from editf1.segment import has_word

        items = self.items()
        first = self.first_unanswered()
        if first is not None and position > first:
            raise ValueError("answer the questions in order: an earlier one is unanswered")
        item = items[position]
        row = self.rows[item.pair]
        if row["themes"] and theme not in THEMES:
            raise ValueError("choose the sentence's theme")
        if item.kind == "reference":
            if match is False:
                raise ValueError("choose the draft span that says the same, or NO MATCH")
            if match is not None:
                start, end = match
                if not (0 <= start < end <= len(row["prediction"])) or not has_word(
                    row["prediction"][start:end]
                ):
                    raise ValueError("the selected span holds no word of the draft")
                match = (int(start), int(end))
            self.matches[item.pair][item.sentence] = match
            if row["themes"]:
                self.reference_themes[item.pair][item.sentence] = theme
        else:
            self.prediction_themes[item.pair][item.sentence] = theme
        self.save()

    def gold_rows(self) -> list[dict]:
        """A gold row for every pair with an answer, in the order drawn."""
        out = []
        answers = zip(self.rows, self.matches, self.reference_themes, self.prediction_themes)
        for row, matches, reference_themes, prediction_themes in answers:
            themes = (*reference_themes, *prediction_themes)
            if all(m is False for m in matches) and all(t is None for t in themes):
                continue  # not started
            if not row["themes"]:
                reference_themes = prediction_themes = ()
            out.append(
                gold_row(
                    row, matches, reference_themes, prediction_themes, annotator=self.annotator
                )
            )
        return out

    def save(self) -> None:
        """Rewrite the gold file with every answer, atomically."""
        from editf1.io import JsonlWriter

        with JsonlWriter(self.output) as write:
            for row in self.gold_rows():
                write(row)


#: Keyboard shortcuts (``1``-``9``, ``0``/``n``, ``s``, ``a``-``i``, Enter, Backspace).
KEYBOARD_JS = static_text("annotate_keys.js")
#: The page's own styles: the reply and the highlighted draft wrap between words.
ANNOTATE_CSS = static_text("annotate.css")
#: Adds :data:`ANNOTATE_CSS` to the page when it loads (Gradio 6 takes styles in ``launch``).
STYLE_JS = string.Template(static_text("annotate_style.js")).substitute(
    css=json.dumps(ANNOTATE_CSS)
)


def theme_guide() -> str:
    """The themes' keys, definitions and examples (:data:`editf1.themes.THEME_DEFINITIONS`)
    as Markdown."""
    return "\n".join(
        f"**{key} · {theme}**: {THEME_DEFINITIONS[theme].definition}; e.g. "
        f"“{THEME_DEFINITIONS[theme].example}”\n"
        for key, theme in zip(THEME_KEYS, THEMES)
    )


def next_command(session: AnnotationSession) -> str:
    """The command that scores the sampled pairs with the session's gold labels:
    ``edit-f1 score <pairs> --gold <gold file>``, the pairs' file and options as
    ``edit-f1 sample-for-labels`` recorded them (``PAIRS`` where none are recorded)."""
    arguments = session.rows[0].get("score_arguments") if session.rows else None
    pairs = shlex.join(arguments) if arguments else "PAIRS"
    return f"edit-f1 score {pairs} --gold {shlex.quote(str(session.output))}"


@dataclass(frozen=True)
class Screen:
    """What the app shows at one position (:func:`screen`): ``progress`` and ``question``
    in Markdown; ``reply`` and ``draft_view`` as ``(text, "asked" or None)`` segments;
    ``candidates`` as ``(label, value)`` choices. ``None`` (or an empty ``reply``) hides
    an element; ``themes``: the theme is asked, ``theme`` its answer so far."""

    progress: str
    question: str
    reply: list[tuple[str, str | None]]
    draft: str | None = None
    draft_view: list[tuple[str, str | None]] | None = None
    candidates: list[tuple[str, str]] | None = None
    candidate: str | None = None
    themes: bool = False
    theme: str | None = None
    done: bool = False


def _value(span: tuple[int, int]) -> str:
    return f"{span[0]}:{span[1]}"


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _marked(text: str, span: dict) -> list[tuple[str, str | None]]:
    start, end = span["start"], span["end"]
    return [(text[:start], None), (text[start:end], "asked"), (text[end:], None)]


def screen(
    session: AnnotationSession, position: int | None, selection: tuple[int, int] | None = None
) -> Screen:
    """What the app shows at question ``position`` (into :meth:`AnnotationSession.items`;
    ``None``: all answered), with a span ``selection`` (offsets into the draft) offered
    as a candidate."""
    answered, total, complete = session.progress()
    progress = (
        f"**{answered} of {total}** answers saved · pairs complete **{complete} of "
        f"{len(session.rows)}** · saved to `{session.output.name}`"
    )
    if position is None:
        question = (
            f"**All {len(session.rows)} pairs are labelled.** Gold labels: "
            f"`{session.output}`.\n\nNext, score the pairs with them (the judge-only, "
            "gold-only and prediction-powered figures, and the judge's agreement):\n\n"
            f"```\n{next_command(session)}\n```"
        )
        if not session.rows[0].get("score_arguments"):
            question += "\n\n(PAIRS: the file of pairs the sample was drawn from.)"
        return Screen(progress, question, [], done=True)
    item = session.items()[position]
    row = session.rows[item.pair]
    kind = item.kind
    sentences = row[f"{kind}_sentences"]
    asked = sentences[item.sentence]
    where = f"Pair {item.pair + 1} of {len(session.rows)} · "
    if kind == "prediction":
        text = row["prediction"][asked["start"] : asked["end"]]
        return Screen(
            progress,
            where + f"draft sentence {item.sentence + 1} of {len(sentences)} (highlighted in "
            f"the draft): its theme? “{_short(text, 300)}”",
            [(row["reference"], None)],
            draft_view=_marked(row["prediction"], asked),
            themes=True,
            theme=session.prediction_themes[item.pair][item.sentence],
        )
    choices = [("0 · NO MATCH", NO_MATCH)] + [
        (
            f"{j + 1} · {_short(row['prediction'][p['start'] : p['end']])}",
            _value((p["start"], p["end"])),
        )
        for j, p in enumerate(row["prediction_sentences"])
    ]
    stored = session.matches[item.pair][item.sentence]
    value = None if stored is False else NO_MATCH if stored is None else _value(stored)
    if selection is None and stored and value not in [v for _, v in choices]:
        selection = stored  # an answer saved from a selection
    if selection is not None:
        start, end = selection
        value = f"selection:{start}:{end}"
        choices.append((f"s · your selection: {_short(row['prediction'][start:end], 100)}", value))
    return Screen(
        progress,
        where + f"reply sentence {item.sentence + 1} of {len(sentences)}: which part of the "
        "draft says the same thing?",
        _marked(row["reference"], asked),
        draft=row["prediction"],
        candidates=choices,
        candidate=value,
        themes=bool(row["themes"]),
        theme=session.reference_themes[item.pair][item.sentence],
    )


def build_annotate_app(session: AnnotationSession):
    """The Gradio app over ``session`` (a ``gradio.Blocks``, analytics off), to launch on
    127.0.0.1 without a share link. Its ``elem_id`` s are stable (the browser tests').

    Raises:
        ImportError: without gradio (the ``demo`` extra).
    """
    import gradio as gr

    items = session.items()
    view = {"position": session.first_unanswered()}  # one annotator, one local app

    def render(selection=None, message=""):
        shown = screen(session, view["position"], selection)
        return (
            shown.progress,
            shown.question,
            gr.update(value=shown.reply, visible=not shown.done),
            gr.update(value=shown.draft or "", visible=shown.draft is not None),
            gr.update(value=shown.draft_view or [], visible=shown.draft_view is not None),
            gr.update(
                choices=shown.candidates or [],
                value=shown.candidate,
                visible=shown.candidates is not None,
            ),
            gr.update(value=shown.theme, visible=shown.themes),
            gr.update(visible=shown.themes),
            gr.update(visible=not shown.done),
            message,
        )

    def on_select(evt: gr.SelectData):
        position = view["position"]
        if position is None or items[position].kind != "reference":
            return render()
        row = session.rows[items[position].pair]
        start, end = browser_offsets(row["prediction"], *evt.index)
        return render(selection=(start, end) if start < end else None)

    # the module's postponed annotations are strings; gradio reads this one to pass the event
    on_select.__annotations__["evt"] = gr.SelectData

    def on_save(choice, theme):
        position = view["position"]
        if position is None:
            return render()
        match = False
        if choice == NO_MATCH:
            match = None
        elif choice:
            start, end = choice.removeprefix("selection:").split(":")
            match = (int(start), int(end))
        try:
            session.answer(position, match=match, theme=theme)
        except ValueError as error:
            return render(message=f"**{error}.**")
        first = session.first_unanswered()
        view["position"] = first if first is None else min(position + 1, first)
        return render()

    def on_back():
        position = view["position"]
        view["position"] = max((len(items) if position is None else position) - 1, 0)
        return render()

    def on_load():
        view["position"] = session.first_unanswered()
        return render()

    themes = [(f"{key} · {theme}", theme) for key, theme in zip(THEME_KEYS, THEMES)]
    highlight = {"color_map": {"asked": "#ffd54f"}, "show_legend": False}
    with gr.Blocks(title="edit-F1 gold labels", analytics_enabled=False) as app:
        gr.Markdown(static_text("annotate_intro.md"))
        progress = gr.Markdown(elem_id="progress")
        question = gr.Markdown(elem_id="question")
        with gr.Row():
            with gr.Column():
                reply = gr.HighlightedText(
                    label="Clinician's reply (the sentence asked about highlighted)",
                    elem_id="reply",
                    **highlight,
                )
                draft = gr.Textbox(
                    label="Draft (select a span to use it: s)",
                    lines=12,
                    max_lines=40,
                    elem_id="draft",
                )
                draft_view = gr.HighlightedText(
                    label="Draft (the sentence asked about highlighted)",
                    elem_id="draft-view",
                    visible=False,
                    **highlight,
                )
            with gr.Column():
                candidates = gr.Radio(label="Matching draft span", elem_id="candidates")
                theme = gr.Radio(choices=themes, label="Theme", elem_id="theme")
                with gr.Row():
                    back = gr.Button("Back (Backspace)", elem_id="back-button")
                    save = gr.Button(
                        "Save and next (Enter)", variant="primary", elem_id="save-button"
                    )
                message = gr.Markdown(elem_id="message")
                with gr.Column(elem_id="theme-guide") as guide:
                    gr.Markdown("### The themes\n" + theme_guide())
                    with gr.Accordion(
                        "Decision rules for sentences that fit two themes", open=False
                    ):
                        gr.Markdown("\n".join(f"- {rule}" for rule in THEME_RULES))
        outputs = [
            progress,
            question,
            reply,
            draft,
            draft_view,
            candidates,
            theme,
            guide,
            save,
            message,
        ]
        app.load(on_load, outputs=outputs)
        app.load(None, js=KEYBOARD_JS)
        app.load(None, js=STYLE_JS)
        draft.select(on_select, outputs=outputs)
        save.click(on_save, inputs=[candidates, theme], outputs=outputs)
        back.click(on_back, outputs=outputs)
    return app
