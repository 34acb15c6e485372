"""The embedded default judges: offline, CPU, nothing downloaded.

* :class:`EmbeddingContentJudge` matches each reference sentence to the draft sentence,
  or run of up to ``window`` adjacent draft sentences, that a small logistic regression
  over two features (cosine similarity of all-MiniLM-L6-v2 embeddings, and the share of
  the sentence's words found in the span) finds most probable, and calls it a match
  when that probability reaches ``threshold``; a span contradicting one of the
  sentence's quantities, frequencies, directions or drugs, or flipping one of its
  negations or conditions, is never the match (the veto). The weights are fitted on
  physicians' labels (K-QA, see :mod:`editf1.training.classifiers`), not guessed; the
  default ships in ``data/content_judge_veto_nc.json`` with the agreement it reached
  on held-out questions.
* :class:`EmbeddingThemeJudge` is a multinomial logistic regression over the same
  embeddings, two sentence features and word n-grams, fitted on the team's labels of
  real clinical sentences and the sentences this package ships
  (``data/theme_judge_v2.json``; ``benchmarks/theme_judge_real.py``).

Both share one :class:`~editf1.judges.encoder.SentenceEncoder`, so a sentence is encoded
once for both judges and once across systems scored against the same references.

* :mod:`.content`: :class:`EmbeddingContentJudge` (and :class:`SpanScores`);
  :mod:`.content_features`: its features (word recall).
* :mod:`.theme`: :class:`EmbeddingThemeJudge`; :mod:`.theme_features`: its sentence and
  word n-gram features.
* :mod:`.config`: what both are built from: their settings
  (:class:`EmbeddingContentConfig`, :class:`EmbeddingThemeConfig`, each the dataclass of
  a parameter file), the shipped files, the digest of their weights in a fingerprint.

The candidate spans the content judge chooses among are :mod:`editf1.judges.spans`
(shared with the LLM and server judges).
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
