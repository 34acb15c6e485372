"""Fitting the shipped v2 theme judge (``editf1/data/theme_judge_v2.json``) on the team's
real theme labels and the team-written sentences, and its nested cross-validation split
by case (``benchmarks/theme_judge_real.py`` runs both and writes the file).

The judge is :func:`editf1.training.classifiers.fit_theme_classifier` (embeddings, two
sentence features and word n-grams); this module only chooses its hyperparameters among
:data:`THEME_GRID` by cross-validation split by case (StratifiedGroupKFold, stratified
by theme), scored by :func:`~editf1.validation.agreement.clinical_micro_f1`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import NamedTuple

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold

from editf1.judges.embedding import EmbeddingThemeConfig, EmbeddingThemeJudge
from editf1.judges.encoder import SentenceEncoder, default_encoder
from editf1.training.classifiers import fit_theme_classifier
from editf1.validation.agreement import clinical_micro_f1
from editf1.validation.labelled import ThemeItem

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
