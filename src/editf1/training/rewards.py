"""edit-F1 as a reward for trl's ``GRPOTrainer``: train a drafting model toward fewer edits.

:class:`EditF1Reward` is a reward function in the form trl documents for
``GRPOTrainer(reward_funcs=[...])``: it is called with the batch's ``prompts`` and
``completions`` and every dataset column as keyword arguments, and returns one float per
completion. Each completion is scored against the clinician reply in a dataset column by
one :class:`~editf1.scorer.EditF1Scorer` (all completions of a step in one batched call;
the embedded judges' sentence encoder and the scorer's theme cache keep the reference
sentences' encodings and labels between steps, so a reply is encoded once per run).

The reward (``level``):

* ``"content"``: content edit-F1 of the pair (Algorithm 1: 2·EM / (2·EM + EA + ED));
* ``"theme"``: theme-level edit-F1 over the 8 clinical themes (§3.2);
* ``"mix"``: ``(1 - theme_weight) * content + theme_weight * theme``.

Undefined ratios count as 0.0, except that a reply and draft with none of the scored
themes agree (theme F1 1.0, :func:`editf1.aggregate.prf`).

Gaming guards
-------------
A policy trained on a reward finds its blind spots. Each guard below gives a documented
reward, the same at every step (``guard_reward``, 0.0 by default, the reward of a draft
that matches nothing), and is named in :attr:`RewardDetail.guard`:

* ``"too_short"``: a draft with fewer than ``min_words`` words (default 2: an empty or
  one-word draft). A one-word draft that matches a one-word reply sentence ("Yes.")
  would otherwise earn precision 1.0 for saying nothing.
* ``"too_long"``: a draft with more than ``max_words`` words (default 1000), given
  ``guard_reward`` without being scored: no portal reply is that long, and the judges'
  cost grows with the draft. Below the cap length needs no guard: every draft sentence
  that matches no reply sentence is one expected deletion, so a draft of the reply's
  sentences plus k unrelated ones scores 2·n / (2·n + k) (n reply sentences).
* ``"copied_message"``: a draft whose word trigrams (bigrams for a two-word draft) come
  mostly from the patient's message (the ``message_column``): more than
  ``max_copied_fraction`` (default 0.5) of them, counted with repeats, after
  case-folding and dropping punctuation (:func:`editf1.judges.exact.normalize`).
  Replies that restate the question can match reply sentences that restate it too;
  echoing the patient is not an answer.
* repeated sentences (not a guard that replaces the reward): a draft sentence whose
  words (:func:`~editf1.judges.exact.normalize`) repeat an earlier draft sentence's is
  removed before scoring and counted as one expected deletion, so repeats can match a
  reply sentence once and every further copy costs precision. "Rest today. Rest today."
  against the reply "Rest today. Drink water." scores EM 1, EA 1, ED 1: F1 0.5.

Determinism: the reward depends on the completions and columns only (no sampling); the
embedded judges are deterministic on one machine.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from editf1.aggregate import aggregate
from editf1.inputs import CheckedRows, InputError, check_rows, describe
from editf1.judges.exact import normalize
from editf1.scorer import EditF1Scorer

__all__ = ["GUARDS", "EditF1Reward", "RewardDetail", "completion_text", "copied_fraction"]

Level = Literal["content", "theme", "mix"]

#: The guards that replace the reward, in the order they are checked.
GUARDS = ("too_short", "too_long", "copied_message")


@dataclass(frozen=True)
class RewardDetail:
    """How one completion's reward came about.

    Attributes:
        reward: the float returned to trl, in [0, 1] (or ``guard_reward``).
        guard: the guard that set the reward (one of :data:`GUARDS`), or ``None``.
        content_f1: content edit-F1 with repeats counted as deletions; ``None`` when a
            guard fired (the draft was not scored).
        theme_f1: theme edit-F1, ``None`` when a guard fired or without a theme judge.
        repeated_sentences: draft sentences removed as repeats (each one expected
            deletion).
        copied_fraction: share of the draft's word n-grams found in the patient's
            message, in [0, 1]; ``None`` without a message column or for a draft
            stopped by an earlier guard.
    """

    reward: float
    guard: str | None = None
    content_f1: float | None = None
    theme_f1: float | None = None
    repeated_sentences: int = 0
    copied_fraction: float | None = None


def completion_text(completion) -> str:
    """The draft in one completion as trl passes it.

    Args:
        completion: a string (standard format) or a list of message dicts
            (conversational format, e.g. ``[{"role": "assistant", "content": "..."}]``);
            a message's content may be a string or a list of ``{"type": "text",
            "text": ...}`` parts.

    Returns:
        The string, or the assistant messages' text joined by blank lines (``""`` when
        there is none).

    Raises:
        TypeError: for anything else.

    >>> completion_text([{"role": "assistant", "content": "Rest today."}])
    'Rest today.'
    >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "Hi."}]}])
    'Hi.'
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
    """Share of the draft's word n-grams that occur in the message (with repeats).

    Words are :func:`editf1.judges.exact.normalize`'s (case-folded, no punctuation); a
    draft of fewer than ``n`` words uses n-grams of its own length.

    Args:
        prediction: the draft.
        message: the patient's message.
        n: n-gram length, >= 1.

    Returns:
        A fraction in [0, 1]; 0.0 for a draft without words.

    >>> copied_fraction("I have a cough. Rest today.", "Doctor, I have a cough at night.")
    0.5
    """
    words = normalize(prediction)
    if not words:
        return 0.0
    n = min(n, len(words))
    message_words = normalize(message)
    message_grams = {message_words[i : i + n] for i in range(len(message_words) - n + 1)}
    grams = [words[i : i + n] for i in range(len(words) - n + 1)]
    return sum(g in message_grams for g in grams) / len(grams)


