"""The theme judge's features besides the embedding: sentence features and word n-grams."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import regex

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import CountVectorizer

__all__ = ["THEME_SENTENCE_FEATURES", "theme_sentence_features", "theme_word_vectorizer"]

#: Sentence features the theme judge can add to the embedding.
THEME_SENTENCE_FEATURES = ("question_mark", "leading_if")

# "If ...", "Unless ...", also after a list marker or quote ("2. If", "- If")
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
    """0/1 indicators of case-folded word n-grams: fitted by the trainer, rebuilt by the judge
    from the stored vocabulary.

    >>> vectorizer = theme_word_vectorizer(vocabulary=["call", "call us", "fever"])
    >>> vectorizer.transform(["Call us if the fever is back."]).toarray().tolist()
    [[1.0, 1.0, 1.0]]
    """
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(
        binary=True,
        ngram_range=tuple(ngram_range),
        vocabulary=None if vocabulary is None else list(vocabulary),
        min_df=min_df,
        dtype=np.float32,
    )
