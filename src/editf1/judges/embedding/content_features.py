"""The content judge's features of a reference sentence against candidate spans.

Each is an (R, C) array for R reference sentences and C candidate spans
(:func:`editf1.judges.spans.candidate_spans`): word recall, BERTScore's idf-weighted
token alignment (:class:`TokenIdf`, :func:`token_alignment`) and the clinical key-term
features (:func:`key_term_features`, from :mod:`editf1.judges.key_terms`). The cosine
of the sentence embeddings, the remaining feature, is computed by the judge
(:class:`~editf1.judges.embedding.content.EmbeddingContentJudge`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import regex
from sklearn.feature_extraction.text import CountVectorizer

from editf1.judges.encoder import TokenEmbeddings
from editf1.judges.key_terms import Comparison
from editf1.judges.spans import span_ranges

__all__ = [
    "CONTENT_FEATURES",
    "KEY_TERM_FEATURES",
    "LEGACY_FEATURES",
    "TOKEN_FEATURES",
    "TokenIdf",
    "key_term_features",
    "token_alignment",
    "word_recall",
]

#: Features the content judge can use (:class:`EmbeddingContentJudge`).
TOKEN_FEATURES = ("token_recall", "token_precision")
KEY_TERM_FEATURES = (
    "key_term_recall",
    "key_term_conflict",
    "negation_mismatch",
    "conditional_omitted",
    "question_mismatch",
)
CONTENT_FEATURES = ("cosine", "word_recall", *TOKEN_FEATURES, *KEY_TERM_FEATURES)

#: The features of parameter files without a ``features`` list (``content_judge.json``).
LEGACY_FEATURES = ("cosine", "word_recall")


_WORDS = regex.compile(r"[\p{L}\p{N}][\p{L}\p{M}\p{N}]*")


def word_recall(references: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """Share of each reference's distinct (case-folded) words that occur in each candidate.

    A word is a letter or digit followed by letters, digits and combining marks, so
    words of scripts with vowel signs (Devanagari "दवा") stay whole.

    Returns:
        float array of shape (len(references), len(candidates)), values in [0, 1].

    >>> word_recall(["Take two tablets"], ["take 2 tablets", "rest"]).round(3).tolist()
    [[0.667, 0.0]]
    """
    if not references or not candidates:
        return np.zeros((len(references), len(candidates)))
    vectorizer = CountVectorizer(binary=True, tokenizer=_WORDS.findall, token_pattern=None)
    vectorizer.fit([*references, *candidates])
    refs = vectorizer.transform(references)
    overlap = (refs @ vectorizer.transform(candidates).T).toarray()
    sizes = np.maximum(refs.sum(axis=1).A.ravel(), 1)
    return overlap / sizes[:, None]


@dataclass(frozen=True)
class TokenIdf:
    """Inverse document frequency of token ids, as BERTScore weights tokens (Zhang et
    al. 2020, §3 "Importance weighting"): ``idf(t) = ln((M + 1) / (df(t) + 1))`` for a
    token found in ``df(t)`` of M documents, ``ln(M + 1)`` for a token never seen.

    Attributes:
        documents: M, the number of documents it was fitted on.
        weights: token id -> idf, for the tokens seen.

    >>> idf = TokenIdf.fit([[1, 2], [2, 2], [3]])
    >>> idf(np.array([2, 1, 9])).round(4).tolist()  # ln(4/3), ln(4/2), ln(4/1)
    [0.2877, 0.6931, 1.3863]
    """

    documents: int
    weights: dict[int, float]

    @classmethod
    def fit(cls, documents: Sequence[Sequence[int]]) -> TokenIdf:
        """Fit on M documents, each a sequence of token ids (repeats count once)."""
        counts: dict[int, int] = {}
        for document in documents:
            for token in set(int(t) for t in document):
                counts[token] = counts.get(token, 0) + 1
        m = len(documents)
        return cls(m, {t: math.log((m + 1) / (c + 1)) for t, c in sorted(counts.items())})

    @classmethod
    def from_params(cls, params: dict) -> TokenIdf:
        """From ``{"documents": M, "token_ids": {"<id>": idf, ...}}`` (:meth:`to_params`)."""
        return cls(
            int(params["documents"]), {int(t): float(v) for t, v in params["token_ids"].items()}
        )

    def to_params(self) -> dict:
        """The JSON form :meth:`from_params` reads (idf rounded to 6 decimals)."""
        return {
            "documents": self.documents,
            "token_ids": {str(t): round(v, 6) for t, v in self.weights.items()},
        }

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """(T,) float64 weights of (T,) token ids."""
        unseen = math.log(self.documents + 1)
        return np.array([self.weights.get(int(t), unseen) for t in ids], dtype=float)


def token_alignment(
    references: Sequence[TokenEmbeddings],
    sentences: Sequence[TokenEmbeddings],
    window: int,
    idf: TokenIdf,
) -> tuple[np.ndarray, np.ndarray]:
    """IDF-weighted greedy token alignment of reference sentences with candidate spans
    (BERTScore recall and precision, Zhang et al. 2020, §3, Eq. 1 with idf weights).

    Each reference token is matched to its most similar token of the span (cosine of
    contextual token embeddings); recall is the idf-weighted mean of those similarities
    over the reference's tokens, precision the same from the span's tokens to the
    reference's. A run of sentences is aligned through its sentences' tokens (each
    embedded in its own sentence), so no run needs a forward pass of its own.

    Args:
        references: R reference sentences' token embeddings.
        sentences: n draft sentences' token embeddings, in draft order.
        window: longest run of adjacent sentences (the spans are those of
            :func:`candidate_spans`, C of them).
        idf: the token weights.

    Returns:
        ``(recall, precision)``, float arrays of shape (R, C), values in [-1, 1]; 0.0
        where the reference or the span has no token.
    """
    ranges = span_ranges(len(sentences), window)
    recall = np.zeros((len(references), len(ranges)))
    precision = np.zeros((len(references), len(ranges)))
    if not references or not ranges:
        return recall, precision
    dimension = references[0].vectors.shape[1]
    ref_vectors = np.concatenate([r.vectors for r in references]).reshape(-1, dimension)
    sent_vectors = np.concatenate([s.vectors for s in sentences]).reshape(-1, dimension)
    similarity = ref_vectors @ sent_vectors.T  # (reference tokens, draft tokens)
    ref_ends = np.cumsum([len(r.ids) for r in references])
    sent_ends = np.cumsum([len(s.ids) for s in sentences])
    ref_parts = list(zip(ref_ends - [len(r.ids) for r in references], ref_ends))
    sent_parts = list(zip(sent_ends - [len(s.ids) for s in sentences], sent_ends))
    # best[t, s]: reference token t's best cosine within sentence s (-inf: no token)
    best = np.full((len(ref_vectors), len(sentences)), -np.inf)
    for s, (a, b) in enumerate(sent_parts):
        if b > a:
            best[:, s] = similarity[:, a:b].max(axis=1)
    ref_idf = [idf(r.ids) for r in references]
    # numerator[r, s]: idf-weighted sum over sentence s's tokens of their best cosine in r
    numerator = np.zeros((len(references), len(sentences)))
    mass = np.array([idf(s.ids).sum() for s in sentences])
    for s, (a, b) in enumerate(sent_parts):
        weights = idf(sentences[s].ids)
        for r, (c, d) in enumerate(ref_parts):
            if b > a and d > c:
                numerator[r, s] = weights @ similarity[c:d, a:b].max(axis=0)
    for k, (i, j) in enumerate(ranges):
        span_best = best[:, i : j + 1].max(axis=1)
        for r, (c, d) in enumerate(ref_parts):
            total = ref_idf[r].sum()
            if d > c and np.isfinite(span_best[c:d]).all() and total > 0:
                recall[r, k] = ref_idf[r] @ span_best[c:d] / total
        span_mass = mass[i : j + 1].sum()
        if span_mass > 0:
            precision[:, k] = numerator[:, i : j + 1].sum(axis=1) / span_mass
    return recall, precision


def key_term_features(comparisons: Sequence[Sequence[Comparison]], spans: int) -> dict:
    """The key-term features of R x C :class:`~editf1.judges.key_terms.Comparison` objects.

    Returns:
        ``{"key_term_recall", "key_term_conflict", "negation_mismatch",
        "conditional_omitted", "question_mismatch"}``, each a float array of shape
        (R, C) (``C = spans``): the share of the reference's key terms the span keeps,
        and 1.0 / 0.0 for a conflict of any kind, a negation in exactly one of the two,
        a conditional reference sentence against an unconditional span, and a question
        in exactly one of the two.
    """

    def grid(value) -> np.ndarray:
        return np.array(
            [[float(value(c)) for c in row] for row in comparisons], dtype=float
        ).reshape(len(comparisons), spans)

    return {
        "key_term_recall": grid(lambda c: c.key_term_recall),
        "key_term_conflict": grid(lambda c: bool(c.conflicts)),
        "negation_mismatch": grid(lambda c: c.negation_mismatch),
        "conditional_omitted": grid(lambda c: c.conditional_omitted),
        "question_mismatch": grid(lambda c: c.question_mismatch),
    }
