"""Every content label set on real text, and one split by case across all of them.

The content judges are fitted and compared on the same held-out cases
(``benchmarks/content_judge_real.py``, ``python -m research.train_cross_encoder``). The sets
(:data:`EVALUATION_SETS`):

* ``team``: the team's first round, oncologist sentences against the GPT-4 draft
  (:func:`research.team_labels.load_team_content_items`);
* ``kqa``: K-QA ``NLI_medical_annotator.csv``, physicians' majority label
  (:func:`editf1.validation.labelled.kqa_content_items`);
* ``stage2``: labels derived from OncQA's stage-2 edits
  (:func:`research.stage2_labels.oncqa_stage2_content_items`);
* the seven sets of the second and third rounds
  (:data:`research.content_labels.CONTENT_SETS`).

The split (:func:`split_by_case`) holds out 40% of the cases of each source with
:func:`editf1.validation.labelled.case_split` (seed 0): the OncQA cases held out of
``team``, the K-QA questions held out of ``kqa`` and the ExpertQA questions held out of
``expertqa_revision``. Every item of every set whose case is one of those is held out,
whatever set it is in, so no held-out case is fitted on through another set: the
OncQA sets share ``"oncqa:<id>"`` cases, and a K-QA item of the second round
(``"kqa:kqa<line>"``) is held out with the question of that line of
``questions_w_answers.jsonl``. ``team``, ``kqa`` and ``stage2`` keep the split they had
before the second round.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from editf1.validation.labelled import ContentItem, case_split
from research.content_labels import CONTENT_SETS, load_content_sets

__all__ = ["EVALUATION_SETS", "kqa_questions", "load_evaluation_sets", "split_by_case"]

#: The sets, in table order.
EVALUATION_SETS = ("team", "kqa", "stage2", *CONTENT_SETS)


def load_evaluation_sets(
    data_root: str | Path, names: tuple[str, ...] = EVALUATION_SETS
) -> dict[str, list[ContentItem]]:
    """The sets ``names`` (default all of :data:`EVALUATION_SETS`) from the data folder.

    Raises:
        KeyError: for an unknown name.
        FileNotFoundError, LabelTextError: from the loaders.
    """
    from editf1.validation.labelled import kqa_content_items
    from research.stage2_labels import oncqa_stage2_content_items
    from research.team_labels import load_team_content_items

    unknown = sorted(set(names) - set(EVALUATION_SETS))
    if unknown:
        raise KeyError(f"unknown content set(s) {unknown}; known: {list(EVALUATION_SETS)}")
    root = Path(data_root)
    loaders = {
        "team": lambda: load_team_content_items(root),
        "kqa": lambda: kqa_content_items(root / "kqa"),
        "stage2": lambda: oncqa_stage2_content_items(root),
    }
    second = [n for n in names if n in CONTENT_SETS]
    out = load_content_sets(root, second) if second else {}
    return {name: out[name] if name in out else loaders[name]() for name in names}


def kqa_questions(data_root: str | Path) -> dict[str, str]:
    """``"kqa:kqa<line>"`` -> the question of that line of K-QA's
    ``questions_w_answers.jsonl`` (stripped): how the second round's K-QA cases map to
    the questions that name the cases of ``kqa``.

    Raises:
        FileNotFoundError: if the file is missing.
    """
    from editf1.io import read_rows

    rows = read_rows(Path(data_root) / "kqa" / "questions_w_answers.jsonl", ["Question"])
    return {f"kqa:kqa{n}": row["Question"].strip() for n, row in enumerate(rows)}


def split_by_case(
    sets: dict[str, list[ContentItem]],
    questions: dict[str, str] | None = None,
    *,
    test_size: float = 0.4,
    seed: int = 0,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The fitting and held-out items of each set (rules in the module docstring).

    Args:
        sets: set name -> items (:func:`load_evaluation_sets`); ``team`` and ``kqa``
            must be among them when a set has OncQA or K-QA cases.
        questions: :func:`kqa_questions`, needed when a set has ``"kqa:"`` cases.
        test_size, seed: of each source's :func:`~editf1.validation.labelled.case_split`.

    Returns:
        set name -> ``(fitting, held_out)`` int arrays of item indices.

    Raises:
        ValueError: for a ``"kqa:"`` case without its question.
    """
    held_out: set[str] = set()
    for name in ("team", "kqa", "expertqa_revision"):
        if sets.get(name):
            cases = [item.case for item in sets[name]]
            _, test = case_split(cases, test_size=test_size, seed=seed)
            held_out |= {cases[k] for k in test}
    stage2 = sets.get("stage2", [])
    team_cases = {item.case for item in sets.get("team", [])}
    unseen = [k for k, item in enumerate(stage2) if item.case not in team_cases]
    if unseen:  # stage-2 cases without team labels: their own case split
        _, test = case_split([stage2[k].case for k in unseen], test_size=test_size, seed=seed)
        held_out |= {stage2[unseen[k]].case for k in test}
    kqa_held_out = {case.strip() for case in held_out}

    def is_held_out(name: str, k: int, case: str) -> bool:
        if name == "kqa" or not case.startswith("kqa:"):
            return case in held_out
        if questions is None or case not in questions:
            raise ValueError(f"{name} item {k}: no K-QA question for case {case!r}")
        return questions[case] in kqa_held_out

    out = {}
    for name, items in sets.items():
        flags = np.array([is_held_out(name, k, item.case) for k, item in enumerate(items)])
        indices = np.arange(len(items))
        out[name] = (indices[~flags], indices[flags]) if len(items) else (indices, indices)
    return out
