"""The embedded judges' settings: a dataclass each, which is their parameter file."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import ClassVar

from editf1.judges.base import (
    RUN_FLOOR_HELP,
    THRESHOLD_HELP,
    JudgeConfig,
    check_finite,
    check_integer,
    check_number,
)
from editf1.judges.key_terms import VETO_HELP, check_veto
from editf1.themes import check_theme

__all__ = [
    "CONTENT_FEATURES",
    "DEFAULT_CONTENT_PARAMS",
    "DEFAULT_SPAN_MARGIN",
    "DEFAULT_THEME_PARAMS",
    "SPAN_EMBEDDINGS",
    "THEME_SENTENCE_FEATURES",
    "EmbeddingContentConfig",
    "EmbeddingThemeConfig",
    "digest",
    "load_params",
    "read_config",
]

#: The default content judge's parameter file (fitted on K-QA, veto on every kind).
DEFAULT_CONTENT_PARAMS = "content_judge_veto_nc.json"
#: The theme judge's default parameter file (``benchmarks/theme_judge_real.py``).
DEFAULT_THEME_PARAMS = "theme_judge_v2.json"
#: The content judge's features, in the order its logit adds them.
CONTENT_FEATURES = ("cosine", "word_recall")
#: Most a run's cosine is assumed to exceed its best sentence's (the bounded search).
DEFAULT_SPAN_MARGIN = 0.3
#: How a run of draft sentences is embedded: as its own text, or composed.
SPAN_EMBEDDINGS = ("encoded", "composed")
#: Sentence features the theme judge can add to the embedding.
THEME_SENTENCE_FEATURES = ("question_mark", "leading_if")


@dataclass(frozen=True)
class EmbeddingContentConfig(JudgeConfig):
    """Settings of the embedded content judge (``edit-f1 train-judge embedding-content``'s file).

    Raises:
        ValueError: naming the field that is out of range or unknown.
    """

    OPTIONS: ClassVar[dict[str, str]] = {
        "params_file": "a parameter file written by edit-f1 train-judge embedding-content "
        "(default: the shipped one)"
    }
    SETTINGS_FROM = "params_file"

    weights: dict[str, float] = field(
        metadata={"help": "logistic-regression weight of each feature (fitted)"}
    )
    bias: float = field(metadata={"help": "logistic-regression intercept (fitted)"})
    window: int = field(
        metadata={"help": "longest run of adjacent draft sentences tried as one span"}
    )
    features: tuple[str, ...] = field(
        default=CONTENT_FEATURES,
        metadata={"help": f"what the logit adds, in order, from {list(CONTENT_FEATURES)}"},
    )
    threshold: float = field(default=0.5, metadata={"help": THRESHOLD_HELP})
    veto: tuple[str, ...] = field(default=(), metadata={"help": VETO_HELP})
    run_floor: float = field(default=0.0, metadata={"help": RUN_FLOOR_HELP})
    span_embedding: str = field(
        default="encoded",
        metadata={
            "help": "how a run of sentences is embedded: encoded (its text, as the shipped "
            "weights were fitted) or composed (from its sentences' embeddings; faster)"
        },
    )
    span_margin: float | None = field(
        default=DEFAULT_SPAN_MARGIN,
        metadata={
            "help": "most a run's cosine may exceed its best sentence's, in [0, 2]: runs "
            "that could not match are not encoded; null encodes every run"
        },
    )

    def __post_init__(self) -> None:
        features = tuple(self.features)
        unknown = sorted(set(features) - set(CONTENT_FEATURES))
        if unknown:
            raise ValueError(f"unknown content features {unknown}; known: {list(CONTENT_FEATURES)}")
        if not isinstance(self.weights, dict):
            raise ValueError(f"weights must be an object of feature: weight, got {self.weights!r}")
        missing = [f for f in features if f not in self.weights]
        if missing:
            raise ValueError(f"the parameters have no weight for feature(s) {missing}")
        if self.span_embedding not in SPAN_EMBEDDINGS:
            raise ValueError(
                f"span_embedding must be one of {list(SPAN_EMBEDDINGS)}, "
                f"got {self.span_embedding!r}"
            )
        settings = {
            "features": features,
            "weights": {f: check_finite(f"weights[{f!r}]", self.weights[f]) for f in features},
            "bias": check_finite("bias", self.bias),
            "window": check_integer("window", self.window, 1),
            "threshold": check_number("threshold", self.threshold, 0.0, 1.0),
            "run_floor": check_number("run_floor", self.run_floor, 0.0, 1.0),
            "veto": check_veto(self.veto),
            "span_margin": check_number("span_margin", self.span_margin, 0, 2, allow_none=True),
        }
        for name, value in settings.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class EmbeddingThemeConfig(JudgeConfig):
    """Settings of the embedded theme judge (``edit-f1 train-judge embedding-theme``'s file).

    A sentence's logits are ``x @ coef.T + intercept``: ``x`` is its embedding, then the
    sentence features of ``features["sentence"]``, then 0/1 word n-grams of
    ``features["words"]`` (``{"ngram_range": [1, 2], "vocabulary": [...]}``).

    Raises:
        ValueError: for a label that is not a theme, an unknown sentence feature, or
            ``coef`` / ``intercept`` without one row per label.
    """

    OPTIONS: ClassVar[dict[str, str]] = {
        "params_file": "a parameter file written by edit-f1 train-judge embedding-theme "
        "(default: the shipped one)"
    }
    SETTINGS_FROM = "params_file"

    labels: tuple[str, ...] = field(metadata={"help": "the themes, one per row of coef"})
    coef: list = field(metadata={"help": "weights, labels x features (fitted)"})
    intercept: list = field(metadata={"help": "one intercept per label (fitted)"})
    features: dict = field(
        default_factory=dict,
        metadata={"help": "what x holds besides the embedding: sentence features and word n-grams"},
    )

    def __post_init__(self) -> None:
        labels = tuple(check_theme(label) for label in self.labels)
        unknown = sorted(set(self.features.get("sentence", ())) - set(THEME_SENTENCE_FEATURES))
        if unknown:
            raise ValueError(
                f"unknown theme sentence features {unknown}; known: {list(THEME_SENTENCE_FEATURES)}"
            )
        if len(self.coef) != len(labels) or len(self.intercept) != len(labels):
            raise ValueError(
                f"coef and intercept need one row per label ({len(labels)}), got "
                f"{len(self.coef)} and {len(self.intercept)}"
            )
        object.__setattr__(self, "labels", labels)


def load_params(name: str) -> dict:
    """A parameter file shipped in ``editf1/data`` by name, else the JSON file at that path.

    Raises:
        FileNotFoundError: if ``name`` is neither shipped nor a file.
        ValueError: naming the file, for a file that is not a JSON object.
    """
    shipped = resources.files("editf1.data").joinpath(name)
    # a name in editf1/data, else a path (an absolute path joins as itself)
    path = shipped if shipped.is_file() else Path(name)
    if not path.is_file():
        raise FileNotFoundError(
            f"params_file {name!r} is neither shipped in editf1/data nor a file"
        )
    try:
        params = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"params_file {name}: not a JSON parameter file ({error.msg} at line "
            f"{error.lineno}, column {error.colno})"
        ) from None
    if not isinstance(params, dict):
        raise ValueError(f"params_file {name}: expected a JSON object, got {type(params).__name__}")
    return params


def read_config(config_class, params_file: str | None, config, default_file: str, overrides):
    """``config``, else ``params_file``'s (default ``default_file``), ``overrides`` replaced.

    Raises:
        ValueError: both ``config`` and ``params_file``, a missing or bad setting, unknown options.
        FileNotFoundError: if the file is neither shipped nor a file.
    """
    if config is not None and params_file is not None:
        raise ValueError("give config or params_file, not both")
    if config is None:
        params = load_params(params_file or default_file)
        try:
            config = config_class.from_json(params)
        except TypeError as error:  # a required field missing
            raise ValueError(f"params_file {params_file or default_file}: {error}") from None
    return config.replace(**overrides) if overrides else config


def digest(payload) -> str:
    """The first 10 hex digits of the SHA-256 of ``payload``'s sorted-key JSON."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:10]
