"""Input checks that name the row and the field, before any model runs."""

from __future__ import annotations

from collections.abc import Sequence

from editf1.segment import has_word

__all__ = [
    "InputError",
    "check_id",
    "check_ids",
    "check_pairs",
    "check_prediction",
    "check_reference",
    "row_errors",
    "shorten",
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


def shorten(value, width: int = 60) -> str:
    """``repr(value)``, cut to ``width`` characters.

    >>> shorten("x" * 100, 24)
    "'xxxxxxxxx...(100 chars)"
    """
    text = repr(value)
    if len(text) <= width:
        return text
    size = f"({len(value)} chars)" if isinstance(value, str) else ""
    return text[: max(width - len(size) - 3, 1)] + "..." + size


def check_prediction(row, prediction, field: str = "predictions") -> list[str]:
    """Problems with one draft, as messages naming row and field.

    A prediction must be a string; it may be empty (it then scores precision 0, see
    :mod:`editf1.aggregate`).

    >>> check_prediction(3, None)
    ['predictions[3] must be a string, got NoneType None']
    """
    if isinstance(prediction, str):
        return []
    return [
        f"{field}[{row}] must be a string, got {type(prediction).__name__} {shorten(prediction)}"
    ]


def check_reference(row, reference, field: str = "references") -> list[str]:
    """Problems with one clinician reply, or with a list of replies to the same message.

    A reply must be a string with at least one word: the metric measures a draft against
    the clinician's reply and has nothing to measure without one. A list (several
    clinicians' replies to one message) must hold at least one reply; each is checked
    and named ``field[row][k]``.

    >>> check_reference(0, ["Rest.", " "])
    ["references[0][1] has no word (empty, whitespace or punctuation only: ' '); edit-F1 \
needs a clinician reply to compare against"]
    """
    if isinstance(reference, (list, tuple)):
        if not reference:
            return [f"{field}[{row}] is an empty list; give at least one reply"]
        return [
            e for k, r in enumerate(reference) for e in check_reference(f"{row}][{k}", r, field)
        ]
    if not isinstance(reference, str):
        return [
            f"{field}[{row}] must be a string, got {type(reference).__name__} {shorten(reference)}"
        ]
    if not has_word(reference):
        return [
            f"{field}[{row}] has no word (empty, whitespace or punctuation only: "
            f"{shorten(reference)}); edit-F1 needs a clinician reply to compare against"
        ]
    return []


def check_id(row: int, row_id, seen: dict[str, int]) -> list[str]:
    """Problems with one row id: ids are optional (``None``), otherwise non-empty
    strings, each used once. ``seen`` maps the ids met so far to their rows and is
    updated.

    >>> seen = {}
    >>> check_id(0, "m1", seen), check_id(1, "m1", seen), check_id(2, 7, seen)
    ([], ["ids[1] repeats ids[0] 'm1'"], ['ids[2] must be a non-empty string, got int 7'])
    """
    if row_id is None:
        return []
    if not isinstance(row_id, str) or not row_id.strip():
        return [
            f"ids[{row}] must be a non-empty string, got {type(row_id).__name__} {shorten(row_id)}"
        ]
    if row_id in seen:
        return [f"ids[{row}] repeats ids[{seen[row_id]}] {shorten(row_id)}"]
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
    ["references[2] has no word (empty, whitespace or punctuation only: ''); edit-F1 needs \
a clinician reply to compare against"]
    """
    return (
        check_id(row, row_id, seen)
        + check_prediction(row, prediction, prediction_field)
        + check_reference(row, reference, reference_field)
    )


def check_ids(ids: Sequence | None, n_rows: int) -> None:
    """Check optional row ids for ``n_rows`` rows (see :func:`check_id`).

    Raises:
        ValueError: if there are not ``n_rows`` ids.
        InputError: listing every id that is not a non-empty string or repeats one.
    """
    if ids is None:
        return
    if len(ids) != n_rows:
        raise ValueError(f"ids has {len(ids)} items for {n_rows} predictions")
    seen: dict[str, int] = {}
    if errors := [e for i, row_id in enumerate(ids) for e in check_id(i, row_id, seen)]:
        raise InputError(errors)


def check_pairs(predictions: Sequence, references: Sequence, first_row: int = 0) -> None:
    """Check every pair; raise once, listing every problem.

    Args:
        predictions: N drafts (strings; empty allowed).
        references: N clinician replies (strings with at least one word), or N lists
            of replies (several clinicians per message).
        first_row: the number of the first pair in messages (pairs are numbered from
            it, e.g. the offset of a batch within a corpus).

    Raises:
        TypeError: if either argument is a single string or not a sequence.
        ValueError: if the lengths differ.
        InputError: listing each bad row and field.
    """
    for name, value in (("predictions", predictions), ("references", references)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise TypeError(
                f"{name} must be a list of strings, got {type(value).__name__} {shorten(value)}"
            )
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
