"""The training callback and compute_metrics helper: hand-computed scores with scripted
drafts, and a real (tiny, random-init) Trainer run that logs edit-F1 beside eval_loss
without changing the training."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from tokenizers import ByteLevelBPETokenizer
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    Trainer,
    TrainerCallback,
    TrainerControl,
    TrainerState,
    TrainingArguments,
)
from transformers.trainer_utils import EvalPrediction

from editf1.builders.readers import demo_rows
from editf1.inputs import InputError
from editf1.integrations.callback import (
    EditF1Callback,
    build_prompt,
    edit_f1_logs,
    make_compute_metrics,
    read_drafts,
)
from editf1.judges import ThemeJudge, ThemeJudgement
from editf1.scorer import EditF1Scorer

KEYS = [
    "eval_edit_f1_content_precision",
    "eval_edit_f1_content_recall",
    "eval_edit_f1_content_f1",
    "eval_edit_f1_theme_precision",
    "eval_edit_f1_theme_recall",
    "eval_edit_f1_theme_f1",
    "eval_edit_f1_pairs",
    "eval_edit_f1_empty_drafts",
    "eval_edit_f1_unusable_judgements",
]

# Two held-out examples and the drafts a scripted model "generates" for them.
EXAMPLES = [
    {"message": "I have a headache.", "ehr_summary": "30F.",
     "reference": "Rest today. Take ibuprofen."},
    {"message": "Is my result back?", "reference": "Call us."},
]  # fmt: skip
DRAFTS = ["Rest today. Drink water.", ""]
THEMES = {
    "Rest today.": "Medical planning instruction",
    "Take ibuprofen.": "Medical planning instruction",
    "Drink water.": "Medical planning instruction",
    "Call us.": "Contingency planning",
}
# By hand, exact judge: pair 1 EM 1 (Rest today.), EA 1 (Take ibuprofen.), ED 1 (Drink
# water.); pair 2 (empty draft) EM 0, EA 1, ED 0. Micro: P = 1/2, R = 1/3, F1 = 0.4.
# Themes: pair 1 {planning} vs {planning}: TP 1; pair 2 {contingency} vs {}: FN 1.
# Micro: P = 1/1, R = 1/2, F1 = 2/3.
EXPECTED = {
    "eval_edit_f1_content_precision": 0.5,
    "eval_edit_f1_content_recall": 1 / 3,
    "eval_edit_f1_content_f1": 0.4,
    "eval_edit_f1_theme_precision": 1.0,
    "eval_edit_f1_theme_recall": 0.5,
    "eval_edit_f1_theme_f1": 2 / 3,
    "eval_edit_f1_pairs": 2.0,
    "eval_edit_f1_empty_drafts": 1.0,
    "eval_edit_f1_unusable_judgements": 0.0,
}


def make_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained here on the demo set: exact round trips."""
    texts = [r[k] for r in demo_rows() for k in ("message", "ehr_summary", "reference")]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=400, special_tokens=["<|endoftext|>", "<pad>"])
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", pad_token="<pad>"
    )


@pytest.fixture(scope="module")
def tokenizer():
    return make_tokenizer()


def tiny_model(tokenizer, seed: int = 0) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config)


@pytest.fixture
def scorer(theme_judge_cls):
    return EditF1Scorer(
        content_judge="exact", theme_judge=theme_judge_cls(THEMES), zero_division=0.0
    )


class RecordingTrainer:
    """Stands in for Trainer.log."""

    def __init__(self, processing_class=None):
        self.logged: list[dict] = []
        self.processing_class = processing_class

    def log(self, logs):
        self.logged.append(logs)


def scripted_generate(model, tokenizer, drafts):
    """Replace model.generate: return the prompt followed by fixed drafts; check that
    generation runs in eval mode without gradients and with left padding."""
    seen = []

    def generate(input_ids, attention_mask, generation_config):
        assert not model.training and not torch.is_grad_enabled()
        assert tokenizer.padding_side == "left"
        assert generation_config.max_new_tokens == 5
        batch = drafts[len(seen) : len(seen) + len(input_ids)]
        seen.extend(batch)
        new = tokenizer(batch, add_special_tokens=False, padding=True, return_tensors="pt")
        return torch.cat([input_ids, new["input_ids"]], dim=1)

    model.generate = generate
    return seen


