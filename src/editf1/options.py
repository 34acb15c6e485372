"""The scoring options, declared once (default, help and check of each), which every shell
reads. Imports no model or data library (``edit-f1 --help`` reads it).
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
    """Return ``zero_division`` if it is ``"warn"``, 0.0 or 1.0; else ValueError."""
    if zero_division == "warn" or (
        not isinstance(zero_division, (bool, str)) and zero_division in (0, 1)
    ):
        return zero_division
    raise ValueError(f"zero_division must be 'warn', 0.0 or 1.0, got {zero_division!r}")


@dataclass(frozen=True)
class ScoringOptions:
    """How pairs are scored (Seegmiller et al., arXiv 2601.11344, §3). TypeError for an
    option of the wrong type; ValueError for a bad ``zero_division``, a size below 1, or
    ``leave_out_other`` without a theme judge.
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
    leave_out_other: bool = field(
        default=False,
        metadata={
            "help": "leave reply and draft sentences the theme judge labels Other "
            "(greetings, sign-offs, names, thanks) out of the content counts; the paper "
            "counts every sentence"
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
        for spec in fields(self):
            kind = {"bool": bool, "int": int, "dict | None": dict}.get(spec.type)
            if kind is not None:
                value = getattr(self, spec.name)
                minimum = 1 if kind is int else None
                value = check_option(spec.name, value, kind, minimum=minimum, optional=kind is dict)
                object.__setattr__(self, spec.name, value)
        object.__setattr__(self, "zero_division", check_zero_division(self.zero_division))
        if self.leave_out_other and self.theme_judge is None:
            raise ValueError("leave_out_other needs a theme judge (its Other labels)")


def option_help(name: str) -> tuple[object, str]:
    """``(default, help)`` of the option ``name``; KeyError for an unknown name."""
    spec = {f.name: f for f in fields(ScoringOptions)}[name]
    return spec.default, spec.metadata["help"]
