"""What a score comes with: per-pair alignments and the corpus summary.

Every number carries its reasons: for each reference sentence, the draft span that
matched it (with character offsets) or NO MATCH, the draft sentences left over as
expected deletions, and every sentence's theme.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from editf1.aggregate import PRF
from editf1.segment import Sentence

__all__ = ["CorpusResult", "PairResult", "SentenceAlignment", "ThemeScore"]


@dataclass(frozen=True)
class SentenceAlignment:
    """One reference sentence and what the content judge matched it to.

    Attributes:
        reference: the reference sentence, offsets into the reference.
        status: ``"match"``, ``"no_match"`` or ``"unusable"`` (the judge's output could
            not be used; counted as an expected addition and reported).
        match: the matched draft span, offsets into the draft; ``None`` unless matched.
        score: the judge's similarity or confidence, where it has one. For a
            ``no_match`` of the embedded judge it is the best probability among the
            spans it scored (see ``span_margin`` of
            :class:`~editf1.judges.embedding.EmbeddingContentJudge`).
        theme: the sentence's theme, or ``None`` without a theme judge.
        judge_output: a generative judge's raw output, where there is one.
    """

    reference: Sentence
    status: str
    match: Sentence | None
    score: float | None
    theme: str | None
    judge_output: str | None = None

    def to_dict(self) -> dict:
        return {
            "reference_sentence": self.reference.to_dict(),
            "status": self.status,
            "match": self.match.to_dict() if self.match else None,
            "score": self.score,
            "theme": self.theme,
            **({"judge_output": self.judge_output} if self.judge_output is not None else {}),
        }


@dataclass(frozen=True)
class PairResult:
    """Scores and alignment of one (prediction, reference) pair.

    ``content`` is precision EM/(EM+ED), recall EM/(EM+EA) and F1 (Algorithm 1 of
    Seegmiller et al.). ``theme`` compares the set of themes in the draft with the set
    in the reply (§3.2); it is ``None`` without a theme judge.
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
    reference_themes: frozenset[str]
    prediction_themes: frozenset[str]
    theme: PRF | None
    unusable_judgements: int = 0
    unusable_theme_judgements: int = 0
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """A JSON-ready dict: scores, counts, alignment, deletions and themes."""
        out = {"row": self.row}
        if self.id is not None:
            out["id"] = self.id
        out |= self.content.to_dict()
        out |= {
            "expected_matches": self.expected_matches,
            "expected_additions": self.expected_additions,
            "expected_deletions": self.expected_deletions,
        }
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
        return out


@dataclass(frozen=True)
class ThemeScore:
    """Corpus figures for one theme.

    Attributes:
        precision, recall, f1: over pairs, "draft has theme" predicting "reply has
            theme" (Table 15).
        reference_count, prediction_count: replies / drafts containing the theme.
        reference_proportion, prediction_proportion: those counts over the number of
            pairs, fractions in [0, 1] (Table 5).
        reference_sentences: reference sentences with this theme.
        content_recall: matched reference sentences of this theme over
            ``reference_sentences`` (Table 14); 1.0 when there are none.
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
    """Micro-averaged corpus scores, per-theme figures and, optionally, every pair.

    Attributes:
        n_pairs: pairs scored.
        content: micro precision/recall/F1 from summed EM, EA, ED.
        expected_matches, expected_additions, expected_deletions: the summed counts.
        theme: micro theme precision/recall/F1 over (pair, theme) decisions, or
            ``None`` without a theme judge.
        per_theme: :class:`ThemeScore` per scored theme (empty without a theme judge).
        unusable_judgements, unusable_theme_judgements: judge outputs that could not be
            used, summed over pairs.
        themes_scored: the themes the theme scores cover (8, or 9 with Other).
        reproducibility: names the judges, splitter and library versions.
        pairs: every :class:`PairResult`, unless scoring streamed them elsewhere.
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
    reproducibility: str
    pairs: list[PairResult] | None = field(default=None, repr=False)

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
        out = self.content.to_dict() | {
            "expected_matches": self.expected_matches,
            "expected_additions": self.expected_additions,
            "expected_deletions": self.expected_deletions,
            "n_pairs": self.n_pairs,
            "unusable_judgements": self.unusable_judgements,
        }
        if self.theme is not None:
            out |= self.theme.to_dict("theme_")
            out["unusable_theme_judgements"] = self.unusable_theme_judgements
            out["themes_scored"] = list(self.themes_scored)
            out["per_theme"] = {t: s.to_dict() for t, s in self.per_theme.items()}
        out["reproducibility"] = self.reproducibility
        return out

    def to_dict(self) -> dict:
        """:meth:`summary` plus ``per_pair``, one :meth:`PairResult.to_dict` per pair."""
        out = self.summary()
        if self.pairs is not None:
            out["per_pair"] = [p.to_dict() for p in self.pairs]
        return out
