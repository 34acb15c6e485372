"""Span-level training examples from item-level content labels.

Each content label (a reference sentence against a draft: the verbatim span that says
the same thing, or NO MATCH) gives (reference sentence, span) examples with a label, the
unit a judge that reads both texts (a cross-encoder) is trained on:

* ``gold``: a match's annotated span: positive;
* ``containing``: the shortest candidate span (:func:`editf1.judges.spans.candidate_spans`)
  holding the gold span, where it is not the gold span: positive;
* ``candidate``: every other candidate span: negative, except those that overlap the gold
  span (left out); for a NO MATCH item, every candidate span;
* ``corruption``: a gold span changed by :func:`editf1.training.corruptions.corrupt_pairs`:
  negative (training only).

A match without a span (K-QA's labels) gives no example.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from editf1.judges.spans import candidate_spans
from editf1.segment import SentenceSplitter
from editf1.training.corruptions import CORRUPTION_KINDS, corrupt_pairs
from editf1.validation.labelled import ContentItem

__all__ = ["EXAMPLE_KINDS", "SpanExample", "corruption_examples", "span_examples"]

#: What an example is (module docstring).
EXAMPLE_KINDS = ("gold", "containing", "candidate", "corruption")


@dataclass(frozen=True)
class SpanExample:
    """One (reference sentence, draft span) pair with a label.

    Attributes:
        case: the item's case (splits keep a case's examples together).
        reference: the reference sentence.
        span: the span's text.
        label: True when the span says what the sentence says.
        kind: one of :data:`EXAMPLE_KINDS`.
        item: index of the item the example comes from, in the list given.
        corruption: the corruption kind (:data:`~editf1.training.corruptions.CORRUPTION_KINDS`)
            for ``kind == "corruption"``, else ``""``.
    """

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
    """The span-level examples of ``items`` (rules in the module docstring).

    Args:
        items: N labelled items.
        window: longest run of adjacent draft sentences taken as one candidate span.
        splitter: the draft's sentence splitter (default :class:`SentenceSplitter`).

    Returns:
        Examples in item order; per item the gold span, the containing span, then the
        negatives in :func:`candidate_spans` order.

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
            example(s.text, False, "candidate")
            for s in spans
            if s.end <= start or s.start >= end  # overlapping spans are left out
        ]
    return out


def corruption_examples(
    examples: Sequence[SpanExample],
    *,
    seed: int = 0,
    per_pair: int = 1,
    kinds: Sequence[str] = CORRUPTION_KINDS,
) -> list[SpanExample]:
    """Hard negatives: the gold examples' spans corrupted
    (:func:`editf1.training.corruptions.corrupt_pairs`, same ``seed``, ``per_pair`` and
    ``kinds``), each a NO MATCH of kind ``"corruption"``.

    Returns:
        The corrupted examples, in the gold examples' order.
    """
    gold = [e for e in examples if e.kind == "gold"]
    pairs = [(k, e.reference, e.span) for k, e in enumerate(gold)]  # k stands for the case
    made = corrupt_pairs(pairs, seed=seed, per_pair=per_pair, kinds=kinds)
    return [
        replace(gold[c.case], span=c.corrupted, label=False, kind="corruption", corruption=c.kind)
        for c in made
    ]
