"""Input checks that name the row and the field, before any model runs.

Messages never repeat the text of a row (it may be a patient's): a value is described
by its type and size (:func:`describe`), a row by its field and number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Sized
from numbers import Integral

from editf1.segment import has_word

__all__ = [
    "InputError",
    "check_id",
    "check_ids",
    "check_option",
    "check_pairs",
    "check_prediction",
    "check_reference",
    "describe",
    "row_errors",
    "unicode_problem",
]

MAX_ERRORS_SHOWN = 10


class InputError(ValueError):
    """Bad input. ``errors`` lists one message per bad (row, field)."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        shown = errors[:MAX_ERRORS_SHOWN]
        more = len(errors) - len(shown)
        super().__init__(
            f"{len(errors)} bad input(s):\n  "
            + "\n  ".join(shown)
            + (f"\n  ... and {more} more" if more else "")
        )


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" + ("" if n == 1 else "s")


def describe(value) -> str:
    """A value's type and size, never its content: what messages say about a value.

    Strings and bytes give their length, containers their number of items, anything
    else its type's name.

    >>> describe("Chest pain since Monday."), describe(b"ab"), describe([1, 2, 3])
    ('str of 24 characters', 'bytes of 2 bytes', 'list of 3 items')
    >>> describe(7), describe(None), describe({"a": 1}), describe(x for x in "ab")
    ('int', 'None', 'dict of 1 item', 'generator')
    """
    if value is None:
        return "None"
    name = type(value).__name__
    if isinstance(value, str):
        return f"{name} of {_count(len(value), 'character')}"
    if isinstance(value, (bytes, bytearray)):
        return f"{name} of {_count(len(value), 'byte')}"
    if isinstance(value, Sized):
        return f"{name} of {_count(len(value), 'item')}"
    return name


_KINDS = {bool: "a bool (True or False)", int: "an int", dict: "a dict"}


