"""Fitting the embedded judges' logistic regressions (scikit-learn) on labelled data, with
their agreement: the JSON parameter files the judges load (``editf1/data``)."""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil

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
    cohen_kappa,
    inter_annotator_report,
    to_jsonable,
)
from editf1.validation.labelled import ContentItem, case_split, items_digest, shipped_theme_items

__all__ = [
    "KQA_FITTED_ON",
    "VETO_NC",
    "calibrate_content_judge",
    "content_requests",
    "fit_content_classifier",
    "fit_theme_classifier",
    "load_theme_sentences",
    "train_theme_judge",
]


def content_requests(items: Sequence[ContentItem]) -> list[JudgeRequest]:
    """One request per item, in order: its reference sentence against its draft (split
    by :class:`SentenceSplitter`)."""
    split = SentenceSplitter().split
    one = [(Sentence(item.reference, 0, len(item.reference)),) for item in items]
    return [JudgeRequest(s, i.prediction, tuple(split(i.prediction))) for s, i in zip(one, items)]


def fit_content_classifier(
    features: np.ndarray,
    labels: Sequence[bool],
    *,
    C: float = 1.0,
    seed: int = 0,
    names: Sequence[str] = CONTENT_FEATURES,
) -> dict:
    """Fit the content judge's logistic regression (balanced class weights, inverse L2
    strength ``C``) of N match ``labels`` on the (N, F) ``features`` of each item's best
    span (columns ``names``): ``{"weights": {name: w, ...}, "bias": b}``, to 6 decimals."""
    model = LogisticRegression(C=C, class_weight="balanced", random_state=seed, max_iter=2000)
    model.fit(features, np.asarray(labels, dtype=bool))
    return {
        "weights": {n: round(float(w), 6) for n, w in zip(names, model.coef_[0])},
        "bias": round(float(model.intercept_[0]), 6),
    }


#: The provenance :func:`calibrate_content_judge` writes by default (K-QA's).
KQA_FITTED_ON = "K-QA NLI_medical_annotator.csv (physician majority: Entailment = match)"

#: The veto of the shipped default, ``content_judge_veto_nc.json``: the key-term and
#: clause conflicts (:data:`editf1.judges.key_terms.CONFLICT_KINDS`).
VETO_NC = ("quantity", "frequency", "direction", "drug", "negation", "condition")


def _out_of_fold_threshold(
    best: np.ndarray,
    spans: Sequence[np.ndarray],
    vetoed: Sequence[np.ndarray],
    labels: np.ndarray,
    groups: np.ndarray,
    *,
    folds: int,
    C: float = 1.0,
    seed: int,
) -> tuple[np.ndarray, float, float]:
    """``(out_of_fold, threshold, kappa)``: each item's highest match probability over its
    non-vetoed spans (0.0 if none) by a classifier fitted on the other ``GroupKFold`` folds,
    and the threshold of 0.01, ..., 0.99 of the best kappa (the lowest on a tie)."""
    out_of_fold = np.zeros(len(labels))
    for train, test in GroupKFold(n_splits=folds).split(best, labels, groups):
        fold = fit_content_classifier(best[train], labels[train], C=C, seed=seed)
        w = np.array([fold["weights"][n] for n in CONTENT_FEATURES])
        for i in test:
            if len(spans[i]):
                p = 1 / (1 + np.exp(-(spans[i] @ w + fold["bias"])))
                out_of_fold[i] = np.where(vetoed[i], 0.0, p).max()
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
    run_floor: float = 0.0,
    fitted_on: str = KQA_FITTED_ON,
    case_name: str = "question",
    threshold: float | None = 0.5,
    folds: int = 5,
) -> dict:
    """Fit the embedding content judge on the best span (by cosine) of each item of the
    fitting cases (:func:`~editf1.validation.labelled.case_split`), then measure it on the
    held-out cases beside the annotators' own agreement (the human ceiling).

    Args:
        items: each with the same number of annotator decisions: none, or two or more.
        window, span_embedding, veto, run_floor: the judge's options (written unless at
            their default; ``veto`` and ``run_floor`` are applied, not fitted).
        test_size: share of cases held out; seed: of the split, classifier and bootstrap.
        n_resamples: bootstrap resamples of the 95% CIs over cases.
        case_name: what a case is, for the split's keys (``train_<case_name>s``).
        threshold: in (0, 1), or None for the best out-of-fold Cohen's kappa over
            ``folds`` folds of the fitting cases (``docs/training.md``); written unless 0.5.

    Returns:
        The parameter file's content: ``weights``, ``bias``, ``window``, ``veto`` (if
        any), ``encoder``, ``agreement``, ``human_ceiling`` (None without annotator
        decisions), ``split`` and ``fitted_on``.

    Raises:
        ValueError: too few cases, labels, resamples or annotators; a bad option.
    """
    check_n_resamples(n_resamples)
    veto = check_veto(veto)
    if not 0.0 <= run_floor <= 1.0:
        raise ValueError(f"run_floor must be in [0, 1], got {run_floor!r}")
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
        fitting = [scores[i] for i in train]
        spans = [np.stack([s.cosine[0], s.word_recall[0]], axis=1) for s in fitting]
        vetoed = [s.vetoed[0] for s in fitting]
        _, threshold, kappa = _out_of_fold_threshold(
            features[train], spans, vetoed, labels[train], groups[train], folds=folds, seed=seed
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
        **({} if span_embedding == "encoded" else {"span_embedding": span_embedding}),
        **({"veto": list(veto)} if veto else {}),
        **({"run_floor": run_floor} if run_floor else {}),
    }
    judge = EmbeddingContentJudge(config=EmbeddingContentConfig.from_json(params), encoder=encoder)
    decisions = np.array(
        [answers[0].status == "match" for answers in judge.match([requests[i] for i in test])]
    )
    stats = {"groups": groups[test], "n_resamples": n_resamples, "seed": seed}
    held_out = binary_agreement_report(labels[test], decisions, **stats)
    ceiling = None
    if annotators:
        ceiling = inter_annotator_report(np.array([items[i].annotators for i in test]).T, **stats)
        ceiling = to_jsonable({k: ceiling[k] for k in ("agreement", "cohen_kappa")})
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
        "agreement": to_jsonable(held_out),
        "human_ceiling": ceiling,
    }


