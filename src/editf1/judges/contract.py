"""The judge contract, checked in one place: everything that calls a judge calls it through
:func:`judge_content` / :func:`judge_themes`, which also settle the call's progress; and the
cache of theme labels.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence

from editf1.caches import register_holder
from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.progress import settled
from editf1.segment import plain_text
from editf1.themes import THEMES

__all__ = ["JudgeContractError", "ThemeCache", "judge_content", "judge_themes"]


class JudgeContractError(RuntimeError):
    """A judge returned answers that break the judge interface (a bug in the judge)."""


def judge_content(
    judge: ContentJudge, requests: Sequence[JudgeRequest]
) -> list[list[ContentJudgement]]:
    """``judge.match(requests)``, checked: N lists, one judgement per reference sentence.

    Raises:
        JudgeContractError: naming the judge and the pair (by position, never its text)
            when the answers do not have that shape or a span is not verbatim.
    """
    with settled(sum(len(r.reference_sentences) for r in requests)):
        judgements = judge.match(requests)
    name = judge.fingerprint
    if len(judgements) != len(requests):
        raise JudgeContractError(
            f"content judge {name} answered {len(judgements)} of {len(requests)} pairs"
        )
    for i, (request, answers) in enumerate(zip(requests, judgements)):
        if len(answers) != len(request.reference_sentences):
            raise JudgeContractError(
                f"content judge {name} answered {len(answers)} of "
                f"{len(request.reference_sentences)} reference sentences of pair {i} of the batch"
            )
        for k, answer in enumerate(answers):
            span = answer.span
            written = None if span is None else request.prediction[span.start : span.end]
            if span is not None and span.text not in (written, plain_text(written)):
                raise JudgeContractError(
                    f"content judge {name} returned, for reference sentence {k} of pair {i} "
                    f"of the batch, a span ({span.start}, {span.end}) that is not verbatim "
                    "in the draft at those offsets"
                )
    return judgements


def judge_themes(judge: ThemeJudge, sentences: Sequence[str]) -> list[ThemeJudgement]:
    """``judge.classify(sentences)``, checked: one judgement per sentence.

    Raises:
        JudgeContractError: for another number of labels, or a label that is not a theme.
    """
    with settled(len(sentences)):
        labels = judge.classify(sentences)
    if len(labels) != len(sentences):
        raise JudgeContractError(
            f"theme judge {judge.fingerprint} returned {len(labels)} labels for "
            f"{len(sentences)} sentences"
        )
    bad = [i for i, j in enumerate(labels) if j.theme is not None and j.theme not in THEMES]
    if bad:
        raise JudgeContractError(
            f"theme judge {judge.fingerprint} returned labels that are not themes for "
            f"sentence(s) {bad[:10]}"
        )
    return labels


class ThemeCache:
    """Theme labels of the ``size`` most recently used sentence texts.

    Raises:
        ValueError: for a size below 1.
    """

    def __init__(self, size: int = 200_000) -> None:
        if size < 1:
            raise ValueError(f"theme cache size must be >= 1, got {size}")
        self.size = size
        self._labels: OrderedDict[str, ThemeJudgement] = OrderedDict()
        register_holder(self)

    def labels(self, judge: ThemeJudge, texts: Iterable[str]) -> dict[str, ThemeJudgement]:
        """text -> label for every text given; only uncached texts go to the judge (one call)."""
        wanted = dict.fromkeys(texts)
        missing = [t for t in wanted if t not in self._labels]
        if missing:
            self._labels.update(zip(missing, judge_themes(judge, missing)))
        found = {}
        for text in wanted:
            found[text] = self._labels[text]
            self._labels.move_to_end(text)
        while len(self._labels) > self.size:
            self._labels.popitem(last=False)
        return found

    def clear_cache(self) -> None:
        """Forget every label."""
        self._labels.clear()
