"""editf1.training.preferences: pairs from scored drafts and TADPOLE tuples, by hand; DPO."""

from __future__ import annotations

import pytest

from editf1.scorer import EditF1Scorer
from editf1.training.preferences import PairCounts, best_worst_pairs, scored_draft_pairs
from editf1.training.prompts import zero_shot_messages
from editf1.training.rewards import EditF1Reward

REPLY = "Rest today. Drink water."
KNEE = "My knee hurts a lot."


def exact_reward() -> EditF1Reward:
    return EditF1Reward(EditF1Scorer("exact", None))


def draft_rows() -> list[dict]:
    """m1: F1 1.0, 0.5 and a copy of the message (guard: 0.0); m2: two drafts that match
    nothing (a tie at 0.0); m3: one draft."""
    rows = [
        ("m1", "Rest today. Drink water."),
        ("m2", "Call us. Eat well."),
        ("m1", "Rest today. Call us."),
        ("m1", KNEE),
        ("m2", "Sleep early. Eat well."),
        ("m3", "Rest today."),
    ]
    return [
        {
            "message_id": m,
            "message": KNEE,
            "ehr_summary": "40F.",
            "reference": REPLY,
            "prediction": p,
        }
        for m, p in rows
    ]


def test_best_worst_pairs_margin_ties_and_single_drafts():
    groups = ["a", "a", "b", "b", "c", "c"]
    prompts = ["p", "p", "q", "q", "r", "r"]
    drafts = ["a1", "a2", "b1", "b2", "c1", "c2"]
    # a: margin 0.5 - 0.4 = 0.1 reaches 0.1 (floating point: 0.0999...); b: 0.05 is
    # below; c: a tie
    rows, counts = best_worst_pairs(groups, prompts, drafts, [0.4, 0.5, 0.5, 0.45, 0.3, 0.3])
    assert [(r["group"], r["chosen"], r["rejected"]) for r in rows] == [("a", "a2", "a1")]
    assert (rows[0]["chosen_score"], rows[0]["rejected_score"]) == (0.5, 0.4)
    assert counts == PairCounts(messages=3, pairs=1, ties=1, below_margin=1, single_draft=0)
    rows, counts = best_worst_pairs(
        groups, prompts, drafts, [0.4, 0.5, 0.5, 0.45, 0.3, 0.3], min_margin=0.05
    )
    assert [r["group"] for r in rows] == ["a", "b"] and counts.below_margin == 0
    # equal best scores: the earlier draft is chosen; equal worst: the earlier rejected
    rows, _ = best_worst_pairs(["a"] * 4, ["p"] * 4, ["w", "x", "y", "z"], [0.9, 0.1, 0.9, 0.1])
    assert (rows[0]["chosen"], rows[0]["rejected"]) == ("w", "x")


def test_best_worst_pairs_refuses_bad_input():
    with pytest.raises(ValueError, match=r"message 'a': row\(s\) \[2\] have another prompt"):
        best_worst_pairs(["a", "b", "a"], ["p", "q", "p2"], ["x", "y", "z"], [0, 0, 1])
    with pytest.raises(ValueError, match="one value per draft, got 2, 2, 2 and 1"):
        best_worst_pairs(["a", "a"], ["p", "p"], ["x", "y"], [0.1])
    with pytest.raises(ValueError, match="min_margin must be > 0"):
        best_worst_pairs(["a"], ["p"], ["x"], [0.1], min_margin=0)


def test_scored_drafts_make_conversational_pairs_and_the_copy_is_rejected():
    dataset, counts = scored_draft_pairs(draft_rows(), exact_reward())
    assert counts == PairCounts(messages=3, pairs=1, ties=1, below_margin=0, single_draft=1)
    assert dataset.num_rows == 1
    row = dataset[0]
    assert row["prompt"] == zero_shot_messages(KNEE, "40F.")
    assert row["chosen"] == [{"role": "assistant", "content": "Rest today. Drink water."}]
    assert row["rejected"] == [{"role": "assistant", "content": KNEE}]  # copy: guard 0.0
    assert (row["group"], row["chosen_score"], row["rejected_score"]) == ("m1", 1.0, 0.0)


def test_a_prompt_column_is_used_as_it_is():
    rows = [dict(r, prompt="Answer: " + r["message"]) for r in draft_rows()]
    dataset, _ = scored_draft_pairs(rows, exact_reward(), prompt_field="prompt")
    assert (dataset[0]["prompt"], dataset[0]["chosen"]) == (f"Answer: {KNEE}", REPLY)
    # no pair at all: the columns are still there
    empty, counts = scored_draft_pairs(rows[-1:], exact_reward(), prompt_field="prompt")
    assert empty.num_rows == 0 and counts.single_draft == 1
    assert empty.column_names == [
        "prompt",
        "chosen",
        "rejected",
        "group",
        "chosen_score",
        "rejected_score",
    ]


def test_missing_columns_are_named_with_their_rows():
    rows = draft_rows()
    del rows[2]["message_id"], rows[4]["message_id"]
    with pytest.raises(KeyError, match=r"column 'message_id' is missing from row\(s\) \[2, 4\]"):
        scored_draft_pairs(rows, exact_reward())


def test_dpo_trainer_takes_the_pairs(tmp_path):
    pytest.importorskip("trl", reason="trl is not installed (pip install 'edit-f1[train]')")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    from editf1.judges.generative.tiny import build_tiny_causal_lm

    folder = build_tiny_causal_lm(tmp_path / "tiny")
    dataset, _ = scored_draft_pairs(draft_rows(), exact_reward())
    config = DPOConfig(
        output_dir=str(tmp_path / "out"),
        beta=0.01,  # as in the paper (Appendix D)
        per_device_train_batch_size=1,
        max_steps=1,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
    )
    trainer = DPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(folder),
        args=config,
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(folder),
    )
    trainer.train()
    [log] = [log for log in trainer.state.log_history if "loss" in log]
    assert log["loss"] == pytest.approx(0.6931, abs=1e-3)  # log 2: the policy is the reference
    assert log["logps/chosen"] < 0 and log["logps/rejected"] < 0


def test_the_command_writes_a_dataset_folder_and_the_counts(tmp_path, capsys):
    import json

    import datasets

    from editf1.cli import main

    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text("".join(json.dumps(r) + "\n" for r in draft_rows()), encoding="utf-8")
    out, summary = tmp_path / "pairs", tmp_path / "counts.json"
    argv = ["preference-pairs", str(drafts), "-o", str(out), "--content-judge", "exact"]
    assert main([*argv, "--summary-json", str(summary)]) == 0
    assert "1 pair(s) from 3 message(s); dropped: 1 tie(s), 0 below" in capsys.readouterr().out
    pairs = datasets.load_from_disk(str(out))
    assert pairs["chosen"] == [[{"role": "assistant", "content": "Rest today. Drink water."}]]
    assert json.loads(summary.read_text()) == {
        "messages": 3,
        "pairs": 1,
        "ties": 1,
        "below_margin": 0,
        "single_draft": 1,
    }
    assert main(argv) == 2  # the folder is not empty any more
    assert "-o " + str(out) + " is not empty" in capsys.readouterr().err
