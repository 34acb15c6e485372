"""The single-pair demo (the Hugging Face Space, ``edit-f1 demo``): one pair's scores and
why (matched spans, expected deletions and additions, every sentence's theme).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from itertools import groupby

from editf1.builders.readers import demo_rows
from editf1.inputs import InputError
from editf1.integrations import static_text
from editf1.results import PairResult
from editf1.scorer import EditF1Scorer

__all__ = ["EXPECTED_DELETION", "MATCHED", "PairView", "build_demo", "explain_pair"]

#: Label of draft text that a reply sentence matched (kept by the clinician).
MATCHED = "matched"
#: Label of draft text left once matched spans are removed (deleted by the clinician).
EXPECTED_DELETION = "expected deletion"
COLOR_MAP = {MATCHED: "#4caf50", EXPECTED_DELETION: "#ef5350"}


@dataclass(frozen=True)
class PairView:
    """What the demo shows for one pair.

    Attributes:
        scores_markdown: a Markdown table of the scores and the counts behind them.
        highlights: the draft as ``(text, label)`` segments, the label :data:`MATCHED`,
            :data:`EXPECTED_DELETION` or ``None``; they concatenate to the draft.
        additions: ``(reply sentence, theme or "")`` for each expected addition.
        sentences: rows ``[text ("reply"/"draft"), sentence, theme, judgement]``.
        notes: warnings to show (empty draft, unusable judge outputs).
    """

    scores_markdown: str
    highlights: list[tuple[str, str | None]]
    additions: list[tuple[str, str]]
    sentences: list[list[str]]
    notes: tuple[str, ...]
    pair: PairResult


def _highlights(draft: str, pair: PairResult) -> list[tuple[str, str | None]]:
    labels: list[str | None] = [None] * len(draft)
    marked = [(deletion, EXPECTED_DELETION) for deletion in pair.expected_deletion_sentences]
    marked += [(s.match, MATCHED) for s in pair.alignment if s.match is not None]
    for span, label in marked:
        labels[span.start : span.end] = [label] * (span.end - span.start)
    # whitespace keeps a mark only inside one marked run, never at its edges
    for space in re.finditer(r"\s+", draft):
        start, end = space.span()
        before = labels[start - 1] if start else None
        after = labels[end] if end < len(draft) else None
        for i in range(start, end):
            if not before == labels[i] == after:
                labels[i] = None
    runs = groupby(zip(draft, labels), key=lambda pair: pair[1])
    return [("".join(char for char, _ in run), label) for label, run in runs]


def _overlap(a, b) -> bool:
    return a.start < b.end and b.start < a.end


def _scores_markdown(pair: PairResult) -> str:
    lines = ["| level | precision | recall | F1 |", "|---|---|---|---|"]
    for level, s in (("content", pair.content), ("theme", pair.theme)):
        if s is not None:
            lines.append(f"| {level} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} |")
    counts = (
        f"Content: expected matches {pair.expected_matches}, expected additions "
        f"{pair.expected_additions}, expected deletions {pair.expected_deletions}."
    )
    if (t := pair.theme_counts) is not None:
        counts += (
            f" Themes: {t.true_positives} shared, {t.true_positives + t.false_positives} in "
            f"the draft, {t.true_positives + t.false_negatives} in the reply."
        )
    return "\n".join([*lines, "", counts])


def explain_pair(scorer: EditF1Scorer, draft: str, reply: str) -> PairView:
    """Score one (draft, reply) pair and lay out its explanation. An empty draft's
    precision is the scorer's ``zero_division`` value, and a note says so.

    Raises:
        InputError: naming the field, for a reply without a word or a non-string.

    Example:
        >>> view = explain_pair(EditF1Scorer(content_judge="exact", theme_judge=None),
        ...                     "Rest today. Drink water.", "Rest today. Take ibuprofen.")
        >>> view.highlights
        [('Rest today.', 'matched'), (' ', None), ('Drink water.', 'expected deletion')]
        >>> view.additions
        [('Take ibuprofen.', '')]
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = scorer.score([draft], [reply])
    pair = result.pairs[0]
    matched = [s.match for s in pair.alignment if s.match]
    sentences = [
        [
            "reply",
            s.reference.text,
            s.theme or "",
            MATCHED if s.status == "match" else "expected addition",
        ]
        for s in pair.alignment
    ]
    for sentence, theme in zip(pair.prediction_sentences, pair.prediction_sentence_themes):
        kept = any(_overlap(sentence, span) for span in matched)
        deleted = any(_overlap(sentence, d) for d in pair.expected_deletion_sentences)
        judgement = "kept, partly deleted" if deleted else "kept"
        judgement = EXPECTED_DELETION if deleted and not kept else judgement
        sentences.append(["draft", sentence.text, theme or "", judgement])
    notes = tuple(pair.warnings) + tuple(
        str(w.message) for w in caught if "unusable" in str(w.message)
    )
    return PairView(
        scores_markdown=_scores_markdown(pair),
        highlights=_highlights(draft, pair),
        additions=[(s.reference.text, s.theme or "") for s in pair.alignment if not s.match],
        sentences=sentences,
        notes=notes,
        pair=pair,
    )


