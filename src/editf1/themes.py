"""The clinical response themes of Seegmiller et al. (arXiv 2601.11344, §3.2, Table 3),
with the one-line definition and example sentence of each that annotators label by."""

from __future__ import annotations

from typing import NamedTuple

from editf1.data import read_json

__all__ = [
    "CLINICAL_THEMES",
    "OTHER",
    "THEMES",
    "THEME_DEFINITIONS",
    "THEME_RULES",
    "ThemeDefinition",
    "check_theme",
]

#: The eight clinical themes the paper's tables score (Tables 5, 14, 15).
CLINICAL_THEMES: tuple[str, ...] = (
    "Empathetic communication",
    "Symptom-related follow-up questions",
    "Medication-related follow-up questions",
    "Medical assessment explanation",
    "Medical planning instruction",
    "Logistics",
    "Care coordination",
    "Contingency planning",
)

#: The ninth label, for sentences that fit no clinical theme (greetings, sign-offs, filler).
OTHER = "Other"

#: All nine labels a theme judge may return.
THEMES: tuple[str, ...] = (*CLINICAL_THEMES, OTHER)


class ThemeDefinition(NamedTuple):
    """What a theme is, in one line, and an example sentence of it."""

    definition: str
    example: str


_GUIDE = read_json("theme_guide.json")

#: Each of :data:`THEMES`: its definition and example from the team's annotation guide
#: (``data/theme_guide.json``).
THEME_DEFINITIONS: dict[str, ThemeDefinition] = {
    theme: ThemeDefinition(**entry) for theme, entry in _GUIDE["definitions"].items()
}

#: The annotation guide's decision rules for sentences that are easy to label two ways.
THEME_RULES: tuple[str, ...] = tuple(_GUIDE["rules"])


def check_theme(label: str) -> str:
    """Return ``label`` if it is one of :data:`THEMES`, else ValueError listing them."""
    if label not in THEMES:
        raise ValueError(f"unknown theme {label!r}; expected one of {list(THEMES)}")
    return label
