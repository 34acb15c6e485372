"""``edit-f1 score`` (:class:`editf1.scorer.EditF1Scorer`), in one process or in shares across
several (``torchrun``, ``accelerate launch``; :mod:`editf1.integrations.distributed`)."""

from __future__ import annotations

import argparse
import warnings
from contextlib import nullcontext
from pathlib import Path

from editf1.cli.conventions import (
    ProcessError,
    add_fields,
    add_input,
    add_output,
    check_outputs,
    first_rows,
    human_stream,
    is_stdio,
    rows_text,
    write_json,
)
from editf1.cli.datasets import add_dataset_options
from editf1.cli.gold import add_gold_options, check_gold
from editf1.cli.judge_options import add_judge_arguments, scorer_judges
from editf1.cli.progress import silence_progress_bars
from editf1.cli.summary import format_summary
from editf1.options import option_help

__all__ = ["DEFAULT_RUNS", "add_commands"]

#: Where ``edit-f1 score`` writes per-row results without ``-o``.
DEFAULT_RUNS = Path("runs")
#: Output suffixes of tables, which the per-row JSON Lines would be mistaken for.
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".xlsx", ".xls")
#: The scorer's options ``score`` takes as flags (:mod:`editf1.options`).
_SCORING = ("include_other", "leave_out_other", "zero_division", "batch_size")


def _zero_division(text: str):
    from editf1.options import check_zero_division

    try:
        return check_zero_division(text if text == "warn" else float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected warn, 0 or 1, got {text!r}") from None


def add_commands(commands) -> None:
    """Register ``score``."""
    p = commands.add_parser(
        "score",
        help="score drafts against clinician replies; writes per-row JSONL, prints a summary",
        usage="%(prog)s [INPUT] [options]",
        description="Score every (draft, clinician reply) row of a JSONL or CSV file: "
        "content- and theme-level precision, recall and F1. Without an input file, scores "
        "the demo set shipped with the package. Common options come first.",
        example="""edit-f1 score pairs.jsonl
edit-f1 score pairs.csv --prediction-field draft --reference-field reply -o runs/a.jsonl
edit-f1 score pairs.jsonl --reference-field reply_a --reference-field reply_b
edit-f1 score --dataset oncqa --config own_reply --data-dir path/to/OncQA
edit-f1 score - --summary-json - < pairs.jsonl""",
        example_first=True,
    )
    given = p.add_argument_group("input")
    add_input(given, "pairs", optional=True)
    add_fields(given, prediction="prediction")
    given.add_argument(
        "--reference-field",
        action="append",
        metavar="FIELD",
        help="column of the clinician reply (default: reference). In JSON Lines it may "
        "hold a list of replies (several clinicians); given several times, each draft is "
        "scored against every one of those columns: its best-matching reply is the pair, "
        "and the summary adds all_references",
    )
    given.add_argument(
        "--id-field",
        help="column of the row id (default: 'id' where the rows have one); ids must be unique",
    )
    given.add_argument("--limit", type=int, help="score the first N rows only (all are checked)")
    written = p.add_argument_group("output")
    add_output(
        written,
        "per-row JSON Lines (default: runs/<name>.edit_f1.jsonl; a table name such as .csv "
        "is refused); - for standard output",
        summary="the summary",
    )
    written.add_argument(
        "--quiet", "-q", action="store_true", help="no progress bars and no summary table"
    )
    written.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bars (also those of model downloads and loading)",
    )
    judging = p.add_argument_group("judges and scores")
    add_judge_arguments(judging, theme_none=True)
    for name in _SCORING:
        default, about = option_help(name)
        flag = "--" + name.replace("_", "-")
        if isinstance(default, bool):
            judging.add_argument(flag, action="store_true", help=about)
        else:
            kind = _zero_division if name == "zero_division" else type(default)
            judging.add_argument(
                flag, type=kind, default=default, help=f"{about} (default %(default)s)"
            )
    add_gold_options(p)
    add_dataset_options(p)
    p.set_defaults(run=_score)


def _rows_for(args) -> tuple[str, list[dict], str, list[str]]:
    """(run name, rows, prediction field, reference fields)."""
    if args.input and args.dataset:
        raise ValueError("give an input file or --dataset, not both")
    refs = args.reference_field or ["reference"]
    if len(set(refs)) < len(refs):
        raise ValueError(f"--reference-field names a column twice: {refs}")
    if args.input:
        from editf1.io import read_rows

        named_by = {f: "--reference-field" for f in refs}
        named_by[args.prediction_field] = "--prediction-field"
        fields = [args.prediction_field, *refs]
        rows = read_rows(args.input, fields, args.input_format, named_by)
        name = "stdin" if is_stdio(args.input) else args.input.stem
        return name, rows, args.prediction_field, refs
    if args.dataset:
        from editf1.cli.datasets import dataset_rows  # looked up when run (tests replace it)

        return *dataset_rows(args, refs), args.prediction_field, refs
    from editf1.builders.readers import demo_rows

    return "demo", demo_rows(), "prediction", ["reference"]


