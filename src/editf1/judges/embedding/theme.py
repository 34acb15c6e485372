"""The embedded theme judge: a logistic regression over sentence embeddings and features."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from editf1.judges.base import ThemeJudge, ThemeJudgement
from editf1.judges.embedding.config import (
    DEFAULT_THEME_PARAMS,
    EmbeddingThemeConfig,
    digest,
    read_config,
)
from editf1.judges.embedding.theme_features import theme_sentence_features, theme_word_vectorizer
from editf1.judges.encoder import SentenceEncoder, default_encoder

__all__ = ["DEFAULT_THEME_PARAMS", "EmbeddingThemeJudge"]


class EmbeddingThemeJudge(ThemeJudge):
    """Theme classifier: the most probable label of softmax(``x @ coef.T + intercept``)
    (:class:`EmbeddingThemeConfig`).

    Args:
        params_file: a shipped parameter file or a JSON path; default
            :data:`DEFAULT_THEME_PARAMS`.
        config: the settings instead of a file.
        encoder: default :func:`~editf1.judges.encoder.default_encoder`.
        **overrides: fields of :class:`EmbeddingThemeConfig` to replace.

    Raises:
        ValueError: from the config's checks; if the weights do not fit the encoder and
            features; if both ``config`` and ``params_file`` are given.
        FileNotFoundError: if ``params_file`` is neither shipped nor a file.
    """

    def __init__(
        self,
        params_file: str | None = None,
        config: EmbeddingThemeConfig | None = None,
        *,
        encoder: SentenceEncoder | None = None,
        **overrides,
    ):
        self.config = c = read_config(
            EmbeddingThemeConfig, params_file, config, DEFAULT_THEME_PARAMS, overrides
        )
        self.labels = list(c.labels)
        self.coef = np.asarray(c.coef, dtype=np.float32)
        self.intercept = np.asarray(c.intercept, dtype=np.float32)
        self.encoder = default_encoder() if encoder is None else encoder
        self.sentence_features = tuple(c.features.get("sentence", ()))
        words = c.features.get("words")
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
        payload = [
            self.labels,
            *(np.asarray(v, dtype=float).tolist() for v in (c.coef, c.intercept)),
        ]
        self._digest = digest([*payload, c.features] if c.features else payload)

    @property
    def fingerprint(self) -> str:
        return f"embedding-theme({self.encoder.name},logreg:{self._digest})"

    def features(self, sentences: Sequence[str]) -> np.ndarray:
        """The classifier's input ``x``: float32, (len(sentences), D)."""
        parts = [
            self.encoder.encode(sentences),
            theme_sentence_features(sentences, self.sentence_features),
        ]
        if self._words is not None:
            parts.append(self._words.transform(sentences).toarray())
        return np.hstack(parts)

    def probabilities(self, sentences: Sequence[str]) -> np.ndarray:
        """Theme probabilities, (len(sentences), len(labels)), rows summing to 1."""
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
