"""What a score comes with: PairResult / CorpusResult as dicts, counts and several replies."""

from __future__ import annotations

import dataclasses
import json

import pytest

from editf1.results import PRF
from editf1.scorer import EditF1Scorer
from editf1.segment import Sentence


@pytest.fixture
def scorer(theme_judge_cls):
    labels = {"Rest today.": "Medical planning instruction", "Call us.": "Contingency planning"}
    return EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(labels))


def test_pair_to_dict_by_hand(scorer):
    pair = scorer.score(["Rest today. Eat well."], ["Rest today. Call us."], ids=["m1"]).pairs[0]
    out = pair.to_dict()
    assert (out["row"], out["id"]) == (0, "m1")
    assert (out["precision"], out["recall"], out["f1"]) == (0.5, 0.5, 0.5)
    assert out["alignment"][0]["match"] == {"text": "Rest today.", "start": 0, "end": 11}
    assert out["alignment"][1]["status"] == "no_match" and out["alignment"][1]["match"] is None
    assert out["expected_deletion_sentences"] == [{"text": "Eat well.", "start": 12, "end": 21}]
    assert out["reference_themes"] == ["Contingency planning", "Medical planning instruction"]
    assert out["prediction_themes"] == ["Medical planning instruction"]  # "Eat well." is Other
    assert "best_reference" not in out and "per_reference" not in out
    json.dumps(out)  # JSON-ready


def test_counts_as_tp_fp_fn(scorer):
    pair = scorer.score(["Rest today. Eat well."], ["Rest today. Call us."]).pairs[0]
    assert pair.content_counts == (1, 1, 1)  # EM, ED, EA
    assert pair.theme_counts.as_tuple() == (1, 0, 1)  # planning in both; contingency missed
    # stored as the scorer counted them (a field, not recounted on access)
    assert "theme_counts" in {f.name for f in dataclasses.fields(pair)}
    assert pair.theme_counts.reference_sentences == {
        "Medical planning instruction": 1,
        "Contingency planning": 1,
    }
    assert pair.theme_counts.matched_sentences == {"Medical planning instruction": 1}
    assert pair.reference_themes is pair.theme_counts.reference_themes
    no_themes = EditF1Scorer(content_judge="exact", theme_judge=None)
    assert no_themes.score(["Rest."], ["Rest."]).pairs[0].theme_counts is None


def test_mean_over_replies_and_corpus_summary(scorer):
    result = scorer.score(["Rest today."], [["Rest today.", "Rest today. Call us."]])
    pair = result.pairs[0]
    # vs reply 0: P 1 R 1; vs reply 1: P 1, R 1/2, F1 2/3
    assert pair.best_reference == 0
    assert pair.mean == PRF(1.0, 0.75, pytest.approx(5 / 6))
    summary = result.summary()
    assert summary["all_references"]["n_pairs"] == 2 and summary["n_pairs"] == 1
    assert summary["all_references"]["expected_additions"] == 1
    out = pair.to_dict()
    assert out["n_references"] == 2 and out["mean_recall"] == 0.75
    assert [r["recall"] for r in out["per_reference"]] == [1.0, 0.5]


def test_sentence_offsets_round_trip():
    assert Sentence("Rest.", 3, 8).to_dict() == {"text": "Rest.", "start": 3, "end": 8}