def test_on_evaluate_logs_hand_computed_scores(tokenizer, scorer, tmp_path):
    model = tiny_model(tokenizer)
    model.train()
    scripted_generate(model, tokenizer, DRAFTS)
    trainer = RecordingTrainer()
    # fields named as the callback's own (another system's draft, a column "precision")
    theirs = {"step": "theirs", "prediction": "An older draft.", "precision": "a column"}
    callback = EditF1Callback(
        trainer,
        [EXAMPLES[0] | theirs, EXAMPLES[1]],
        scorer=scorer,
        generation_config={"max_new_tokens": 5},
        batch_size=1,
        drafts_dir=tmp_path,
    )
    state, metrics = TrainerState(global_step=7), {"eval_loss": 3.0}
    callback.on_evaluate(None, state, TrainerControl(), model=model, metrics=metrics,
                         processing_class=tokenizer)  # fmt: skip
    assert callback.last_drafts == DRAFTS
    assert trainer.logged == [pytest.approx(EXPECTED)]
    assert metrics == pytest.approx({"eval_loss": 3.0, **EXPECTED})
    assert model.training and tokenizer.padding_side == "right"
    # A second eval dataset at the same step reuses the figures and logs nothing new.
    again = {"eval_other_loss": 2.0}
    callback.on_evaluate(None, state, TrainerControl(), model=model, metrics=again)
    assert len(trainer.logged) == 1 and again["eval_edit_f1_content_f1"] == pytest.approx(0.4)
    rows = read_drafts(tmp_path / "step-7.jsonl")
    assert [r["prediction"] for r in rows] == DRAFTS
    assert rows[0]["example"] == EXAMPLES[0] | theirs and rows[0]["step"] == 7
    assert rows[0]["expected_deletions"] == 1
    assert rows[0]["expected_deletion_sentences"][0]["text"] == "Drink water."


def test_generate_restores_rng_mode_and_tokenizer(tokenizer, scorer):
    model = tiny_model(tokenizer)
    model.train()
    callback = EditF1Callback(
        None,
        EXAMPLES,
        scorer=scorer,
        tokenizer=tokenizer,
        generation_config={"max_new_tokens": 4, "do_sample": True, "top_k": 0},
    )
    torch.manual_seed(123)
    random.seed(5)
    np.random.seed(5)
    states = (torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy())
    first = callback.generate(model, tokenizer)
    assert torch.equal(torch.get_rng_state(), states[0])
    assert random.getstate() == states[1]
    assert np.array_equal(np.random.get_state()[1], states[2])
    assert model.training and tokenizer.padding_side == "right"
    assert tokenizer.pad_token == "<pad>"
    # Sampling draws from the callback's own seed: the same drafts every time.
    assert callback.generate(model, tokenizer) == first and len(first) == 2
    logs = callback.evaluate(model)
    assert logs["eval_edit_f1_pairs"] == 2.0
    assert logs == pytest.approx(
        edit_f1_logs(scorer.score(callback.last_drafts, callback.references), "eval_")
    )


def test_bad_examples_are_named(scorer):
    with pytest.raises(InputError) as error:
        EditF1Callback(None, [EXAMPLES[0], {"message": "hi"}, {"message": "x", "reference": " "}],
                       scorer=scorer)  # fmt: skip
    text = str(error.value)
    assert "examples[1] needs the keys 'message' and 'reference'" in text
    assert "reference[2] has no word" in text
    with pytest.raises(ValueError, match="num_examples must be >= 1"):
        EditF1Callback(None, EXAMPLES, scorer=scorer, num_examples=0)


