"""The embedded default judges: offline, CPU, nothing downloaded (``docs/judges.md``).

:class:`EmbeddingContentJudge` (:mod:`.content`, features in :mod:`.content_features`) and
:class:`EmbeddingThemeJudge` (:mod:`.theme`, :mod:`.theme_features`) share one
:class:`~editf1.judges.encoder.SentenceEncoder`; :mod:`.config` holds their settings
(one dataclass each, the parameter file) and the shipped files.
"""

from editf1.judges.embedding.config import (
    CONTENT_FEATURES,
    DEFAULT_CONTENT_PARAMS,
    DEFAULT_SPAN_MARGIN,
    DEFAULT_THEME_PARAMS,
    EmbeddingContentConfig,
    EmbeddingThemeConfig,
    load_params,
)
from editf1.judges.embedding.content import EmbeddingContentJudge, SpanScores
from editf1.judges.embedding.content_features import word_recall
from editf1.judges.embedding.theme import EmbeddingThemeJudge
from editf1.judges.embedding.theme_features import (
    THEME_SENTENCE_FEATURES,
    theme_sentence_features,
    theme_word_vectorizer,
)

__all__ = [
    "CONTENT_FEATURES", "DEFAULT_CONTENT_PARAMS", "DEFAULT_SPAN_MARGIN", "DEFAULT_THEME_PARAMS",
    "THEME_SENTENCE_FEATURES", "EmbeddingContentConfig", "EmbeddingContentJudge",
    "EmbeddingThemeConfig", "EmbeddingThemeJudge", "SpanScores", "load_params",
    "theme_sentence_features", "theme_word_vectorizer", "word_recall",
]  # fmt: skip
