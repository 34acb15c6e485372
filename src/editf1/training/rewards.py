"""edit-F1 as a reward for trl's ``GRPOTrainer`` (Seegmiller et al., arXiv 2601.11344:
Algorithm 1's F1, §3.2's theme F1)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from editf1.aggregate import aggregate
from editf1.inputs import CheckedRows, InputError, check_rows, describe
from editf1.judges.base import check_finite, check_number
from editf1.judges.exact import normalize
from editf1.scorer import EditF1Scorer

__all__ = ["GUARDS", "EditF1Reward", "RewardDetail", "completion_text", "copied_fraction"]

Level = Literal["content", "theme", "mix"]

#: The guards that replace the reward, in the order they are checked.
GUARDS = ("too_short", "too_long", "copied_message")


@dataclass(frozen=True)
class RewardDetail:
    """How one completion's ``reward`` (returned to trl, in [0, 1], or ``guard_reward``)
    came about: the ``guard`` (of :data:`GUARDS`) that set it, or ``None``; the pair's
    ``content_f1`` and ``theme_f1`` (repeats as deletions; ``None`` when a guard fired or,
    for the theme, without a theme judge); the ``repeated_sentences`` removed; the
    :func:`copied_fraction`, when it was measured."""

    reward: float
    guard: str | None = None
    content_f1: float | None = None
    theme_f1: float | None = None
    repeated_sentences: int = 0
    copied_fraction: float | None = None


def completion_text(completion) -> str:
    """The draft in one completion as trl passes it: a string as it is, or the text of a
    list of message dicts (a content a string or ``{"type": "text", "text": ...}`` parts),
    the assistant messages' joined by blank lines.

    Raises:
        TypeError: for anything else.
    """
    if isinstance(completion, str):
        return completion
    if not isinstance(completion, (list, tuple)) or not all(
        isinstance(m, dict) for m in completion
    ):
        raise TypeError(
            f"a completion must be a string or a list of message dicts, got {type(completion)}"
        )
    texts = []
    for message in completion:
        if message.get("role", "assistant") != "assistant":
            continue
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
        texts.append(content)
    return "\n\n".join(texts)


def copied_fraction(prediction: str, message: str, n: int = 3) -> float:
    """Share in [0, 1] of the draft's word n-grams that occur in the message (with
    repeats; 0.0 without words). Words are :func:`editf1.judges.exact.normalize`'s; a
    draft of fewer than ``n`` words uses n-grams of its own length."""
    words = normalize(prediction)
    if not words:
        return 0.0
    n = min(n, len(words))
    message_words = normalize(message)
    message_grams = {message_words[i : i + n] for i in range(len(message_words) - n + 1)}
    grams = [words[i : i + n] for i in range(len(words) - n + 1)]
    return sum(g in message_grams for g in grams) / len(grams)


class EditF1Reward:
    """A trl reward function: the edit-F1 of each completion against its clinician reply,
    scored in one batched :meth:`~editf1.scorer.EditF1Scorer.iter_pairs` call (undefined
    ratios count 0.0). A sentence repeating an earlier one (same normalized words) is
    removed before scoring and counted as one expected deletion.

    Args:
        scorer: default: the embedded judges (no theme judge for ``"content"``).
        level: ``"content"`` (Algorithm 1's F1), ``"theme"`` (§3.2) or ``"mix"``
            (``(1 - theme_weight) * content + theme_weight * theme``), ``theme_weight``
            in [0, 1].
        reference_column: column of the clinician reply (or of a list of replies).
        message_column: column of the patient's message (copy guard; ``None``: off).
        min_words, max_words, max_copied_fraction, guard_reward: the gaming guards
            (:data:`GUARDS`, in that order) give ``guard_reward`` without scoring:
            ``too_short`` (fewer than ``min_words`` words), ``too_long`` (more than
            ``max_words``), ``copied_message`` (more than ``max_copied_fraction`` of the
            draft's word trigrams from the message, :func:`copied_fraction`).
        name: the name trl logs the reward under (``rewards/<name>/mean``).

    Raises:
        ValueError: for a bad option, or a theme level without a theme judge.

    Example (the exact judge; the third draft copies the patient):
        >>> reward = EditF1Reward(EditF1Scorer("exact", None))
        >>> reward(
        ...     prompts=["p"] * 3,
        ...     completions=["Rest today. Call us.", "Yes.", "My knee hurts a lot."],
        ...     reference=["Rest today. Drink water."] * 3,
        ...     message=["My knee hurts a lot."] * 3,
        ... )
        [0.5, 0.0, 0.0]
    """

    def __init__(
        self,
        scorer: EditF1Scorer | None = None,
        *,
        level: Level = "content",
        theme_weight: float = 0.5,
        reference_column: str = "reference",
        message_column: str | None = "message",
        min_words: int = 2,
        max_words: int = 1000,
        max_copied_fraction: float = 0.5,
        guard_reward: float = 0.0,
        name: str = "edit_f1",
    ) -> None:
        if level not in ("content", "theme", "mix"):
            raise ValueError(f"level must be 'content', 'theme' or 'mix', got {level!r}")
        self.theme_weight = check_number("theme_weight", theme_weight, 0, 1)
        self.max_copied_fraction = check_number("max_copied_fraction", max_copied_fraction, 0, 1)
        self.guard_reward = check_finite("guard_reward", guard_reward)  # may be < 0, not NaN
        if not 0 <= min_words <= max_words:
            raise ValueError(f"need 0 <= min_words <= max_words, got {min_words}, {max_words}")
        if scorer is None:
            scorer = EditF1Scorer(theme_judge=None if level == "content" else "embedding")
        if level != "content" and scorer.theme_judge is None:
            raise ValueError(f"level {level!r} needs a scorer with a theme judge")
        self.scorer = scorer
        self.level = level
        self.reference_column = reference_column
        self.message_column = message_column
        self.min_words = min_words
        self.max_words = max_words
        self.__name__ = name

    def __call__(self, prompts: Sequence, completions: Sequence, **columns) -> list[float]:
        """One reward per completion (trl's reward-function signature; ``prompts`` not read).

        Args:
            completions: N completions (:func:`completion_text`).
            **columns: the dataset's columns, N values each, and trl's keywords:
                ``log_metric`` gets each guard's share (``<name>/<guard>``),
                ``log_extra`` a ``<name>_guard`` column.

        Raises:
            KeyError: naming a missing reference or message column.
            InputError: before scoring, naming each bad message, reply or completion.
        """
        details = self.details(completions, **columns)
        if (log_metric := columns.get("log_metric")) is not None:
            for guard in GUARDS:
                share = sum(d.guard == guard for d in details) / max(len(details), 1)
                log_metric(f"{self.__name__}/{guard}", share)
        if (log_extra := columns.get("log_extra")) is not None:
            log_extra(f"{self.__name__}_guard", [d.guard or "" for d in details])
        return [d.reward for d in details]

    def details(self, completions: Sequence, **columns) -> list[RewardDetail]:
        """Each completion's :class:`RewardDetail` (arguments as :meth:`__call__`'s)."""
        references = self._column(self.reference_column, columns, len(completions))
        messages = None
        if self.message_column is not None:
            messages = self._column(self.message_column, columns, len(completions))
            if bad := [i for i, m in enumerate(messages) if not isinstance(m, str)]:
                name = self.message_column
                raise InputError(
                    [f"{name}[{i}] must be a string, got {describe(messages[i])}" for i in bad]
                )
        drafts = [completion_text(c) for c in completions]
        check_rows(
            ((None, d, r) for d, r in zip(drafts, references)),
            prediction_field="completions",
            reference_field=self.reference_column,
        )
        details: list[RewardDetail | None] = [None] * len(drafts)
        rows = []
        for i, draft in enumerate(drafts):
            words, copied = len(normalize(draft)), None
            guard = "too_short" if words < self.min_words else None
            guard = guard or ("too_long" if words > self.max_words else None)
            if guard is None and messages is not None:
                copied = copied_fraction(draft, messages[i])
                guard = "copied_message" if copied > self.max_copied_fraction else None
            if guard is not None:
                details[i] = RewardDetail(self.guard_reward, guard, copied_fraction=copied)
                continue
            kept, repeats = self._without_repeats(draft)
            details[i] = RewardDetail(0.0, repeated_sentences=repeats, copied_fraction=copied)
            rows.append((i, kept, references[i]))
        # checked above: blanking repeated sentences keeps a draft valid text
        scored = self.scorer.iter_pairs(CheckedRows((None, k, r) for _, k, r in rows))
        for (i, _, _), pair in zip(rows, scored):
            details[i] = self._scored(pair, details[i])
        return details

    def _scored(self, pair, detail: RewardDetail) -> RewardDetail:
        """The one-pair corpus's scores, each repeated sentence one more deletion."""
        deletions = pair.expected_deletions + detail.repeated_sentences
        pair = dataclasses.replace(pair, expected_deletions=deletions)
        themes = self.scorer.themes_scored
        result = aggregate([pair], themes_scored=themes, zero_division=0.0, warn=False)
        content = result.f1
        theme = None if result.theme is None else result.theme.f1
        if self.level == "mix":
            reward = (1.0 - self.theme_weight) * content + self.theme_weight * theme
        else:
            reward = content if self.level == "content" else theme
        return dataclasses.replace(detail, reward=reward, content_f1=content, theme_f1=theme)

    def _without_repeats(self, draft: str) -> tuple[str, int]:
        """The draft with repeated sentences blanked out (offsets kept), and their number."""
        seen, chars, repeats = set(), list(draft), 0
        for sentence in self.scorer.splitter.split(draft):
            key = normalize(sentence.text)
            if key in seen:
                repeats += 1
                chars[sentence.start : sentence.end] = " " * (sentence.end - sentence.start)
            seen.add(key)
        return "".join(chars), repeats

    @staticmethod
    def _column(name: str, columns: dict, n: int) -> list:
        if name not in columns:
            given = sorted(k for k in columns if k not in _TRL_KEYWORDS)
            raise KeyError(f"the dataset has no column {name!r} (columns given: {given})")
        values = list(columns[name])
        if len(values) != n:
            raise ValueError(f"column {name!r} has {len(values)} values for {n} completions")
        return values


#: Keywords trl passes to reward functions besides the dataset's columns.
_TRL_KEYWORDS = frozenset(
    {"trainer_state", "log_extra", "log_metric", "completion_ids", "environments"}
)
