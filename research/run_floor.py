"""Choose the embedded default content judge's ``run_floor`` on the fitting cases of the
team's paraphrase label sets.

The run rule (:class:`editf1.judges.embedding.EmbeddingContentJudge`): a run of draft
sentences is a candidate only if each of its sentences alone reaches ``run_floor``.
For each floor of :data:`FLOORS`, every fitting item (a reference sentence against its
draft; :data:`research.train_cross_encoder.PARAPHRASE_SETS`, split by
:func:`research.content_splits.split_by_case`: no held-out case is read) is judged by
the shipped judge with every span scored, and the floor of the highest mean Cohen's
kappa over the sets is kept (ties: the higher floor). The weights, threshold and veto
are not refitted.

    python -m research.run_floor --data ../shared/data

Prints the grid and writes it to ``benchmarks/results/run_floor.json``. The shipped
parameter file is then written by ``edit-f1 train-judge embedding-content --data
../shared/data/kqa --veto ... --run-floor <chosen>`` (``judges/kqa_real_check.sh``),
which measures the judge with the rule.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

__all__ = ["FLOORS", "floor_grid", "main"]

#: The floors tried: probabilities in [0, 1].
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45)


def floor_grid(judge, items, sets) -> dict[float, dict[str, float]]:
    """floor -> {set: Cohen's kappa of the judge's decisions on that set's items}.

    Args:
        judge: an :class:`~editf1.judges.embedding.EmbeddingContentJudge` (its floor is
            replaced by each of :data:`FLOORS`).
        items: labelled items (one reference sentence against its draft each).
        sets: each item's set.
    """
    from editf1.judges.base import JudgeRequest
    from editf1.judges.embedding import EmbeddingContentJudge
    from editf1.segment import Sentence, SentenceSplitter
    from editf1.validation.agreement import cohen_kappa

    splitter = SentenceSplitter()
    requests = [
        JudgeRequest(
            (Sentence(i.reference, 0, len(i.reference)),),
            i.prediction,
            tuple(splitter.split(i.prediction)),
        )
        for i in items
    ]
    y = np.array([i.match for i in items])
    names = sorted(set(sets))
    masks = {name: np.array([s == name for s in sets]) for name in names}
    grid = {}
    for floor in FLOORS:
        scorer = EmbeddingContentJudge(
            config=judge.config, encoder=judge.encoder, run_floor=floor, span_margin=None
        )
        best = np.array(
            [
                s.probability[0].max() if s.probability.size else 0.0
                for s in scorer.span_scores(requests)
            ]
        )
        decisions = best >= scorer.threshold
        grid[floor] = {
            n: round(float(cohen_kappa(y[m], decisions[m])), 4) for n, m in masks.items()
        }
    return grid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="the folder of oncqa/, kqa/, expertqa/"
    )
    args = parser.parse_args(argv)

    from editf1.judges.embedding import EmbeddingContentJudge
    from research.content_splits import kqa_questions, load_evaluation_sets, split_by_case
    from research.train_cross_encoder import PARAPHRASE_SETS, fitting_items

    sets = load_evaluation_sets(args.data)
    items = fitting_items(sets, split_by_case(sets, kqa_questions(args.data)), PARAPHRASE_SETS)
    grid = floor_grid(EmbeddingContentJudge(run_floor=0.0), items, [i.source for i in items])
    means = {floor: float(np.mean(list(k.values()))) for floor, k in grid.items()}
    chosen = max(means, key=lambda f: (round(means[f], 4), f))
    for floor, kappas in grid.items():
        mark = " <- chosen" if floor == chosen else ""
        print(f"run_floor {floor:.2f}: mean kappa {means[floor]:.4f} {kappas}{mark}")
    out = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "run_floor.json"
    record = {
        "how": "python -m research.run_floor: highest mean Cohen's kappa over the sets' "
        "fitting items (ties: the higher floor)",
        "items": {n: sum(i.source == n for i in items) for n in PARAPHRASE_SETS},
        "cohen_kappa": {f"{f:.2f}": k for f, k in grid.items()},
        "mean_cohen_kappa": {f"{f:.2f}": round(m, 4) for f, m in means.items()},
        "chosen": chosen,
    }
    out.write_text(json.dumps(record, indent=1) + "\n", "utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
