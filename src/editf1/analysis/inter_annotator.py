"""The human ceiling of edit-F1 (inter-annotator predictability, Seegmiller et al., arXiv
2601.11344, §4.2, Table 11)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations

from editf1.aggregate import micro_prf, pair_counts
from editf1.inputs import CheckedRows, InputError, check_reference, describe
from editf1.results import CorpusResult
from editf1.scorer import EditF1Scorer
from editf1.stats import Estimate, bootstrap, check_n_resamples

__all__ = ["InterAnnotatorResult", "inter_annotator_predictability"]

_FIGURES = ("f1", "precision", "recall", "theme_f1")


@dataclass(frozen=True)
class InterAnnotatorResult:
    """Inter-annotator predictability: clinicians scored on each other.

    Attributes:
        corpus: the result of every ordered pair (pair ``id`` ``"<message>:<a>-><b>"``:
            reply ``a`` the draft, ``b`` the reference).
        f1, precision, recall, theme_f1: with a bootstrap CI over messages; ``theme_f1``
            ``None`` without a theme judge.
        n_messages: messages with two or more replies; ``n_ordered_pairs``: sum of K(K-1).
        single_reply_messages: ids of messages with one reply (not scored).
    """

    corpus: CorpusResult
    f1: Estimate
    precision: Estimate
    recall: Estimate
    theme_f1: Estimate | None
    n_messages: int
    n_ordered_pairs: int
    single_reply_messages: tuple[str, ...]

    def summary(self) -> dict:
        """JSON-ready figures (no pairs)."""
        figures = [self.f1, self.precision, self.recall, self.theme_f1]
        return {
            "n_messages": self.n_messages,
            "n_ordered_pairs": self.n_ordered_pairs,
            "n_single_reply_messages": len(self.single_reply_messages),
            **{k: e.to_dict() for k, e in zip(_FIGURES, figures) if e is not None},
            "corpus": self.corpus.summary(),
        }


def inter_annotator_predictability(
    scorer: EditF1Scorer,
    replies: Mapping[str, Sequence[str]],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> InterAnnotatorResult:
    """Score every clinician's reply as the draft for every other clinician's reply to
    the same message: K replies give K(K-1) ordered pairs, their counts summed (micro
    average, as a model's corpus edit-F1); the bootstrap resamples messages.

    Args:
        scorer: the scorer with the judges of the model compared with the ceiling.
        replies: message id -> its clinicians' replies, in a fixed order.

    Raises:
        ValueError: if no message has two replies, or too few ``n_resamples``.
        InputError: naming ``replies[<message>][k]`` for a reply that is not text with a word.

    Example:
        >>> scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
        >>> iap = inter_annotator_predictability(
        ...     scorer, {"m1": ["Rest today. Drink water.", "Rest today."], "m2": ["Hi."]},
        ...     n_resamples=100,
        ... )
        >>> c = iap.corpus
        >>> c.expected_matches, c.expected_additions, c.expected_deletions, round(iap.f1.value, 4)
        (2, 1, 1, 0.6667)
        >>> iap.n_ordered_pairs, iap.single_reply_messages
        (2, ('m2',))
    """
    check_n_resamples(n_resamples, confidence)
    if not isinstance(replies, Mapping):
        raise TypeError(
            f"replies must map message ids to lists of replies, got {describe(replies)}"
        )
    errors = []
    for message, texts in replies.items():
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            errors.append(f"replies[{message!r}] must be a list of replies, got {describe(texts)}")
            continue
        errors += [
            e
            for k, text in enumerate(texts)
            for e in check_reference(f"{message!r}][{k}", text, "replies")
        ]
    if errors:
        raise InputError(errors)
    single = tuple(str(m) for m, texts in replies.items() if len(texts) < 2)
    ordered = [
        (str(message), a, b, texts[a], texts[b])
        for message, texts in replies.items()
        for a, b in permutations(range(len(texts)), 2)
    ]
    if not ordered:
        raise ValueError("inter-annotator predictability needs a message with two replies")
    # drafts and replies were checked above as replies; ids are unique by construction
    rows = CheckedRows((f"{m}:{a}->{b}", draft, ref) for m, a, b, draft, ref in ordered)
    corpus = scorer.score_stream(rows, total=len(ordered), keep_pairs=True)
    groups = [m for m, *_ in ordered]
    kw = {"groups": groups, "n_resamples": n_resamples, "confidence": confidence, "seed": seed}

    def estimate(level: str, field: str) -> Estimate:
        counts, zero_division = pair_counts(corpus.pairs, level), scorer.zero_division
        return bootstrap(
            lambda idx: getattr(micro_prf(counts[idx], zero_division), field), len(ordered), **kw
        )

    return InterAnnotatorResult(
        corpus=corpus,
        f1=estimate("content", "f1"),
        precision=estimate("content", "precision"),
        recall=estimate("content", "recall"),
        theme_f1=None if corpus.theme is None else estimate("theme", "f1"),
        n_messages=len(set(groups)),
        n_ordered_pairs=len(ordered),
        single_reply_messages=single,
    )
