"""Reading and checking tabular exports (CSV, JSONL, parquet) with their own column names:
every problem is one line ``file, line N: field F ...`` of one :class:`ExportError`."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

from editf1.inputs import InputError, describe
from editf1.io import read_rows
from editf1.naming import shown_columns

__all__ = [
    "CASE_EXPORT_FIELDS",
    "ExportError",
    "ExportRow",
    "UnusedColumnsWarning",
    "assign_splits",
    "check_split_fractions",
    "map_columns",
    "read_table",
]

#: Standard fields of a case export -> required. One row is one (message, clinician
#: response) with an optional draft; rows sharing ``message_id`` are one case.
CASE_EXPORT_FIELDS: dict[str, bool] = {
    **dict.fromkeys(("message_id", "message", "response"), True),
    "annotator_id": False,
    **dict.fromkeys(("ehr_summary", "age", "sex", "problems", "medications", "encounters"), False),
    **dict.fromkeys(("draft", "draft_system", "split"), False),
}

_SPLIT_NAME = re.compile(r"^\w+$")
PARQUET_SUFFIXES = (".parquet", ".pq")


class ExportError(InputError):
    """A bad export. ``errors`` lists one message per (file, row, field)."""


class UnusedColumnsWarning(UserWarning):
    """Columns of an export that the column mapping does not use (not carried)."""


class ExportRow(dict):
    """One row of an export with standard field names; ``where`` names the file and the
    line as an editor counts it, or the row of a parquet file."""

    def __init__(self, values: Mapping, file: str, row: int, line: int | None = None):
        super().__init__(values)
        self.file, self.row, self.line = file, row, line

    @property
    def where(self) -> str:
        return f"{self.file}, " + (f"row {self.row}" if self.line is None else f"line {self.line}")


def read_table(path: str | Path, file_format: str = "auto") -> tuple[list[dict], list[str]]:
    """``(rows, columns)`` of a CSV, TSV, JSONL or parquet file (``"auto"``: by suffix):
    dicts in file order (CSV cells are strings), and every column name seen, in order.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: for an unknown format, or a JSONL line that is not a JSON object.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"export file {path} does not exist")
    if file_format == "parquet" or (
        file_format == "auto" and path.suffix.lower() in PARQUET_SUFFIXES
    ):
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        return table.to_pylist(), list(table.column_names)
    if file_format not in ("auto", "csv", "jsonl"):
        raise ValueError(f"file_format must be auto, csv, jsonl or parquet, got {file_format!r}")
    rows = read_rows(path, [], file_format)
    return rows, list(rows.columns)


def map_columns(
    files: Iterable[str | Path],
    fields: Mapping[str, bool],
    column_map: Mapping[str, str] | None = None,
    keep_columns: Iterable[str] = (),
    file_format: str = "auto",
) -> tuple[list[ExportRow], list[str]]:
    """Read export files and rename their columns to standard fields.

    Args:
        fields: standard field -> required (e.g. :data:`CASE_EXPORT_FIELDS`).
        column_map: standard field -> the export's column (default: the field's name).
        keep_columns: further columns carried as ``attributes`` (opt-in: an export may
            hold identifiers that must not be published); other unused columns give one
            :class:`UnusedColumnsWarning` per file.

    Returns:
        ``(rows, errors)``: :class:`ExportRow` objects (the standard fields a file has plus
        ``"attributes"``, ``{column: value}``) and the missing required or mapped columns.

    Raises:
        ValueError: for a ``column_map`` key that is not a standard field.
    """
    column_map = dict(column_map or {})
    unknown = sorted(set(column_map) - set(fields))
    if unknown:
        raise ValueError(f"column_map has unknown field(s) {unknown}; fields are {list(fields)}")
    keep_columns = list(keep_columns)
    rows: list[ExportRow] = []
    errors: list[str] = []
    for path in files:
        path = Path(path)
        table, columns = read_table(path, file_format)
        source = {field: column_map.get(field, field) for field in fields}
        present = {f: c for f, c in source.items() if c in columns}
        wanted = [*source.values(), *keep_columns]
        shown = shown_columns(columns, wanted)  # no cell of a data row, if there is no header
        for field, column in source.items():
            if column not in columns and (fields[field] or field in column_map):
                errors.append(
                    f"{path.name}: no column {column!r} for field {field!r}; the file has {shown}"
                )
        for column in keep_columns:
            if column not in columns:
                errors.append(f"{path.name}: no column {column!r} to keep; the file has {shown}")
        used = set(present.values()) | set(keep_columns)
        unused = [c for c in columns if c not in used]
        if unused and any(c in columns for c in wanted):  # a header: its names may be shown
            warnings.warn(
                f"{path.name}: column(s) {unused} are not mapped to a field and are not "
                "carried into the dataset (name them in keep_columns to keep them)",
                UnusedColumnsWarning,
                stacklevel=2,
            )
        lines = getattr(table, "lines", None)  # CSV and JSONL rows know their lines
        for number, raw in enumerate(table, start=1):
            row = ExportRow({}, path.name, number, lines[number - 1] if lines else None)
            for field, column in present.items():
                if column in raw:
                    row[field] = raw[column]
                elif fields[field] or field in column_map:
                    errors.append(f"{row.where}: field {field!r} (column {column!r}) is missing")
            row["attributes"] = {c: raw[c] for c in keep_columns if c in raw}
            rows.append(row)
    return rows, errors


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def id_value(row: ExportRow, field: str, errors: list[str], required: bool = True) -> str | None:
    """An identifier: text or an integer, returned as stripped text."""
    value = row.get(field)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None or isinstance(value, str):
        text = text_value(row, field, errors, required)
        return text and text.strip()
    errors.append(
        f"{row.where}: field {field!r} must be text or an integer id, got {describe(value)}"
    )
    return None


