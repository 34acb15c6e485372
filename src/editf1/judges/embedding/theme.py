"""The embedded theme judge: a logistic regression over sentence embeddings, sentence features
and word n-grams."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import regex

from editf1.judges.base import ThemeJudge, ThemeJudgement
from editf1.judges.embedding.config import (
    DEFAULT_THEME_PARAMS,
    THEME_SENTENCE_FEATURES,
    EmbeddingThemeConfig,
    digest,
    read_config,
)
from editf1.judges.encoder import SentenceEncoder, default_encoder

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import CountVectorizer

__all__ = ["EmbeddingThemeJudge", "theme_sentence_features", "theme_word_vectorizer"]

_LEADING_IF = regex.compile(r"[\W\d_]*(?:if|unless)\b", regex.IGNORECASE)


def theme_sentence_features(sentences: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """0/1 features, float32 (len(sentences), len(names)): ``question_mark`` (ends with "?"),
    ``leading_if`` (first word "if" or "unless", after punctuation or a list marker).

    Raises:
        ValueError: for a name not in :data:`THEME_SENTENCE_FEATURES`.

    >>> theme_sentence_features(["2. If it worsens, call us.", "Any fever?", "Call if so."],
    ...                         ["question_mark", "leading_if"]).tolist()
    [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    """
    unknown = sorted(set(names) - set(THEME_SENTENCE_FEATURES))
    if unknown:
        raise ValueError(
            f"unknown theme sentence features {unknown}; known: {list(THEME_SENTENCE_FEATURES)}"
        )
    tests = {
        "question_mark": lambda s: s.rstrip().endswith("?"),
        "leading_if": lambda s: _LEADING_IF.match(s) is not None,
    }
    return np.array(
        [[tests[name](s) for name in names] for s in sentences], dtype=np.float32
    ).reshape(len(sentences), len(names))


def theme_word_vectorizer(
    ngram_range: tuple[int, int] = (1, 2), vocabulary: Sequence[str] | None = None, min_df: int = 1
) -> CountVectorizer:
    """0/1 indicators of case-folded word n-grams (fitted by the trainer, rebuilt by the judge
    from the stored vocabulary)."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(
        binary=True,
        ngram_range=tuple(ngram_range),
        vocabulary=None if vocabulary is None else list(vocabulary),
        min_df=min_df,
        dtype=np.float32,
    )


class EmbeddingThemeJudge(ThemeJudge):
    """Theme classifier: the most probable label of softmax(``x @ coef.T + intercept``)
    (:class:`EmbeddingThemeConfig`); options as
    :class:`~editf1.judges.embedding.content.EmbeddingContentJudge`'s, default
    :data:`DEFAULT_THEME_PARAMS`.

    Raises:
        ValueError: from the config's checks; weights that do not fit the encoder and
            features; both ``config`` and ``params_file``.
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
        vocabulary = words["vocabulary"] if words else []
        self._words = theme_word_vectorizer(words["ngram_range"], vocabulary) if words else None
        width = self.encoder.dimension + len(self.sentence_features) + len(vocabulary)
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
        from scipy.special import softmax

        return softmax(self.features(sentences) @ self.coef.T + self.intercept, axis=1)

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        probs = self.probabilities(sentences)
        best = probs.argmax(axis=1)
        return [ThemeJudgement(self.labels[k], float(probs[i, k])) for i, k in enumerate(best)]
