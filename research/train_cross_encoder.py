"""Train the shipped cross-encoder content judge on the fitting cases of the team's
paraphrase label sets (:data:`PARAPHRASE_SETS`; :func:`research.content_splits.split_by_case`:
no held-out case of any comparison is read).

:func:`editf1.training.cross_encoder.train_cross_encoder_judge` (what ``edit-f1
train-judge cross-encoder --data my_labels.jsonl`` runs on a user's own labels) does the
fine-tuning, calibration and saving, with its default settings.

    python -m research.train_cross_encoder --data ../shared/data -o my-cross-encoder/

``--data`` is the folder holding ``oncqa/``, ``kqa/`` and ``expertqa/``; the output
folder (new or empty) receives the float16 weights, the tokenizer and ``judge.json``.
The shipped judge (``src/editf1/data/cross_encoder``) is this command's output.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

__all__ = ["NEAR_COPY_SETS", "PARAPHRASE_SETS", "fitting_items", "main"]

#: The label sets the shipped judge is trained on: the paraphrase sets, where a
#: clinician's sentence is matched against a text written apart from it. K-QA's NLI
#: labels (``kqa``) carry no span: their NO MATCH items give negatives, and all of them
#: calibrate.
PARAPHRASE_SETS = (
    "team",
    "kqa",
    "oncqa_other_reply",
    "oncqa_edited_draft",
    "kqa_statements",
    "kqa_free_form",
    "kqa_physician",
)
#: The near-copy sets (an edit against the draft it was edited from), left out.
NEAR_COPY_SETS = ("oncqa_edit_vs_draft", "expertqa_revision")


def fitting_items(sets: dict, split: dict, names) -> list:
    """The fitting items of the sets ``names`` (``split``: set -> (fitting, held-out)
    indices), each with ``source`` its set's name (calibration weighs sets alike)."""
    return [
        dataclasses.replace(sets[name][k], source=name) for name in names for k in split[name][0]
    ]


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
    from research.content_splits import kqa_questions, load_evaluation_sets, split_by_case

    sets = load_evaluation_sets(args.data)  # every set: the split holds out across all
    split = split_by_case(sets, kqa_questions(args.data))
    items = fitting_items(sets, split, PARAPHRASE_SETS)
    record = train_cross_encoder_judge(items, args.output, CrossEncoderTraining(seed=args.seed))
    print(json.dumps({k: record[k] for k in ("training", "calibration")}, indent=2))
    print(f"wrote {args.output}/ (float16 weights, tokenizer and judge.json)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