def text_value(row: ExportRow, field: str, errors: list[str], required: bool = True) -> str | None:
    """A text field as written; a blank one is an error when required, else ``None``."""
    value = row.get(field)
    if _blank(value):
        if required:
            errors.append(f"{row.where}: field {field!r} is empty")
        return None
    if not isinstance(value, str):
        errors.append(f"{row.where}: field {field!r} must be text, got {describe(value)}")
        return None
    return value


def list_value(row: ExportRow, field: str, errors: list[str], separator: str) -> list[str]:
    """A list of strings: a list, a JSON array in a text cell, or text split on
    ``separator`` (items stripped, empty items left out)."""
    value = row.get(field)
    if _blank(value):
        return []
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                errors.append(f"{row.where}: field {field!r} is not a valid JSON array ({error})")
                return []
        else:
            return [item.strip() for item in value.split(separator) if item.strip()]
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(item, str) and item.strip() for item in value
    ):
        errors.append(
            f"{row.where}: field {field!r} must be a list of non-empty strings, got "
            f"{describe(value)}"
        )
        return []
    return [item.strip() for item in value]


def encounters_value(row: ExportRow, errors: list[str]) -> list[dict]:
    """Encounters: a list (or JSON array text) of ``{"date", "summary"}`` or summary text."""
    value = row.get("encounters")
    if _blank(value):
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            errors.append(f"{row.where}: field 'encounters' is not a valid JSON array ({error})")
            return []
    bad = f"{row.where}: field 'encounters' must be a list of {{date, summary}} objects or strings"
    if not isinstance(value, (list, tuple)):
        errors.append(f"{bad}, got {describe(value)}")
        return []
    encounters = []
    for item in value:
        if isinstance(item, str) and item.strip():
            encounters.append({"date": None, "summary": item})
        elif (
            isinstance(item, dict)
            and isinstance(item.get("summary"), str)
            and item["summary"].strip()
            and (item.get("date") is None or isinstance(item.get("date"), str))
            and set(item) <= {"date", "summary"}
        ):
            encounters.append({"date": item.get("date") or None, "summary": item["summary"]})
        else:
            errors.append(f"{bad}, got item {describe(item)}")
            return []
    return encounters


def age_value(row: ExportRow, errors: list[str]) -> str | None:
    """Age as text: text, or an integer (``58`` becomes ``"58"``)."""
    value = row.get("age")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return text_value(row, "age", errors, required=False)


def split_value(row: ExportRow, errors: list[str]) -> str | None:
    """A split name from the export (letters, digits, underscores)."""
    value = text_value(row, "split", errors, required=False)
    if value is not None and not _SPLIT_NAME.match(value.strip()):
        errors.append(
            f"{row.where}: field 'split' must be a name like 'test' (letters, digits, _), "
            f"got {describe(value)}"
        )
        return None
    return None if value is None else value.strip()


def attributes_value(row: ExportRow, errors: list[str]) -> list[dict]:
    """``keep_columns`` values as ``[{"name", "value"}]`` (text or numbers; None kept)."""
    out = []
    for name, value in row["attributes"].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if value is None or isinstance(value, str):
            out.append({"name": name, "value": value})
        else:
            errors.append(
                f"{row.where}: kept column {name!r} must be text or a number, got {describe(value)}"
            )
    return out


def check_split_fractions(fractions: Mapping[str, float]) -> dict[str, float]:
    """Validate split fractions: names like ``test``, values > 0 summing to 1.

    Raises:
        ValueError: naming the bad split or the sum.
    """
    fractions = dict(fractions)
    if not fractions:
        raise ValueError("split fractions are empty; give at least one split, e.g. {'test': 1.0}")
    for name, value in fractions.items():
        if not isinstance(name, str) or not _SPLIT_NAME.match(name):
            raise ValueError(f"split name must be like 'test' (letters, digits, _), got {name!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"split {name!r} fraction must be a number > 0, got {value!r}")
    total = sum(fractions.values())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"split fractions must sum to 1, got {total:g} ({fractions})")
    return fractions


def assign_splits(ids: Iterable[str], fractions: Mapping[str, float], seed: int) -> dict[str, str]:
    """Assign case (or item) ids to splits reproducibly: id -> split name.

    The sorted unique ids are shuffled with ``numpy.random.default_rng(seed)``; split sizes
    are the ``fractions`` of the ids, rounded by largest remainder (ties to the earlier
    split), taken as consecutive blocks in the order given, whatever the export's row order.
    """
    import numpy as np

    fractions = check_split_fractions(fractions)
    unique = sorted(set(ids))
    exact = [fraction * len(unique) for fraction in fractions.values()]
    sizes = [int(x) for x in exact]
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - sizes[i]), i))
    for i in by_remainder[: len(unique) - sum(sizes)]:
        sizes[i] += 1
    order = np.random.default_rng(seed).permutation(len(unique))
    names = [name for name, size in zip(fractions, sizes) for _ in range(size)]
    return {unique[position]: name for position, name in zip(order, names)}
