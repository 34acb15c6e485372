"""``edit-f1 report`` and ``edit-f1 iap`` (:mod:`editf1.analysis`)."""

from __future__ import annotations

import os
from pathlib import Path

from editf1.cli.conventions import (
    add_bootstrap_options,
    add_fields,
    add_input,
    add_output,
    check_outputs,
    human_stream,
    is_stdio,
    read_input,
    write_json,
)
from editf1.cli.judge_options import add_judge_arguments, scorer_judges

__all__ = ["add_commands"]


def add_commands(commands) -> None:
    """Register ``report`` and ``iap``."""
    _add_report(commands)
    _add_iap(commands)


def _add_report(commands) -> None:
    p = commands.add_parser(
        "report",
        example="edit-f1 report runs/zero.edit_f1.jsonl runs/few.edit_f1.jsonl -o report/",
        help="HTML and Markdown report with plots and paired CIs from scored runs",
        description="Reads the per-row JSONL of one or more `edit-f1 score` runs and writes "
        "report.html (self-contained), report.md and PNG plots: per-theme F1, theme "
        "proportions beside the clinicians', per-pair F1 histograms, and for runs scored "
        "against the same references the paired bootstrap difference in edit-F1 with its "
        "95% CI and p-value, and (report.html only) the pairs whose edit-F1 differs most, "
        "with each system's alignment.",
    )
    p.add_argument(
        "runs",
        nargs="+",
        type=Path,
        help="per-row JSONL files of edit-f1 score; each must hold a complete run",
    )
    p.add_argument(
        "--name",
        action="append",
        default=[],
        help="a system's name, once per run in order (default: the file name)",
    )
    p.add_argument(
        "--summary",
        action="append",
        type=Path,
        default=[],
        help="the run's --summary-json file, once per run in order (optional: the per-row "
        "file names its judges, options and versions; a summary is checked against it)",
    )
    add_output(p, "folder to write (its other files are kept)", default=Path("report"))
    p.add_argument("--title", default="edit-F1 report", help="the report's heading")
    p.add_argument(
        "--case-pattern",
        help="regex whose first group is a pair's case, for the bootstrap: pairs of one "
        "case are drawn together, e.g. '(.+)-\\d+' for OncQA ids <case>-<n>",
    )
    p.add_argument(
        "--top-pairs",
        type=int,
        default=10,
        metavar="N",
        help="how many of those pairs report.html shows for each two runs (see above; default "
        "%(default)s; 0: none; report.md counts them, without their texts)",
    )
    add_bootstrap_options(p)
    p.set_defaults(run=_report)


def _report(args) -> int:
    from editf1.analysis.compare import case_pattern, load_run
    from editf1.analysis.report import write_report
    from editf1.io import check_output_path

    for option, values in (("--name", args.name), ("--summary", args.summary)):
        if values and len(values) != len(args.runs):
            raise ValueError(f"give {option} once per run ({len(args.runs)}), got {len(values)}")
    check_output_path(args.output, "-o", folder=True)
    if args.top_pairs < 0:
        raise ValueError(f"--top-pairs must be 0 or more, got {args.top_pairs}")
    names = args.name or [None] * len(args.runs)
    summaries = args.summary or [None] * len(args.runs)
    runs = [load_run(path, name, summary=s) for path, name, s in zip(args.runs, names, summaries)]
    for path, run in zip(args.runs, runs):
        _check_complete_run(path, run)
    files = write_report(
        runs,
        args.output,
        protect=[*args.runs, *args.summary],
        title=args.title,
        cases=case_pattern(args.case_pattern) if args.case_pattern else None,
        n_resamples=args.n_resamples,
        seed=args.seed,
        top_pairs=args.top_pairs,
    )
    for path in (files.html, files.markdown, *files.figures):
        print(f"wrote {path}")
    return 0


def _check_complete_run(path: Path, run) -> None:
    """Refuse a per-row file that is not a whole run: rows 0..n-1 in order, last line whole."""
    for k, row in enumerate(pair.row for pair in run.pairs):
        if row != k:
            raise ValueError(
                f"{path}: pair {k + 1} is row {row}, expected row {k}: not the per-row file "
                "of a complete edit-f1 score run"
            )
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) != b"\n":
            raise ValueError(f"{path}: the last line is cut short: not a complete run")