def build_demo(scorer: EditF1Scorer | None = None, examples: list[dict] | None = None):
    """The Gradio app (a ``gradio.Blocks``, analytics off; call ``.launch()``): inputs, a
    Score button and the :class:`PairView` outputs. Its ``elem_id`` s are stable.

    Args:
        scorer: default: the embedded judges, ``zero_division=0.0``.
        examples: preloaded pairs (``message``, ``prediction``, ``reference``, ``id``);
            default: the shipped demo set.

    Raises:
        ImportError: without gradio (the ``demo`` extra).
    """
    from editf1.privacy import telemetry_off

    telemetry_off()  # gradio's analytics, however the environment was set since import
    import gradio as gr

    scorer = scorer or EditF1Scorer(zero_division=0.0)
    examples = demo_rows() if examples is None else examples

    def score(message: str, draft: str, reply: str):
        try:
            view = explain_pair(scorer, draft or "", reply or "")
        except InputError as error:
            raise gr.Error(
                "The clinician reply needs at least one word."
                if "no word" in str(error)
                else str(error)
            ) from None
        additions = (
            "\n".join(
                f"- {text}" + (f" — *{theme}*" if theme else "") for text, theme in view.additions
            )
            or "None: every sentence of the reply is in the draft."
        )
        notes = "\n".join(f"- {n}" for n in view.notes)
        return (
            view.scores_markdown,
            view.highlights,
            additions,
            view.sentences,
            gr.update(value=notes, visible=bool(notes)),
        )

    with gr.Blocks(title="edit-F1", analytics_enabled=False) as demo:
        gr.Markdown(static_text("demo_intro.md"))
        with gr.Row():
            with gr.Column():
                message = gr.Textbox(
                    label="Patient message (optional: context only, not scored)",
                    lines=3,
                    elem_id="message",
                )
                draft = gr.Textbox(label="LLM draft", lines=8, elem_id="draft")
                reply = gr.Textbox(label="Clinician reply", lines=6, elem_id="reply")
                button = gr.Button("Score", variant="primary", elem_id="score-button")
            with gr.Column():
                scores = gr.Markdown(elem_id="scores")
                notes = gr.Markdown(visible=False, elem_id="notes")
                highlights = gr.HighlightedText(
                    label="Draft: matched spans (kept) and expected deletions",
                    color_map=COLOR_MAP,
                    show_legend=True,
                    combine_adjacent=True,
                    elem_id="draft-highlights",
                )
                gr.Markdown("**Expected additions** (reply sentences the draft lacks)")
                additions = gr.Markdown(elem_id="expected-additions")
        sentences = gr.Dataframe(
            headers=["text", "sentence", "theme", "judgement"],
            label="Every sentence's theme",
            interactive=False,
            wrap=True,
            column_widths=["8%", "57%", "20%", "15%"],
            max_height=600,
            elem_id="sentence-themes",
        )
        if examples:
            gr.Examples(
                examples=[
                    [r.get("message", ""), r["prediction"], r["reference"]] for r in examples
                ],
                inputs=[message, draft, reply],
                example_labels=[str(r.get("id", i)) for i, r in enumerate(examples)],
                label="Example pairs (invented, no patient data)",
            )
        outputs = [scores, highlights, additions, sentences, notes]
        button.click(score, inputs=[message, draft, reply], outputs=outputs)
    return demo
