"""What a score comes with: per-pair alignments and the corpus summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from editf1.judges.base import VetoedSpan
from editf1.segment import Sentence

__all__ = [
    "NOT_RECORDED",
    "PRF",
    "CorpusResult",
    "PairResult",
    "SentenceAlignment",
    "ThemeCounts",
    "ThemeScore",
    "reproducibility_of",
]

#: The reproducibility string of a result whose run record is unknown.
NOT_RECORDED = "not recorded (no run record)"


def reproducibility_of(provenance: dict) -> str:
    """A run record (:attr:`editf1.scorer.EditF1Scorer.provenance`) as one string to print,
    :data:`NOT_RECORDED` if empty. KeyError naming a missing part; TypeError for a part not a dict.
    """
    if not provenance:
        return NOT_RECORDED
    theme = provenance["theme_judge"]
    options = provenance["options"]
    return "|".join(
        [
            f"content:{provenance['content_judge']['fingerprint']}",
            f"theme:{'none' if theme is None else theme['fingerprint']}",
            *(f"{name}:{options[name]}" for name in ("splitter", "include_other", "zero_division")),
            *(["leave_out_other:True"] if options.get("leave_out_other") else []),
            *(f"{name}:{v}" for name, v in provenance["versions"].items()),
        ]
    )


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 in [0, 1]; ``undefined`` names the ratios whose denominator
    was 0 (they took the ``zero_division`` value).
    """

    precision: float
    recall: float
    f1: float
    undefined: tuple[str, ...] = ()

    def as_tuple(self) -> tuple[float, float, float]:
        return self.precision, self.recall, self.f1

    def to_dict(self, prefix: str = "") -> dict[str, float]:
        return {
            f"{prefix}{name}": v for name, v in zip(("precision", "recall", "f1"), self.as_tuple())
        }


@dataclass(frozen=True)
class SentenceAlignment:
    """One ``reference`` sentence (offsets into the reply) and its content judgement:
    ``status`` ``"match"``, ``"no_match"`` or ``"unusable"`` (counted as an addition), the
    draft span ``match``, the judge's ``score`` where it has one (for the embedded judge's
    ``no_match``, the best probability among the spans it scored), a generative judge's raw
    ``judge_output``, and for a ``no_match`` the span a veto ruled out, if any.
    """

    reference: Sentence
    status: str
    match: Sentence | None
    score: float | None
    theme: str | None
    judge_output: str | None = None
    vetoed: VetoedSpan | None = None

    def to_dict(self) -> dict:
        return {
            "reference_sentence": self.reference.to_dict(),
            "status": self.status,
            "match": self.match.to_dict() if self.match else None,
            "score": self.score,
            "theme": self.theme,
            **({"judge_output": self.judge_output} if self.judge_output is not None else {}),
            **({"vetoed": self.vetoed.to_dict()} if self.vetoed is not None else {}),
        }


@dataclass(frozen=True)
class ThemeCounts:
    """The theme counts of one pair over the scored themes, made by
    :func:`editf1.count.count_themes` (which says what each counts).
    """

    reference_themes: frozenset[str]
    prediction_themes: frozenset[str]
    true_positives: int
    false_positives: int
    false_negatives: int
    reference_sentences: Mapping[str, int] = field(default_factory=dict, hash=False)
    matched_sentences: Mapping[str, int] = field(default_factory=dict, hash=False)

    def as_tuple(self) -> tuple[int, int, int]:
        return self.true_positives, self.false_positives, self.false_negatives