def _add_iap(commands) -> None:
    p = commands.add_parser(
        "iap",
        example="edit-f1 iap replies.jsonl --group-field message_id --reference-field reply",
        help="inter-annotator predictability: clinicians' replies scored on each other",
        description="For every message answered by two or more clinicians, scores each "
        "reply as the draft for every other reply (each ordered pair) and micro-averages "
        "(Seegmiller et al. 2026, §4.2, Table 11): the human ceiling for edit-F1.",
    )
    add_input(p, "replies, one per row", optional=True)
    p.add_argument("--dataset", choices=["oncqa"], help="OncQA stage-1 replies (stage1.csv)")
    p.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    add_fields(p, group="message_id", reference="reference")
    add_output(p, "per-ordered-pair JSONL; - for standard output", summary="the summary")
    add_judge_arguments(p, theme_none=True)
    add_bootstrap_options(p)
    p.set_defaults(run=_iap)


def _checked_replies(rows: list[dict], group_field: str, reference_field: str) -> list[dict]:
    from editf1.inputs import InputError, check_group, check_reference, describe
    from editf1.io import TableRows
    from editf1.naming import field_at

    errors = []
    places = rows.locations() if isinstance(rows, TableRows) else range(len(rows))
    for at, row in zip(places, rows):
        reply = row[reference_field]
        errors += check_group(at, row[group_field], group_field)
        if isinstance(reply, str):
            errors += check_reference(at, reply, reference_field)
        else:
            errors.append(
                f"{field_at(reference_field, at)} must be a string, got {describe(reply)}: one "
                f"reply per row, the rows of one {group_field} being its replies"
            )
    if errors:
        raise InputError(errors)
    return rows


def _iap(args) -> int:
    from editf1.analysis.inter_annotator import inter_annotator_predictability
    from editf1.io import JsonlWriter
    from editf1.scorer import EditF1Scorer

    if bool(args.input) == bool(args.dataset):
        raise ValueError("iap: give an input file or --dataset oncqa (one of them)")
    outputs = [("-o", args.output), ("--summary-json", args.summary_json)]
    check_outputs(outputs, [args.input, args.data_dir])
    if args.dataset:
        from editf1.builders.readers import oncqa_rows

        if args.data_dir is None:
            raise ValueError("iap --dataset oncqa needs --data-dir (folder of the CSVs)")
        rows = oncqa_rows(args.data_dir, "own_reply")
        group_field, reference_field = "case_id", "reference"
    else:
        group_field, reference_field = args.group_field, args.reference_field
        rows = read_input(args, "--group-field", "--reference-field")
    replies: dict[str, list] = {}
    for row in _checked_replies(rows, group_field, reference_field):
        replies.setdefault(str(row[group_field]), []).append(row[reference_field])
    scorer = EditF1Scorer(**scorer_judges(args))
    iap = inter_annotator_predictability(
        scorer, replies, n_resamples=args.n_resamples, seed=args.seed
    )
    human = human_stream(args.output, args.summary_json)
    print(
        f"inter-annotator predictability on {iap.n_messages} message(s) with two or more "
        f"replies ({iap.n_ordered_pairs} ordered pairs; {len(iap.single_reply_messages)} "
        "message(s) with one reply not scored)",
        file=human,
    )
    print(f"  content  precision {iap.precision}  recall {iap.recall}  F1 {iap.f1}", file=human)
    if iap.theme_f1 is not None:
        c = iap.corpus.theme
        print(
            f"  themes   precision {c.precision:.3f}  recall {c.recall:.3f}  F1 {iap.theme_f1}",
            file=human,
        )
    print("  [95% bootstrap CI over messages]", file=human)
    if args.output:
        with JsonlWriter(args.output) as write:
            for pair in iap.corpus.pairs:
                write(pair.to_dict())
        if not is_stdio(args.output):
            print(f"  per-pair results: {args.output}", file=human)
    if args.summary_json:
        write_json(args.summary_json, iap.summary(), said=human, label="  summary:")
    return 0
