"""Preference pairs for trl's ``DPOTrainer`` ranked by edit-F1 (Seegmiller et al., arXiv
2601.11344, §4.1.2 and Appendix D): the best of several drafts per message over the
worst, and TADPOLE's rewrites of a draft with a theme added or removed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from editf1.count import themes_present
from editf1.drafting.baselines import require_columns
from editf1.drafting.prompts import corrupt_messages, enhance_messages, zero_shot_messages
from editf1.judges import ThemeJudge
from editf1.judges.contract import judge_themes
from editf1.segment import SentenceSplitter
from editf1.themes import CLINICAL_THEMES
from editf1.training.rewards import EditF1Reward

__all__ = [
    "TADPOLE_STRATEGIES",
    "PairCounts",
    "TadpoleTuple",
    "best_worst_pairs",
    "pair_dataset",
    "pair_row",
    "scored_draft_pairs",
    "tadpole_pairs",
    "tadpole_tuples",
]

#: Appendix D.3's strategies: which two drafts of a tuple make the pair (chosen first).
#: Blend takes the other three in turn, tuple by tuple (tuple k: the (k mod 3)-th), so
#: a blended set has the size of the others and equal shares of each kind.
TADPOLE_STRATEGIES = {
    "enhanced": ("enhanced", "base"),
    "corrupted": ("base", "corrupted"),
    "hard-corrupted": ("enhanced", "corrupted"),
    "blend": None,
}

#: The columns of every pair row.
_COLUMNS = ("prompt", "chosen", "rejected", "group", "chosen_score", "rejected_score")

#: Margins within this of ``min_margin`` reach it (``0.5 - 0.4`` is ``0.0999...``).
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PairCounts:
    """What became of each message's drafts: ``messages`` (distinct groups) seen, ``pairs``
    written (one per message at most), and messages dropped: ``ties`` (best and worst
    scored the same), ``below_margin`` (they differ by less), ``single_draft``."""

    messages: int
    pairs: int
    ties: int
    below_margin: int
    single_draft: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def pair_row(prompt, chosen: str, rejected: str, group: str, chosen_score, rejected_score):
    """One row in trl's preference format: with a list-of-messages prompt, ``chosen`` and
    ``rejected`` become ``[{"role": "assistant", "content": ...}]``; ``group`` is the
    message id; the scores are ``None`` for TADPOLE."""
    if not isinstance(prompt, str):
        chosen = [{"role": "assistant", "content": chosen}]
        rejected = [{"role": "assistant", "content": rejected}]
    return dict(zip(_COLUMNS, (prompt, chosen, rejected, group, chosen_score, rejected_score)))


def best_worst_pairs(
    groups: Sequence[str],
    prompts: Sequence,
    drafts: Sequence[str],
    scores: Sequence[float],
    *,
    min_margin: float = 0.1,
) -> tuple[list[dict], PairCounts]:
    """The best draft of each message chosen over its worst, where they differ by at least
    ``min_margin`` (> 0); among equal scores the earlier draft is taken.

    Args:
        groups: N message ids, one per draft (a message's drafts need not be adjacent).
        prompts: N prompts; a message's drafts must share one.
        scores: N scores of the N ``drafts`` (higher is better), e.g. edit-F1 in [0, 1].

    Returns:
        ``(rows, counts)``: one :func:`pair_row` per message that makes a pair, in order
        of each message's first draft, and :class:`PairCounts`.

    Raises:
        ValueError: lengths that differ, ``min_margin <= 0``, one message's two prompts.

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
    return rows, PairCounts(len(members), len(rows), ties, below, single)


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
    """Preference pairs (:func:`best_worst_pairs`) from several drafts per message, ranked
    by ``reward`` (its guards apply) in one batched call.

    Args:
        rows: N dicts, one per draft: message id, draft, clinician reply
            (``reward.reference_column``), the patient's message and optionally the EHR
            summary, or a ready prompt (``prompt_field``, used as it is).

    Returns:
        ``(dataset, counts)``: a ``datasets.Dataset`` of :func:`pair_row` rows (the
        prompt a 0-shot prompt, :func:`~editf1.drafting.prompts.zero_shot_messages`,
        unless ``prompt_field``) and :class:`PairCounts`.

    Raises:
        KeyError: naming the first row without a needed column.
        ValueError: see :func:`best_worst_pairs`; InputError: a bad reply.
    """
    scored = [c for c in (reward.reference_column, reward.message_column) if c is not None]
    require_columns(rows, [group_field, prediction_field, scored[0], prompt_field or message_field])
    require_columns(rows, scored)
    columns = {c: [row[c] for row in rows] for c in scored}
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
    return pair_dataset(pairs), counts


def pair_dataset(rows: Sequence[dict], extra_columns: Sequence[str] = ()):
    """A ``datasets.Dataset`` of :func:`pair_row` rows; with no row, one with the columns
    (and ``extra_columns``) and no rows."""
    import datasets

    if not rows:
        return datasets.Dataset.from_dict({key: [] for key in (*_COLUMNS, *extra_columns)})
    return datasets.Dataset.from_list(list(rows))


@dataclass(frozen=True)
class TadpoleTuple:
    """One message's (``group``) drafts for one clinical ``theme`` the theme judge found in
    the clinician's reply (TADPOLE, Appendix D): ``base`` (r, the generator's draft for the
    0-shot ``prompt``), ``enhanced`` (r+, ``base`` rewritten to also cover ``theme``) and
    ``corrupted`` (r−, ``base`` rewritten without ``theme``'s sentences)."""

    group: str
    prompt: list
    theme: str
    base: str
    enhanced: str
    corrupted: str


def tadpole_tuples(
    rows: Sequence[dict],
    generator,
    theme_judge: ThemeJudge,
    *,
    group_field: str = "message_id",
    message_field: str = "message",
    ehr_field: str = "ehr_summary",
    reference_field: str = "reference",
    splitter: SentenceSplitter | None = None,
) -> list[TadpoleTuple]:
    """Base, enhanced and corrupted drafts by an LLM, per message and per clinical theme
    (:data:`~editf1.themes.CLINICAL_THEMES` order) the theme judge gives a sentence of its
    clinician reply (none without one). Two batched generation calls: the base drafts,
    then every rewrite (:mod:`editf1.drafting.prompts`).

    Args:
        rows: one dict per message: id, message, optional EHR summary, clinician reply.
        generator: ``generate(conversations) -> list[list[str]]`` (e.g.
            :class:`editf1.drafting.generators.CausalLMGenerator`).

    Raises:
        KeyError: naming the first rows without a needed column.
        ValueError: for a message id used by two rows.
    """
    require_columns(rows, (group_field, message_field, reference_field))
    groups = [str(row[group_field]) for row in rows]
    if repeated := sorted({g for g in groups if groups.count(g) > 1}):
        raise ValueError(f"message id(s) {repeated[:10]} name several rows; give one row each")
    splitter = splitter or SentenceSplitter()
    sentences = [[s.text for s in splitter.split(row[reference_field])] for row in rows]
    labels = iter(judge_themes(theme_judge, [t for texts in sentences for t in texts]))
    present = [
        themes_present([next(labels) for _ in texts], CLINICAL_THEMES) for texts in sentences
    ]
    prompts = [zero_shot_messages(row[message_field], row.get(ehr_field)) for row in rows]
    bases = [replies[0] for replies in generator.generate(prompts)]
    jobs = [(i, t) for i, themes in enumerate(present) for t in CLINICAL_THEMES if t in themes]
    rewrites = [
        rewrite(rows[i][message_field], rows[i].get(ehr_field), bases[i], theme)
        for i, theme in jobs
        for rewrite in (enhance_messages, corrupt_messages)
    ]
    answers = [replies[0] for replies in generator.generate(rewrites)] if rewrites else []
    return [
        TadpoleTuple(groups[i], prompts[i], theme, bases[i], answers[2 * k], answers[2 * k + 1])
        for k, (i, theme) in enumerate(jobs)
    ]


def tadpole_pairs(tuples: Sequence[TadpoleTuple], strategy: str) -> tuple[list[dict], int]:
    """``(rows, unchanged)``: :func:`pair_row` rows of ``tuples`` by one of
    :data:`TADPOLE_STRATEGIES`, with ``theme`` and ``strategy`` (the pair's own kind)
    added, and the number of tuples dropped because the two drafts were the same text.

    Raises:
        ValueError: for an unknown strategy.

    >>> t = TadpoleTuple("m1", "p", "Logistics", "r", "r+", "r-")
    >>> rows, unchanged = tadpole_pairs([t, t, t], "blend")
    >>> [(r["chosen"], r["rejected"], r["strategy"]) for r in rows]
    [('r+', 'r', 'enhanced'), ('r', 'r-', 'corrupted'), ('r+', 'r-', 'hard-corrupted')]
    """
    if strategy not in TADPOLE_STRATEGIES:
        raise ValueError(f"strategy must be one of {list(TADPOLE_STRATEGIES)}, got {strategy!r}")
    kinds = [k for k, v in TADPOLE_STRATEGIES.items() if v is not None]
    rows, unchanged = [], 0
    for k, item in enumerate(tuples):
        kind = kinds[k % len(kinds)] if strategy == "blend" else strategy
        chosen, rejected = (getattr(item, name) for name in TADPOLE_STRATEGIES[kind])
        if chosen.strip() == rejected.strip():
            unchanged += 1
            continue
        row = pair_row(item.prompt, chosen, rejected, item.group, None, None)
        rows.append(row | {"theme": item.theme, "strategy": kind})
    return rows, unchanged
