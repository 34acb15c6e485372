"""What every ``edit-f1`` command does alike, apart from errors (:mod:`editf1.cli.main`):
standard streams, output checks, and the options several commands share."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

__all__ = [
    "ProcessError",
    "add_bootstrap_options",
    "add_input_format",
    "check_outputs",
    "field_options",
    "human_stream",
    "is_stdio",
    "n_resamples_option",
    "rows_text",
    "seed_option",
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


def field_options(args, *options: str) -> dict[str, str]:
    """``{column: the option naming it}`` (:func:`editf1.io.read_rows`'s ``named_by``)."""
    return {getattr(args, o.lstrip("-").replace("-", "_")): o for o in reversed(options)}


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


def write_json(path: Path, value, indent: int = 2) -> None:
    """Write ``value`` as JSON to ``path`` (atomically) or to standard output (``-``)."""
    from editf1.io import atomic_output

    with atomic_output(path) as handle:
        handle.write(json.dumps(value, indent=indent) + "\n")


def add_input_format(p) -> None:
    p.add_argument(
        "--input-format",
        default="auto",
        choices=["auto", "jsonl", "csv"],
        help="format of the input: auto (by suffix: .jsonl, .csv, .tsv; JSONL for stdin), "
        "jsonl or csv",
    )


def seed_option(text: str) -> int:
    """An ``argparse`` type: an integer in [0, 2**32 - 1] (what NumPy and scikit-learn take)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"a seed is an integer in [0, 2**32 - 1], got {text!r}")
    return value


def n_resamples_option(text: str) -> int:
    """An ``argparse`` type: at least :data:`editf1.stats.MIN_RESAMPLES` resamples."""
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


def add_bootstrap_options(
    p, *, flag: str = "--seed", seed_help: str = "seed of the bootstrap (default 0)"
) -> None:
    """``--n-resamples`` and the bootstrap's seed (``flag``)."""
    p.add_argument(
        "--n-resamples",
        type=n_resamples_option,
        default=2000,
        help="bootstrap resamples over cases for the confidence intervals (default 2000; at "
        "least 100, editf1.stats.MIN_RESAMPLES)",
    )
    p.add_argument(flag, type=seed_option, default=0, help=seed_help)
