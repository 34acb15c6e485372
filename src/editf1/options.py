"""The scoring options, declared once: what :class:`~editf1.scorer.EditF1Scorer`,
``editf1.score``, the ``evaluate`` module's ``compute`` and ``edit-f1 score`` take.

:class:`ScoringOptions` holds each option's default and help
(``field(metadata={"help": ...})``), and its ``__post_init__`` is the one check of them;
the shells read their defaults and help from its fields. Importing this module imports
no model or data library (``edit-f1 --help`` reads it).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, fields
from typing import TYPE_CHECKING, Literal

from editf1.inputs import check_option

if TYPE_CHECKING:
    from editf1.judges import ContentJudge, ThemeJudge

__all__ = ["ScoringOptions", "ZeroDivision", "check_zero_division", "option_help"]

#: The value of an undefined ratio: ``"warn"`` (0.0 and a warning), 0.0 or 1.0.
ZeroDivision = Literal["warn"] | float


def check_zero_division(zero_division: ZeroDivision) -> ZeroDivision:
    """Return ``zero_division`` if it is ``"warn"``, 0.0 or 1.0 (the one check of it).

    Raises:
        ValueError: for any other value.

    >>> check_zero_division(1), check_zero_division("warn")
    (1, 'warn')
    """
    if zero_division == "warn" or (
        not isinstance(zero_division, (bool, str)) and zero_division in (0, 1)
    ):
        return zero_division
    raise ValueError(f"zero_division must be 'warn', 0.0 or 1.0, got {zero_division!r}")


@dataclass(frozen=True)
class ScoringOptions:
    """How pairs are scored (Seegmiller et al., arXiv 2601.11344, §3): the judges, the
    themes counted, the value of undefined ratios, and how the work is batched and shown.

    ``content_judge`` and ``theme_judge`` may be given by position.

    Raises:
        TypeError: for an option of the wrong type, naming the type it takes and the type
            given (``include_other`` and ``progress`` take a bool only, ``batch_size``
            and ``theme_cache_size`` an int, not a bool; the judge options a dict or
            None).
        ValueError: for a bad ``zero_division``, or ``batch_size`` / ``theme_cache_size``
            below 1. (Judge names are checked when the judges are loaded,
            :func:`editf1.judges.load_content_judge`.)

    >>> ScoringOptions("exact", None, zero_division=0.0).batch_size
    128
    """

    content_judge: str | ContentJudge = field(
        default="embedding",
        metadata={
            "help": "the content judge: a name of editf1.judges.CONTENT_JUDGES or a "
            "ContentJudge object"
        },
    )
    theme_judge: str | ThemeJudge | None = field(
        default="embedding",
        metadata={
            "help": "the theme judge: a name of editf1.judges.THEME_JUDGES, a ThemeJudge "
            "object, or None for no theme-level scores"
        },
    )
    _: KW_ONLY
    content_judge_options: dict | None = field(
        default=None,
        metadata={
            "help": 'the options of a named content judge, e.g. {"threshold": 0.7} (the '
            "fields of its config)"
        },
    )
    theme_judge_options: dict | None = field(
        default=None, metadata={"help": "the options of a named theme judge"}
    )
    include_other: bool = field(
        default=False,
        metadata={
            "help": "count the ninth theme, Other, in theme-level scores (the paper's "
            "Tables 5, 14 and 15 score the eight clinical themes)"
        },
    )
    zero_division: ZeroDivision = field(
        default="warn",
        metadata={
            "help": "the value of an undefined ratio: warn (0.0 and one warning naming the "
            "rows), 0 or 1"
        },
    )
    batch_size: int = field(
        default=128, metadata={"help": "pairs handed to the judges at once (memory, not results)"}
    )
    progress: bool = field(
        default=False, metadata={"help": "show a progress bar, advanced as pairs are judged"}
    )
    theme_cache_size: int = field(
        default=200_000,
        metadata={"help": "sentence texts whose theme labels are kept between batches"},
    )

    def __post_init__(self) -> None:
        checked = {
            "include_other": check_option("include_other", self.include_other, bool),
            "progress": check_option("progress", self.progress, bool),
            "batch_size": check_option("batch_size", self.batch_size, int, minimum=1),
            "theme_cache_size": check_option(
                "theme_cache_size", self.theme_cache_size, int, minimum=1
            ),
            "zero_division": check_zero_division(self.zero_division),
        }
        for name in ("content_judge_options", "theme_judge_options"):
            check_option(name, getattr(self, name), dict, optional=True)
        for name, value in checked.items():
            object.__setattr__(self, name, value)


def option_help(name: str) -> tuple[object, str]:
    """``(default, help)`` of the option ``name`` of :class:`ScoringOptions`.

    Raises:
        KeyError: for a name that is not an option.

    >>> option_help("batch_size")
    (128, 'pairs handed to the judges at once (memory, not results)')
    """
    spec = {f.name: f for f in fields(ScoringOptions)}[name]
    return spec.default, spec.metadata["help"]
