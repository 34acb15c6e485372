"""How messages name rows, fields and columns without quoting a row's text (used by
:mod:`editf1.inputs` and :mod:`editf1.io`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_NAMES_SHOWN",
    "FileLine",
    "field_at",
    "fields_named",
    "lines_of",
    "missing_fields",
    "shown_columns",
]


@dataclass(frozen=True)
class FileLine:
    """Where a row of a file is, as an editor counts lines (from 1): ``pairs.jsonl, line 3``."""

    source: str
    line: int

    def __str__(self) -> str:
        return f"{self.source}, line {self.line}"


def field_at(field: str, row, item: int | None = None) -> str:
    """``field[row]`` (``field[row][item]``), or for a :class:`FileLine` ``file, line N:
    field 'name'`` (``item k``, from 1).

    >>> field_at("reference", 2), field_at("reference", FileLine("pairs.csv", 4), item=0)
    ('reference[2]', "pairs.csv, line 4: field 'reference' item 1")
    """
    if isinstance(row, FileLine):
        return f"{row}: field {field!r}" + ("" if item is None else f" item {item + 1}")
    return f"{field}[{row}]" + ("" if item is None else f"[{item}]")


def missing_fields(
    name: str,
    lacking: Mapping[str, list[int]],
    n_lines: int,
    keys: Iterable[str],
    named_by: Mapping[str, str],
) -> str:
    """One message for the fields missing from lines of a JSON Lines file (``lacking``: field
    -> the lines without it, of ``n_lines``) and the ``keys`` of those lines, never a value.
    """
    by_lines: dict[tuple[int, ...], list[str]] = {}
    for field, lines in lacking.items():
        by_lines.setdefault(tuple(lines), []).append(field)
    parts = []
    for lines, missing in by_lines.items():
        where = lines_of(lines)
        if len(lines) == n_lines > 1:
            where = f"any of its {n_lines} lines"
        elif len(lines) >= 3:
            where += f" ({len(lines)} of {n_lines} lines)"
        parts.append(f"no field {fields_named(missing, named_by)} on {where}")
    every = all(len(lines) == n_lines for lines in lacking.values())
    those = "its rows have" if every else "those lines have"
    return f"{name}: {'; '.join(parts)}; {those} {shown_columns(list(keys), lacking, 'field')}"


def fields_named(fields: Sequence[str], named_by: Mapping[str, str]) -> str:
    """``'a' (--a-field) or 'b'``: fields, each with the option that names it."""
    return " or ".join(f"{f!r} ({named_by[f]})" if f in named_by else repr(f) for f in fields)


def lines_of(lines: Sequence[int], limit: int = 10) -> str:
    """``line 4``, ``lines 4, 9 and 12``, or the first ``limit`` and how many more.

    >>> lines_of([4]), lines_of([4, 9, 12]), lines_of(list(range(1, 14)), limit=3)
    ('line 4', 'lines 4, 9 and 12', 'lines 1, 2, 3 and 10 more')
    """
    if len(lines) == 1:
        return f"line {lines[0]}"
    if len(lines) > limit:
        return f"lines {', '.join(map(str, lines[:limit]))} and {len(lines) - limit} more"
    return f"lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"


#: What a column name looks like (up to 64 characters, no space: text has spaces).
_NAME = re.compile(r"[^\W\d][\w.-]{0,63}")
#: Most keys a message lists.
MAX_NAMES_SHOWN = 30


def _is_name(column: str, *, digits: bool = True) -> bool:
    return bool(_NAME.fullmatch(column)) and (digits or not any(c.isdigit() for c in column))


def shown_columns(columns: Sequence[str], wanted: Collection[str], kind: str = "cell") -> str:
    """A header row (or JSON keys, ``kind="field"``) as a message may show it.

    A header naming none of the ``wanted`` columns may be a data row: shown only if every
    cell looks like a column name (no space, no digit), else counted, with the cells close
    to a wanted name (:func:`difflib.get_close_matches`). JSON keys are shown if name-like.
    """
    if kind == "field":
        names = [c for c in columns if _is_name(c)]
        hidden = len(columns) - len(names)
        more = f" and {hidden} key{'' if hidden == 1 else 's'} not shown (not like a name)"
        extra = len(names) - MAX_NAMES_SHOWN
        shown = f"{names[:MAX_NAMES_SHOWN]}" + (f" and {extra} more" if extra > 0 else "")
        return f"{shown}{more if hidden else ''}"
    if any(column in wanted for column in columns) or (
        columns and all(_is_name(c, digits=False) for c in columns)
    ):
        return str(list(columns))
    close = sorted(
        {m for w in wanted for m in difflib.get_close_matches(w, list(columns), n=3, cutoff=0.8)}
    )
    return (
        f"{len(columns)} cell{'' if len(columns) == 1 else 's'}, not shown: none is a column "
        "asked for, so it may be a data row (give the file a header row)"
        + (f"; close to a column asked for: {close}" if close else "")
    )
