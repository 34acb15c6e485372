"""Preference pairs for trl's ``DPOTrainer``: prompt / chosen / rejected, ranked by edit-F1.

Two sources (Seegmiller et al., arXiv 2601.11344, §4.1.2 and Appendix D):

* **several scored drafts per message** (:func:`scored_draft_pairs`): each message's
  drafts are scored with :class:`~editf1.training.rewards.EditF1Reward` (so the gaming
  guards apply: a draft that copies the patient's message scores ``guard_reward``), and
  its best draft is *chosen* over its worst (:func:`best_worst_pairs`) when they differ
  by at least ``min_margin``; messages whose drafts tie, differ by less, or have one
  draft give no pair and are counted (:class:`PairCounts`).
* **TADPOLE tuples** (:func:`tadpole_tuples`, :func:`tadpole_pairs`): for each scored
  clinical theme the theme judge finds in the clinician's reply, an LLM the user names
  rewrites a base draft r into an *enhanced* draft r+ (that theme's content added) and
  a *corrupted* draft r− (that theme's content removed); the strategies of Appendix D.3
  turn each tuple into pairs (:data:`TADPOLE_STRATEGIES`).

The rows are the conversational format trl documents: ``prompt`` is a list of chat
messages (:func:`editf1.training.prompts.zero_shot_messages`, or a prompt column given
by the user, used as it is) and ``chosen`` / ``rejected`` are one assistant message
each; with a string prompt they are strings. Each row also keeps ``group`` (the message
it came from) and ``chosen_score`` / ``rejected_score`` (the reward, in [0, 1]; TADPOLE
rows: ``None``, as they are ranked by construction), which trl ignores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from editf1.training.prompts import zero_shot_messages
from editf1.training.rewards import EditF1Reward

__all__ = ["PairCounts", "best_worst_pairs", "pair_row", "scored_draft_pairs"]

#: The columns of every pair row.
_COLUMNS = ("prompt", "chosen", "rejected", "group", "chosen_score", "rejected_score")

#: Margins within this of ``min_margin`` reach it (``0.5 - 0.4`` is ``0.0999...``).
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PairCounts:
    """What became of each message's drafts.

    Attributes:
        messages: distinct messages (groups) seen.
        pairs: pairs written (one per message at most).
        ties: messages whose best and worst drafts scored the same: dropped.
        below_margin: messages whose best and worst differ by less than the margin.
        single_draft: messages with one draft: nothing to compare.
    """

    messages: int
    pairs: int
    ties: int
    below_margin: int
    single_draft: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def pair_row(prompt, chosen: str, rejected: str, group: str, chosen_score, rejected_score):
    """One row in trl's preference format (see the module docstring).

    Args:
        prompt: a string, or a list of chat messages (conversational format).
        chosen, rejected: the two drafts.
        group: the message's id.
        chosen_score, rejected_score: floats, or ``None``.

    Returns:
        ``{"prompt", "chosen", "rejected", "group", "chosen_score", "rejected_score"}``;
        with a conversational prompt, chosen and rejected are
        ``[{"role": "assistant", "content": ...}]``.
    """
    if not isinstance(prompt, str):
        chosen = [{"role": "assistant", "content": chosen}]
        rejected = [{"role": "assistant", "content": rejected}]
    return {
        "prompt": prompt,
        "chosen": chosen,
        "rejected": rejected,
        "group": group,
        "chosen_score": chosen_score,
        "rejected_score": rejected_score,
    }


def best_worst_pairs(
    groups: Sequence[str],
    prompts: Sequence,
    drafts: Sequence[str],
    scores: Sequence[float],
    *,
    min_margin: float = 0.1,
) -> tuple[list[dict], PairCounts]:
    """The best draft of each message chosen over its worst.

    Args:
        groups: N message ids, one per draft (a message's drafts need not be adjacent).
        prompts: N prompts; a message's drafts must share one.
        drafts: N drafts.
        scores: N scores (higher is better), e.g. edit-F1 in [0, 1].
        min_margin: the least best-minus-worst difference that makes a pair, > 0.
            Among equal scores the earlier draft is taken.

    Returns:
        ``(rows, counts)``: one :func:`pair_row` per message that makes a pair, in order
        of each message's first draft, and :class:`PairCounts`.

    Raises:
        ValueError: for lengths that differ, ``min_margin <= 0``, or a message whose
            drafts carry different prompts (naming the message and the rows).

    >>> rows, counts = best_worst_pairs(
    ...     ["a", "a", "a", "b", "b", "c"], ["p", "p", "p", "q", "q", "r"],
    ...     ["a1", "a2", "a3", "b1", "b2", "c1"], [0.5, 0.9, 0.2, 0.4, 0.4, 1.0])
    >>> [(r["chosen"], r["rejected"]) for r in rows]
    [('a2', 'a3')]
    >>> counts
    PairCounts(messages=3, pairs=1, ties=1, below_margin=0, single_draft=1)
    """
    n = len(groups)
    if not len(prompts) == len(drafts) == len(scores) == n:
        raise ValueError(
            f"groups, prompts, drafts and scores must have one value per draft, got "
            f"{n}, {len(prompts)}, {len(drafts)} and {len(scores)}"
        )
    if not min_margin > 0:
        raise ValueError(f"min_margin must be > 0, got {min_margin}")
    members: dict[str, list[int]] = {}
    for i, group in enumerate(groups):
        members.setdefault(group, []).append(i)
    rows, ties, below, single = [], 0, 0, 0
    for group, rows_of in members.items():
        if differing := [i for i in rows_of if prompts[i] != prompts[rows_of[0]]]:
            raise ValueError(
                f"message {group!r}: row(s) {differing} have another prompt than row "
                f"{rows_of[0]}; the drafts of one message must answer one prompt"
            )
        if len(rows_of) == 1:
            single += 1
            continue
        best = max(rows_of, key=lambda i: (scores[i], -i))
        worst = min(rows_of, key=lambda i: (scores[i], i))
        margin = scores[best] - scores[worst]
        if margin == 0:
            ties += 1
        elif margin < min_margin - _TOLERANCE:
            below += 1
        else:
            scored = (scores[best], scores[worst])
            rows.append(pair_row(prompts[best], drafts[best], drafts[worst], group, *scored))
    counts = PairCounts(len(members), len(rows), ties, below, single)
    return rows, counts


def scored_draft_pairs(
    rows: Sequence[dict],
    reward: EditF1Reward,
    *,
    group_field: str = "message_id",
    prediction_field: str = "prediction",
    message_field: str = "message",
    ehr_field: str = "ehr_summary",
    prompt_field: str | None = None,
    min_margin: float = 0.1,
):
    """Preference pairs from several drafts per message, ranked by ``reward``.

    Args:
        rows: N dicts, one per draft: the message id (``group_field``), the draft,
            the clinician reply (``reward.reference_column``), the patient's message
            and, optionally, the EHR summary; or a ready prompt (``prompt_field``: a
            string or a list of chat messages), used as it is.
        reward: scores every draft in one batched call; its message column is
            ``message_field`` when it has one.
        group_field, prediction_field, message_field, ehr_field, prompt_field: columns.
        min_margin: see :func:`best_worst_pairs`.

    Returns:
        ``(dataset, counts)``: a ``datasets.Dataset`` of :func:`pair_row` rows (the
        prompt a 0-shot prompt, :func:`~editf1.training.prompts.zero_shot_messages`,
        unless ``prompt_field``) and :class:`PairCounts`.

    Raises:
        KeyError: naming the first row without a needed column.
        ValueError: see :func:`best_worst_pairs`; InputError: a bad reply.
    """
    import datasets

    needed = [group_field, prediction_field, reward.reference_column]
    needed.append(prompt_field if prompt_field else message_field)
    if reward.message_column is not None:
        needed.append(reward.message_column)
    for field in dict.fromkeys(needed):
        if lacking := [i for i, row in enumerate(rows) if field not in row]:
            raise KeyError(f"column {field!r} is missing from row(s) {lacking[:10]}")
    columns = {reward.reference_column: [row[reward.reference_column] for row in rows]}
    if reward.message_column is not None:
        columns[reward.message_column] = [row[reward.message_column] for row in rows]
    drafts = [row[prediction_field] for row in rows]
    scores = [d.reward for d in reward.details(drafts, **columns)]
    prompts = [
        row[prompt_field]
        if prompt_field
        else zero_shot_messages(row[message_field], row.get(ehr_field))
        for row in rows
    ]
    pairs, counts = best_worst_pairs(
        [str(row[group_field]) for row in rows], prompts, drafts, scores, min_margin=min_margin
    )
    if not pairs:  # the columns still, for a caller that reads them
        return datasets.Dataset.from_dict({key: [] for key in _COLUMNS}), counts
    return datasets.Dataset.from_list(pairs), counts
