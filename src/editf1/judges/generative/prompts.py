"""The judges' prompts (Seegmiller et al., arXiv 2601.11344, Appendix C), versioned. A prompt
is a prefix (instructions, and for the content judge the draft), tokenized once and shared,
then a suffix holding the item; the model sees ``prefix_ids + suffix_ids`` in training and
judging alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from editf1.data import read_json
from editf1.themes import THEMES

__all__ = [
    "CONTENT_PROMPT",
    "NO_MATCH",
    "THEME_PROMPT",
    "PromptFormat",
    "content_messages",
    "content_prompt",
    "encode_text",
    "reads_no_match",
    "special_ids",
    "theme_messages",
    "theme_prompt",
]

#: The content judge's answer when the draft does not say what the sentence says.
NO_MATCH = "NO MATCH"

_WORDS = re.compile(r"[^\W_]+")


def reads_no_match(text: str) -> bool:
    """Whether ``text``'s words are "no" and "match" (any case, spacing, punctuation): such a
    text is the answer NO MATCH, never a draft span.

    >>> reads_no_match("No match."), reads_no_match("NO  MATCH"), reads_no_match("No matches")
    (True, True, False)
    """
    return _WORDS.findall(text.casefold()) == ["no", "match"]


#: Prompt versions, stored with every adapter (one trained with another is refused).
CONTENT_PROMPT = "content-v1"
THEME_PROMPT = "theme-v1"

#: The instructions' text (``editf1/data/judge_prompts.json``): a change needs a new version.
_TEXTS = read_json("judge_prompts.json")
_CONTENT_INSTRUCTIONS = _TEXTS["content_instructions"]
_THEME_DESCRIPTIONS = _TEXTS["theme_descriptions"]
_THEME_INSTRUCTIONS = "\n".join(
    [_TEXTS["theme_instructions"], *(f"- {t}: {_THEME_DESCRIPTIONS[t]}" for t in THEMES)]
)

_ITEM = "\u2063EDITF1-ITEM\u2063"  # the item's place; the last one is split on
_TEXT = "\u2063EDITF1-TEXT\u2063"  # the draft's place in the prefix


def special_ids(tokenizer) -> frozenset[int]:
    """The ids of a tokenizer's named special tokens and added tokens marked special."""
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    return frozenset(tokenizer.all_special_ids) | {
        i for i, token in added.items() if getattr(token, "special", False)
    }


def encode_text(
    tokenizer,
    text: str,
    user: tuple[int, int] | Sequence[tuple[int, int]],
    add_special_tokens: bool,
):
    """Token ids of ``text``, where the ``user`` character range(s) (a draft, a sentence) read
    special tokens as plain characters (so the text cannot forge a prompt turn), and those
    outside as special. Without a special token in the user part: one ordinary call's ids.
    """
    ranges = [user] if isinstance(user[0], int) else list(user)
    encoded = tokenizer(text, add_special_tokens=add_special_tokens, return_offsets_mapping=True)
    special = special_ids(tokenizer)
    forged = any(
        token in special and a < end and b > start
        for token, (a, b) in zip(encoded.input_ids, encoded.offset_mapping)
        for start, end in ranges
    )
    if not forged:
        return list(encoded.input_ids)

    def plain(piece: str, split: bool = False) -> list[int]:
        return tokenizer(piece, add_special_tokens=False, split_special_tokens=split).input_ids

    ids, done = [], 0
    for start, end in ranges:
        ids += plain(text[done:start]) + plain(text[start:end], split=True)
        done = end
    ids += plain(text[done:])
    if not add_special_tokens:
        return ids
    around, bare = tokenizer("a").input_ids, plain("a")  # what the tokenizer adds around
    k = next(i for i in range(len(around)) if around[i : i + len(bare)] == bare)
    return around[:k] + ids + around[k + len(bare) :]


@dataclass(frozen=True)
class PromptFormat:
    """How prompts are laid out for one fast tokenizer: in its chat template (``chat``), or
    plain text ending in ``"Answer:"``; judged text is never read as special tokens.

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

    def encode(self, system: str, before_item: str, text: str = "") -> tuple[list[int], str]:
        """``(prefix_ids, suffix_text)``: the prefix of ``system`` and ``before_item`` (``text``
        at the draft's place), and the text after the item."""
        if self.chat:
            rendered = self.tokenizer.apply_chat_template(
                [
                    {"role": "system", "content": system},
                    {"role": "user", "content": before_item + _ITEM},
                ],
                tokenize=False,
                add_generation_prompt=True,
            )
            prefix, _, after = rendered.rpartition(_ITEM)
        else:
            prefix, after = f"{system}\n\n{before_item}", "\nAnswer:"
        head, _, tail = prefix.partition(_TEXT)
        user = (len(head), len(head) + len(text))
        ids = encode_text(self.tokenizer, head + text + tail, user, not self.chat)
        return ids, after

    def suffix(self, item: str, after: str) -> list[int]:
        """Token ids of one item and what follows it (the item never read as special tokens)."""
        return encode_text(self.tokenizer, item + after, (0, len(item)), False)


def _content_before(draft: str) -> str:
    return f"Draft reply:\n{draft}\n\nClinician's sentence: "


_THEME_BEFORE = "Sentence: "


def content_prompt(fmt: PromptFormat, draft: str) -> tuple[list[int], str]:
    """Prefix ids (instructions and draft) and suffix text of the content judge's prompt."""
    return fmt.encode(_CONTENT_INSTRUCTIONS, _content_before(_TEXT), draft)


def theme_prompt(fmt: PromptFormat) -> tuple[list[int], str]:
    """Prefix ids and suffix text of the theme judge's prompt (shared by every sentence)."""
    return fmt.encode(_THEME_INSTRUCTIONS, _THEME_BEFORE)


def content_messages(draft: str, sentence: str) -> list[dict[str, str]]:
    r"""The content judge's prompt for one reference sentence as system and user messages.

    >>> content_messages("Rest.", "Please rest.")[1]["content"]
    "Draft reply:\nRest.\n\nClinician's sentence: Please rest."
    """
    return [
        {"role": "system", "content": _CONTENT_INSTRUCTIONS},
        {"role": "user", "content": _content_before(draft) + sentence},
    ]


def theme_messages(sentence: str) -> list[dict[str, str]]:
    """The theme judge's prompt for one sentence as system and user messages."""
    return [
        {"role": "system", "content": _THEME_INSTRUCTIONS},
        {"role": "user", "content": _THEME_BEFORE + sentence},
    ]
