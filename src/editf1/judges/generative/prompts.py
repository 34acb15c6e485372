"""The judges' prompts (Seegmiller et al., arXiv 2601.11344, Appendix C), split for reuse.

Every prompt is ``prefix + item + suffix``: the *prefix* is what several items share
(the instructions and, for the content judge, the draft), the *item* is the one
sentence being judged. The prefix is tokenized once, the item and suffix separately,
and the model sees ``prefix_ids + suffix_ids`` (the item is part of the suffix), in
training and in judging alike, so the key/value cache of a prefix can be computed once
and shared by all sentences that follow it.

A prompt's text is versioned (:data:`CONTENT_PROMPT`, :data:`THEME_PROMPT`): an adapter
records the version it was trained with and is refused with another. A judge behind a
server (:mod:`editf1.judges.server`) sends the same text as chat messages
(:func:`content_messages`, :func:`theme_messages`); the server applies its chat template.
"""

from __future__ import annotations

from dataclasses import dataclass

from editf1.themes import THEMES

__all__ = [
    "CONTENT_PROMPT",
    "NO_MATCH",
    "THEME_PROMPT",
    "PromptFormat",
    "content_messages",
    "content_prompt",
    "theme_messages",
    "theme_prompt",
]

#: The content judge's answer when the draft does not say what the sentence says.
NO_MATCH = "NO MATCH"

#: Prompt versions, stored with every adapter.
CONTENT_PROMPT = "content-v1"
THEME_PROMPT = "theme-v1"

_CONTENT_INSTRUCTIONS = (
    "You compare a clinician's reply to a patient message with a draft reply written by "
    "an AI assistant. You are given the draft and one sentence of the clinician's reply. "
    "If the draft already says what the sentence says, so that the clinician would not "
    "need to write it, copy the part of the draft that says it, word for word. "
    f"Otherwise answer exactly: {NO_MATCH}."
)

_THEME_DESCRIPTIONS = {
    "Empathetic communication": "acknowledging the patient's feelings, reassurance, thanks",
    "Symptom-related follow-up questions": "asking about symptoms, onset, severity, changes",
    "Medication-related follow-up questions": "asking about medicines, doses, side effects",
    "Medical assessment explanation": "explaining what is likely going on and why",
    "Medical planning instruction": "what the patient should do: treatment, tests, self-care",
    "Logistics": "scheduling, billing, forms, refill processing, office operations",
    "Care coordination": "involving or referring to other clinicians, teams or services",
    "Contingency planning": "what to do if things change or get worse, when to seek care",
    "Other": "greetings, sign-offs and anything else",
}

_THEME_INSTRUCTIONS = (
    "Label one sentence of a clinician's reply to a patient message with its theme. "
    "Answer with the theme's name only, one of:\n"
    + "\n".join(f"- {theme}: {_THEME_DESCRIPTIONS[theme]}" for theme in THEMES)
)

_ITEM = "\u2063EDITF1-ITEM\u2063"  # the item's place; the last one is split on


@dataclass(frozen=True)
class PromptFormat:
    """How prompts are laid out for one tokenizer.

    Args:
        tokenizer: a fast ``transformers`` tokenizer.
        chat: wrap the prompt in the tokenizer's chat template (system and user turns,
            then the assistant header); else plain text ending in ``"Answer:"``.

    Raises:
        ValueError: if ``chat`` is True and the tokenizer has no chat template.
    """

    tokenizer: object
    chat: bool

    def __post_init__(self) -> None:
        if self.chat and not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("chat=True, but the tokenizer has no chat template")

    @property
    def name(self) -> str:
        return "chat-template" if self.chat else "plain"

    def encode(self, system: str, before_item: str) -> tuple[list[int], str]:
        """Token ids of the shared prefix, and the text that follows the item.

        Returns:
            ``(prefix_ids, suffix_text)``; an item's suffix ids are
            :meth:`suffix` ``(item, suffix_text)``.
        """
        if self.chat:
            text = self.tokenizer.apply_chat_template(
                [
                    {"role": "system", "content": system},
                    {"role": "user", "content": before_item + _ITEM},
                ],
                tokenize=False,
                add_generation_prompt=True,
            )
            prefix, _, after = text.rpartition(_ITEM)
            return self.tokenizer(prefix, add_special_tokens=False).input_ids, after
        prefix = f"{system}\n\n{before_item}"
        return self.tokenizer(prefix, add_special_tokens=True).input_ids, "\nAnswer:"

    def suffix(self, item: str, after: str) -> list[int]:
        """Token ids of one item and what follows it (up to where the answer starts)."""
        return self.tokenizer(item + after, add_special_tokens=False).input_ids


def _content_before(draft: str) -> str:
    return f"Draft reply:\n{draft}\n\nClinician's sentence: "


_THEME_BEFORE = "Sentence: "


def content_prompt(fmt: PromptFormat, draft: str) -> tuple[list[int], str]:
    """Prefix ids and suffix text of the content judge's prompt for one draft.

    The prefix holds the instructions and the draft; the item is a reference sentence.
    """
    return fmt.encode(_CONTENT_INSTRUCTIONS, _content_before(draft))


def theme_prompt(fmt: PromptFormat) -> tuple[list[int], str]:
    """Prefix ids and suffix text of the theme judge's prompt (shared by every sentence)."""
    return fmt.encode(_THEME_INSTRUCTIONS, _THEME_BEFORE)


def content_messages(draft: str, sentence: str) -> list[dict[str, str]]:
    r"""The content judge's prompt for one reference sentence as chat messages: the text
    :func:`content_prompt` wraps in a chat template, for a server to wrap in its own.

    Returns:
        ``[{"role": "system", ...}, {"role": "user", ...}]``.

    >>> [m["role"] for m in content_messages("Rest.", "Please rest.")]
    ['system', 'user']
    >>> content_messages("Rest.", "Please rest.")[1]["content"]
    "Draft reply:\nRest.\n\nClinician's sentence: Please rest."
    """
    return [
        {"role": "system", "content": _CONTENT_INSTRUCTIONS},
        {"role": "user", "content": _content_before(draft) + sentence},
    ]


def theme_messages(sentence: str) -> list[dict[str, str]]:
    """The theme judge's prompt for one sentence as chat messages (see
    :func:`content_messages`).

    >>> theme_messages("Call us.")[1]
    {'role': 'user', 'content': 'Sentence: Call us.'}
    """
    return [
        {"role": "system", "content": _THEME_INSTRUCTIONS},
        {"role": "user", "content": _THEME_BEFORE + sentence},
    ]
