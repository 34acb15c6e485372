"""The ``edit-f1`` parser and :func:`main`, which applies the error rule of :mod:`editf1.cli`."""

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

__all__ = ["COMMAND_GROUPS", "SECTIONS", "build_parser", "main"]

#: The command groups: each adds its commands (:data:`SECTIONS` orders them in the help).
COMMAND_GROUPS = (scoring, judges, datasets, analysis, integrations, training, drafting, gold)

#: ``edit-f1 --help`` lists the commands in these sections, in workflow order.
SECTIONS = (
    ("score drafts and read the results", ("score", "report")),
    ("check the scores against clinicians' labels", ("sample-for-labels", "annotate")),
    ("look closer", ("demo", "iap")),
    ("judges", ("agreement", "train-judge", "merge-judge", "push-judge")),
    ("drafts and training data", ("draft", "preference-pairs")),
    ("datasets and setup", ("export-dataset", "install-metric")),
)

_PREFIX = "edit-f1: error: "


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help, keeping paragraphs, indented lines (examples) and an option's lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        fill = super()._fill_text
        return "\n\n".join(
            "\n".join(indent + line for line in block.splitlines())
            if block.startswith("  ") or "\n  " in block
            else fill(block, width, indent)
            for block in text.split("\n\n")
        )

    def _split_lines(self, text: str, width: int) -> list[str]:
        split = super()._split_lines
        return [line for part in text.split("\n") for line in split(part, width)]


class _Commands(dict):
    """The subparsers as the groups see them (``{name: help}``); ``add_parser`` also takes an
    ``example`` (shown last, or first with ``example_first``)."""

    def __init__(self, subparsers) -> None:
        super().__init__()
        self._subparsers = subparsers

    def add_parser(
        self, name: str, *, help: str, example: str, example_first: bool = False, **kwargs
    ) -> argparse.ArgumentParser:
        self[name] = help
        lines = example.splitlines()
        shown = f"example{'s' if len(lines) > 1 else ''}:\n" + "\n".join(f"  {x}" for x in lines)
        if example_first:
            kwargs["description"] = f"{kwargs.get('description', '')}\n\n{shown}".strip()
        else:
            kwargs["epilog"] = shown
        return self._subparsers.add_parser(name, formatter_class=_HelpFormatter, **kwargs)

    def listing(self) -> str:
        listed = [name for _, names in SECTIONS for name in names]
        if sorted(listed) != sorted(self):
            raise RuntimeError(f"SECTIONS lists {listed}, the groups add {sorted(self)}")
        import shutil
        import textwrap

        width = max(shutil.get_terminal_size().columns - 2, 60)  # as argparse's help
        column = max(map(len, listed)) + 4

        def line(name: str) -> str:
            first, rest = f"  {name:<{column}}", " " * (column + 2)
            return textwrap.fill(self[name], width, initial_indent=first, subsequent_indent=rest)

        return "\n\n".join(f"{title}:\n" + "\n".join(map(line, names)) for title, names in SECTIONS)


class _Parser(argparse.ArgumentParser):
    """Usage errors are raised, for :func:`main` to report like any other."""

    def error(self, message: str):
        raise ValueError(f"{message} (see: {self.prog} --help)")


class _Version(argparse.Action):
    """``--version``, looked up only when asked (importlib.metadata slows ``--help``)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        import importlib.metadata

        print(f"{parser.prog} {importlib.metadata.version('edit-f1')}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The ``edit-f1`` parser; building it imports no model or data library (quick ``--help``)."""
    parser = _Parser(
        prog="edit-f1",
        usage="%(prog)s [-h] [--version] COMMAND ...",
        formatter_class=_HelpFormatter,
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
    """A termination signal (``signum``), raised so that outputs are cleaned up as for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: Catchable signals whose default action ends the process: each becomes a :class:`_Terminated`.
_TERMINATING = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
_TERMINATING += ("SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF")


@contextmanager
def _sigterm_as_interrupt():
    """Within the block, :data:`_TERMINATING` signals at their default action raise
    :class:`_Terminated` (SIGTERM always)."""
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
    """``edit-f1: error: ...`` on one line, or one line per problem of an InputError."""
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
    """Within the block, a warning is one line, ``edit-f1: warning: ...``, once per text; a
    :class:`~editf1.aggregate.RowsWarning` names rows as the command does (``args.rows_text``)."""
    shown: set[str] = set()

    def one_line(message, category, filename, lineno, line=None) -> str:
        from editf1.aggregate import RowsWarning

        text = str(message)
        if isinstance(message, RowsWarning):  # options as the command line spells them
            words = {"zero_division": "--zero-division 0 or 1"}
            text = message.naming(getattr(args, "rows_text", None), **words)
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


def main(argv: list[str] | None = None) -> int:
    """Run the command line (``argv``: default ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success; 2 for a user error (bad input or option, a missing
        or unwritable file, a download without network, a missing optional library),
        after ``edit-f1: error: ...`` on standard error; 130 for Ctrl-C and 128 + its
        number for a termination signal (outputs keep their previous content).

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
        if isinstance(error, ProcessError) or os.environ.get("RANK", "0") == "0":  # torchrun
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
