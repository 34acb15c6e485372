"""Reading pairs from JSONL or CSV files and writing per-row results as JSONL."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from editf1.validate import InputError

__all__ = ["JsonlWriter", "read_rows"]

FORMATS = ("jsonl", "csv")


def _format_of(path: Path, input_format: str) -> str:
    if input_format != "auto":
        return input_format
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    raise ValueError(
        f"cannot tell the format of {path} from its suffix; pass --input-format jsonl or csv"
    )


def read_rows(path: str | Path, fields: list[str], input_format: str = "auto") -> list[dict]:
    """Read every row of a JSONL or CSV file.

    Args:
        path: the file. ``.jsonl``/``.json``/``.ndjson`` are JSON Lines (one object per
            line, blank lines skipped); ``.csv`` is comma-separated, ``.tsv``
            tab-separated, with a header row.
        fields: names every row must have (e.g. the prediction and reference columns).
        input_format: ``"auto"`` (by suffix), ``"jsonl"`` or ``"csv"``.

    Returns:
        The rows as dicts, in file order.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: (:class:`~editf1.validate.InputError` for JSON Lines, listing every
            bad line at once) naming the line of a line that is not a JSON object or of a CSV row
            with more cells than the header; the missing field and the fields that are
            there; or a CSV header that repeats a column (one would hide the other).
    """
    path = Path(path)
    kind = _format_of(path, input_format)
    if kind == "csv":
        # utf-8-sig: Excel's "CSV UTF-8" starts with a byte-order mark
        with open(path, newline="", encoding="utf-8-sig") as handle:
            dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
            reader = csv.DictReader(handle, dialect=dialect)
            header = reader.fieldnames or []
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated:
                raise ValueError(f"{path}: the header repeats column(s) {repeated}")
            missing = [f for f in fields if f not in header]
            if missing:
                raise ValueError(f"{path}: no column {missing}; the header has {header}")
            rows = []
            for row in reader:
                if None in row:
                    raise ValueError(
                        f"{path}, line {reader.line_num}: {len(header) + len(row[None])} cells "
                        f"for {len(header)} columns; extra cells {row[None]!r:.80}"
                    )
                rows.append(row)
            return rows
    rows, errors = [], []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                errors.append(f"{path}, line {number}: not valid JSON ({error})")
                continue
            if not isinstance(row, dict):
                errors.append(f"{path}, line {number}: expected a JSON object, got {row!r:.60}")
                continue
            missing = [f for f in fields if f not in row]
            if missing:
                errors.append(
                    f"{path}, line {number}: no field {missing}; the row has {sorted(row)}"
                )
            rows.append(row)
    if errors:
        raise InputError(errors)
    return rows


class JsonlWriter:
    """Write dicts as JSON Lines, one per call, flushed as they come.

    Use as a context manager; ``written`` counts the lines.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.written = 0

    def __enter__(self) -> JsonlWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "w", encoding="utf-8")
        return self

    def __call__(self, record: dict) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.written += 1

    def __exit__(self, *exc) -> None:
        self._handle.close()