@dataclass(frozen=True)
class PairResult:
    """Scores and alignment of one (prediction, reference) pair: ``content`` (Algorithm 1),
    ``theme`` (§3.2; ``None`` without a theme judge). With several replies, the pair is the
    draft against its best-matching reply (highest content F1, then recall, then the
    earlier reply), ``best_reference`` its index, ``per_reference`` the result against each.
    """

    row: int
    id: str | None
    expected_matches: int
    expected_additions: int
    expected_deletions: int
    content: PRF
    alignment: tuple[SentenceAlignment, ...]
    expected_deletion_sentences: tuple[Sentence, ...]
    prediction_sentences: tuple[Sentence, ...]
    prediction_sentence_themes: tuple[str | None, ...]
    theme_counts: ThemeCounts | None
    theme: PRF | None
    unusable_judgements: int = 0
    unusable_theme_judgements: int = 0
    warnings: tuple[str, ...] = ()
    best_reference: int | None = None
    per_reference: tuple[PairResult, ...] = ()

    @property
    def content_counts(self) -> tuple[int, int, int]:
        """``(EM, ED, EA)``: the (tp, fp, fn) of content edit-F1."""
        return self.expected_matches, self.expected_deletions, self.expected_additions

    @property
    def reference_themes(self) -> frozenset[str]:
        return self.theme_counts.reference_themes if self.theme_counts else frozenset()

    @property
    def prediction_themes(self) -> frozenset[str]:
        return self.theme_counts.prediction_themes if self.theme_counts else frozenset()

    @property
    def mean(self) -> PRF | None:
        """Content scores, each the mean over the draft's replies; ``None`` with one reply."""
        return _mean_prf([p.content for p in self.per_reference]) if self.per_reference else None

    @property
    def theme_mean(self) -> PRF | None:
        """:attr:`mean` for theme scores; ``None`` with one reply or no themes."""
        themed = self.per_reference and self.theme is not None
        return _mean_prf([p.theme for p in self.per_reference]) if themed else None

    def to_dict(self) -> dict:
        """A JSON-ready dict: scores, counts, alignment, deletions, themes, and with several
        replies ``best_reference``, ``n_references``, ``mean_*`` and ``per_reference``.
        """
        out = {"row": self.row} | ({} if self.id is None else {"id": self.id})
        out |= self.content.to_dict() | _counts(self)
        if self.theme is not None:
            out |= self.theme.to_dict("theme_")
            out["reference_themes"] = sorted(self.reference_themes)
            out["prediction_themes"] = sorted(self.prediction_themes)
        out["unusable_judgements"] = self.unusable_judgements
        out["unusable_theme_judgements"] = self.unusable_theme_judgements
        out["alignment"] = [a.to_dict() for a in self.alignment]
        out["expected_deletion_sentences"] = [s.to_dict() for s in self.expected_deletion_sentences]
        out["prediction_sentences"] = [
            s.to_dict() | {"theme": t}
            for s, t in zip(self.prediction_sentences, self.prediction_sentence_themes)
        ]
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.per_reference:
            out["best_reference"] = self.best_reference
            out["n_references"] = len(self.per_reference)
            out |= self.mean.to_dict("mean_")
            if self.theme_mean is not None:
                out |= self.theme_mean.to_dict("mean_theme_")
            out["per_reference"] = [
                {"reference": k, **p.content.to_dict()}
                | _counts(p)
                | ({} if p.theme is None else p.theme.to_dict("theme_"))
                for k, p in enumerate(self.per_reference)
            ]
        return out


_COUNTS = ("expected_matches", "expected_additions", "expected_deletions")


def _counts(result) -> dict[str, int]:
    return {name: getattr(result, name) for name in _COUNTS}


def _mean_prf(prfs: list[PRF]) -> PRF:
    return PRF(*(sum(values) / len(prfs) for values in zip(*(p.as_tuple() for p in prfs))))


@dataclass(frozen=True)
class ThemeScore:
    """Corpus figures for one theme: scores of "draft has theme" predicting "reply has theme"
    (Table 15), the replies and drafts holding it and their share of the pairs (Table 5), and
    the share of its ``reference_sentences`` matched (``content_recall``, Table 14; 1.0 if none).
    """

    precision: float
    recall: float
    f1: float
    reference_count: int
    prediction_count: int
    reference_proportion: float
    prediction_proportion: float
    reference_sentences: int
    content_recall: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class CorpusResult:
    """Micro-averaged corpus scores: ``content`` (from the summed EM, EA, ED) and ``theme``
    (over (pair, theme) decisions, or ``None``), the run record ``provenance`` (``{}`` when
    unknown), ``pairs`` unless streamed elsewhere, ``all_references`` (every (draft, reply)
    pair, where drafts had several replies) and, scored with gold labels, the
    :class:`editf1.gold.report.GoldReport` (``gold``).
    """

    n_pairs: int
    content: PRF
    expected_matches: int
    expected_additions: int
    expected_deletions: int
    theme: PRF | None
    per_theme: dict[str, ThemeScore]
    unusable_judgements: int
    unusable_theme_judgements: int
    themes_scored: tuple[str, ...]
    provenance: dict = field(repr=False)
    pairs: list[PairResult] | None = field(default=None, repr=False)
    all_references: CorpusResult | None = None
    empty_predictions: int = 0
    gold: object | None = None

    @property
    def reproducibility(self) -> str:
        return reproducibility_of(self.provenance)

    @property
    def precision(self) -> float:
        return self.content.precision

    @property
    def recall(self) -> float:
        return self.content.recall

    @property
    def f1(self) -> float:
        return self.content.f1

    def summary(self) -> dict:
        """The corpus figures as a JSON-ready dict, without the pairs."""
        out = self.content.to_dict() | _counts(self)
        out |= {"n_pairs": self.n_pairs, "unusable_judgements": self.unusable_judgements}
        if self.theme is not None:
            out |= self.theme.to_dict("theme_")
            out["unusable_theme_judgements"] = self.unusable_theme_judgements
            out["themes_scored"] = list(self.themes_scored)
            out["per_theme"] = {t: s.to_dict() for t, s in self.per_theme.items()}
        out["reproducibility"] = self.reproducibility
        if self.provenance:
            out["run"] = self.provenance
        if self.all_references is not None:
            out["all_references"] = self.all_references.summary()
        if self.gold is not None:
            out["gold"] = self.gold.to_dict()
        return out

    def to_dict(self) -> dict:
        """:meth:`summary` plus ``per_pair``."""
        out = self.summary()
        if self.pairs is not None:
            out["per_pair"] = [p.to_dict() for p in self.pairs]
        return out
