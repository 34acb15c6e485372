"""What every ``edit-f1`` command does alike: ``-`` is standard input for an input file and
standard output for ``-o`` or ``--summary-json`` (human-readable lines then go to standard
error); outputs are checked before any work and appear only once complete; shared options."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

__all__ = [
    "COLUMNS",
    "ProcessError",
    "add_bootstrap_options",
    "add_fields",
    "add_input",
    "add_output",
    "add_seed",
    "check_outputs",
    "first_rows",
    "human_stream",
    "is_stdio",
    "read_input",
    "rows_text",
    "write_json",
]


class ProcessError(ValueError):
    """The ``error`` one process of several met in its share of the work, reported by that
    process; ``where`` names it (``"process 1 of 2"``)."""

    def __init__(self, where: str, error: BaseException) -> None:
        super().__init__(f"{where}: {error}")
        self.where, self.error = where, error


def is_stdio(path) -> bool:
    """Whether an input or output path is ``-`` (:data:`editf1.io.STDIO`)."""
    from editf1.io import STDIO

    return path is not None and str(path) == STDIO


def rows_text(rows, indices: list[int]) -> str:
    """Rows as a message names them: ``pairs.csv, lines 2 and 5`` for the rows of a file,
    else ``row(s) [0, 3]`` (the first 10)."""
    from editf1.io import TableRows

    if isinstance(rows, TableRows):
        return rows.where(indices)
    return f"row(s) {indices[:10]}{' ...' if len(indices) > 10 else ''}"


def human_stream(*outputs) -> TextIO:
    """Where human-readable text goes: standard error when an output is standard output."""
    return sys.stderr if any(is_stdio(path) for path in outputs) else sys.stdout


def check_outputs(outputs: list[tuple[str, Path | None]], inputs=()) -> None:
    """Before any work: every output (``(option, path or None)``) can be written and is
    neither an input (or inside an input folder) nor another output; at most one is ``-``.

    Raises:
        ValueError: naming the option and the path.
    """
    from editf1.io import check_output_path, is_inside, same_file

    given = [(label, path) for label, path in outputs if path is not None]
    to_stdout = [label for label, path in given if is_stdio(path)]
    if len(to_stdout) > 1:
        raise ValueError(f"{' and '.join(to_stdout)} cannot both be - (standard output)")
    sources = [source for source in inputs if source is not None and not is_stdio(source)]
    for k, (label, path) in enumerate(given):
        check_output_path(path, label)
        for source in sources:
            in_folder = os.path.isdir(source) and os.path.isfile(path)
            if same_file(path, source) or (in_folder and is_inside(path, source)):
                raise ValueError(f"{label} {path} would overwrite the input file {source}")
        for other_label, other in given[:k]:
            if same_file(path, other):
                raise ValueError(f"{label} {path} and {other_label} {other} are the same file")


def write_json(path: Path, value, indent: int = 2, *, said=None, label: str = "wrote") -> None:
    """Write ``value`` as JSON to ``path`` (atomically) or to standard output (``-``); then,
    for a file, print ``{label} {path}`` to ``said`` (a stream; ``None``: nothing)."""
    from editf1.io import atomic_output

    with atomic_output(path) as handle:
        handle.write(json.dumps(value, indent=indent) + "\n")
    if said is not None and not is_stdio(path):
        print(f"{label} {path}", file=said)


#: What each ``--<name>-field`` option names, for its help.
COLUMNS = {
    "prediction": "the LLM draft",
    "reference": "the clinician reply",
    "id": "the row id",
    "message": "the patient message",
    "ehr": "the EHR summary",
    "group": "the message a row belongs to",
}


def add_input(p, rows: str, *, optional: bool = False, stdin: bool = True) -> None:
    """The ``input`` file (JSONL or CSV of ``rows``) and ``--input-format``."""
    p.add_argument(
        "input",
        nargs="?" if optional else None,
        type=Path,
        help=f"JSONL or CSV of {rows}"
        + ("; - reads standard input (JSONL unless --input-format csv)" if stdin else ""),
    )
    p.add_argument(
        "--input-format",
        default="auto",
        choices=["auto", "jsonl", "csv"],
        help="format of the input; auto: by suffix (.jsonl, .csv, .tsv), JSONL for stdin",
    )


def add_fields(p, notes: dict[str, str] | None = None, **defaults: str) -> None:
    """``--<name>-field`` for each ``name=default column`` (help: :data:`COLUMNS`, ``notes``)."""
    for name, default in defaults.items():
        note = f"; {notes[name]}" if notes and name in notes else ""
        p.add_argument(
            f"--{name}-field",
            default=default,
            help=f"column of {COLUMNS[name]}{note} (default %(default)s)",
        )


def read_input(args, *options: str, path=None):
    """The rows of ``args.input`` (or of ``path``, its format by suffix) with the columns
    the ``options`` (``"--prediction-field"``, ...) name (:func:`editf1.io.read_rows`)."""
    from editf1.io import read_rows

    fields = [getattr(args, option.lstrip("-").replace("-", "_")) for option in options]
    named_by = dict(reversed(list(zip(fields, options))))
    source, kind = (args.input, args.input_format) if path is None else (path, "auto")
    return read_rows(source, list(dict.fromkeys(fields)), kind, named_by)


def first_rows(rows, limit: int | None):
    """The first ``limit`` rows (``None``: all); ValueError for a ``--limit`` below 1."""
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be >= 1, got {limit}")
    return rows[:limit]


def add_output(p, help: str, *, summary: str | None = None, **kwargs) -> None:
    """``-o`` (``kwargs``: ``required``, ``default``) and, with ``summary`` (what it holds),
    ``--summary-json``."""
    p.add_argument("--output", "-o", type=Path, help=help, **kwargs)
    if summary:
        p.add_argument(
            "--summary-json", type=Path, help=f"also write {summary} as JSON; - for standard output"
        )


def add_seed(p, help: str) -> None:
    """``--seed``: an integer in [0, 2**32 - 1], default 0."""
    p.add_argument("--seed", type=_seed, default=0, help=f"{help} (default %(default)s)")


def _seed(text: str) -> int:
    """What NumPy and scikit-learn take as a seed."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"a seed is an integer in [0, 2**32 - 1], got {text!r}")
    return value


def _n_resamples(text: str) -> int:
    import argparse

    from editf1.stats import MIN_RESAMPLES, check_n_resamples

    try:
        return check_n_resamples(int(text))
    except ValueError as error:
        reason = str(error) if text.strip().lstrip("+-").isdigit() else ""
        raise argparse.ArgumentTypeError(
            reason.removeprefix("n_resamples ")
            or f"must be an integer of at least {MIN_RESAMPLES}, got {text!r}"
        ) from None


def add_bootstrap_options(p, seed_help: str = "seed of the bootstrap") -> None:
    """``--n-resamples`` and the bootstrap's ``--seed``."""
    p.add_argument(
        "--n-resamples",
        type=_n_resamples,
        default=2000,
        help="bootstrap resamples over cases for the CIs (default %(default)s; at least 100)",
    )
    add_seed(p, seed_help)
