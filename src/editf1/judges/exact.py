"""A model-free content judge: a reference sentence matches a draft sentence with the same
words. A baseline for benchmarks and a deterministic judge for tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from editf1.judges.base import ContentJudge, ContentJudgement, JudgeConfig, JudgeRequest

__all__ = ["ExactMatchConfig", "ExactMatchContentJudge", "normalize"]

_TOKEN = re.compile(r"[^\W_]+")


def normalize(text: str) -> tuple[str, ...]:
    """Case-folded words of ``text``, ignoring punctuation and spacing."""
    return tuple(_TOKEN.findall(text.casefold()))


@dataclass(frozen=True)
class ExactMatchConfig(JudgeConfig):
    """The exact judge's settings: none."""


class ExactMatchContentJudge(ContentJudge):
    """Matches a reference sentence to the first draft sentence with the same words
    (:func:`normalize`) that no earlier reference sentence took (a repeat with no copy left
    takes the last copy); NO MATCH otherwise. Score 1.0 or 0.0. It hands out copies itself
    because its copies need not be verbatim ("Call us." and "call us!").
    """

    @property
    def fingerprint(self) -> str:
        return "exact-sentence-match"

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        results = []
        for request in requests:
            copies: dict[tuple[str, ...], list] = {}
            for sentence in request.prediction_sentences:
                copies.setdefault(normalize(sentence.text), []).append(sentence)
            answers = []
            for s in request.reference_sentences:
                left = copies.get(normalize(s.text))
                if not left:
                    answers.append(ContentJudgement("no_match", None, 0.0))
                    continue
                answers.append(ContentJudgement("match", left[0], 1.0))
                if len(left) > 1:  # the last copy stays for any further repeat
                    left.pop(0)
            results.append(answers)
        return results
