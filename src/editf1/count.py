"""Counting: step 3 of the pipeline, for content and for themes.

Implements the counting half of Algorithm 1 of Seegmiller et al. (arXiv 2601.11344):
given the content judge's answer for every reference sentence,

* expected matches (EM, true positives): reference sentences with a matching draft span;
* expected additions (EA, false negatives): reference sentences without one (NO MATCH,
  or a judgement the judge could not produce — those are also counted as ``unusable``);
* expected deletions (ED, false positives): remove every matched span from the draft,
  split what is left into sentences and keep those that still hold a word.

Theme level (§3.2): the set of scored themes in the draft predicts the set in the
reply; :func:`count_themes` gives the true positives (themes in both), false positives
(draft only) and false negatives (reply only) of one pair, and the reply sentences of
each theme with those matched (Table 14); a sentence without a usable label counts
against the pair, never for it. It is the only place theme counts are made:
the pair stores them (:class:`~editf1.results.ThemeCounts`), aggregation sums them.

Before counting, :func:`claim_copies` gives a span that overlaps one an earlier
reference sentence matched to the draft's next verbatim copy of the same words, where
there is one: removing matched spans from the draft one after another, as Algorithm 1 does,
finds the second copy the second time. A draft copied verbatim from a reply that says
"Call us." twice scores 1.0 whatever judge answered.

A span is removed by blanking its characters, so offsets into the draft stay valid.
What is left is split inside each of the draft's own sentences, so the words left on
both sides of a span inside one sentence stay one sentence ("I think [you should rest]
today." leaves one deletion), and a fragment left before a sentence boundary is not
glued to the next sentence ("I think [you should rest.] Call us." leaves two).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from editf1.judges.base import ContentJudgement, ThemeJudgement
from editf1.results import ThemeCounts
from editf1.segment import Sentence, SentenceSplitter

__all__ = ["ContentCounts", "claim_copies", "count_content", "count_themes", "themes_present"]


@dataclass(frozen=True)
class ContentCounts:
    """The three counts of one pair, and the draft sentences left after removal.

    Attributes:
        expected_matches: EM, an int >= 0.
        expected_additions: EA, an int >= 0 (includes ``unusable``).
        expected_deletions: ED, an int >= 0, ``== len(deletions)``.
        unusable: judgements the judge could not produce, counted in EA.
        deletions: the draft sentences left over, with offsets into the draft; ``text``
            is what is left of the sentence once matched spans are removed.
    """

    expected_matches: int
    expected_additions: int
    expected_deletions: int
    unusable: int
    deletions: tuple[Sentence, ...]


def claim_copies(prediction: str, judgements: Sequence[ContentJudgement]) -> list[ContentJudgement]:
    """The judgements of one pair with each span that overlaps an earlier one moved to a
    free copy of its words.

    A matched span that overlaps a span an earlier reference sentence matched (a judge
    that scores each sentence on its own gives identical draft sentences the same
    answer) moves to the first verbatim copy of its characters in the draft that starts
    and ends at word boundaries and overlaps no span matched so far; with no such copy
    it stays where the judge put it. Algorithm 1 of Seegmiller et al. (arXiv 2601.11344)
    removes each matched span from the draft in turn, so words already removed are
    found again only at another copy: the same words matched twice are two of the
    draft's copies, not one copy and an expected deletion. Nothing else changes:
    statuses, scores and spans that overlap no earlier span are returned as given.

    Args:
        prediction: the draft.
        judgements: one per reference sentence, in reply order (earlier sentences keep
            their span).

    Returns:
        A new list of the same length.

    >>> draft = "Call us. Rest today. Call us."
    >>> call = ContentJudgement("match", Sentence("Call us.", 0, 8))
    >>> [(j.span.start, j.span.end) for j in claim_copies(draft, [call, call, call])]
    [(0, 8), (21, 29), (0, 8)]
    """
    claimed = _Claimed()
    searched: dict[str, int] = {}  # where the search for a copy of these words resumes
    out = []
    for judgement in judgements:
        span = judgement.span
        if span is not None and claimed.overlaps(span.start, span.end):
            written = prediction[span.start : span.end]
            start = prediction.find(written, searched.get(written, 0)) if written else -1
            while start >= 0:
                end = start + len(written)
                bounded = not (start and prediction[start - 1].isalnum()) and not (
                    end < len(prediction) and prediction[end].isalnum()
                )
                if bounded and not claimed.overlaps(start, end):
                    judgement = replace(judgement, span=Sentence(span.text, start, end))
                    break
                start = prediction.find(written, start + 1)
            # copies passed over stay unusable (claims only grow): never look at them again
            searched[written] = len(prediction) if start < 0 else start + 1
        if judgement.span is not None:
            claimed.add(judgement.span.start, judgement.span.end)
        out.append(judgement)
    return out


class _Claimed:
    """The characters of the draft matched so far, as sorted disjoint intervals, so that
    an overlap is found by bisection (a draft that repeats one sentence thousands of
    times stays linear in its copies)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        """Whether characters ``start:end`` overlap a claimed character."""
        i = bisect_left(self.starts, end) - 1  # the last interval starting before ``end``
        return i >= 0 and self.ends[i] > start

    def add(self, start: int, end: int) -> None:
        """Claim characters ``start:end``, merged with the intervals they touch."""
        i, j = bisect_left(self.ends, start), bisect_right(self.starts, end)
        if i < j:
            start, end = min(start, self.starts[i]), max(end, self.ends[j - 1])
        self.starts[i:j], self.ends[i:j] = [start], [end]


