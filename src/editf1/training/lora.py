"""LoRA fine-tuning of the generative judges on a few expert-labelled cases, as Buckley et
al., "Scaling Clinical Judgment to Evaluate Medical AI" (arXiv 2609.12822): classes
resampled to balance, train/test split by case, fixed seeds, held-out agreement with
bootstrap CIs. The model learns to write what the constrained decoder allows; a match
without an annotated span (K-QA) targets the embedded judge's most probable draft span.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter, namedtuple
from collections.abc import Sequence
from dataclasses import asdict
from datetime import date
from pathlib import Path

import numpy as np

from editf1.training.lora_config import LoraTraining
from editf1.validation.labelled import ContentItem, ThemeItem, case_split
from editf1.versions import installed_versions

__all__ = ["LoraTraining", "balanced_resample", "train_generative_judge"]


def balanced_resample(classes: Sequence, seed: int = 0) -> np.ndarray:
    """Shuffled indices resampling every class to the largest one's size (each keeps all its
    items; smaller ones draw the rest with replacement).

    >>> classes = np.asarray(["a", "a", "a", "b"])
    >>> sorted(Counter(classes[balanced_resample(classes)].tolist()).items())
    [('a', 3), ('b', 3)]
    """
    labels = np.asarray(classes)
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(labels == c) for c in sorted(set(labels.tolist()))]
    largest = max(len(g) for g in groups)
    picked = [np.concatenate([g, rng.choice(g, largest - len(g), replace=True)]) for g in groups]
    return rng.permutation(np.concatenate(picked))


def _silver_spans(items: Sequence[ContentItem]) -> tuple[dict[int, tuple[int, int]], str]:
    """``({item: (start, end)}, judge fingerprint)`` of the matches without a span."""
    from editf1.judges.embedding import EmbeddingContentJudge
    from editf1.training.classifiers import content_requests

    need = [i for i, item in enumerate(items) if item.match and item.span is None]
    judge = EmbeddingContentJudge(span_margin=None)
    if not need:
        return {}, judge.fingerprint
    requests = content_requests([items[i] for i in need])
    spans = {}
    for i, scores in zip(need, judge.span_scores(requests)):
        if not len(scores.spans):
            raise ValueError(f"item {i} (case {items[i].case!r}) is a match on an empty draft")
        best = scores.spans[int(np.argmax(scores.probability[0]))]
        spans[i] = (best.start, best.end)
    return spans, judge.fingerprint


def _content_targets(items, tokenizer, eos_id, spans) -> list[tuple[int, ...]]:
    from editf1.judges.generative.constraints import DraftTokens
    from editf1.judges.generative.prompts import NO_MATCH

    no_match = (*tokenizer(NO_MATCH, add_special_tokens=False).input_ids, eos_id)
    targets = []
    for i, item in enumerate(items):
        if not item.match:
            targets.append(no_match)
            continue
        draft = DraftTokens.of(tokenizer, item.prediction)
        if item.span is None:
            first, last = draft.token_range(*spans[i])
        else:
            start = item.prediction.index(item.span)
            first, last = draft.token_range(start, start + len(item.span))
        targets.append((*draft.ids[first : last + 1], eos_id))
    return targets


#: The tokenised training items of one run (labels -100 on the prompt).
_TrainingSet = namedtuple(
    "_TrainingSet", "train test resolved tokenizer fmt examples classes target_spans"
)


def _build_training_set(
    task: str,
    items: Sequence[ContentItem] | Sequence[ThemeItem],
    base: str,
    settings: LoraTraining,
    chat_template: bool | None,
) -> _TrainingSet:
    from editf1.judges.generative.loading import MODEL_FILES, load_tokenizer, resolve
    from editf1.judges.generative.prompts import PromptFormat, content_prompt, theme_prompt

    kind = {"content": ContentItem, "theme": ThemeItem}.get(task)
    if kind is None:
        raise ValueError(f"task must be 'content' or 'theme', got {task!r}")
    if not items or not all(isinstance(item, kind) for item in items):
        raise ValueError(f"a {task} judge trains on a non-empty list of {kind.__name__}")
    train_idx, test_idx = case_split(
        [item.case for item in items], test_size=settings.test_size, seed=settings.seed
    )
    train = [items[i] for i in train_idx]
    test = [items[i] for i in test_idx]

    resolved = resolve(base, allow_patterns=MODEL_FILES)
    tokenizer = load_tokenizer(resolved)
    fmt = PromptFormat(
        tokenizer,
        bool(getattr(tokenizer, "chat_template", None)) if chat_template is None else chat_template,
    )
    eos_id = tokenizer.eos_token_id
    if task == "content":
        spans, silver_source = _silver_spans(train)
        targets = _content_targets(train, tokenizer, eos_id, spans)
        prompts = {d: content_prompt(fmt, d) for d in {item.prediction for item in train}}
        prefixes = [prompts[item.prediction][0] for item in train]
        suffixes = [fmt.suffix(item.reference, prompts[item.prediction][1]) for item in train]
        classes = ["match" if item.match else "no match" for item in train]
        target_spans = {
            "human": sum(item.span is not None for item in train),
            "silver": len(spans),
            "silver_source": silver_source if spans else None,
        }
    else:
        prefix, after = theme_prompt(fmt)
        targets = [
            [*tokenizer(item.theme, add_special_tokens=False).input_ids, eos_id] for item in train
        ]
        prefixes = [prefix] * len(train)
        suffixes = [fmt.suffix(item.text, after) for item in train]
        classes = [item.theme for item in train]
        target_spans = None
    examples = [
        {"input_ids": [*p, *s, *t], "labels": [-100] * (len(p) + len(s)) + list(t)}
        for p, s, t in zip(prefixes, suffixes, targets)
    ]
    return _TrainingSet(train, test, resolved, tokenizer, fmt, examples, classes, target_spans)


#: One run's ``PeftModel``, resampling order, ``Trainer.train()`` output and losses.
_Fit = namedtuple("_Fit", "model order result losses")


def _fit(data: _TrainingSet, settings: LoraTraining, device: str, progress: bool) -> _Fit:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments, set_seed

    from editf1.judges.generative.loading import load_causal_lm

    set_seed(settings.seed)
    model = load_causal_lm(data.resolved, dtype=torch.float32, device=device)
    context = getattr(model.config, "max_position_embeddings", None)
    for i, example in enumerate(data.examples):
        if context is not None and len(example["input_ids"]) > context:
            raise ValueError(
                f"item {i} (case {data.train[i].case!r}) needs {len(example['input_ids'])} "
                f"tokens, more than the model's {context}-token context"
            )
    order = balanced_resample(data.classes, settings.seed)
    lora = LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=list(settings.target_modules) if settings.target_modules else None,
        bias="none",
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora)
    tokenizer = data.tokenizer  # loaded for this run: padding set for training
    tokenizer.padding_side = "right"
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    with tempfile.TemporaryDirectory(prefix="editf1-trainer-") as scratch:
        arguments = TrainingArguments(
            output_dir=str(scratch),
            per_device_train_batch_size=settings.batch_size,
            num_train_epochs=settings.epochs,
            learning_rate=settings.learning_rate,
            weight_decay=settings.weight_decay,
            lr_scheduler_type="linear",
            warmup_steps=settings.warmup_ratio,
            max_grad_norm=settings.max_grad_norm,
            optim="adamw_torch",
            fp16=device.startswith("cuda"),
            use_cpu=not device.startswith("cuda"),
            seed=settings.seed,
            data_seed=settings.seed,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            remove_unused_columns=False,
            disable_tqdm=not progress,
        )
        trainer = Trainer(
            model=model,
            args=arguments,
            train_dataset=[data.examples[i] for i in order],
            data_collator=DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100),
        )
        result = trainer.train()
    losses = [round(e["loss"], 4) for e in trainer.state.log_history if "loss" in e]
    return _Fit(model, order, result, losses)


def _record(
    task: str,
    items: Sequence,
    data: _TrainingSet,
    fit: _Fit,
    settings: LoraTraining,
    device: str,
    data_name: str,
) -> dict:
    from editf1.judges.generative.loading import SMOLLM2_UPSTREAM, file_sha256
    from editf1.judges.generative.prompts import CONTENT_PROMPT, THEME_PROMPT
    from editf1.themes import THEMES

    resolved, model = data.resolved, fit.model
    classes = np.asarray(data.classes)
    upstream = SMOLLM2_UPSTREAM if resolved.gguf_file else None
    return {
        "format": 1,
        "task": task,
        "prompt": CONTENT_PROMPT if task == "content" else THEME_PROMPT,
        "prompt_format": data.fmt.name,
        "answers": (
            "constrained: a run of the draft's tokens from a word start to a word end, or NO MATCH"
            if task == "content"
            else f"constrained: one of {list(THEMES)}"
        ),
        "base": {
            "spec": resolved.pinned,
            "kind": resolved.ref.kind,
            "upstream": upstream or (resolved.ref.name if resolved.ref.kind == "hub" else None),
            "gguf_file": resolved.gguf_file,
            "gguf_sha256": resolved.gguf_file and file_sha256(resolved.folder / resolved.gguf_file),
        },
        "lora": {
            "rank": settings.rank,
            "alpha": settings.alpha,
            "dropout": settings.dropout,
            "target_modules": sorted(model.peft_config["default"].target_modules),
            "trainable_parameters": int(model.get_nb_trainable_parameters()[0]),
        },
        "training": asdict(settings)
        | {
            "target_modules": None
            if settings.target_modules is None
            else list(settings.target_modules),
            "optimizer": "AdamW (torch)",
            "schedule": "linear, warm-up then decay to 0",
            "precision": "fp16 mixed" if device.startswith("cuda") else "fp32",
            "device": device,
            "steps": int(fit.result.global_step),
            "seconds": round(fit.result.metrics["train_runtime"], 1),
            "loss_first": fit.losses[0] if fit.losses else None,
            "loss_last": fit.losses[-1] if fit.losses else None,
            "losses": fit.losses,
        },
        "data": {
            "name": data_name,
            "items": len(items),
            "cases": len({item.case for item in items}),
            "split": {
                "by": "case",
                "seed": settings.seed,
                "test_size": settings.test_size,
                "train_items": len(data.train),
                "test_items": len(data.test),
                "train_cases": len({item.case for item in data.train}),
                "test_cases": len({item.case for item in data.test}),
            },
            "train_classes": dict(sorted(Counter(data.classes).items())),
            "train_classes_resampled": dict(sorted(Counter(classes[fit.order].tolist()).items())),
            "target_spans": data.target_spans,
        },
        "libraries": installed_versions(
            "edit-f1", "torch", "transformers", "peft", "huggingface-hub"
        ),
        "date": date.today().isoformat(),
    }


def train_generative_judge(
    task: str,
    items: Sequence[ContentItem] | Sequence[ThemeItem],
    *,
    base: str,
    output: str | Path,
    data_name: str,
    settings: LoraTraining | None = None,
    device: str | None = None,
    chat_template: bool | None = None,
    n_resamples: int = 2000,
    progress: bool = True,
) -> dict:
    """Fine-tune a LoRA judge on the train cases of ``items``, save it in ``output`` (files
    there are replaced), reload it as a user would and measure it on the held-out cases.

    Args:
        task: ``"content"`` (:class:`~editf1.validation.labelled.ContentItem` items) or
            ``"theme"`` (:class:`~editf1.validation.labelled.ThemeItem`).
        base: base model reference (:mod:`editf1.judges.generative.loading`).
        data_name: where the items come from, for the record and the card.
        n_resamples: bootstrap resamples of the held-out agreement.

    Returns:
        The training record written to ``output/editf1_judge.json``, with ``agreement``.

    Raises:
        ValueError: unknown task, items of the wrong kind, fewer than two cases, an
            item longer than the model's context, too few ``n_resamples``.
        ModelNotAvailableError: the base model is not here and cannot be fetched.
    """
    import torch

    from editf1.judges.generative.loading import JUDGE_CONFIG
    from editf1.stats import check_n_resamples

    check_n_resamples(n_resamples)

    settings = settings or LoraTraining()
    data = _build_training_set(task, items, base, settings, chat_template)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    fit = _fit(data, settings, device, progress)
    # peft's loaders read the base from adapter_config.json; the record keeps the pinned one
    peft_config = fit.model.peft_config["default"]
    peft_config.base_model_name_or_path, peft_config.revision = data.resolved.peft_base
    # only LoRA weights are trained; the base's embeddings are never saved with them
    fit.model.save_pretrained(output, safe_serialization=True, save_embedding_layers=False)
    record = _record(task, items, data, fit, settings, device, data_name)
    # the held-out judge loads the adapter as a user would, record included
    (output / JUDGE_CONFIG).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    record["agreement"] = _held_out_agreement(
        task, output, data.test, device, n_resamples, settings.seed, data_name
    )
    (output / JUDGE_CONFIG).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def _held_out_agreement(task, folder, test, device, n_resamples, seed, data_name) -> dict:
    from editf1.judges.generative.judges import LLMContentJudge, LLMThemeJudge, load_judge_model
    from editf1.validation.agreement import (
        content_agreement_report,
        judge_content_items,
        judge_theme_items,
        theme_agreement_report,
        to_jsonable,
    )

    load_judge_model.cache_clear()  # the folder may have held an earlier adapter
    judge_class, judge_items, agreement_report = {
        "content": (LLMContentJudge, judge_content_items, content_agreement_report),
        "theme": (LLMThemeJudge, judge_theme_items, theme_agreement_report),
    }[task]
    judge = judge_class(adapter=str(folder), device=device)
    report = agreement_report(test, judge_items(judge, test), n_resamples=n_resamples, seed=seed)
    about = {
        "judge": judge.fingerprint,
        "data": f"{data_name}, held-out cases",
        "split": "test",
        "n_resamples": n_resamples,
        "seed": seed,
    }
    return to_jsonable(about | report)
