"""A model-free content judge: a reference sentence matches a draft sentence with the
same words. A baseline for benchmarks and a deterministic judge for tests."""

from __future__ import annotations

import re
from collections.abc import Sequence

from editf1.judges.base import ContentJudge, ContentJudgement, JudgeRequest

__all__ = ["ExactMatchContentJudge", "normalize"]

_TOKEN = re.compile(r"[^\W_]+")


def normalize(text: str) -> tuple[str, ...]:
    """Case-folded words of ``text``, ignoring punctuation and spacing.

    >>> normalize("Call us  at 5 p.m.!")
    ('call', 'us', 'at', '5', 'p', 'm')
    """
    return tuple(_TOKEN.findall(text.casefold()))


class ExactMatchContentJudge(ContentJudge):
    """Matches a reference sentence to the first draft sentence with the same words
    (:func:`normalize`); NO MATCH otherwise. Score 1.0 or 0.0."""

    @property
    def fingerprint(self) -> str:
        return "exact-sentence-match"

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        results = []
        for request in requests:
            index: dict[tuple[str, ...], object] = {}
            for sentence in request.prediction_sentences:
                index.setdefault(normalize(sentence.text), sentence)
            results.append(
                [
                    ContentJudgement("match", index[key], 1.0)
                    if (key := normalize(s.text)) in index
                    else ContentJudgement("no_match", None, 0.0)
                    for s in request.reference_sentences
                ]
            )
        return results
