"""Answers verbatim by construction: what a generative judge is allowed to generate, and
free answers read strictly (what is neither a draft span nor NO MATCH is unusable, never
guessed). Seegmiller et al., arXiv 2601.11344, Table 7: an unconstrained judge's spans are
not always verbatim, and Algorithm 1 cannot remove a span not in the draft.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

import numpy as np
import torch
from transformers import LogitsProcessor

from editf1.judges.base import ContentJudgement, ThemeJudgement
from editf1.judges.generative.prompts import NO_MATCH, reads_no_match
from editf1.segment import Sentence, has_word
from editf1.themes import THEMES

_WORD = re.compile(r"[^\W_]")

#: The fewest letters or digits a freely decoded span may hold.
MIN_SPAN_WORD_CHARACTERS = 2

__all__ = [
    "MIN_SPAN_WORD_CHARACTERS",
    "ConstraintLogitsProcessor",
    "DraftTokens",
    "OneOf",
    "SpanOrNoMatch",
    "parse_content_answer",
    "parse_theme_answer",
]


@dataclass(frozen=True)
class DraftTokens:
    """The draft tokenized on its own: T ``ids``, their character ``offsets``, and whether
    each token ``starts_word`` (answers start there) and ``ends_word`` (answers end there).
    """

    text: str
    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    starts_word: tuple[bool, ...]
    ends_word: tuple[bool, ...]

    @classmethod
    def of(cls, tokenizer, text: str) -> DraftTokens:
        encoded = tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, split_special_tokens=True
        )
        offsets = tuple((int(a), int(b)) for a, b in encoded.offset_mapping)
        starts, ends = [], []
        for a, b in offsets:
            first = _WORD.search(text, a, b)
            starts.append(
                first is not None and not _WORD.match(text[first.start() - 1 : first.start()])
            )
            ends.append(not _WORD.match(text[b : b + 1]))
        return cls(text, tuple(encoded.input_ids), offsets, tuple(starts), tuple(ends))

    def span(self, first: int, last: int) -> Sentence | None:
        """Tokens ``first..last`` as a stripped :class:`Sentence`; ``None`` without a word."""
        start, end = self.offsets[first][0], self.offsets[last][1]
        piece = self.text[start:end]
        stripped = piece.strip()
        if not has_word(stripped):
            return None
        start += len(piece) - len(piece.lstrip())
        return Sentence(stripped, start, start + len(stripped))

    def token_range(self, start: int, end: int) -> tuple[int, int]:
        """The first and last token overlapping characters ``[start, end)``; ValueError if none."""
        inside = [i for i, (a, b) in enumerate(self.offsets) if a < end and b > start]
        if not inside:
            raise ValueError(f"no token of the draft covers characters {start}..{end}")
        return inside[0], inside[-1]


class SpanOrNoMatch:
    """The content judge's answers: a run of draft tokens from a word start to a word end,
    or the tokens of :data:`NO_MATCH` (``no_match_ids``), then ``eos_id``.
    """

    def __init__(self, draft: DraftTokens, no_match_ids: Sequence[int], eos_id: int) -> None:
        self.draft = draft
        self.ids = np.asarray(draft.ids, dtype=np.int64)
        self.no_match = tuple(no_match_ids)
        self.eos_id = eos_id
        self._starts = np.asarray(draft.starts_word, dtype=bool)
        self._ends = np.asarray(draft.ends_word, dtype=bool)
        starts = set(self.ids[self._starts].tolist())
        self._first = sorted(starts | {self.no_match[0]})

    def run_ends(self, generated: Sequence[int]) -> np.ndarray:
        """Draft token indices where a run equal to ``generated`` from a word start ends."""
        k = len(generated)
        if k == 0 or k > len(self.ids):
            return np.zeros(0, dtype=np.int64)
        starts = np.flatnonzero(self.ids[: len(self.ids) - k + 1] == generated[0])
        starts = starts[self._starts[starts]]
        for j in range(1, k):
            starts = starts[self.ids[starts + j] == generated[j]]
        return starts + k - 1

    def allowed(self, generated: Sequence[int]) -> list[int]:
        k = len(generated)
        if k == 0:
            return self._first
        allowed = set()
        ends = self.run_ends(generated)
        if len(ends):
            if self._ends[ends].any():
                allowed.add(self.eos_id)
            following = ends[ends + 1 < len(self.ids)] + 1
            allowed.update(self.ids[following].tolist())
        if tuple(generated) == self.no_match[:k]:
            allowed.add(self.no_match[k] if k < len(self.no_match) else self.eos_id)
        if not allowed:  # only reachable if tokens outside this constraint were forced
            raise RuntimeError(f"no allowed continuation of {list(generated)}")
        return sorted(allowed)

    def judgement(self, generated: Sequence[int], finished: bool, raw: str, score):
        """The judgement of an answer (without EOS); a run found at several places is its first."""
        if not finished:
            return ContentJudgement("unusable", score=score, raw=raw)
        if tuple(generated) == self.no_match:
            return ContentJudgement("no_match", score=score, raw=raw)
        ends = self.run_ends(generated)
        ends = ends[self._ends[ends]]
        span = (
            self.draft.span(int(ends[0]) - len(generated) + 1, int(ends[0])) if len(ends) else None
        )
        if span is None:
            return ContentJudgement("unusable", score=score, raw=raw)
        if reads_no_match(span.text):
            return ContentJudgement("no_match", score=score, raw=raw)
        return ContentJudgement("match", span, score, raw)


class OneOf:
    """Answers from a fixed list of choices' token sequences.

    Raises:
        ValueError: if one choice's tokens are a prefix of another's.
    """

    def __init__(self, choices: Sequence[str], tokenizer, eos_id: int) -> None:
        self.choices = tuple(choices)
        self.sequences = tuple(
            tuple(tokenizer(c, add_special_tokens=False).input_ids) for c in self.choices
        )
        for (a, x), (b, y) in permutations(enumerate(self.sequences), 2):
            if y[: len(x)] == x:
                raise ValueError(f"choice {self.choices[a]!r} is a prefix of {self.choices[b]!r}")
        self.eos_id = eos_id

    def allowed(self, generated: Sequence[int]) -> list[int]:
        k, generated = len(generated), tuple(generated)
        allowed = {s[k] for s in self.sequences if len(s) > k and s[:k] == generated}
        if generated in self.sequences:
            allowed.add(self.eos_id)
        if not allowed:
            raise RuntimeError(f"no allowed continuation of {list(generated)}")
        return sorted(allowed)

    def judgement(self, generated: Sequence[int], finished: bool, raw: str, score):
        generated = tuple(generated)
        if finished and generated in self.sequences:
            return ThemeJudgement(self.choices[self.sequences.index(generated)], score, raw)
        return ThemeJudgement(None, score, raw)


class ConstraintLogitsProcessor(LogitsProcessor):
    """A ``transformers`` logits processor masking every token a row's constraint (``None``:
    unconstrained) does not allow after column ``prompt_length``; rows with EOS are left.
    """

    def __init__(self, constraints: Sequence, prompt_length: int, eos_id: int) -> None:
        self.constraints = list(constraints)
        self.prompt_length = prompt_length
        self.eos_id = eos_id

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor):
        answers = input_ids[:, self.prompt_length :].tolist()
        mask = torch.zeros_like(scores)
        for row, (constraint, answer) in enumerate(zip(self.constraints, answers)):
            if constraint is None or self.eos_id in answer:
                continue
            mask[row] = float("-inf")
            mask[row, constraint.allowed(answer)] = 0.0
        return scores + mask


def parse_content_answer(text: str, draft: str, *, finished: bool = True) -> ContentJudgement:
    """Read a free content answer: NO MATCH exactly, a draft span (whole words, up to
    whitespace, at least :data:`MIN_SPAN_WORD_CHARACTERS` letters or digits), or unusable.

    >>> parse_content_answer("Drink  water.", "Rest.\\nDrink water.").span
    Sentence(text='Drink water.', start=6, end=18)
    """
    answer = text.strip()
    if not finished:
        return ContentJudgement("unusable", raw=text)
    if answer == NO_MATCH:
        return ContentJudgement("no_match", raw=text)
    if len(_WORD.findall(answer)) < MIN_SPAN_WORD_CHARACTERS or reads_no_match(answer):
        return ContentJudgement("unusable", raw=text)
    words = r"\s+".join(map(re.escape, answer.split()))  # whole words, any whitespace between
    found = re.search(rf"(?<![^\W_]){words}(?![^\W_])", draft)
    if found is None:
        return ContentJudgement("unusable", raw=text)
    return ContentJudgement("match", Sentence(found.group(), *found.span()), raw=text)


def parse_theme_answer(text: str, *, finished: bool = True) -> ThemeJudgement:
    """Read a free theme answer: one of the nine labels exactly (stripped), else unusable."""
    answer = text.strip()
    return ThemeJudgement(answer if finished and answer in THEMES else None, raw=text)
