"""Counting: step 3 of the pipeline, the only place counts are made (Algorithm 1 and
§3.2 of Seegmiller et al., arXiv 2601.11344).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from editf1.judges.base import ContentJudgement, ThemeJudgement
from editf1.results import ThemeCounts
from editf1.segment import Sentence, SentenceSplitter

__all__ = ["ContentCounts", "claim_copies", "count_content", "count_themes", "themes_present"]


@dataclass(frozen=True)
class ContentCounts:
    """The counts of one pair (``unusable`` counted in EA) and the draft sentences left."""

    expected_matches: int
    expected_additions: int
    expected_deletions: int
    unusable: int
    deletions: tuple[Sentence, ...]


def claim_copies(prediction: str, judgements: Sequence[ContentJudgement]) -> list[ContentJudgement]:
    """The judgements of one pair with each matched span that overlaps an earlier one moved
    to the draft's first free verbatim copy of its words (at word boundaries), where there
    is one: Algorithm 1 removes spans one after another, so the same words matched twice
    are two copies, not one copy and a deletion. Everything else is returned as given.
    """
    claimed = bytearray(len(prediction))  # 1 where a matched span claimed the character
    searched: dict[str, int] = {}  # where the search for a copy of these words resumes
    out = []
    for judgement in judgements:
        span = judgement.span
        if span is not None and claimed.find(1, span.start, span.end) >= 0:
            written = prediction[span.start : span.end]
            start = prediction.find(written, searched.get(written, 0)) if written else -1
            while start >= 0:
                end = start + len(written)
                bounded = not (start and prediction[start - 1].isalnum()) and not (
                    end < len(prediction) and prediction[end].isalnum()
                )
                if bounded and claimed.find(1, start, end) < 0:
                    judgement = replace(judgement, span=Sentence(span.text, start, end))
                    break
                start = prediction.find(written, start + 1)
            # copies passed over stay unusable (claims only grow): never look at them again
            searched[written] = len(prediction) if start < 0 else start + 1
        if judgement.span is not None:
            start, end = judgement.span.start, judgement.span.end
            claimed[start:end] = b"\x01" * len(claimed[start:end])
        out.append(judgement)
    return out


def count_content(
    prediction: str,
    prediction_sentences: Sequence[Sentence],
    judgements: Sequence[ContentJudgement],
    splitter: SentenceSplitter,
) -> ContentCounts:
    """Count EM, EA and ED for one pair (Algorithm 1), given ``splitter.split(prediction)``
    and one judgement per reference sentence: reference sentences with a matched span are
    EM, the others EA (unusable ones included); the matched spans are blanked out of the
    draft, and what is left of each draft sentence, split again, is ED.
    """
    left = prediction  # the draft with every matched span blanked
    for s in (j.span for j in judgements if j.span is not None):
        left = left[: s.start] + re.sub(r"\S", " ", left[s.start : s.end]) + left[s.end :]
    deletions = tuple(
        Sentence(
            " ".join(piece.text.split()), sentence.start + piece.start, sentence.start + piece.end
        )
        for sentence in prediction_sentences
        for piece in splitter.split(left[sentence.start : sentence.end])
    )
    return _counted(judgements, deletions)


def _counted(judgements: Sequence[ContentJudgement], deletions: tuple[Sentence, ...]):
    matches = sum(j.status == "match" for j in judgements)
    unusable = sum(j.status == "unusable" for j in judgements)
    return ContentCounts(matches, len(judgements) - matches, len(deletions), unusable, deletions)


def leave_out(
    counts: ContentCounts,
    judgements: Sequence[ContentJudgement],
    reference_out: Sequence[bool],
    prediction_sentences: Sequence[Sentence],
    prediction_out: Sequence[bool],
) -> ContentCounts:
    """``counts`` without the reference and draft sentences marked out (e.g. those labelled
    Other): a reference sentence left out is neither EM nor EA, what is left of a draft
    sentence left out is no ED; matched spans are still removed from the draft.
    """
    kept = [j for j, out in zip(judgements, reference_out) if not out]
    outside = [s for s, out in zip(prediction_sentences, prediction_out) if out]
    deletions = tuple(
        d
        for d in counts.deletions
        if not any(s.start <= d.start and d.end <= s.end for s in outside)
    )
    return _counted(kept, deletions)


def themes_present(
    judgements: Sequence[ThemeJudgement | None], themes_scored: Collection[str]
) -> frozenset[str]:
    """The scored themes among one text's sentence labels (unusable labels count as none)."""
    return frozenset(j.theme for j in judgements if j is not None and j.theme in themes_scored)


def count_themes(
    reference_labels: Sequence[str | None],
    prediction_labels: Sequence[str | None],
    matched: Sequence[bool],
    themes_scored: Collection[str],
) -> ThemeCounts:
    """Theme counts of one pair over ``themes_scored`` (§3.2): true positives (themes in
    both), false positives (draft only), false negatives (reply only), and each theme's
    reply sentences with those ``matched`` by the content judge (Table 14). A ``None``
    label (unusable) counts as a theme the other text lacks, so it never makes a pair
    score better; it belongs to no theme in per-theme figures.
    """
    reference = frozenset(t for t in reference_labels if t in themes_scored)
    prediction = frozenset(t for t in prediction_labels if t in themes_scored)
    scored = [(t, m) for t, m in zip(reference_labels, matched, strict=True) if t in themes_scored]
    return ThemeCounts(
        reference_themes=reference,
        prediction_themes=prediction,
        true_positives=len(reference & prediction),
        false_positives=len(prediction - reference) + list(prediction_labels).count(None),
        false_negatives=len(reference - prediction) + list(reference_labels).count(None),
        reference_sentences=dict(Counter(t for t, _ in scored)),
        matched_sentences=dict(Counter(t for t, m in scored if m)),
    )
