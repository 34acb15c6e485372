"""Candidate spans, the same for every judge that answers with a span of the draft."""

from __future__ import annotations

from collections.abc import Sequence

from editf1.segment import Sentence, plain_text

__all__ = ["candidate_spans", "span_ranges"]


def candidate_spans(text: str, sentences: Sequence[Sentence], window: int) -> list[Sentence]:
    """Every run of 1 to ``window`` adjacent sentences as one span, single sentences first
    (ties go to the shortest, earliest span); ``text`` is :func:`~editf1.segment.plain_text`.

    >>> from editf1.segment import SentenceSplitter
    >>> draft = "Rest. Drink. Call."
    >>> [c.text for c in candidate_spans(draft, SentenceSplitter().split(draft), 2)]
    ['Rest.', 'Drink.', 'Call.', 'Rest. Drink.', 'Drink. Call.']
    """
    spans = []
    for first, last in span_ranges(len(sentences), window):
        start, end = sentences[first].start, sentences[last].end
        run = sentences[first].text if first == last else plain_text(text[start:end])
        spans.append(Sentence(run, start, end))
    return spans


def span_ranges(n: int, window: int) -> list[tuple[int, int]]:
    """(first, last) sentence index of each candidate span, in :func:`candidate_spans` order."""
    return [(i, i + size - 1) for size in range(1, window + 1) for i in range(n - size + 1)]