class EditF1Reward:
    """A trl reward function: the edit-F1 of each completion against its clinician reply.

    Args:
        scorer: the :class:`~editf1.scorer.EditF1Scorer` to use; default one with the
            embedded content judge, and the embedded theme judge for ``"theme"`` and
            ``"mix"`` (none for ``"content"``).
        level: ``"content"`` (default), ``"theme"`` or ``"mix"`` (module docstring).
        theme_weight: weight of theme F1 in ``"mix"``, in [0, 1].
        reference_column: dataset column of the clinician reply (a string, or a list of
            replies: the best-matching reply is the pair, as in
            :meth:`EditF1Scorer.score`).
        message_column: dataset column of the patient's message, for the copy guard;
            ``None`` turns that guard off.
        min_words, max_words, max_copied_fraction, guard_reward: the guards (module
            docstring).
        name: the name trl logs the reward under (``rewards/<name>/mean``).

    Raises:
        ValueError: for an unknown level, a weight or fraction outside [0, 1], bad word
            limits, or a theme level on a scorer without a theme judge.

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
        for label, value in (
            ("theme_weight", theme_weight),
            ("max_copied_fraction", max_copied_fraction),
        ):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{label} must be in [0, 1], got {value}")
        if not math.isfinite(guard_reward):  # it goes to trl as a reward: may be < 0, not NaN
            raise ValueError(f"guard_reward must be a finite number, got {guard_reward}")
        if not 0 <= min_words <= max_words:
            raise ValueError(f"need 0 <= min_words <= max_words, got {min_words}, {max_words}")
        if scorer is None:
            scorer = EditF1Scorer(theme_judge=None if level == "content" else "embedding")
        if level != "content" and scorer.theme_judge is None:
            raise ValueError(f"level {level!r} needs a scorer with a theme judge")
        self.scorer = scorer
        self.level = level
        self.theme_weight = float(theme_weight)
        self.reference_column = reference_column
        self.message_column = message_column
        self.min_words = min_words
        self.max_words = max_words
        self.max_copied_fraction = float(max_copied_fraction)
        self.guard_reward = float(guard_reward)
        self.__name__ = name

    def __call__(self, prompts: Sequence, completions: Sequence, **columns) -> list[float]:
        """One reward per completion (trl's reward-function signature).

        Args:
            prompts: the N prompts (not read; trl passes them).
            completions: N completions, strings or lists of message dicts.
            **columns: the dataset's columns, each a list of N values (trl repeats a
                prompt's row for each of its generations), plus trl's own keywords;
                ``log_metric`` and ``log_extra``, when trl passes them, receive the
                share of completions each guard stopped (``<name>/<guard>``) and a
                ``<name>_guard`` column for the completions table.

        Returns:
            N floats.

        Raises:
            KeyError: naming a missing reference or message column.
            InputError: naming each message that is not a string
                (``<message_column>[i]``), each reply (``<reference_column>[<completion
                index>]``) that is not a string with a word, or a list of them, and each
                completion whose text is not valid Unicode (``completions[i]``), before
                anything is scored.
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
        """The reward of each completion and how it came about (:class:`RewardDetail`).

        Arguments as for :meth:`__call__` (without ``prompts``).
        """
        references = self._column(self.reference_column, columns, len(completions))
        messages = (
            None
            if self.message_column is None
            else self._column(self.message_column, columns, len(completions))
        )
        if messages is not None and (
            bad := [i for i, m in enumerate(messages) if not isinstance(m, str)]
        ):
            raise InputError(
                [
                    f"{self.message_column}[{i}] must be a string, got {describe(messages[i])}"
                    for i in bad
                ]
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
            words = len(normalize(draft))
            if words < self.min_words:
                details[i] = RewardDetail(self.guard_reward, "too_short")
                continue
            if words > self.max_words:
                details[i] = RewardDetail(self.guard_reward, "too_long")
                continue
            copied = None if messages is None else copied_fraction(draft, messages[i])
            if copied is not None and copied > self.max_copied_fraction:
                details[i] = RewardDetail(
                    self.guard_reward, "copied_message", copied_fraction=copied
                )
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
        """The reward of one judged completion: the scores of the one-pair corpus (the
        shared aggregation step, undefined ratios 0.0, no warnings), each repeated
        sentence one more expected deletion."""
        repeats = detail.repeated_sentences
        pair = dataclasses.replace(pair, expected_deletions=pair.expected_deletions + repeats)
        result = aggregate(
            [pair],
            themes_scored=self.scorer.themes_scored,
            zero_division=0.0,
            warn=False,
        )
        content = result.f1
        theme = None if result.theme is None else result.theme.f1
        if self.level == "content":
            reward = content
        elif self.level == "theme":
            reward = theme
        else:
            reward = (1.0 - self.theme_weight) * content + self.theme_weight * theme
        return RewardDetail(
            reward,
            content_f1=content,
            theme_f1=theme,
            repeated_sentences=detail.repeated_sentences,
            copied_fraction=detail.copied_fraction,
        )

    def _without_repeats(self, draft: str) -> tuple[str, int]:
        """The draft with every sentence that repeats an earlier one blanked out (offsets
        kept), and the number blanked."""
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
