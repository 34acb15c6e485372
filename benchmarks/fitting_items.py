"""Write the fitting side of every content label set as a content-labels JSONL, for
``edit-f1 train-judge llm-content --data`` (the LLM judge trained on the same labels and
cases as the cross-encoder; ``benchmarks/content_judge_real.py --llm-adapter`` then
compares it on the held-out cases).

The file holds the upstream text (``case``, ``prediction``, ``reference``, ``match``,
``span``), so it must be written outside the repository (the script refuses a path
inside it). ``--max-items`` draws a seeded sample for a run that fits a CPU's time:
half matches and half NO MATCH where there are enough, whole cases not kept together
(the trainer splits by case itself).

    python benchmarks/fitting_items.py --data-dir ../shared/data --max-items 240 \\
        -o /tmp/content_fitting.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import benchlib


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(benchlib.ROOT.parent / "shared" / "data"))
    parser.add_argument("--output", "-o", type=Path, required=True)
    parser.add_argument("--max-items", type=int, help="a seeded, class-balanced sample")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.output.resolve().is_relative_to(benchlib.ROOT.resolve()):
        print("the file holds upstream text: write it outside the repository", file=sys.stderr)
        return 2

    from research.content_splits import (
        kqa_questions,
        load_evaluation_sets,
        split_by_case,
    )

    sets = load_evaluation_sets(args.data_dir)
    split = split_by_case(sets, kqa_questions(args.data_dir))
    items = [sets[n][k] for n in sets if n != "stage2" for k in split[n][0]]
    if args.max_items is not None and len(items) > args.max_items:
        rng = random.Random(args.seed)
        matches = [i for i in items if i.match and i.span is not None]
        others = [i for i in items if not i.match]
        rng.shuffle(matches)
        rng.shuffle(others)
        half = min(args.max_items // 2, len(matches))
        items = matches[:half] + others[: args.max_items - half]
        rng.shuffle(items)
    with args.output.open("w", encoding="utf-8") as f:
        for item in items:
            row = {"case": item.case, "prediction": item.prediction, "reference": item.reference}
            row |= {"match": item.match, "span": item.span}
            f.write(json.dumps(row) + "\n")
    print(f"wrote {len(items)} items ({sum(i.match for i in items)} matches) to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