def count_content(
    prediction: str,
    prediction_sentences: Sequence[Sentence],
    judgements: Sequence[ContentJudgement],
    splitter: SentenceSplitter,
) -> ContentCounts:
    """Count EM, EA and ED for one pair (Algorithm 1).

    Args:
        prediction: the draft.
        prediction_sentences: ``splitter.split(prediction)``.
        judgements: one per reference sentence.
        splitter: splits what is left of each draft sentence after removal.

    Returns:
        The counts; ``expected_matches + expected_additions == len(judgements)``.

    Example (a judge that matched reference sentence 1 to "Rest today."):
        >>> from editf1.judges.base import ContentJudgement
        >>> draft = "Rest today. Drink water. Call us."
        >>> j = [ContentJudgement("match", Sentence("Rest today.", 0, 11)),
        ...      ContentJudgement("no_match")]
        >>> splitter = SentenceSplitter()
        >>> c = count_content(draft, splitter.split(draft), j, splitter)
        >>> c.expected_matches, c.expected_additions, c.expected_deletions
        (1, 1, 2)
        >>> [d.text for d in c.deletions]
        ['Drink water.', 'Call us.']
    """
    chars = list(prediction)
    for judgement in judgements:
        if judgement.span is not None:
            for i in range(judgement.span.start, judgement.span.end):
                if not chars[i].isspace():
                    chars[i] = " "
    left = "".join(chars)
    deletions = tuple(
        Sentence(
            " ".join(piece.text.split()), sentence.start + piece.start, sentence.start + piece.end
        )
        for sentence in prediction_sentences
        for piece in splitter.split(left[sentence.start : sentence.end])
    )
    matches = sum(j.status == "match" for j in judgements)
    unusable = sum(j.status == "unusable" for j in judgements)
    return ContentCounts(
        expected_matches=matches,
        expected_additions=len(judgements) - matches,
        expected_deletions=len(deletions),
        unusable=unusable,
        deletions=deletions,
    )


def themes_present(
    judgements: Sequence[ThemeJudgement | None], themes_scored: Collection[str]
) -> frozenset[str]:
    """The scored themes among one text's sentence labels (unusable labels count as none).

    >>> from editf1.judges.base import ThemeJudgement
    >>> sorted(themes_present([ThemeJudgement("Logistics"), ThemeJudgement("Other"),
    ...                        ThemeJudgement(None)], {"Logistics", "Care coordination"}))
    ['Logistics']
    """
    return frozenset(j.theme for j in judgements if j is not None and j.theme in themes_scored)


def count_themes(
    reference_labels: Sequence[str | None],
    prediction_labels: Sequence[str | None],
    matched: Sequence[bool],
    themes_scored: Collection[str],
) -> ThemeCounts:
    """Theme counts of one pair (§3.2): which scored themes reply and draft have, the
    true positives (in both), false positives (draft only) and false negatives (reply
    only), and each theme's reply sentences with those matched (Table 14).

    A sentence without a usable label (``None``: the theme judge gave none) counts as
    a theme that the other text lacks: a false negative in the reply, a false positive
    in the draft. So unusable labels never make a pair score better than any usable
    labels would (whatever label each would have had, the pair's precision, recall and
    F1 are at least these); a pair whose every label is unusable scores 0, not the 1.0
    of "no theme on either side". They belong to no theme: per-theme figures leave
    them out.

    Args:
        reference_labels: the theme of each reply sentence (``None`` where the theme
            judge gave none).
        prediction_labels: the theme of each draft sentence.
        matched: for each reply sentence, whether the content judge matched it.
        themes_scored: the themes counted: the 8 clinical ones, or all 9 with Other.

    Returns:
        :class:`~editf1.results.ThemeCounts`.

    >>> c = count_themes(
    ...     ["Logistics", "Care coordination", "Other"],
    ...     ["Logistics", "Contingency planning", None],
    ...     [True, False, True],
    ...     {"Logistics", "Care coordination", "Contingency planning"},
    ... )
    >>> c.as_tuple(), sorted(c.reference_themes), c.reference_sentences, c.matched_sentences
    ((1, 2, 1), ['Care coordination', 'Logistics'], {'Logistics': 1, 'Care coordination': 1}, \
{'Logistics': 1})
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
