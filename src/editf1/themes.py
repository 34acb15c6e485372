"""The clinical response themes of Seegmiller et al. (arXiv 2601.11344, §3.2, Table 3)."""

from __future__ import annotations

__all__ = ["CLINICAL_THEMES", "OTHER", "THEMES", "check_theme"]

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


def check_theme(label: str) -> str:
    """Return ``label`` if it is one of :data:`THEMES`.

    Raises:
        ValueError: naming the label and listing the valid ones.
    """
    if label not in THEMES:
        raise ValueError(f"unknown theme {label!r}; expected one of {list(THEMES)}")
    return label
