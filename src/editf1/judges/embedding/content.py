"""The embedded content judge: a small classifier over embedding similarity and word
overlap (:func:`word_recall`), with a veto on spans that contradict the reference's
clinical key terms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import regex

from editf1.judges.base import ContentJudge, ContentJudgement, JudgeRequest
from editf1.judges.embedding.config import (
    DEFAULT_CONTENT_PARAMS,
    EmbeddingContentConfig,
    digest,
    read_config,
)
from editf1.judges.encoder import SentenceEncoder, default_encoder
from editf1.judges.key_terms import RULES_VERSION
from editf1.judges.spans import candidate_spans, span_ranges
from editf1.judges.veto import decide, vetoed
from editf1.segment import NON_LATIN_LIMIT, Sentence, non_latin_share

__all__ = ["EmbeddingContentJudge", "SpanScores", "word_recall"]

#: float32 rounding of a cosine
_COSINE_ROUNDING = 1e-6


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


@dataclass(frozen=True)
class SpanScores:
    """The C candidate spans of one pair (every draft sentence, then the runs scored) and
    (R, C) arrays against its R reference sentences: the ``features`` by name,
    ``probability`` (0.0 where ``vetoed`` or ``run_ruled_out`` by the run rule).
    """

    spans: list[Sentence]
    cosine: np.ndarray
    word_recall: np.ndarray
    probability: np.ndarray
    features: dict[str, np.ndarray]
    vetoed: np.ndarray
    run_ruled_out: np.ndarray


def _split(vectors: np.ndarray, groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
    ends = np.cumsum([len(g) for g in groups])
    return np.split(vectors, ends[:-1]) if len(groups) else []


class EmbeddingContentJudge(ContentJudge):
    """Content judge: a logistic regression over the cosine of all-MiniLM-L6-v2 embeddings
    and the word recall of each reference sentence and candidate span, fitted on physicians'
    labels (:func:`editf1.training.classifiers.calibrate_content_judge`); decided by
    :func:`editf1.judges.veto.decide`. The *bounded search* encodes a run only if it could
    win with a cosine at most its best sentence's plus ``span_margin`` (``None``: every run).

    Args:
        params_file: a shipped parameter file or a JSON path; default
            :data:`DEFAULT_CONTENT_PARAMS`.
        config: the settings instead of a file.
        encoder: default :func:`~editf1.judges.encoder.default_encoder`.
        **overrides: fields of :class:`EmbeddingContentConfig` to replace.

    Raises:
        ValueError: both ``config`` and ``params_file``, an unknown override, a bad setting.
        FileNotFoundError: if ``params_file`` is neither shipped nor a file.
    """

    def __init__(
        self,
        params_file: str | None = None,
        config: EmbeddingContentConfig | None = None,
        *,
        encoder: SentenceEncoder | None = None,
        **overrides,
    ) -> None:
        self.config = read_config(
            EmbeddingContentConfig, params_file, config, DEFAULT_CONTENT_PARAMS, overrides
        )
        c = self.config
        self.features, self.bias, self.veto = c.features, c.bias, c.veto
        self.weights = np.array([c.weights[f] for f in c.features], dtype=float)
        self.threshold, self.window, self.run_floor = c.threshold, c.window, c.run_floor
        self.span_margin, self.span_embedding = c.span_margin, c.span_embedding
        self.encoder = default_encoder() if encoder is None else encoder
        # the fifth item, always None, keeps the digests of existing parameter files
        self._digest = digest([self.features, self.weights.tolist(), self.bias, self.veto, None])

    @property
    def fingerprint(self) -> str:
        margin = "" if self.span_margin is None else f",span_margin={self.span_margin}"
        composed = ",span_embedding=composed" if self.span_embedding == "composed" else ""
        rules = f",rules={RULES_VERSION}" if self.veto else ""
        floor = f",run_floor={self.run_floor}" if self.run_floor else ""
        return (
            f"embedding-content({self.encoder.name},logreg:{self._digest},"
            f"threshold={self.threshold},window={self.window}{margin}{composed}{rules}"
            f"{floor})"
        )

    def _logit(self, terms: dict[str, np.ndarray]) -> np.ndarray:
        """bias + the weighted feature ``terms``, added in feature order."""
        return sum((terms[name] for name in self.features[1:]), terms[self.features[0]]) + self.bias

    def _probability(self, features: dict[str, np.ndarray], vetoed: np.ndarray) -> np.ndarray:
        terms = {name: w * features[name] for name, w in zip(self.features, self.weights)}
        return np.where(vetoed, 0.0, 1 / (1 + np.exp(-self._logit(terms))))

    def _could_match(self, single_cosine, single_probability, run_features, run_vetoed, runs):
        """Which runs ((first, last) indices) could become the match under the cosine bound."""
        best = np.stack([single_cosine[:, i : j + 1].max(axis=1) for i, j in runs], axis=1)
        bound = np.minimum(best + self.span_margin, 1.0 + _COSINE_ROUNDING)
        terms = {
            name: w * run_features[name]
            for name, w in zip(self.features, self.weights)
            if name != "cosine"
        }
        w = self.weights[self.features.index("cosine")] if "cosine" in self.features else 0.0
        terms["cosine"] = np.maximum(w * bound, -w)
        upper = np.where(run_vetoed, 0.0, 1 / (1 + np.exp(-self._logit(terms))))
        beats = upper > single_probability.max(axis=1, keepdims=True)
        return ((upper >= self.threshold) & beats).any(axis=0)

    def span_scores(
        self, requests: Sequence[JudgeRequest], *, every_span: bool = False
    ) -> list[SpanScores]:
        """One :class:`SpanScores` per request (``every_span``: every run, for calibration)."""
        references = [[s.text for s in r.reference_sentences] for r in requests]
        sentences = [[s.text for s in r.prediction_sentences] for r in requests]
        vectors = _split(
            self.encoder.encode(list(chain.from_iterable(references + sentences))),
            references + sentences,
        )
        prepared, run_texts, run_sentences = [], [], []
        for k, request in enumerate(requests):
            refs, ref_vectors = references[k], vectors[k]
            n = len(request.prediction_sentences)
            spans = candidate_spans(request.prediction, request.prediction_sentences, self.window)
            ranges = np.array(span_ranges(n, self.window)[n:], dtype=int).reshape(-1, 2)
            texts = [s.text for s in spans]
            features = {"word_recall": word_recall(refs, texts)}
            banned = vetoed(refs, texts, self.veto)
            cosine = ref_vectors @ vectors[len(requests) + k].T
            singles = {name: f[:, :n] for name, f in features.items()} | {"cosine": cosine}
            ruled = np.zeros_like(banned)
            if self.run_floor and len(ranges):  # each sentence of a run alone: the floor
                free = self._probability(singles, np.zeros_like(banned[:, :n]))
                below = np.stack([free[:, i : j + 1].min(axis=1) for i, j in ranges], axis=1)
                ruled[:, n:] = below < self.run_floor
            keep = np.ones(len(ranges), dtype=bool)
            if len(ranges) and self.span_margin is not None and not every_span:
                probability = self._probability(singles, banned[:, :n])
                run_features = {name: f[:, n:] for name, f in features.items()}
                out_of_reach = banned[:, n:] | ruled[:, n:]
                keep = self._could_match(cosine, probability, run_features, out_of_reach, ranges)
            kept = np.flatnonzero(keep)
            runs = [spans[n + i] for i in kept]
            run_texts.append([s.text for s in runs])
            run_sentences.append([sentences[k][first : last + 1] for first, last in ranges[kept]])
            columns = np.concatenate([np.arange(n), n + kept]).astype(int)
            features = {name: f[:, columns] for name, f in features.items()}
            prepared.append(
                (
                    spans[:n] + runs,
                    cosine,
                    features,
                    banned[:, columns],
                    ruled[:, columns],
                    ref_vectors,
                )
            )
        if self.span_embedding == "composed":
            flat = self.encoder.compose(list(chain.from_iterable(run_sentences)))
        else:
            flat = self.encoder.encode(list(chain.from_iterable(run_texts)))
        run_vectors = _split(flat, run_texts)
        out = []
        for (spans, cosine, features, banned, ruled, ref_vectors), runs in zip(
            prepared, run_vectors
        ):
            features["cosine"] = np.concatenate([cosine, ref_vectors @ runs.T], axis=1)
            out.append(
                SpanScores(
                    spans,
                    features["cosine"],
                    features["word_recall"],
                    self._probability(features, banned | ruled),
                    features,
                    banned,
                    ruled,
                )
            )
        return out

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        """:func:`~editf1.judges.veto.decide` for each reference sentence; a span sharing no
        word with it is ruled out when either is mostly outside Latin script
        (:data:`editf1.segment.NON_LATIN_LIMIT`): the encoder's cosine is no evidence there.
        """
        results = []
        for request, scores in zip(requests, self.span_scores(requests)):
            judgements = []
            foreign = np.array([non_latin_share(s.text) > NON_LATIN_LIMIT for s in scores.spans])
            unvetoed = (
                self._probability(scores.features, scores.run_ruled_out)
                if scores.vetoed.any()
                else scores.probability
            )
            for sentence, row, free, recall in zip(
                request.reference_sentences, scores.probability, unvetoed, scores.word_recall
            ):
                if non_latin_share(sentence.text) > NON_LATIN_LIMIT:
                    row, free = (np.where(recall == 0, 0.0, r) for r in (row, free))
                elif foreign.any():
                    row, free = (np.where((recall == 0) & foreign, 0.0, r) for r in (row, free))
                judgements.append(
                    decide(sentence.text, scores.spans, row, free, self.threshold, self.veto)
                )
            results.append(judgements)
        return results
