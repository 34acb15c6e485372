"""Input checks naming the row and the field, before any model runs: the one door (a
public path checks its rows once, then hands them inward as :class:`CheckedRows`).
Messages name a value by its type and size (:func:`describe`), never its text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Sized
from numbers import Integral

from editf1.naming import FileLine, field_at
from editf1.segment import has_word

__all__ = [
    "CheckedRows",
    "InputError",
    "Row",
    "check_fraction",
    "check_group",
    "check_id",
    "check_option",
    "check_pairs",
    "check_prediction",
    "check_reference",
    "check_rows",
    "describe",
    "read_bool",
    "row_errors",
    "unicode_problem",
]

#: ``(id or None, prediction, reference)``; the reference is a reply or a list of replies.
Row = tuple

MAX_ERRORS_SHOWN = 10


class InputError(ValueError):
    """Bad input. ``errors`` lists one message per bad (row, field)."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        more = len(errors) - MAX_ERRORS_SHOWN
        lines = [f"{len(errors)} bad input(s):", *errors[:MAX_ERRORS_SHOWN]]
        super().__init__("\n  ".join(lines + ([f"... and {more} more"] if more > 0 else [])))


def describe(value) -> str:
    """A value's type and size, never its content: ``str of 11 characters``."""
    name = "None" if value is None else type(value).__name__
    if not isinstance(value, Sized):
        return name
    units = ((str, "character"), ((bytes, bytearray), "byte"), (object, "item"))
    unit = next(unit for kind, unit in units if isinstance(value, kind))
    return f"{name} of {len(value)} {unit}{'' if len(value) == 1 else 's'}"


_KINDS = {bool: "a bool (True or False)", int: "an int", dict: "a dict"}


def check_fraction(name: str, value, *, optional: bool = False) -> float | None:
    """A number in [0, 1] (not a bool) as a float, or ``None`` if ``optional``; else ValueError."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        takes = "a number in [0, 1]" + (" or None" if optional else "")
        raise ValueError(f"{name} must be {takes}, got {value!r}")
    return float(value)


#: The spellings of a boolean judge option (case and surrounding spaces ignored), as
#: ``--content-judge-option KEY=VALUE`` writes them.
BOOL_SPELLINGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def read_bool(name: str, value, *, optional: bool = False) -> bool | None:
    """A judge's boolean option, read strictly: ``True`` / ``False``, 1 and 0, the strings of
    :data:`BOOL_SPELLINGS` in any case; ``None`` too when ``optional``. Else ValueError
    naming the option and the spellings it takes.
    """
    if value is None and optional:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, Integral) and int(value) in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in BOOL_SPELLINGS:
        return BOOL_SPELLINGS[value.strip().lower()]
    short = isinstance(value, (str, int, float)) and len(str(value)) <= 20
    shown = repr(value) if short else describe(value)
    raise ValueError(f"{name} must be true or false (or yes/no, 1/0), got {shown}")


def check_option(name: str, value, kind: type, *, minimum: int | None = None, optional=False):
    """``value`` (an integral as an ``int``) if it is a ``kind`` (``bool``, ``int`` but not a
    bool, or ``dict``) or ``None`` when ``optional``; else TypeError naming the option and
    the types. ValueError for an int below ``minimum``.
    """
    if value is None and optional:
        return None
    if not isinstance(value, Integral if kind is int else kind) or (
        kind is int and isinstance(value, bool)
    ):
        takes = _KINDS[kind] + (" or None" if optional else "")
        raise TypeError(f"{name} must be {takes}, got {describe(value)}")
    if kind is int:
        value = int(value)
        if minimum is not None and value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def unicode_problem(text: str) -> str | None:
    """Why ``text`` is not valid Unicode (a lone surrogate), or ``None``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"is not valid Unicode: lone surrogate U+{ord(text[error.start]):04X} at "
            f"character {error.start} of {len(text)}"
        )
    return None


def check_prediction(row, prediction, field: str = "predictions") -> list[str]:
    """Problems with one draft: a string of valid Unicode, possibly empty."""
    return _check_reply(row, prediction, field, words=False)


def check_reference(row, reference, field: str = "references") -> list[str]:
    """Problems with one clinician reply (a string of valid Unicode with a word), or with a
    non-empty list of replies to the same message, each named ``field[row][k]``.
    """
    if isinstance(reference, (list, tuple)):
        if not reference:
            return [f"{field_at(field, row)} is an empty list; give at least one reply"]
        return [e for k, r in enumerate(reference) for e in _check_reply(row, r, field, k)]
    return _check_reply(row, reference, field)


def _check_reply(row, reference, field: str, item: int | None = None, words=True) -> list[str]:
    at = field_at(field, row, item)
    if not isinstance(reference, str):
        return [f"{at} must be a string, got {describe(reference)}"]
    if problem := unicode_problem(reference):
        return [f"{at} {problem}"]
    if words and not has_word(reference):
        return [
            f"{at} has no word (empty, whitespace or punctuation only: "
            f"{describe(reference)}); edit-F1 needs a clinician reply to compare against"
        ]
    return []