def test_build_prompt_plain_and_chat(tokenizer):
    plain = build_prompt(EXAMPLES[0], tokenizer)
    assert plain.endswith("EHR summary:\n30F.\n\nPatient message:\nI have a headache.\n\nReply:\n")
    assert "EHR summary:" not in build_prompt(EXAMPLES[1], tokenizer)
    chat = PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend_tokenizer)
    chat.chat_template = (
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    prompt = build_prompt(EXAMPLES[1], chat)
    assert prompt.startswith("<system>You are a clinician")
    assert prompt.endswith("<user>Patient message:\nIs my result back?\n<assistant>")


def _ids(tokenizer, texts, width=40):
    """Token ids padded with -100 to a fixed width, as a Trainer gathers them."""
    rows = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    assert max(map(len, rows)) <= width
    return np.array([r + [-100] * (width - len(r)) for r in rows])


def test_compute_metrics_hand_computed(tokenizer, scorer):
    compute = make_compute_metrics(tokenizer, scorer=scorer)
    refs = [e["reference"] for e in EXAMPLES]
    out = compute(EvalPrediction(_ids(tokenizer, DRAFTS), _ids(tokenizer, refs)))
    expected = {k.removeprefix("eval_"): v for k, v in EXPECTED.items()}
    assert out == pytest.approx(expected)
    # batch_eval_metrics: one batch at a time, scored once at the end.
    batched = make_compute_metrics(tokenizer, scorer=scorer, references=refs)
    first = EvalPrediction(_ids(tokenizer, DRAFTS[:1]), _ids(tokenizer, refs[:1]))
    assert batched(first, compute_result=False) == {}
    last = EvalPrediction(_ids(tokenizer, DRAFTS[1:]), _ids(tokenizer, refs[1:]))
    assert batched(last, compute_result=True) == pytest.approx(expected)
    with pytest.raises(ValueError, match="references has 2 replies for 1 generated drafts"):
        batched(last)


class LogRecorder(TrainerCallback):
    """A logger like TensorBoard's: records what on_log receives."""

    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.logs.append(dict(logs))


def _train(tokenizer, tmp_path, scorer=None, held_out=None, callback_cls=None, **options):
    """Train the tiny model 4 steps, evaluating at steps 2 and 4, with a callback of
    ``callback_cls`` (default EditF1Callback, sampling 12 tokens) if a scorer is given."""
    rows = demo_rows()

    def encode(row):
        text = build_prompt(row, tokenizer) + row["reference"] + tokenizer.eos_token
        ids = tokenizer(text, truncation=True, max_length=96)["input_ids"]
        return {"input_ids": ids, "labels": ids}

    train, held_out = [encode(r) for r in rows[:4]], held_out or rows[8:10]
    model = tiny_model(tokenizer)
    args = TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=4,
        per_device_train_batch_size=1,
        per_device_eval_batch_size=1,
        learning_rate=1e-2,
        eval_strategy="steps",
        eval_steps=2,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    recorder = LogRecorder()
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=train,
        eval_dataset=[encode(r) for r in held_out],
        processing_class=tokenizer,
        callbacks=[recorder],
    )
    callback = None
    if scorer is not None:
        options = options or {"generation_config": {"max_new_tokens": 12, "do_sample": True}}
        callback = (callback_cls or EditF1Callback)(trainer, held_out, scorer=scorer, **options)
        trainer.add_callback(callback)
    trainer.train()
    return trainer, recorder, callback, model


def test_real_training_run_logs_edit_f1_beside_loss(tokenizer, scorer, tmp_path):
    trainer, recorder, callback, model = _train(tokenizer, tmp_path / "with", scorer)
    history = trainer.state.log_history
    for step in (2, 4):
        at_step = [h for h in history if h["step"] == step]
        assert any("eval_loss" in h for h in at_step), at_step
        logged = [h for h in at_step if "eval_edit_f1_content_f1" in h]
        assert len(logged) == 1 and set(KEYS) <= set(logged[0])
        values = logged[0]
        assert values["eval_edit_f1_pairs"] == 2.0
        assert all(0.0 <= values[k] <= 1.0 for k in KEYS[:6])
    # Every logger saw the figures (the recorder stands in for TensorBoard, W&B, ...).
    assert sum("eval_edit_f1_content_f1" in log for log in recorder.logs) == 2
    # The last logged figures are those of the drafts the model generated then.
    rescored = scorer.score(callback.last_drafts, callback.references)
    last = next(h for h in reversed(history) if "eval_edit_f1_content_f1" in h)
    assert {k: last[k] for k in KEYS} == pytest.approx(edit_f1_logs(rescored, "eval_"))
    # Trainer.evaluate returns them too (metric_for_best_model can use them).
    assert set(KEYS) <= set(trainer.evaluate())

    # Training is unchanged: same losses and weights as a run without the callback,
    # although the callback sampled (do_sample=True) and dropout draws from the RNG.
    plain, _, _, plain_model = _train(tokenizer, tmp_path / "without")
    losses = [h["loss"] for h in history if "loss" in h]
    assert losses == [h["loss"] for h in plain.state.log_history if "loss" in h]
    for (name, a), (_, b) in zip(model.named_parameters(), plain_model.named_parameters()):
        assert torch.equal(a, b), name


# ---- under torchrun: 2 CPU processes (gloo), each generating its share ----


class WordThemes(ThemeJudge):
    """A sentence with "call" is Contingency planning, any other Medical planning."""

    @property
    def fingerprint(self) -> str:
        return "word-themes"

    def classify(self, sentences):
        themes = ("Contingency planning", "Medical planning instruction")
        return [ThemeJudgement(themes["call" not in s.lower()], 1.0) for s in sentences]


