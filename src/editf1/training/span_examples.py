"""Span-level (reference sentence, draft span) examples from item-level content labels:
what a judge that reads both texts (a cross-encoder) is trained on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from editf1.judges.spans import candidate_spans
from editf1.segment import SentenceSplitter
from editf1.training.corruptions import CORRUPTION_KINDS, corrupt_pairs
from editf1.validation.labelled import ContentItem

__all__ = ["EXAMPLE_KINDS", "SpanExample", "corruption_examples", "span_examples"]

#: What an example is (:func:`span_examples`, :func:`corruption_examples`).
EXAMPLE_KINDS = ("gold", "containing", "candidate", "corruption")


@dataclass(frozen=True)
class SpanExample:
    """One (reference sentence, draft span) pair of a ``kind`` of :data:`EXAMPLE_KINDS`;
    ``label`` is True when the span says what the sentence says; ``case`` (kept together
    by splits) and ``item`` (its index in the list given) are the item's; ``corruption``
    is the corruption kind for ``kind == "corruption"``, else ``""``."""

    case: str
    reference: str
    span: str
    label: bool
    kind: str
    item: int
    corruption: str = ""


def span_examples(
    items: Sequence[ContentItem], *, window: int = 2, splitter: SentenceSplitter | None = None
) -> list[SpanExample]:
    """The span-level examples of ``items`` (candidate spans of at most ``window`` draft
    sentences), in item order; per item:

    * ``gold``: a match's annotated span: positive (a match without a span, as in K-QA's
      labels, gives no example);
    * ``containing``: the shortest candidate span (:func:`candidate_spans`) holding the
      gold span, where it is not the gold span: positive;
    * ``candidate``: every other candidate span, in :func:`candidate_spans` order:
      negative, except those that overlap the gold span (left out); for a NO MATCH
      item, every candidate span.

    Raises:
        ValueError: naming the item if its span is not verbatim in its draft.
    """
    splitter = splitter or SentenceSplitter()
    out = []
    for k, item in enumerate(items):
        if item.match and item.span is None:
            continue
        spans = candidate_spans(item.prediction, splitter.split(item.prediction), window)

        def example(span: str, label: bool, kind: str) -> SpanExample:
            return SpanExample(item.case, item.reference, span, label, kind, k)  # noqa: B023

        if not item.match:
            out += [example(s.text, False, "candidate") for s in spans]
            continue
        start = item.prediction.find(item.span) if item.span_start is None else item.span_start
        end = start + len(item.span)
        if start < 0 or item.prediction[start:end] != item.span:
            raise ValueError(f"item {k}: field span is not verbatim in field prediction")
        out.append(example(item.span, True, "gold"))
        holding = [s for s in spans if s.start <= start and s.end >= end]
        containing = min(holding, key=lambda s: s.end - s.start, default=None)
        if containing is not None and containing.text != item.span:
            out.append(example(containing.text, True, "containing"))
        out += [
            example(s.text, False, "candidate") for s in spans if s.end <= start or s.start >= end
        ]
    return out


def corruption_examples(
    examples: Sequence[SpanExample],
    *,
    seed: int = 0,
    per_pair: int = 1,
    kinds: Sequence[str] = CORRUPTION_KINDS,
) -> list[SpanExample]:
    """Hard negatives, in the gold examples' order: their spans corrupted
    (:func:`~editf1.training.corruptions.corrupt_pairs` with these arguments), each a NO
    MATCH of kind ``"corruption"`` (training only)."""
    gold = [e for e in examples if e.kind == "gold"]
    pairs = [(k, e.reference, e.span) for k, e in enumerate(gold)]  # k stands for the case
    made = corrupt_pairs(pairs, seed=seed, per_pair=per_pair, kinds=kinds)
    return [
        replace(gold[c.case], span=c.corrupted, label=False, kind="corruption", corruption=c.kind)
        for c in made
    ]