def check_id(row, row_id, seen: dict, field: str = "ids") -> list[str]:
    """Problems with one row id: ``None``, or a non-empty string of valid Unicode used once.
    ``seen`` (ids met so far -> their rows) is updated.
    """
    if row_id is None:
        return []
    if not isinstance(row_id, str) or not row_id.strip():
        return [f"{field_at(field, row)} must be a non-empty string, got {describe(row_id)}"]
    if problem := unicode_problem(row_id):
        return [f"{field_at(field, row)} {problem}"]
    if row_id in seen:
        first = seen[row_id]
        if isinstance(row, FileLine) and isinstance(first, FileLine):
            earlier = f"line {first.line}" if first.source == row.source else str(first)
            return [f"{field_at(field, row)} repeats the id of {earlier}"]
        return [f"{field_at(field, row)} repeats {field_at(field, first)}"]
    seen[row_id] = row
    return []


def check_group(row, value, field: str) -> list[str]:
    """Problems with the id grouping rows by message: text or an integer, not empty."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        got = describe(value)
        return [f"{field_at(field, row)} must be a message id (text or an integer), got {got}"]
    return []


def row_errors(
    row,
    row_id,
    prediction,
    reference,
    seen: dict,
    *,
    prediction_field: str = "predictions",
    reference_field: str | Sequence[str] = "references",
    id_field: str = "ids",
) -> list[str]:
    """Every problem of one row: the one row check. ``row`` is its number or
    :class:`FileLine`; ``seen`` as :func:`check_id`; ``reference_field`` may name one
    column per reply (``reference`` is then the list of their values).

    >>> row_errors(0, None, "Rest.", ["Rest.", None], {}, reference_field=["a", "b"])
    ['b[0] must be a string, got None']
    """
    errors = check_id(row, row_id, seen, id_field)
    errors += check_prediction(row, prediction, prediction_field)
    if isinstance(reference_field, str):
        return errors + check_reference(row, reference, reference_field)
    return errors + [
        e
        for field, reply in zip(reference_field, reference)
        for e in _check_reply(row, reply, field)
    ]


class CheckedRows(tuple):
    """``(id or None, prediction, reference)`` rows that passed the input checks; the scorer
    does not check them again.
    """

    def __getitem__(self, index):  # a slice is CheckedRows too
        item = super().__getitem__(index)
        return CheckedRows(item) if isinstance(index, slice) else item

    def __repr__(self) -> str:  # never the rows' text
        return f"CheckedRows(<{len(self)} rows>)"


def check_rows(
    rows: Iterable[Row],
    *,
    first_row: int = 0,
    seen: dict | None = None,
    prediction_field: str = "predictions",
    reference_field: str | Sequence[str] = "references",
    id_field: str = "ids",
    locations: Sequence[FileLine] | None = None,
) -> CheckedRows:
    """Check ``(id or None, prediction, reference)`` rows, numbered from ``first_row`` (or
    named by ``locations``, one :class:`FileLine` each); InputError listing every problem.
    ``seen``, the field names: as :func:`row_errors`.
    """
    rows = list(rows)
    seen = {} if seen is None else seen
    fields = dict(
        prediction_field=prediction_field, reference_field=reference_field, id_field=id_field
    )
    numbers = range(first_row, first_row + len(rows)) if locations is None else locations
    errors = [e for i, row in zip(numbers, rows) for e in row_errors(i, *row, seen, **fields)]
    if errors:
        raise InputError(errors)
    return CheckedRows(rows)


def _check_list(name: str, value) -> None:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        hint = (
            "; pass a list (e.g. list(...))"
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict))
            else ""
        )
        raise TypeError(f"{name} must be a list of strings, got {describe(value)}{hint}")


def check_pairs(
    predictions: Sequence,
    references: Sequence,
    ids: Sequence | None = None,
    *,
    first_row: int = 0,
) -> CheckedRows:
    """N drafts, N replies (or lists of replies) and optional N ids, checked, as
    :class:`CheckedRows` numbered from ``first_row``.

    Raises:
        TypeError: if an argument is a string or not a sequence.
        ValueError: if the lengths differ.
        InputError: listing each bad row and field (:func:`row_errors`).
    """
    _check_list("predictions", predictions)
    _check_list("references", references)
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must have the same length, got "
            f"{len(predictions)} predictions and {len(references)} references"
        )
    if ids is None:
        ids = [None] * len(predictions)
    else:
        _check_list("ids", ids)
        if len(ids) != len(predictions):
            raise ValueError(f"ids has {len(ids)} items for {len(predictions)} predictions")
    return check_rows(zip(ids, predictions, references), first_row=first_row)
