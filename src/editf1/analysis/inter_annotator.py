"""Several clinicians per message: multi-reference scores and the human ceiling.

Two questions arise when more than one clinician answered the same patient message:

* How close is a draft to *any* clinician? :func:`score_multi_reference` scores the
  draft against every reply and reports the best-matching reply and the mean over
  replies.
* How close are clinicians to each other? :func:`inter_annotator_predictability`
  scores each clinician's reply as if it were the draft for every other clinician's
  reply to the same message (every *ordered* pair of clinicians) and micro-averages:
  the inter-annotator predictability of Seegmiller et al. (arXiv 2601.11344, §4.2,
  Table 11), the edit-F1 a model could hope for if it wrote like one more clinician.

Both are thin shells over :class:`editf1.scorer.EditF1Scorer`: all pairs go through
one :meth:`~editf1.scorer.EditF1Scorer.score_stream` call (batched judges), and corpus
figures are summed by :class:`editf1.aggregate.CorpusAccumulator`, as everywhere else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from editf1.aggregate import PRF, CorpusAccumulator, prf
from editf1.results import CorpusResult, PairResult
from editf1.scorer import EditF1Scorer
from editf1.stats import Estimate, bootstrap
from editf1.validate import InputError, check_ids, check_pair, shorten

__all__ = [
    "InterAnnotatorResult",
    "MultiReferencePair",
    "MultiReferenceResult",
    "inter_annotator_predictability",
    "score_multi_reference",
]


def _mean_prf(prfs: Sequence[PRF]) -> PRF:
    """Arithmetic means of precision, recall and F1 (F1 is the mean F1, not the F1 of
    the means)."""
    return PRF(
        float(np.mean([p.precision for p in prfs])),
        float(np.mean([p.recall for p in prfs])),
        float(np.mean([p.f1 for p in prfs])),
    )


@dataclass(frozen=True)
class MultiReferencePair:
    """One draft scored against K clinician replies.

    Attributes:
        row: index of the draft in the input.
        id: the draft's id, if given.
        best_reference: index (0-based, into this draft's replies) of the best-matching
            reply: highest content F1; ties go to higher recall, then the earlier reply.
        per_reference: K :class:`~editf1.results.PairResult`, one per reply, in input
            order (their ``row`` is the draft's row).
        mean: content precision, recall and F1, each the mean over the K replies.
        theme_mean: the same for theme-level scores; ``None`` without a theme judge.
    """

    row: int
    id: str | None
    best_reference: int
    per_reference: tuple[PairResult, ...]
    mean: PRF
    theme_mean: PRF | None

    @property
    def best(self) -> PairResult:
        """The :class:`PairResult` against the best-matching reply."""
        return self.per_reference[self.best_reference]

    def to_dict(self) -> dict:
        """JSON-ready: the best pair's full result, the best index and the means."""
        out = self.best.to_dict()
        out["best_reference"] = self.best_reference
        out["n_references"] = len(self.per_reference)
        out |= self.mean.to_dict("mean_")
        if self.theme_mean is not None:
            out |= self.theme_mean.to_dict("mean_theme_")
        out["per_reference"] = [
            {"reference": k, **p.content.to_dict()}
            | ({} if p.theme is None else p.theme.to_dict("theme_"))
            for k, p in enumerate(self.per_reference)
        ]
        return out


@dataclass(frozen=True)
class MultiReferenceResult:
    """Drafts scored against several replies each.

    Attributes:
        best: micro-averaged corpus scores over each draft's best-matching reply
            (:class:`~editf1.results.CorpusResult`; its ``pairs`` are the best pairs).
        all_references: micro-averaged corpus scores over every (draft, reply) pair,
            so every clinician's reply counts once.
        pairs: one :class:`MultiReferencePair` per draft, in input order.
    """

    best: CorpusResult
    all_references: CorpusResult
    pairs: list[MultiReferencePair]

    def to_dict(self) -> dict:
        """``best``'s summary at the top level, ``all_references`` and ``per_pair``."""
        out = self.best.summary()
        out["all_references"] = self.all_references.summary()
        out["per_pair"] = [p.to_dict() for p in self.pairs]
        return out


def _check_multi(predictions, references) -> None:
    for name, value in (("predictions", predictions), ("references", references)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise TypeError(f"{name} must be a list, got {type(value).__name__} {shorten(value)}")
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must have the same length, got "
            f"{len(predictions)} predictions and {len(references)} lists of references"
        )
    errors = []
    for i, (prediction, replies) in enumerate(zip(predictions, references)):
        errors += check_pair(i, prediction, "reply")  # the prediction's own checks
        if isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
            errors.append(
                f"references[{i}] must be a list of clinician replies, got "
                f"{type(replies).__name__} {shorten(replies)}"
            )
        elif not replies:
            errors.append(f"references[{i}] is an empty list; give at least one reply")
        else:
            errors += [e for k, r in enumerate(replies) for e in check_pair(f"{i}][{k}", "", r)]
    if errors:
        raise InputError(errors)


def _best_index(pairs: Sequence[PairResult]) -> int:
    keys = [(p.content.f1, p.content.recall, -k) for k, p in enumerate(pairs)]
    return -max(keys)[2]


def score_multi_reference(
    scorer: EditF1Scorer,
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    ids: Sequence[str] | None = None,
) -> MultiReferenceResult:
    """Score each draft against every one of its clinicians' replies.

    Args:
        scorer: the :class:`~editf1.scorer.EditF1Scorer` (judges, options).
        predictions: N drafts (strings; may be empty).
        references: N non-empty lists of replies; list ``i`` holds the K_i replies
            (K_i >= 1, strings with a word) written for draft ``i``'s message.
        ids: N ids, optional.

    Returns:
        :class:`MultiReferenceResult`: per draft the best-matching reply and the mean
        over replies; corpus scores over best pairs and over all pairs. Fractions in
        [0, 1]. With one reply per draft, ``best`` and ``all_references`` both equal
        :meth:`EditF1Scorer.score` on the same pairs.

    Raises:
        TypeError, ValueError: for non-list arguments or different lengths.
        InputError: naming each bad draft (``predictions[i]``) and reply
            (``references[i][k]``), before any model runs.

    Example:
        >>> scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
        >>> result = score_multi_reference(
        ...     scorer, ["Rest today. Drink water."],
        ...     [["Rest today. Take ibuprofen.", "Drink water. Rest today."]],
        ... )
        >>> result.pairs[0].best_reference, round(result.pairs[0].mean.f1, 4)
        (1, 0.75)
        >>> result.best.f1, round(result.all_references.f1, 4)
        (1.0, 0.75)
    """
    _check_multi(predictions, references)
    check_ids(ids, len(predictions))
    owners = [i for i, replies in enumerate(references) for _ in replies]
    rows = (
        (None, predictions[i], reply) for i, replies in enumerate(references) for reply in replies
    )
    flat = scorer.score_stream(rows, total=len(owners), keep_pairs=True)
    grouped: list[list[PairResult]] = [[] for _ in predictions]
    for owner, pair in zip(owners, flat.pairs):
        row_id = None if ids is None else ids[owner]
        grouped[owner].append(dataclasses.replace(pair, row=owner, id=row_id))
    pairs = [
        MultiReferencePair(
            row=i,
            id=None if ids is None else ids[i],
            best_reference=_best_index(group),
            per_reference=tuple(group),
            mean=_mean_prf([p.content for p in group]),
            theme_mean=None if group[0].theme is None else _mean_prf([p.theme for p in group]),
        )
        for i, group in enumerate(grouped)
    ]
    best = CorpusAccumulator(scorer.themes_scored, scorer.zero_division, keep_pairs=True)
    for pair in pairs:
        best.add(pair.best)
    everything = dataclasses.replace(flat, pairs=[p for g in grouped for p in g])
    return MultiReferenceResult(best.result(scorer.reproducibility), everything, pairs)


@dataclass(frozen=True)
class InterAnnotatorResult:
    """Inter-annotator predictability (§4.2, Table 11): clinicians scored on each other.

    Attributes:
        corpus: micro-averaged scores over every ordered pair of clinicians who
            answered the same message (:class:`~editf1.results.CorpusResult`; each
            pair's ``id`` is ``"<message>:<a>-><b>"``: reply ``a`` as the draft, reply
            ``b`` as the reference, 0-based positions within the message).
        f1, precision, recall: content edit-F1 with a 95% bootstrap CI over messages
            (:class:`~editf1.validation.agreement.Estimate`).
        theme_f1: theme-level edit-F1 with its CI; ``None`` without a theme judge.
        n_messages: messages with at least two replies (those scored).
        n_ordered_pairs: sum over those messages of K(K-1).
        single_reply_messages: ids of messages with one reply, which have no pair and
            are not scored (listed, never dropped silently).
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
        out = {
            "n_messages": self.n_messages,
            "n_ordered_pairs": self.n_ordered_pairs,
            "n_single_reply_messages": len(self.single_reply_messages),
            "f1": self.f1.to_dict(),
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
        }
        if self.theme_f1 is not None:
            out["theme_f1"] = self.theme_f1.to_dict()
        out["corpus"] = self.corpus.summary()
        return out


def inter_annotator_predictability(
    scorer: EditF1Scorer,
    replies: Mapping[str, Sequence[str]],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> InterAnnotatorResult:
    """Score every clinician's reply as the draft for every other clinician's reply.

    For a message answered by K clinicians there are K(K-1) ordered pairs (a, b): reply
    ``a`` is the prediction, reply ``b`` the reference. Counts are summed over all
    ordered pairs of all messages (micro average, as for a model's corpus edit-F1, so
    the two can be compared), following Seegmiller et al. (arXiv 2601.11344, §4.2,
    Table 11). Because both directions are scored, content precision and recall are
    close to each other by construction.

    Args:
        scorer: the :class:`~editf1.scorer.EditF1Scorer` (use the same judges as for the
            model you compare with the ceiling).
        replies: message id -> the replies of the clinicians who answered it, in a
            fixed order. Messages with one reply are listed in the result, not scored.
        n_resamples, confidence, seed: the bootstrap over messages
            (:func:`editf1.validation.agreement.bootstrap`; all ordered pairs of a message are
            drawn together).

    Returns:
        :class:`InterAnnotatorResult`; fractions in [0, 1].

    Raises:
        ValueError: if no message has two replies.
        InputError: naming ``replies[<message>][k]`` for a reply that is not a string
            with a word.

    Example:
        >>> scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
        >>> iap = inter_annotator_predictability(
        ...     scorer, {"m1": ["Rest today. Drink water.", "Rest today."], "m2": ["Hi."]},
        ...     n_resamples=10,
        ... )
        >>> c = iap.corpus
        >>> c.expected_matches, c.expected_additions, c.expected_deletions, round(iap.f1.value, 4)
        (2, 1, 1, 0.6667)
        >>> iap.n_ordered_pairs, iap.single_reply_messages
        (2, ('m2',))
    """
    if isinstance(replies, (str, bytes)) or not isinstance(replies, Mapping):
        raise TypeError(f"replies must map message ids to lists of replies, got {shorten(replies)}")
    errors = []
    for message, texts in replies.items():
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            errors.append(f"replies[{message!r}] must be a list of replies, got {shorten(texts)}")
            continue
        errors += [
            e.replace("references[", "replies[", 1)
            for k, text in enumerate(texts)
            for e in check_pair(f"{message!r}][{k}", "", text)
        ]
    if errors:
        raise InputError(errors)
    single = tuple(str(m) for m, texts in replies.items() if len(texts) < 2)
    ordered = [
        (str(message), a, b, texts[a], texts[b])
        for message, texts in replies.items()
        if len(texts) >= 2
        for a in range(len(texts))
        for b in range(len(texts))
        if a != b
    ]
    if not ordered:
        raise ValueError("inter-annotator predictability needs a message with two replies")
    rows = ((f"{m}:{a}->{b}", draft, reference) for m, a, b, draft, reference in ordered)
    corpus = scorer.score_stream(rows, total=len(ordered), keep_pairs=True)
    counts = np.array(
        [(p.expected_matches, p.expected_deletions, p.expected_additions) for p in corpus.pairs]
    )
    groups = [m for m, *_ in ordered]
    kw = {"groups": groups, "n_resamples": n_resamples, "confidence": confidence, "seed": seed}

    def content(field: str):
        return lambda idx: getattr(prf(*counts[idx].sum(axis=0), scorer.zero_division), field)

    theme_f1 = None
    if corpus.theme is not None:
        theme_counts = np.array(
            [
                (
                    len(p.reference_themes & p.prediction_themes),
                    len(p.prediction_themes - p.reference_themes),
                    len(p.reference_themes - p.prediction_themes),
                )
                for p in corpus.pairs
            ]
        )
        theme_f1 = bootstrap(
            lambda idx: prf(*theme_counts[idx].sum(axis=0), scorer.zero_division).f1,
            len(ordered),
            **kw,
        )
    return InterAnnotatorResult(
        corpus=corpus,
        f1=bootstrap(content("f1"), len(ordered), **kw),
        precision=bootstrap(content("precision"), len(ordered), **kw),
        recall=bootstrap(content("recall"), len(ordered), **kw),
        theme_f1=theme_f1,
        n_messages=len(set(groups)),
        n_ordered_pairs=len(ordered),
        single_reply_messages=single,
    )
