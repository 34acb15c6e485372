"""Fitting the embedded judges, and the parameter files the package ships."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from editf1.judges.embedding import load_params
from editf1.themes import THEMES
from editf1.training.classifiers import (
    calibrate_content_judge,
    content_requests,
    fit_content_classifier,
    load_theme_sentences,
    train_theme_judge,
)
from editf1.validation.labelled import ContentItem


def test_fit_content_classifier_on_separable_toy_set():
    # matches have high cosine and high word recall, non-matches low ones
    features = np.array(
        [[0.9, 0.8], [0.85, 0.9], [0.8, 0.7], [0.95, 1.0], [0.2, 0.1], [0.3, 0.0], [0.1, 0.2]]
    )
    labels = [True, True, True, True, False, False, False]
    params = fit_content_classifier(features, labels)
    assert set(params) == {"weights", "bias"}
    assert params["weights"]["cosine"] > 0 and params["weights"]["word_recall"] > 0
    # the fitted line separates the toy set
    w = np.array([params["weights"]["cosine"], params["weights"]["word_recall"]])
    logits = features @ w + params["bias"]
    assert ((logits > 0) == np.array(labels)).all()


def test_content_requests_hold_one_reference_sentence_against_the_split_draft():
    items = [
        ContentItem("q1", "Rest today. Drink water.", "Stay hydrated.", True),
        ContentItem("q1", "Rest today. Drink water.", "Take ibuprofen.", False),
    ]
    requests = content_requests(items)
    assert [r.reference_sentences[0].text for r in requests] == [
        "Stay hydrated.",
        "Take ibuprofen.",
    ]
    assert [(s.text, s.start, s.end) for s in requests[0].prediction_sentences] == [
        ("Rest today.", 0, 11),
        ("Drink water.", 12, 24),
    ]


def test_content_calibration_needs_every_items_annotators_before_encoding():
    three = (True, True, False)
    items = [
        ContentItem("q1", "Rest today.", "Rest.", True, None, three),
        ContentItem("q2", "Drink water.", "Rest.", False, None, three[:2]),
    ]
    with pytest.raises(ValueError, match=r"item 1 \(case 'q2'\) has 2 annotator decisions"):
        calibrate_content_judge(items, encoder=object())
    with pytest.raises(ValueError, match=r"item 0 \(case 'q1'\) has 0 annotator"):
        calibrate_content_judge([ContentItem("q1", "Rest today.", "Rest.", True)])


def test_train_theme_judge_rejects_unknown_labels():
    texts = [f"sentence {i}" for i in range(10)]
    themes = [*THEMES, "Billing"]
    with pytest.raises(ValueError, match=r"unknown \['Billing'\]"):
        train_theme_judge(texts, themes)


def test_train_theme_judge_rejects_missing_themes():
    themes = list(THEMES[:-1])  # no "Other" sentence
    with pytest.raises(ValueError, match=r"without sentences \['Other'\]"):
        train_theme_judge([f"s{i}" for i in range(len(themes))], themes)


def test_shipped_theme_sentences():
    texts, themes = load_theme_sentences()
    counts = Counter(themes)
    assert set(counts) == set(THEMES)
    assert min(counts.values()) >= 40  # the issue asks for at least 40 per label
    assert len(set(texts)) == len(texts)


def test_shipped_theme_judge_parameters():
    params = load_params("theme_judge.json")
    assert params["labels"] == list(THEMES)
    assert np.asarray(params["coef"]).shape == (9, 384)
    assert len(params["intercept"]) == 9
    assert params["n_sentences"] == len(load_theme_sentences()[0])
    cv = params["cross_validation"]
    assert set(cv["per_label"]) == set(THEMES)
    assert all(0.0 <= v["f1-score"] <= 1.0 for v in cv["per_label"].values())


def test_shipped_content_judge_parameters():
    params = load_params("content_judge.json")
    assert params["weights"]["cosine"] > 0 and params["weights"]["word_recall"] > 0
    assert params["window"] >= 1
    assert params["split"]["by"] == "question"
    agreement = params["agreement"]
    for key in ("agreement", "cohen_kappa", "match_agreement", "non_match_agreement"):
        estimate = agreement[key]
        assert estimate["low"] <= estimate["value"] <= estimate["high"]
        assert estimate["n"] == params["split"]["test_items"]
    # the confusion matrix [[TN, FP], [FN, TP]] gives the reported agreement
    (tn, fp), (fn, tp) = agreement["confusion_matrix"]
    assert tn + fp + fn + tp == params["split"]["test_items"]
    assert agreement["agreement"]["value"] == pytest.approx((tn + tp) / (tn + fp + fn + tp))
    assert set(params["human_ceiling"]) == {"agreement", "cohen_kappa"}


@pytest.mark.slow
def test_shipped_theme_weights_fit_the_encoder(real_theme_judge):
    # the judge checks coef shape (9, d) against the encoder's dimension when it loads
    assert real_theme_judge.encoder.dimension == 384
    assert real_theme_judge.coef.shape == (9, 384)
    assert real_theme_judge.labels == list(THEMES)


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="content_judge.json was fitted before the splitter split sentences joined without "
    "a space (K-QA answers have them): a refit moves the weights by ~0.02-0.07; the refit and "
    "the README/card figures it moves are pending (issue 11). strict: passes again once refitted",
)
def test_content_calibration_reproduces_the_shipped_parameters(shared_data, real_content_judge):
    from editf1.training.classifiers import calibrate_content_judge
    from editf1.validation.labelled import kqa_content_items

    folder = shared_data / "kqa"
    if not (folder / "NLI_medical_annotator.csv").is_file():
        pytest.skip(f"{folder / 'NLI_medical_annotator.csv'} is absent")
    fitted = calibrate_content_judge(kqa_content_items(folder), n_resamples=20)
    shipped = load_params("content_judge.json")
    assert fitted["weights"] == pytest.approx(shipped["weights"], abs=1e-3)
    assert fitted["bias"] == pytest.approx(shipped["bias"], abs=1e-3)
    assert fitted["split"] == shipped["split"]
    assert fitted["agreement"]["confusion_matrix"] == shipped["agreement"]["confusion_matrix"]
