"""The ``edit-f1`` command: a thin shell over :class:`editf1.score.EditF1Scorer`.

edit-f1 score                       # the demo set shipped with the package
edit-f1 score pairs.jsonl           # your own pairs (JSONL or CSV)
edit-f1 score --dataset oncqa --setting own_reply --data-dir ../shared/data/oncqa
edit-f1 train-judge embedding-theme --output theme_judge.json
edit-f1 install-metric              # evaluate.load("edit_f1") offline
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

__all__ = ["main"]

DEFAULT_RUNS = Path("runs")


def _zero_division(value: str):
    return value if value == "warn" else float(value)


def _add_score(commands) -> None:
    p = commands.add_parser(
        "score",
        help="score drafts against clinician replies; writes per-row JSONL, prints a summary",
        description="Score every (draft, clinician reply) row. Without an input file, "
        "scores the demo set shipped with the package.",
    )
    p.add_argument("input", nargs="?", type=Path, help="JSONL or CSV file of pairs")
    p.add_argument("--demo", action="store_true", help="score the shipped demo set")
    p.add_argument("--dataset", choices=["demo", "oncqa"], help="score a known dataset")
    p.add_argument(
        "--setting",
        default="own_reply",
        choices=["own_reply", "edited"],
        help="oncqa: draft vs the oncologist's own reply, or vs their edit of it",
    )
    p.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    p.add_argument("--input-format", default="auto", choices=["auto", "jsonl", "csv"])
    p.add_argument(
        "--prediction-field",
        default="prediction",
        help="column holding the LLM draft (default: prediction)",
    )
    p.add_argument(
        "--reference-field",
        default="reference",
        help="column holding the clinician reply (default: reference)",
    )
    p.add_argument("--id-field", default="id", help="column holding the row id, if present")
    p.add_argument(
        "--output", "-o", type=Path, help="per-row JSONL (default: runs/<name>.edit_f1.jsonl)"
    )
    p.add_argument("--summary-json", type=Path, help="also write the summary as JSON")
    p.add_argument("--content-judge", default="embedding", help="embedding (default) or exact")
    p.add_argument("--theme-judge", default="embedding", help="embedding (default) or none")
    p.add_argument(
        "--include-other", action="store_true", help="count the theme Other in theme-level scores"
    )
    p.add_argument(
        "--zero-division",
        default="warn",
        type=_zero_division,
        help="value of an undefined ratio: warn (0.0 and a warning), 0 or 1",
    )
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(run=_score)


def _rows_for(args) -> tuple[str, list[dict], str, str, str]:
    """(name, rows, prediction field, reference field, id field) for the score command."""
    if args.input and (args.demo or args.dataset):
        raise SystemExit("edit-f1 score: give an input file or --demo/--dataset, not both")
    if args.input:
        from editf1.io import read_rows

        fields = [args.prediction_field, args.reference_field]
        rows = read_rows(args.input, fields, args.input_format)
        return args.input.stem, rows, args.prediction_field, args.reference_field, args.id_field
    dataset = args.dataset or "demo"
    if dataset == "oncqa":
        from editf1.corpora import oncqa_rows

        if args.data_dir is None:
            raise SystemExit("edit-f1 score --dataset oncqa needs --data-dir (folder of the CSVs)")
        return (
            f"oncqa_{args.setting}",
            oncqa_rows(args.data_dir, args.setting),
            "prediction",
            "reference",
            "id",
        )
    from editf1.corpora import demo_rows

    return "demo", demo_rows(), "prediction", "reference", "id"


def _score(args) -> int:
    from editf1.io import JsonlWriter
    from editf1.score import EditF1Scorer
    from editf1.summary import format_summary
    from editf1.validate import InputError, check_pair

    name, rows, pred, ref, id_field = _rows_for(args)
    errors = [
        e for i, row in enumerate(rows) for e in check_pair(i, row[pred], row[ref], pred, ref)
    ]
    if errors:
        raise InputError(errors)
    scorer = EditF1Scorer(
        content_judge=args.content_judge,
        theme_judge=None if args.theme_judge == "none" else args.theme_judge,
        include_other=args.include_other,
        zero_division=args.zero_division,
        batch_size=args.batch_size,
        progress=not args.no_progress,
    )
    output = args.output or DEFAULT_RUNS / f"{name}.edit_f1.jsonl"
    stream = ((_as_id(row.get(id_field)), row[pred], row[ref]) for row in rows)
    with JsonlWriter(output) as write:
        result = scorer.score_stream(
            stream, total=len(rows), sink=lambda pair: write(pair.to_dict())
        )
    summary = result.summary()
    print(format_summary(summary))
    print(f"  per-row results: {output}")
    if args.summary_json:
        args.summary_json.parent.mkdir(parents=True, exist_ok=True)
        args.summary_json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        print(f"  summary: {args.summary_json}")
    return 0


def _as_id(value):
    return None if value is None else str(value)


def _add_train_judge(commands) -> None:
    p = commands.add_parser(
        "train-judge",
        help="fit an embedded judge on labelled data and report its agreement",
        description="embedding-theme: logistic regression on the shipped theme sentences "
        "(or --data JSONL of {text, theme}); embedding-content: classifier fitted on K-QA "
        "physician labels (--data folder with NLI_medical_annotator.csv).",
    )
    p.add_argument("judge", choices=["embedding-theme", "embedding-content"])
    p.add_argument("--data", type=Path, help="training data (see above)")
    p.add_argument("--output", "-o", type=Path, required=True, help="parameter file to write")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=_train_judge)


def _train_judge(args) -> int:
    from editf1 import calibrate

    if args.judge == "embedding-theme":
        if args.data:
            from editf1.io import read_rows

            rows = read_rows(args.data, ["text", "theme"], "jsonl")
            texts, themes = [r["text"] for r in rows], [r["theme"] for r in rows]
        else:
            texts, themes = calibrate.load_theme_sentences()
        params = calibrate.train_theme_judge(texts, themes, seed=args.seed)
        report = params["cross_validation"]
    else:
        from editf1.corpora import kqa_nli_rows

        if args.data is None:
            raise SystemExit("edit-f1 train-judge embedding-content needs --data (K-QA folder)")
        params = calibrate.calibrate_content_judge(kqa_nli_rows(args.data), seed=args.seed)
        report = {k: params[k] for k in ("split", "agreement", "human_ceiling")}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(params, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    print(f"wrote {args.output}")
    return 0


def _add_install_metric(commands) -> None:
    p = commands.add_parser(
        "install-metric",
        help="make evaluate.load('edit_f1') work offline by its bare name",
        description="Copies the installed evaluate module into evaluate's module cache "
        "(HF_MODULES_CACHE), where evaluate looks for a bare name it cannot fetch.",
    )
    p.add_argument("--modules-cache", type=Path, help="default: evaluate's HF_MODULES_CACHE")
    p.set_defaults(run=_install_metric)


def _install_metric(args) -> int:
    from editf1.hf_metric import install_metric, metric_path

    target = install_metric(args.modules_cache)
    print(f"installed {metric_path() / 'edit_f1.py'} -> {target}")
    print('evaluate.load("edit_f1") now loads it offline')
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="edit-f1",
        description="How much would a clinician edit this LLM-drafted reply? "
        "Content- and theme-level edit-F1, offline.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_score(commands)
    _add_train_judge(commands)
    _add_install_metric(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for bad input)."""
    from editf1.validate import InputError

    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            return args.run(args)
    except (InputError, ValueError, FileNotFoundError) as error:
        print(f"edit-f1 {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
