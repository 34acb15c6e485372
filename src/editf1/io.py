"""Files in and out: the one reader of JSONL and CSV tables (UTF-8; ``"-"`` is standard
input or output; errors name file, line and field, never a row's text), and outputs
written to a hidden temporary beside the target, renamed onto it only once complete.
"""

from __future__ import annotations

import codecs
import csv
import glob
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from editf1.inputs import InputError, describe
from editf1.naming import FileLine, fields_named, lines_of, missing_fields, shown_columns

__all__ = [
    "STDIO",
    "JsonlWriter",
    "TableRows",
    "atomic_output",
    "check_output_path",
    "describe",
    "input_format_of",
    "is_inside",
    "read_csv",
    "read_jsonl",
    "read_rows",
    "same_file",
    "staged_folder",
    "warn_leftovers",
]

FORMATS = ("jsonl", "csv")
_SUFFIXES = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "csv"}
#: The path that means standard input (when reading) or standard output (when writing).
STDIO = "-"
#: Largest CSV cell read, in characters (the largest every platform's C long accepts).
CSV_FIELD_LIMIT = 2**31 - 1


def _is_stdio(path: str | os.PathLike) -> bool:
    return os.fspath(path) == STDIO


def is_stream(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an existing named pipe, character device or socket (written into,
    never replaced).

    >>> is_stream("/dev/null"), is_stream(".")
    (True, False)
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _name(path: str | os.PathLike) -> str:
    return "<stdin>" if _is_stdio(path) else os.fspath(path)


def input_format_of(path: str | os.PathLike, input_format: str = "auto") -> str:
    """``"jsonl"`` or ``"csv"``: ``input_format``, or with ``"auto"`` the one the suffix names
    (JSON Lines for ``-``); ValueError for another format or a suffix that names none.
    """
    if input_format != "auto":
        if input_format not in FORMATS:
            raise ValueError(f"input format must be auto, jsonl or csv, got {input_format!r}")
        return input_format
    found = "jsonl" if _is_stdio(path) else _SUFFIXES.get(Path(path).suffix.lower())
    if found:
        return found
    raise ValueError(
        f"cannot tell the format of {path} from its suffix: name it .jsonl or .csv (or "
        "pass --input-format jsonl or csv, where the command has that option)"
    )


def _read_text(path: str | os.PathLike) -> str:
    data = sys.stdin.buffer.read() if _is_stdio(path) else Path(path).read_bytes()
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise ValueError(
            f"{_name(path)}, line {line}: byte 0x{data[error.start]:02x} at column {column} is "
            "not UTF-8; save the file as UTF-8"
        ) from None


def read_jsonl(
    path: str | os.PathLike, fields: Sequence[str] = (), named_by: Mapping[str, str] | None = None
) -> list[tuple[int, dict]]:
    """Every object of a JSON Lines file (blank lines skipped), as ``(line, object)`` pairs;
    each must have ``fields`` (``named_by``: field -> the option naming it in messages).

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: for bytes that are not UTF-8 (naming line and column).
        InputError: listing each line not a JSON object or repeating a key; missing fields.
    """
    rows, errors, n_lines = [], [], 0
    lacking: dict[str, list[int]] = {}  # field -> the lines without it
    keys: dict[str, None] = {}  # the keys of those lines, in first-seen order
    # split on "\n" only: a JSON string may hold U+2028, which str.splitlines splits on
    for number, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        n_lines += 1
        where = f"{_name(path)}, line {number}"
        try:
            row = json.loads(line, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as error:
            errors.append(f"{where}: not valid JSON ({error.msg} at column {error.colno})")
            continue
        except _RepeatedKey as repeated:
            key = repeated.args[0]
            named = f"field {key!r}" if key in fields else "a key (not shown)"
            errors.append(f"{where}: {named} is given twice; JSON would keep only the last")
            continue
        if not isinstance(row, dict):
            errors.append(f"{where}: expected a JSON object, got {type(row).__name__}")
            continue
        missing = [f for f in fields if f not in row]
        for field in missing:
            lacking.setdefault(field, []).append(number)
        if missing:
            keys.update(dict.fromkeys(row))
        rows.append((number, row))
    if lacking:
        errors.append(missing_fields(_name(path), lacking, n_lines, keys, named_by or {}))
    if errors:
        raise InputError(errors)
    return rows


class _RepeatedKey(ValueError):
    """A JSON object gives a key twice (``args[0]``)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    row = dict(pairs)
    if len(row) < len(pairs):
        seen: set[str] = set()
        raise _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return row


class TableRows(list):
    """The rows of a table file (``{column: value}`` dicts), with ``columns`` (the CSV header,
    or every JSON key in order met), ``source`` and each row's first line (``lines``).
    """

    def __init__(self, rows: Iterable[dict], columns: list[str], source: str, lines: list[int]):
        super().__init__(rows)
        self.columns, self.source, self.lines = columns, source, lines

    def locations(self) -> list[FileLine]:
        return [FileLine(self.source, line) for line in self.lines]

    def where(self, rows: Sequence[int]) -> str:
        """Rows (indices) as a message names them: ``pairs.csv, lines 2 and 5``."""
        return f"{self.source}, {lines_of([self.lines[i] for i in rows])}"


def read_csv(
    path: str | os.PathLike, fields: Sequence[str] = (), named_by: Mapping[str, str] | None = None
) -> TableRows:
    """Every row of a CSV file (TSV for ``.tsv``) with a header row, as :class:`TableRows`
    of ``{column: cell}`` dicts (blank lines skipped; cells up to :data:`CSV_FIELD_LIMIT`
    characters); ``fields``, ``named_by``: as :func:`read_jsonl`.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: bytes not UTF-8 or bad quoting (file and line); a column repeated or missing.
        InputError: listing every row with more or fewer cells than the header.
    """
    name = _name(path)
    dialect = "excel-tab" if Path(path).suffix.lower() == ".tsv" else "excel"
    reader = csv.reader(io.StringIO(_read_text(path), newline=""), dialect=dialect, strict=True)
    records: list[tuple[int, list[str]]] = []
    limit, read = csv.field_size_limit(CSV_FIELD_LIMIT), 0  # read: the lines read so far
    try:
        for record in reader:
            if record:
                records.append((read + 1, record))
            read = reader.line_num
    except csv.Error as error:
        problem = (
            "a quoted cell that starts in this row is never closed (it runs to the end of the file)"
            if "unexpected end of data" in str(error)
            else f"badly quoted cell ({error}, at line {reader.line_num})"
        )
        raise ValueError(f"{name}, line {read + 1}: {problem}") from None
    finally:
        csv.field_size_limit(limit)
    header = records.pop(0)[1] if records else []
    repeated = sorted({column for column in header if header.count(column) > 1})
    if repeated and any(f in header for f in fields):
        raise ValueError(f"{name}: the header repeats column(s) {repeated}")
    if repeated:  # perhaps no header row: positions, not the cells
        twice = [i for i, column in enumerate(header, start=1) if column in repeated]
        raise ValueError(
            f"{name}: the first row repeats cells (columns {twice}): either it is a header "
            "that repeats a column name, or the file has no header row; give the file a "
            "header row with distinct column names"
        )
    missing = [f for f in fields if f not in header]
    if missing:
        named, shown = fields_named(missing, named_by or {}), shown_columns(header, fields)
        raise ValueError(f"{name}: no column {named}; the header has {shown}")
    errors = [
        f"{name}, line {line}: {len(record)} cells for {len(header)} columns"
        for line, record in records
        if len(record) != len(header)
    ]
    if errors:
        raise InputError(errors)
    lines = [line for line, _ in records]
    return TableRows((dict(zip(header, record)) for _, record in records), header, name, lines)


def read_rows(
    path: str | os.PathLike,
    fields: Sequence[str],
    input_format: str = "auto",
    named_by: Mapping[str, str] | None = None,
) -> TableRows:
    """Every row of a JSONL or CSV file (``input_format``: :func:`input_format_of`) as
    :class:`TableRows`; arguments and errors as :func:`read_jsonl` / :func:`read_csv`.
    """
    if input_format_of(path, input_format) == "csv":
        return read_csv(path, fields, named_by)
    numbered = read_jsonl(path, fields, named_by)
    columns = list(dict.fromkeys(key for _, row in numbered for key in row))
    return TableRows((row for _, row in numbered), columns, _name(path), [n for n, _ in numbered])


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file (same object when both exist, else same resolved
    path); ``"-"`` is never a file.
    """
    if _is_stdio(a) or _is_stdio(b):
        return False
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def is_inside(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (links and ``..`` resolved).

    >>> is_inside("runs/../data/a.csv", "data"), is_inside("data", "data/a.csv")
    (True, False)
    """
    real, top = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    return same_file(real, top) or top in real.parents


def check_output_path(path: str | os.PathLike, label: str = "", *, folder: bool = False) -> None:
    """Check that ``path`` can be written as a file (or, with ``folder``, a folder);
    ``"-"`` and streams pass for a file. ValueError naming ``label`` and the path where it
    cannot be, or the folder where no file can be made.
    """
    if (_is_stdio(path) or is_stream(path)) and not folder:
        return
    where = f"{label} {path}" if label else str(path)
    target = Path(os.path.realpath(path))
    if target.is_dir() and not folder:
        raise ValueError(f"{where} is a folder; give a file name")
    if target.is_block_device():
        raise ValueError(f"{where} is a block device (a disk); give a file name")
    if target.exists() and not target.is_dir() and folder:
        raise ValueError(f"{where} is a file; give a folder")
    for parent in [target] if target.is_dir() else target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{where}: {parent} is a file, not a folder")
            try:
                tempfile.TemporaryFile(dir=parent).close()
            except OSError as error:
                raise ValueError(f"{where}: cannot write in {parent} ({error.strerror})") from None
            return


def warn_leftovers(target: Path, suffixes: tuple[str, ...] = (".tmp",)) -> list[str]:
    """Warn about (never remove) hidden ``.<name>.<random><suffix>`` temporaries a killed
    earlier write left beside ``target``; return their names, sorted.
    """
    pattern = f".{glob.escape(target.name)}.*"
    try:
        names = sorted(p.name for p in target.parent.glob(pattern) if p.name.endswith(suffixes))
    except OSError:
        return []
    if names:
        warnings.warn(
            f"{target.parent} holds {len(names)} temporary file(s) left by an earlier write "
            f"of {target.name} that was killed: {names}; they may hold copies of the data: "
            f"delete them once no run is writing {target.name}",
            UserWarning,
            stacklevel=4,
        )
    return names


def _temporary_beside(target: Path, make) -> tuple[Path, object]:
    warn_leftovers(target)
    for _ in range(100):
        candidate = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        with suppress(FileExistsError):
            return candidate, make(candidate)
    raise FileExistsError(f"no free temporary name beside {target}")


@contextmanager
def atomic_output(path: str | os.PathLike, *, binary: bool = False) -> Iterator[IO]:
    """Open ``path`` (``"-"``: standard output) for writing, UTF-8 text or ``binary``, so
    that it appears only once complete; on an exception ``path`` is left as it was. A
    replaced file keeps its permission bits; a symbolic link is written through; a stream
    (:func:`is_stream`) is written into.

    Raises:
        ValueError: see :func:`check_output_path`.
        OSError: from creating, writing or renaming the file, naming ``path``.
    """
    if _is_stdio(path):
        yield sys.stdout.buffer if binary else sys.stdout
        return
    mode, encoding = ("wb", None) if binary else ("w", "utf-8")
    if is_stream(path):
        try:
            with open(path, mode, encoding=encoding) as handle:
                yield handle
        except OSError as error:
            raise _named(error, path) from None
        return
    check_output_path(path)
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:  # mode "x": a new file; the with-block below closes it
        temporary, handle = _temporary_beside(
            target,
            lambda name: open(name, mode.replace("w", "x"), encoding=encoding),  # noqa: SIM115
        )
    except OSError as error:  # named by the user's path, not the hidden temporary one
        raise OSError(error.errno, error.strerror, os.fspath(path)) from None
    try:
        if target.exists():
            os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException as error:
        with suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise _named(error, path) from None
        raise


def _named(error: OSError, path: str | os.PathLike) -> OSError:
    if error.filename is not None or error.errno is None:
        return error
    return type(error)(error.errno, error.strerror, os.fspath(path))


@contextmanager
def staged_folder(
    path: str | os.PathLike, *, protect: Iterable[str | os.PathLike] = ()
) -> Iterator[Path]:
    """Yield an empty hidden sibling folder to write into, then move each entry into
    ``path`` (a file by ``os.replace``, a sub-folder as a whole); entries not written are
    kept, and on an exception nothing in ``path`` changes.

    Raises:
        ValueError: see :func:`check_output_path`; an entry that is or holds a ``protect`` input.
        OSError: from writing or moving the files.
    """
    check_output_path(path, folder=True)
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    stage, _ = _temporary_beside(target, os.mkdir)
    try:
        yield stage
        moves = [(entry, target / entry.name) for entry in sorted(stage.iterdir())]
        for _, destination in moves:
            for kept in protect:
                if destination.exists() and is_inside(kept, destination):
                    raise ValueError(f"writing {destination} would replace the input {kept}")
        target.mkdir(exist_ok=True)
        for entry, destination in moves:
            if entry.is_dir() and destination.is_dir():
                old, _ = _temporary_beside(destination, destination.rename)
                try:
                    os.replace(entry, destination)
                except OSError:
                    os.replace(old, destination)
                    raise
                shutil.rmtree(old)
            else:
                os.replace(entry, destination)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


class JsonlWriter:
    """Context manager writing dicts as JSON Lines, one per call, atomically; ``written``
    counts the lines.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = path if _is_stdio(path) else Path(path)
        self.written = 0

    def __enter__(self) -> JsonlWriter:
        self._output = atomic_output(self.path)
        self._handle = self._output.__enter__()
        return self

    def __call__(self, record: dict) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.written += 1

    def __exit__(self, *exc) -> bool | None:
        return self._output.__exit__(*exc)
