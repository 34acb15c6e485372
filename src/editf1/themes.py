"""The clinical response themes of Seegmiller et al. (arXiv 2601.11344, §3.2, Table 3),
with the one-line definition and example sentence of each that annotators label by."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "CLINICAL_THEMES", "OTHER", "THEMES", "THEME_DEFINITIONS", "THEME_RULES", "ThemeDefinition",
    "check_theme",
]  # fmt: skip

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


#: Each of :data:`THEMES`: its definition and example from the team's annotation guide.
THEME_DEFINITIONS: dict[str, ThemeDefinition] = {
    "Empathetic communication": ThemeDefinition(
        "acknowledging feelings, encouragement, reassurance of support",
        "You've been doing a great job with your tapering.",
    ),
    "Symptom-related follow-up questions": ThemeDefinition(
        "asking the patient about symptoms (location, timing, severity, change)",
        "Has your pain only been in your lower back?",
    ),
    "Medication-related follow-up questions": ThemeDefinition(
        "asking about intake, doses, side effects of medications",
        "Have you been taking your amoxicillin regularly?",
    ),
    "Medical assessment explanation": ThemeDefinition(
        "what the clinician thinks is going on, test results, likelihoods",
        "Your iron levels look normal.",
    ),
    "Medical planning instruction": ThemeDefinition(
        "what to do medically: tests, treatments, dose changes, urgent evaluation",
        "Let's get you in for a bloodwork test.",
    ),
    "Logistics": ThemeDefinition(
        "scheduling, clinic policy, billing, operations",
        "We can only offer telehealth in the state.",
    ),
    "Care coordination": ThemeDefinition(
        "hand-offs, referrals, promises of future contact by the care team",
        "We'll reach out after we receive the results.",
    ),
    "Contingency planning": ThemeDefinition(
        "if-then safety netting, backup plans",
        "If you're feeling dizzy, please call triage.",
    ),
    OTHER: ThemeDefinition(
        "greetings, sign-offs, thanks, filler, anything that fits no theme above",
        "Thank you for your message.",
    ),
}

#: The annotation guide's decision rules for sentences that are easy to label two ways.
THEME_RULES: tuple[str, ...] = (
    "A plain request to come in, be seen or schedule a visit, for an exam, an evaluation "
    "or a discussion, is Logistics.",
    "A visit sentence that names a specific test or treatment (labs, imaging, an MRI, "
    "prescribing) is Medical planning instruction.",
    "Going to the emergency department or being seen immediately, with no condition "
    "attached, is Medical planning instruction (urgent triage, not scheduling).",
    "Referrals and hand-offs are Care coordination; a call whose only purpose is the "
    "appointment is Logistics.",
    "If-then safety netting is Contingency planning, including its then-sentence when it "
    "stands alone.",
    '"I am concerned about X" with no action in the sentence is Medical assessment explanation.',
    "A sentence with several clauses takes the theme of most of its content; when two "
    "clauses tie, the one that asks the patient to do something wins.",
    "A question about a symptom caused by a medication is a symptom question unless it "
    "asks about the medication's intake or dose.",
    "Greetings and sign-offs are Other.",
)


def check_theme(label: str) -> str:
    """Return ``label`` if it is one of :data:`THEMES`, else ValueError listing them."""
    if label not in THEMES:
        raise ValueError(f"unknown theme {label!r}; expected one of {list(THEMES)}")
    return label