def load_theme_sentences() -> tuple[list[str], list[str]]:
    """The labelled sentences shipped in ``data/theme_sentences.jsonl``: (texts, themes)."""
    items = shipped_theme_items()
    return [item.text for item in items], [item.theme for item in items]


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
        groups: each sentence's case, kept in one fold (``StratifiedGroupKFold``);
            default: each sentence its own (``StratifiedKFold``).
        C: inverse L2 regularisation strength of the logistic regression.

    Returns:
        The parameter file's content: ``labels``, ``coef`` (9 x d), ``intercept``,
        ``encoder``, ``C``, ``n_sentences``, ``cross_validation`` (per-label
        precision/recall/F1, macro F1, accuracy, confusion matrix with rows the true
        theme; ``by``: ``"case"`` or ``"sentence"``).

    Raises:
        ValueError: before encoding: a label not a theme, too few sentences or cases.
    """
    unknown = [i for i, t in enumerate(themes) if t not in THEMES]
    if unknown:
        raise ValueError(f"theme labels: {len(unknown)} not a theme (first: item {unknown[0]})")
    short = {t: n for t in THEMES if (n := list(themes).count(t)) < folds}
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
    split = StratifiedKFold if groups is None else StratifiedGroupKFold
    cv = split(n_splits=folds, shuffle=True, random_state=seed)
    groups = None if groups is None else np.asarray(groups)
    predicted = cross_val_predict(model, features, y, cv=cv, groups=groups)
    codes = range(len(THEMES))
    report = classification_report(
        y, predicted, labels=codes, target_names=list(THEMES), output_dict=True, zero_division=0.0
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
            "confusion_matrix": confusion_matrix(y, predicted, labels=codes).tolist(),
        },
    }


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
        word_weight: a present word n-gram's value while fitting (> 0); the stored
            weights are multiplied by it, so the judge's 0/1 indicators give the same
            logits.
        vocabulary_texts: texts whose n-grams (in at least ``min_df`` of them) become
            word features; ``None``: none.
        ngram_range: shortest and longest n-gram, in words.

    Returns:
        The judge's parameters: ``labels`` (:data:`THEMES`), ``coef`` (9 x D, D = d +
        sentence features + vocabulary), ``intercept`` (9), ``features``.

    Raises:
        ValueError: a label not a theme, a theme without sentences, lengths that differ.
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
    model.fit(sparse.hstack(parts).tocsr(), [THEMES.index(t) for t in themes])
    coef = model.coef_.copy()
    if vocabulary:
        coef[:, coef.shape[1] - len(vocabulary) :] *= word_weight
    return {
        "labels": list(THEMES),
        "coef": np.round(coef, 6).tolist(),
        "intercept": np.round(model.intercept_, 6).tolist(),
    } | ({"features": features} if features else {})
