"""The content judge's text feature (:func:`word_recall`); the cosine is the judge's own."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import regex

from editf1.judges.embedding.config import CONTENT_FEATURES

__all__ = ["CONTENT_FEATURES", "word_recall"]


_WORDS = regex.compile(r"[\p{L}\p{N}][\p{L}\p{M}\p{N}]*")


def word_recall(references: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """Share of each reference's distinct case-folded words (a letter or digit, then letters,
    digits and combining marks) found in each candidate: (R, C) floats in [0, 1].

    >>> word_recall(["Take two tablets"], ["take 2 tablets", "rest"]).round(3).tolist()
    [[0.667, 0.0]]
    """
    if not references or not candidates:
        return np.zeros((len(references), len(candidates)))
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(binary=True, tokenizer=_WORDS.findall, token_pattern=None)
    vectorizer.fit([*references, *candidates])
    refs = vectorizer.transform(references)
    overlap = (refs @ vectorizer.transform(candidates).T).toarray()
    sizes = np.maximum(refs.sum(axis=1).A.ravel(), 1)
    return overlap / sizes[:, None]