def _score(args) -> int:
    from editf1.integrations import distributed
    from editf1.io import JsonlWriter
    from editf1.scorer import EditF1Scorer

    state = None  # accelerate's PartialState when launched with several processes
    if distributed.several_processes():  # each reads and checks all rows; the main one reports
        if is_stdio(args.input) or is_stdio(args.output):
            raise ValueError(
                "several processes cannot share standard input or output: give files (input, -o)"
            )
        state = distributed.process_state()
    progress = not (args.no_progress or args.quiet) and (state is None or state.is_main_process)
    if not progress:
        silence_progress_bars()
    inputs = [args.input, args.data_dir, args.gold, args.second_gold]
    if args.output is not None and args.output.suffix.lower() in TABLE_SUFFIXES:
        raise ValueError(
            f"-o {args.output}: the per-row results are JSON Lines (each pair's alignment is "
            "nested), not a table; name the file .jsonl (pandas.read_json(path, lines=True) "
            "reads it as one)"
        )
    check_outputs([("-o", args.output), ("--summary-json", args.summary_json)], inputs)
    with nullcontext() if state is None else state.main_process_first():
        name, rows, pred, refs = _rows_for(args)  # a shared --cache-dir: built once
    output = args.output or DEFAULT_RUNS / f"{name}.edit_f1.jsonl"
    # the default name is the input's stem: a.jsonl and a.csv, or two runs, share it
    replaced = args.output is None and output.exists()
    check_outputs([("-o", output), ("--summary-json", args.summary_json)], inputs)
    checked = first_rows(_checked_rows(args, rows, pred, refs), args.limit)
    judges, options = scorer_judges(args), {k: getattr(args, k) for k in _SCORING}
    try:
        scorer = EditF1Scorer(**judges, **options, progress=progress)
    except TypeError as error:  # the judges' answer to an option they do not take
        if not (judges["content_judge_options"] or judges["theme_judge_options"]):
            raise
        raise ValueError(f"--content-judge-option / --theme-judge-option: {error}") from None
    gold = check_gold(args, checked, scorer)
    if gold is not None and state is not None:
        raise ValueError("--gold runs in one process")
    # every line names its judges, options and versions: a report needs no other file
    record = {"run": scorer.provenance}
    if state is None:
        with JsonlWriter(output) as write:
            result = scorer.score_stream(
                checked,
                total=len(checked),
                sink=lambda pair: write(
                    pair.to_dict() | record | (gold.entry(pair) if gold else {})
                ),
                keep_pairs=gold is not None,
            )
        if gold is not None:
            result = gold.attach(result)
    else:
        try:  # each process judges its share; the main one writes output
            run = distributed.score_across_processes(
                scorer, checked, output, state=state, run_record=record["run"]
            )
        except (ValueError, OSError) as error:
            if state.is_main_process:
                raise
            where = f"process {state.process_index} of {state.num_processes}"
            raise ProcessError(where, error) from error
        if run is None:  # not the main process: it wrote its share, the main one the rest
            return 0
        result = run.result
    summary = result.summary()
    human = human_stream(output, args.summary_json)
    if not args.quiet:
        print(format_summary(summary), file=human)
        if result.gold is not None:
            print(result.gold.format(), file=human)
        if state is not None:
            shares = " + ".join(map(str, run.pairs_per_process))
            print(f"  judged by {state.num_processes} processes: {shares} pairs", file=human)
        where = "standard output" if is_stdio(output) else output
        note = " (replaced an earlier run's; give -o to keep both)" if replaced else ""
        print(f"  per-row results: {where}{note}", file=human)
    if args.summary_json:
        said = None if args.quiet else human
        write_json(args.summary_json, summary, said=said, label="  summary:")
    return 0


def _checked_rows(args, rows, pred: str, refs: list[str]):
    """The rows checked (:func:`editf1.inputs.check_rows`); with several ``--reference-field``
    columns an empty cell is no reply and a row with none is an error naming every column."""
    from editf1.inputs import CheckedRows, InputError, check_rows
    from editf1.io import TableRows
    from editf1.naming import shown_columns

    table = isinstance(rows, TableRows)
    id_field = args.id_field or "id"
    if args.id_field and (lacking := [i for i, row in enumerate(rows) if id_field not in row]):
        if table and len(lacking) == len(rows):
            raise ValueError(
                f"--id-field {id_field!r}: {rows.source} has no such field; its rows have "
                f"{shown_columns(rows.columns, [id_field], 'field')}"
            )
        raise ValueError(f"--id-field {id_field!r}: no such field on {rows_text(rows, lacking)}")
    locations = rows.locations() if table else None
    if table:  # warnings name the rows by file and line
        args.rows_text = lambda shown, count: _lines_text(rows, shown, count)
    if len(refs) == 1:
        return check_rows(
            ((_as_id(row.get(id_field)), row[pred], row[refs[0]]) for row in rows),
            prediction_field=pred,
            reference_field=refs[0],
            id_field=id_field,
            locations=locations,
        )
    checked, errors, seen, fewer = [], [], {}, []
    for i, row in enumerate(rows):
        given = [f for f in refs if _has_reply(row[f])]
        fields = given or refs  # none: every column's error is reported
        fewer += [i] if given and len(given) < len(refs) else []
        try:
            checked += check_rows(
                [(_as_id(row.get(id_field)), row[pred], [row[f] for f in fields])],
                first_row=i,
                seen=seen,
                prediction_field=pred,
                reference_field=fields,
                id_field=id_field,
                locations=None if locations is None else locations[i : i + 1],
            )
        except InputError as error:
            errors += error.errors
    if errors:
        raise InputError(errors)
    if fewer:
        warnings.warn(
            f"{len(fewer)} row(s) have a reply in fewer than all of {refs} "
            f"({rows_text(rows, fewer)}): an empty cell is no reply",
            stacklevel=2,
        )
    return CheckedRows(checked)


def _lines_text(rows, shown: list, count: int) -> str:
    if not all(isinstance(row, int) for row in shown):  # e.g. "all"
        return f"[{', '.join(map(str, shown))}]"
    return f"({rows.where(shown)}{', ...' if count > len(shown) else ''})"


def _as_id(value):
    return None if value is None else str(value)


def _has_reply(value) -> bool:
    from editf1.segment import has_word

    return value is not None and (not isinstance(value, str) or has_word(value))