class CountingCallback(EditF1Callback):
    """Records the size of every batch this process generates."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.generated: list[int] = []

    def _generate(self, model, tokenizer, batches, seed_offset=0):
        self.generated += [len(batch) for batch in batches]
        return super()._generate(model, tokenizer, batches, seed_offset)


GREEDY = {"generation_config": {"max_new_tokens": 8, "do_sample": False}, "batch_size": 2}


def shared_evaluation(out_dir: Path) -> None:
    """One process's part in test_callback_shares_generation_under_torchrun (or the one
    process of the reference run): evaluations of 8 and 5 demo examples in batches of
    2 through on_evaluate, then a 4-step Trainer run (DDP under torchrun); writes what
    it generated and logged to ``process-<rank>.json``."""
    rank = int(os.environ.get("RANK", "0"))
    tokenizer = make_tokenizer()
    scorer = EditF1Scorer(content_judge="exact", theme_judge=WordThemes(), zero_division=0.0)
    record = {}
    for name, n in (("even", 8), ("uneven", 5)):
        trainer, metrics = RecordingTrainer(), {}
        drafts_dir = out_dir / f"drafts-{name}"
        callback = CountingCallback(
            trainer, demo_rows()[:n], scorer=scorer, drafts_dir=drafts_dir, **GREEDY
        )
        callback.on_evaluate(None, TrainerState(global_step=1), TrainerControl(),
                             model=tiny_model(tokenizer), metrics=metrics,
                             processing_class=tokenizer)  # fmt: skip
        record[name] = {"generated": callback.generated, "logged": trainer.logged,
                        "metrics": metrics, "drafts": callback.last_drafts}  # fmt: skip
    trainer, _, callback, _ = _train(tokenizer, out_dir / "trainer", scorer, demo_rows()[:4],
                                     CountingCallback, **GREEDY)  # fmt: skip
    logged = [h for h in trainer.state.log_history if "eval_edit_f1_content_f1" in h]
    record["trainer"] = {"generated": callback.generated, "logged": logged,
                         "drafts": callback.last_drafts}  # fmt: skip
    (out_dir / f"process-{rank}.json").write_text(json.dumps(record), encoding="utf-8")


@pytest.mark.slow
def test_callback_shares_generation_under_torchrun(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    shared_evaluation(one)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    torchrun = Path(sys.executable).parent / "torchrun"
    command = [str(torchrun), "--nproc_per_node", "2", "--master_port", str(port), __file__]
    done = subprocess.run([*command, str(two)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    single = json.loads((one / "process-0.json").read_text(encoding="utf-8"))
    first, second = (json.loads((two / f"process-{k}.json").read_text()) for k in (0, 1))
    # 8 examples, 4 batches of 2: one process generates them all, each of two processes
    # half; the logged figures and the metrics are those of the one process, in both.
    assert single["even"]["generated"] == [2, 2, 2, 2]
    assert first["even"]["generated"] == second["even"]["generated"] == [2, 2]
    for shared in (first, second):
        for name in ("even", "uneven"):
            assert shared[name]["logged"] == single[name]["logged"]
            assert shared[name]["metrics"] == single[name]["metrics"]
            assert shared[name]["drafts"] == single[name]["drafts"]
    assert single["even"]["logged"][0]["eval_edit_f1_pairs"] == 8.0
    # 5 examples, batches of 2, 2 and 1: the second process generates the last batch,
    # then repeats it (output dropped) so that both call generate twice.
    assert first["uneven"]["generated"] == [2, 2] and second["uneven"]["generated"] == [1, 1]
    assert single["uneven"]["logged"][0]["eval_edit_f1_pairs"] == 5.0
    for name in ("even", "uneven"):  # written once, by the main process: the same rows
        written = (two / f"drafts-{name}" / "step-1.jsonl").read_bytes()
        assert written == (one / f"drafts-{name}" / "step-1.jsonl").read_bytes()
    # A real Trainer under DDP: 4 held-out examples, each process generates 2 at each of
    # the 2 evaluations; both log the figures of all 4 drafts, once per evaluation.
    assert first["trainer"]["generated"] == second["trainer"]["generated"] == [2, 2]
    assert first["trainer"]["logged"] == second["trainer"]["logged"]
    assert [h["step"] for h in first["trainer"]["logged"]] == [2, 4]
    scorer = EditF1Scorer(content_judge="exact", theme_judge=WordThemes(), zero_division=0.0)
    drafts = first["trainer"]["drafts"]
    rescored = scorer.score(drafts, [r["reference"] for r in demo_rows()[:4]])
    last = first["trainer"]["logged"][-1]
    assert {k: last[k] for k in KEYS} == pytest.approx(edit_f1_logs(rescored, "eval_"))


if __name__ == "__main__":  # one process of the torchrun test above
    shared_evaluation(Path(sys.argv[1]))
    # as a training script should: leave together and close the process group the
    # Trainer opened (a process leaving while gloo's threads still run can abort)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
