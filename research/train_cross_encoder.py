"""Train the shipped cross-encoder content judge on every team content label set and
K-QA's physicians' labels (their fitting cases: research.content_splits.split_by_case).

:func:`editf1.training.cross_encoder.train_cross_encoder_judge` does the training,
saving, reloading and calibration.

    python -m research.train_cross_encoder --data ../shared/data -o my-cross-encoder/

``--data`` is the folder holding ``oncqa/``, ``kqa/`` and ``expertqa/``; the output
folder (new or empty) receives the LoRA adapter, its head and ``judge.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Load the label sets, train, and print the training and calibration record."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="the folder holding oncqa/, kqa/, expertqa/"
    )
    parser.add_argument("--output", "-o", type=Path, required=True, help="the folder to write")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fit (default 0)")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        parser.error(f"--data {args.data} is not a folder")

    from editf1.training.cross_encoder import CrossEncoderTraining, train_cross_encoder_judge
    from research.content_splits import EVALUATION_SETS, kqa_questions, load_evaluation_sets

    sets = load_evaluation_sets(args.data, tuple(n for n in EVALUATION_SETS if n != "stage2"))
    record = train_cross_encoder_judge(
        args.data,
        args.output,
        CrossEncoderTraining(seed=args.seed),
        sets=sets,
        questions=kqa_questions(args.data),
    )
    print(json.dumps({k: record[k] for k in ("training", "calibration")}, indent=2))
    print(f"wrote {args.output}/ (LoRA adapter, head and judge.json)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
