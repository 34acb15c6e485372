"""The embedded default judges, content and theme: offline, CPU, nothing downloaded
(``docs/judges.md``)."""

from editf1.judges.embedding.config import (
    CONTENT_FEATURES,
    DEFAULT_CONTENT_PARAMS,
    DEFAULT_SPAN_MARGIN,
    DEFAULT_THEME_PARAMS,
    EmbeddingContentConfig,
    EmbeddingThemeConfig,
    load_params,
)
from editf1.judges.embedding.content import EmbeddingContentJudge, SpanScores, word_recall
from editf1.judges.embedding.theme import (
    THEME_SENTENCE_FEATURES,
    EmbeddingThemeJudge,
    theme_sentence_features,
    theme_word_vectorizer,
)

__all__ = [
    "CONTENT_FEATURES",
    "DEFAULT_CONTENT_PARAMS",
    "DEFAULT_SPAN_MARGIN",
    "DEFAULT_THEME_PARAMS",
    "THEME_SENTENCE_FEATURES",
    "EmbeddingContentConfig",
    "EmbeddingContentJudge",
    "EmbeddingThemeConfig",
    "EmbeddingThemeJudge",
    "SpanScores",
    "load_params",
    "theme_sentence_features",
    "theme_word_vectorizer",
    "word_recall",
]
