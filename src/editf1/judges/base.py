"""The judge interface, step 2 of the pipeline, batch-first (Seegmiller et al., arXiv
2601.11344, Algorithm 1, §3.2, Appendix C). An answer that could not be used (status
``"unusable"``, ``theme=None``) is counted against the pair and reported, never scored.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

if TYPE_CHECKING:
    from editf1.segment import Sentence

__all__ = [
    "RUN_FLOOR_HELP",
    "THRESHOLD_HELP",
    "ContentJudge",
    "ContentJudgement",
    "JudgeConfig",
    "JudgeRequest",
    "ThemeJudge",
    "ThemeJudgement",
    "VetoedSpan",
    "check_finite",
    "check_integer",
    "check_number",
]

#: Help texts of settings every span-answering judge's config has.
THRESHOLD_HELP = "match probability in [0, 1] at or above which the best span matches"
RUN_FLOOR_HELP = (
    "probability in [0, 1] each sentence of a run must reach alone for the run to be a candidate"
)

Status = Literal["match", "no_match", "unusable"]
STATUSES: tuple[str, ...] = ("match", "no_match", "unusable")


@dataclass(frozen=True)
class JudgeRequest:
    """One segmented pair: ``reference_sentences`` (each answered), the draft ``prediction``
    (spans index into it) and its ``prediction_sentences``.
    """

    reference_sentences: tuple[Sentence, ...]
    prediction: str
    prediction_sentences: tuple[Sentence, ...]


@dataclass(frozen=True)
class VetoedSpan:
    """The draft span a veto ruled out that would otherwise have been the match: its
    ``kinds`` of conflict (:data:`editf1.judges.key_terms.CONFLICT_KINDS` order) and its
    ``probability`` without the veto.
    """

    span: Sentence
    kinds: tuple[str, ...]
    probability: float

    def to_dict(self) -> dict:
        return {
            "span": self.span.to_dict(),
            "kinds": list(self.kinds),
            "probability": self.probability,
        }


@dataclass(frozen=True)
class ContentJudgement:
    """A content judge's answer for one reference sentence: ``status``, the verbatim draft
    ``span`` of a ``"match"``, the judge's ``score`` in [0, 1] where it has one, a
    generative judge's ``raw`` output, and a NO MATCH's :class:`VetoedSpan` if any.

    Raises:
        ValueError: for a bad status, score (outside [0, 1], NaN), span or vetoed span.
    """

    status: Status
    span: Sentence | None = None
    score: float | None = None
    raw: str | None = None
    vetoed: VetoedSpan | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"a ContentJudgement's status is one of {list(STATUSES)}")
        if self.score is not None and not (
            isinstance(self.score, numbers.Real) and 0.0 <= self.score <= 1.0
        ):  # NaN fails too: it would reach the output as invalid JSON
            raise ValueError("a ContentJudgement's score is None or a number in [0, 1]")
        if (self.status == "match") != (self.span is not None):
            raise ValueError("a ContentJudgement has a span if and only if status is 'match'")
        if self.vetoed is not None and self.status != "no_match":
            raise ValueError("only a NO MATCH ContentJudgement has a vetoed span")


@dataclass(frozen=True)
class ThemeJudgement:
    """A theme judge's answer for one sentence: ``theme`` (``None`` when unusable), its
    ``score`` in [0, 1] where the judge has one, and a generative judge's ``raw`` output.
    """

    theme: str | None
    score: float | None = None
    raw: str | None = None

    @property
    def usable(self) -> bool:
        return self.theme is not None


class JudgeConfig:
    """What the judges' settings dataclasses share (peft's ``LoraConfig`` shape): fields with
    ``metadata={"help": ...}``, checks in ``__post_init__``, :meth:`to_json` /
    :meth:`from_json` as the parameter file; a judge loaded by name takes the fields and
    :attr:`OPTIONS` as options.
    """

    #: Keyword options besides the fields, each with its help text.
    OPTIONS: ClassVar[dict[str, str]] = {}
    #: The option of :attr:`OPTIONS` naming the file the settings' defaults come from.
    SETTINGS_FROM: ClassVar[str | None] = None

    def to_json(self) -> dict:
        """The settings as a JSON object (lists for tuples)."""
        return {
            f.name: _jsonable(getattr(self, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
        }

    @classmethod
    def from_json(cls, data: dict):
        """Settings from a JSON object; keys that are not fields are ignored.

        Raises:
            TypeError: for a required field ``data`` lacks.
            ValueError: from ``__post_init__``, naming the field.
        """
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})

    def replace(self, **changes):
        """These settings with some fields changed.

        Raises:
            ValueError: naming unknown fields (and the known ones); or from ``__post_init__``.
        """
        names = sorted(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise ValueError(
                f"unknown option(s) {unknown} of {type(self).__name__}; known: {names}"
            )
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


def check_number(name: str, value, low: float, high: float, *, allow_none: bool = False):
    """A setting's ``value`` as a float in [low, high] (or ``None`` where allowed).

    Raises:
        ValueError: naming the setting, for a bool, a non-number, NaN or a value outside.
    """
    if value is None and allow_none:
        return None
    hint = " (None in Python, null on the command line)" if allow_none else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number in [{low:g}, {high:g}]{hint}, got {value!r}")
    if not low <= value <= high:  # also False for NaN
        raise ValueError(f"{name} must be in [{low:g}, {high:g}]{hint}, got {value!r}")
    return float(value)


def check_finite(name: str, value) -> float:
    """A setting's ``value`` as a finite float; ValueError naming the setting otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_integer(name: str, value, minimum: int) -> int:
    """A setting's ``value`` as an int of at least ``minimum``; ValueError naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _jsonable(value):
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


class ContentJudge(abc.ABC):
    """Decides, per reference sentence, which verbatim draft span says the same thing."""

    @property
    @abc.abstractmethod
    def fingerprint(self) -> str:
        """A string naming the judge, its model and revision and its settings."""

    @abc.abstractmethod
    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        """N lists of one judgement per reference sentence, in order; a span's ``text`` is
        the draft at its offsets (or its :func:`~editf1.segment.plain_text`)."""


class ThemeJudge(abc.ABC):
    """Labels sentences with one of the nine themes."""

    @property
    @abc.abstractmethod
    def fingerprint(self) -> str:
        """A string naming the judge, its model and revision and its settings."""

    @abc.abstractmethod
    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        """One judgement per sentence text, in order."""
