"""The settings of a LoRA fine-tuning run of a generative judge; a field with
``metadata["flag"]`` is also that ``edit-f1 train-judge`` option. Defaults: Buckley et al.
(arXiv 2609.12822), but the learning rate and target modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["LoraTraining", "defaults_text"]


@dataclass(frozen=True)
class LoraTraining:
    """Settings of a LoRA fine-tuning run.

    Raises:
        ValueError: a count < 1, ``test_size`` outside (0, 1), epochs or learning rate <= 0.
    """

    rank: int = field(default=8, metadata={"help": "LoRA rank (r)", "flag": "lora-rank"})
    alpha: int = field(
        default=16, metadata={"help": "LoRA alpha (lora_alpha)", "flag": "lora-alpha"}
    )
    dropout: float = field(default=0.0, metadata={"help": "LoRA dropout (lora_dropout)"})
    target_modules: tuple[str, ...] | None = field(
        default=None,
        metadata={"help": "module names to adapt; None: peft's default for the architecture"},
    )
    learning_rate: float = field(
        default=2e-4, metadata={"help": "AdamW peak learning rate", "flag": "learning-rate"}
    )
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay"})
    warmup_ratio: float = field(
        default=0.1, metadata={"help": "share of steps of linear warm-up, then linear decay to 0"}
    )
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping"})
    epochs: float = field(
        default=1.0,
        metadata={"help": "passes over the (resampled) training items", "flag": "epochs"},
    )
    batch_size: int = field(
        default=4, metadata={"help": "items per optimisation step", "flag": "batch-size"}
    )
    seed: int = field(
        default=0,
        metadata={"help": "seed of the split, the resampling, LoRA's initialisation and the order"},
    )
    test_size: float = field(
        default=0.4,
        metadata={"help": "share of cases held out for the agreement report", "flag": "test-size"},
    )

    def __post_init__(self) -> None:
        for name in ("rank", "alpha", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 < self.test_size < 1:
            raise ValueError(f"test_size must be in (0, 1), got {self.test_size}")
        if self.epochs <= 0 or self.learning_rate <= 0:
            raise ValueError("epochs and learning_rate must be > 0")


def defaults_text() -> str:
    """The default settings in words, for the command's help and ``docs/training.md``.

    >>> defaults_text()  # doctest: +NORMALIZE_WHITESPACE
    'rank 8, alpha 16, AdamW with weight decay 0.01, linear schedule with 10% warm-up,
    gradient clipping 1.0, 1 epoch(s), batch size 4'
    """
    d = LoraTraining()
    return (
        f"rank {d.rank}, alpha {d.alpha}, AdamW with weight decay {d.weight_decay}, linear "
        f"schedule with {d.warmup_ratio:.0%} warm-up, gradient clipping {d.max_grad_norm}, "
        f"{d.epochs:g} epoch(s), batch size {d.batch_size}"
    )
