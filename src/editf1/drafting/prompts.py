"""Chat prompts for a drafting model (Seegmiller et al., arXiv 2601.11344, §4.1.2 and
Appendix D): the drafting strategies and TADPOLE's rewrites of a draft, in this package's
wording (versioned by :data:`DRAFT_PROMPT`)."""

from __future__ import annotations

from collections.abc import Sequence

from editf1.judges.generative.prompts import _THEME_DESCRIPTIONS as THEME_DESCRIPTIONS
from editf1.themes import CLINICAL_THEMES, check_theme

__all__ = [
    "DRAFT_PROMPT",
    "STRATEGIES",
    "SYSTEM_PROMPT",
    "corrupt_messages",
    "enhance_messages",
    "few_shot_messages",
    "thematic_messages",
    "user_text",
    "zero_shot_messages",
]

#: Version of the wording below, recorded with every draft and preference row.
DRAFT_PROMPT = "draft-v1"

#: The drafting strategies (§4.1.2).
STRATEGIES = ("zero-shot", "thematic", "few-shot")

#: The instruction every drafting prompt starts with.
SYSTEM_PROMPT = (
    "You are a clinician replying to a patient's portal message. Use the EHR summary. "
    "Write the reply you would send: brief, accurate, and kind."
)

_THEMATIC_PROMPT = (
    f"{SYSTEM_PROMPT} Clinicians' replies are made of sentences of these themes; cover those "
    "this message needs, and no others:\n"
    + "\n".join(f"- {t}: {THEME_DESCRIPTIONS[t]}" for t in CLINICAL_THEMES)
)


def user_text(message: str, ehr_summary: str | None = None) -> str:
    """The user turn: the EHR summary (left out when missing or empty) and the message."""
    body = f"Patient message:\n{message}"
    return f"EHR summary:\n{ehr_summary}\n\n{body}" if ehr_summary else body


def zero_shot_messages(
    message: str, ehr_summary: str | None = None, system: str = SYSTEM_PROMPT
) -> list[dict]:
    """[system, user]: the instruction (``system``), then :func:`user_text`."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user_text(message, ehr_summary)},
    ]


def thematic_messages(message: str, ehr_summary: str | None = None) -> list[dict]:
    """[system, user]: the instruction with the eight clinical themes described
    (thematic prompting, §4.1.2), then :func:`user_text`."""
    return zero_shot_messages(message, ehr_summary, _THEMATIC_PROMPT)


def few_shot_messages(
    message: str, ehr_summary: str | None, examples: Sequence[tuple[str, str | None, str]]
) -> list[dict]:
    """[system, (user, assistant) per example, user]: 2 + 2k messages, the k ``examples``
    (``(message, ehr_summary or None, clinician reply)``, most similar first; the paper
    uses 5) as earlier turns."""
    turns = [{"role": "system", "content": SYSTEM_PROMPT}]
    for prior_message, prior_ehr, reply in examples:
        turns.append({"role": "user", "content": user_text(prior_message, prior_ehr)})
        turns.append({"role": "assistant", "content": reply})
    turns.append({"role": "user", "content": user_text(message, ehr_summary)})
    return turns


_ENHANCE = (
    "Rewrite the draft reply below so that it also covers the theme {theme} ({about}) "
    "as a clinician would for this patient; keep the rest of the draft. Answer with "
    "the reply only."
)
_CORRUPT = (
    "Rewrite the draft reply below without any sentence of the theme {theme} ({about}); "
    "keep every other sentence as it is. Answer with the reply only."
)


def _rewrite(message, ehr_summary, draft, theme, instruction: str) -> list[dict]:
    check_theme(theme)
    instruction = instruction.format(theme=theme, about=THEME_DESCRIPTIONS[theme])
    turns = zero_shot_messages(message, ehr_summary, f"{SYSTEM_PROMPT} {instruction}")
    turns[1]["content"] += f"\n\nDraft reply:\n{draft}"
    return turns


def enhance_messages(message: str, ehr_summary: str | None, draft: str, theme: str) -> list[dict]:
    """Ask for the draft rewritten to also cover ``theme`` (TADPOLE's r+, Appendix D).

    Raises:
        ValueError: for a theme not in :data:`editf1.themes.THEMES`.
    """
    return _rewrite(message, ehr_summary, draft, theme, _ENHANCE)


def corrupt_messages(message: str, ehr_summary: str | None, draft: str, theme: str) -> list[dict]:
    """Ask for the draft with the content of ``theme`` removed (TADPOLE's r−, Appendix D).

    Raises:
        ValueError: for a theme not in :data:`editf1.themes.THEMES`.
    """
    return _rewrite(message, ehr_summary, draft, theme, _CORRUPT)