def check_option(name: str, value, kind: type, *, minimum: int | None = None, optional=False):
    """Check a keyword option's type before any work: a ``bool`` option takes True or
    False only (``"False"`` or 0 are refused, not read as truth values), an ``int``
    option an integer that is not a bool, at least ``minimum``; ``optional`` allows
    ``None``.

    Args:
        name: the option's name, for the message.
        value: what was given.
        kind: ``bool``, ``int`` or ``dict``.
        minimum: the smallest int allowed.
        optional: ``None`` is allowed.

    Returns:
        ``value`` (a NumPy or other integral int as a Python ``int``).

    Raises:
        TypeError: naming the option, the type it takes and the type given.
        ValueError: for an int below ``minimum``.

    >>> check_option("batch_size", 8, int, minimum=1)
    8
    >>> check_option("include_other", "False", bool)
    Traceback (most recent call last):
    ...
    TypeError: include_other must be a bool (True or False), got str of 5 characters
    """
    if value is None and optional:
        return None
    if kind is int:
        ok = isinstance(value, Integral) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        takes = _KINDS[kind] + (" or None" if optional else "")
        raise TypeError(f"{name} must be {takes}, got {describe(value)}")
    if kind is int:
        value = int(value)
        if minimum is not None and value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def unicode_problem(text: str) -> str | None:
    """Why ``text`` is not valid Unicode text (a lone surrogate, which no UTF-8 file,
    tokenizer or Arrow column can hold), or ``None`` if it is.

    >>> unicode_problem("Rest."), unicode_problem("Rest \\ud800.")
    (None, 'is not valid Unicode: lone surrogate U+D800 at character 5 of 7')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"is not valid Unicode: lone surrogate U+{ord(text[error.start]):04X} at "
            f"character {error.start} of {len(text)}"
        )
    return None


def check_prediction(row, prediction, field: str = "predictions") -> list[str]:
    """Problems with one draft, as messages naming row and field.

    A prediction must be a string of valid Unicode (:func:`unicode_problem`); it may be
    empty (it then scores precision 0, see :mod:`editf1.aggregate`).

    >>> check_prediction(3, None), check_prediction(4, 2.5)
    (['predictions[3] must be a string, got None'], ['predictions[4] must be a string, got float'])
    """
    if not isinstance(prediction, str):
        return [f"{field}[{row}] must be a string, got {describe(prediction)}"]
    if problem := unicode_problem(prediction):
        return [f"{field}[{row}] {problem}"]
    return []


def check_reference(row, reference, field: str = "references") -> list[str]:
    """Problems with one clinician reply, or with a list of replies to the same message.

    A reply must be a string of valid Unicode with at least one word: the metric
    measures a draft against the clinician's reply and has nothing to measure without
    one. A list (several clinicians' replies to one message) must hold at least one
    reply, each a string (not another list); each is checked and named
    ``field[row][k]``.

    >>> check_reference(0, ["Rest.", " "])
    ['references[0][1] has no word (empty, whitespace or punctuation only: str of 1 \
character); edit-F1 needs a clinician reply to compare against']
    """
    if isinstance(reference, (list, tuple)):
        if not reference:
            return [f"{field}[{row}] is an empty list; give at least one reply"]
        return [e for k, r in enumerate(reference) for e in _check_reply(f"{row}][{k}", r, field)]
    return _check_reply(row, reference, field)


def _check_reply(row, reference, field: str) -> list[str]:
    """Problems with one reply (a list of replies inside a list is not one)."""
    if not isinstance(reference, str):
        return [f"{field}[{row}] must be a string, got {describe(reference)}"]
    if problem := unicode_problem(reference):
        return [f"{field}[{row}] {problem}"]
    if not has_word(reference):
        return [
            f"{field}[{row}] has no word (empty, whitespace or punctuation only: "
            f"{describe(reference)}); edit-F1 needs a clinician reply to compare against"
        ]
    return []


def check_id(row: int, row_id, seen: dict[str, int]) -> list[str]:
    """Problems with one row id: ids are optional (``None``), otherwise non-empty
    strings of valid Unicode, each used once. ``seen`` maps the ids met so far to their
    rows and is updated.

    >>> seen = {}
    >>> check_id(0, "m1", seen), check_id(1, "m1", seen), check_id(2, 7, seen)
    ([], ['ids[1] repeats ids[0]'], ['ids[2] must be a non-empty string, got int'])
    """
    if row_id is None:
        return []
    if not isinstance(row_id, str) or not row_id.strip():
        return [f"ids[{row}] must be a non-empty string, got {describe(row_id)}"]
    if problem := unicode_problem(row_id):
        return [f"ids[{row}] {problem}"]
    if row_id in seen:
        return [f"ids[{row}] repeats ids[{seen[row_id]}]"]
    seen[row_id] = row
    return []


def row_errors(
    row: int,
    row_id,
    prediction,
    reference,
    seen: dict[str, int],
    *,
    prediction_field: str = "predictions",
    reference_field: str = "references",
) -> list[str]:
    """Every problem of one row: its id (:func:`check_id`, updating ``seen``), its
    draft (:func:`check_prediction`) and its reply or replies (:func:`check_reference`).

    >>> row_errors(2, None, "Rest.", "", {})
    ['references[2] has no word (empty, whitespace or punctuation only: str of 0 \
characters); edit-F1 needs a clinician reply to compare against']
    """
    return (
        check_id(row, row_id, seen)
        + check_prediction(row, prediction, prediction_field)
        + check_reference(row, reference, reference_field)
    )


def check_ids(ids: Sequence | None, n_rows: int) -> None:
    """Check optional row ids for ``n_rows`` rows (see :func:`check_id`).

    Raises:
        TypeError: if ``ids`` is not a list (e.g. a single string).
        ValueError: if there are not ``n_rows`` ids.
        InputError: listing every id that is not a non-empty string or repeats one.
    """
    if ids is None:
        return
    _check_list("ids", ids)
    if len(ids) != n_rows:
        raise ValueError(f"ids has {len(ids)} items for {n_rows} predictions")
    seen: dict[str, int] = {}
    if errors := [e for i, row_id in enumerate(ids) for e in check_id(i, row_id, seen)]:
        raise InputError(errors)


def _check_list(name: str, value) -> None:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        hint = (
            "; pass a list (e.g. list(...))"
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict))
            else ""
        )
        raise TypeError(f"{name} must be a list of strings, got {describe(value)}{hint}")


def check_pairs(predictions: Sequence, references: Sequence, first_row: int = 0) -> None:
    """Check every pair; raise once, listing every problem.

    Args:
        predictions: N drafts (strings; empty allowed).
        references: N clinician replies (strings with at least one word), or N lists
            of replies (several clinicians per message).
        first_row: the number of the first pair in messages (pairs are numbered from
            it, e.g. the offset of a batch within a corpus).

    Raises:
        TypeError: if either argument is a single string or not a sequence (a
            generator, a dict, a number).
        ValueError: if the lengths differ.
        InputError: listing each bad row and field.
    """
    _check_list("predictions", predictions)
    _check_list("references", references)
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must have the same length, got "
            f"{len(predictions)} predictions and {len(references)} references"
        )
    errors = [
        e
        for i, (p, r) in enumerate(zip(predictions, references), start=first_row)
        for e in check_prediction(i, p) + check_reference(i, r)
    ]
    if errors:
        raise InputError(errors)
