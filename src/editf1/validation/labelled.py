"""Expert-labelled items that judges are trained on and compared with. Items belong to
*cases* (a question, a patient message): splits and bootstrap resamples keep a case's items
together (Buckley et al., arXiv 2609.12822).

File formats (JSONL, or CSV with the same columns; lists in CSV cells as JSON):

* content: ``case``, ``prediction`` (the draft), ``reference`` (one sentence),
  ``match`` (true/false; also yes/no, 1/0), optional ``span`` (the draft's words that
  say it, verbatim; only with ``match`` true), optional ``annotators`` (one true/false
  per annotator).
* theme: ``text``, ``theme`` (one of :data:`editf1.themes.THEMES`), optional ``case``
  (default: each sentence is its own case), optional ``annotators`` (one theme each).

The readers raise :class:`~editf1.inputs.InputError` listing every bad row by file, line
and field (never the text), and warn, naming the rows, of a repeated item or a label that
is not its annotators' majority (kept as given).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.model_selection import GroupShuffleSplit

from editf1.data import read_text
from editf1.inputs import BOOL_SPELLINGS, InputError, describe, unicode_problem
from editf1.segment import has_word
from editf1.themes import THEMES, check_theme

__all__ = [
    "ContentItem",
    "ThemeItem",
    "case_split",
    "items_digest",
    "kqa_content_items",
    "labelled_rows",
    "read_content_items",
    "read_label_columns",
    "read_theme_items",
    "select_split",
    "shipped_theme_items",
]


@dataclass(frozen=True)
class ContentItem:
    """One content judgement a human made.

    Attributes:
        match: the human (majority) decision: the draft says what the reference sentence says.
        span: the human's verbatim draft span, where annotated (``match`` only), and
            ``span_start`` its offset in ``prediction``, where recorded.
        annotators: each annotator's decision, when several labelled the item.
        source: where the item comes from (e.g. ``"oncqa/stage1.csv"``), for reports.
    """

    case: str
    prediction: str
    reference: str
    match: bool
    span: str | None = None
    annotators: tuple[bool, ...] = ()
    source: str = ""
    span_start: int | None = None


@dataclass(frozen=True)
class ThemeItem:
    """One sentence's theme as humans labelled it: ``theme`` the (majority) theme,
    ``annotators`` each annotator's where several labelled it, ``source`` for reports."""

    case: str
    text: str
    theme: str
    annotators: tuple[str, ...] = ()
    source: str = ""


def kqa_content_items(data_dir: str | Path) -> list[ContentItem]:
    """K-QA ``NLI_medical_annotator.csv`` as content items (Manes et al. 2024): the LLM
    answer the draft, the physician's claim the reference, the question the case; match
    is the three physicians' majority Entailment, each one's label kept; no spans."""
    from editf1.builders.readers import kqa_nli_rows

    return [
        ContentItem(
            case=r["question"],
            prediction=r["answer"],
            reference=r["claim"],
            match=bool(r["match"]),
            annotators=tuple(bool(a) for a in r["annotator_matches"]),
        )
        for r in kqa_nli_rows(data_dir)
    ]


def _bool(value, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if (text := str(value).strip().lower()) in BOOL_SPELLINGS:
        return BOOL_SPELLINGS[text]
    raise ValueError(f"{where}: expected true or false, got {describe(value)}")


def _list(value, where: str) -> list:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"{where}: expected a JSON list, got {describe(value)}") from None
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {describe(value)}")
    return value


def labelled_rows(path: str | Path, fields: Sequence[str]) -> list[tuple[str, dict]]:
    """``(where, row)`` of every row of a labels file, ``where`` naming the file and the
    line as an editor counts it (a CSV header is line 1).

    Raises:
        ValueError: for an empty file, and the errors of :func:`editf1.io.read_rows`.
    """
    from editf1.io import read_rows

    table, name = read_rows(path, fields), Path(path).name
    if not table:
        raise ValueError(f"{name} has no rows of labels")
    return [(f"{name}, line {line}", row) for line, row in zip(table.lines, table)]


def _text(row: dict, field: str, where: str, errors: list[str], *, word: bool = True) -> str:
    value = row.get(field)
    if not isinstance(value, str):
        errors.append(f"{where} field {field}: expected text, got {describe(value)}")
    elif problem := unicode_problem(value):
        errors.append(f"{where} field {field} {problem}")
    elif word and not has_word(value):
        errors.append(f"{where} field {field} has no word ({describe(value)})")
    else:
        return value
    return ""


def _case(value, where: str, errors: list[str]) -> str:
    """A case id: non-empty text or an integer (kept as its decimal text)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    errors.append(
        f"{where} field case: expected a non-empty case id (text or an integer), got "
        f"{describe(value)}; a case's items are split and resampled together"
    )
    return ""


def read_content_items(path: str | Path) -> list[ContentItem]:
    """Read content labels (format in the module docstring): one :class:`ContentItem` per
    row, in file order.

    Raises:
        InputError: for an empty case, a text field that is not text or has no word, a
            span not verbatim in the prediction or on a NO MATCH item, a bad ``match``.
        ValueError: for a file without rows, and the reader's errors.
    """
    items, errors, kept = [], [], []
    for where, row in labelled_rows(path, ["case", "prediction", "reference", "match"]):
        bad = len(errors)
        case = _case(row["case"], where, errors)
        prediction = _text(row, "prediction", where, errors, word=False)
        reference = _text(row, "reference", where, errors)
        try:
            match = _bool(row["match"], f"{where} field match")
            annotators = tuple(
                _bool(a, f"{where} field annotators")
                for a in _list(row.get("annotators"), f"{where} field annotators")
            )
        except ValueError as error:
            errors.append(str(error))
            continue
        span = None
        if row.get("span") not in (None, ""):
            span = _text(row, "span", where, errors)
            if not match:
                errors.append(f"{where}: field span is set but match is false")
            elif span and prediction and span not in prediction:
                errors.append(f"{where}: field span is not verbatim in field prediction")
        if match and row["prediction"] == prediction and not has_word(prediction):
            errors.append(f"{where}: match is true but field prediction has no word")
        if len(errors) > bad:
            continue
        yes, n = sum(annotators), len(annotators)
        against = n > 0 and 2 * yes != n and (2 * yes > n) != match
        kept.append((where, (case, prediction, reference), against))
        items.append(ContentItem(case, prediction, reference, match, span or None, annotators))
    if errors:
        raise InputError(errors)
    _warn_rows(
        kept,
        "repeat the case, prediction and reference of an earlier row (kept, each counts "
        "as an item)",
        "have a match that is not their annotators' majority (kept as given)",
    )
    return items


def _label(value, where: str, errors: list[str], *, numeric: bool):
    """One label: a finite number when ``numeric``, else text (an integer as its text)."""
    if isinstance(value, str) and (problem := unicode_problem(value)):
        errors.append(f"{where} {problem}")
    elif numeric:
        try:
            number = float("nan") if isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if np.isfinite(number):
            return int(number) if number.is_integer() else number
        errors.append(f"{where}: expected a finite number, got {describe(value)}")
    elif isinstance(value, str) and value.strip():
        return value
    elif isinstance(value, int):
        return json.dumps(value)
    else:
        errors.append(
            f"{where}: expected a label (non-empty text or an integer), got {describe(value)}"
        )
    return None


def read_label_columns(
    path: str | Path,
    human: str,
    judge: str,
    *,
    annotators: Sequence[str] = (),
    case: str | None = None,
    numeric: bool = False,
) -> dict:
    """The label columns of a JSONL or CSV file, for
    :func:`~editf1.validation.agreement.label_agreement_report`: ``{"human": [N], "judge":
    [N], "annotators": [N x A] or None, "groups": [N] or None}``.

    Args:
        human, judge: the human (majority) label's column and the judge's.
        annotators: each annotator's column (two or more, for the human ceiling).
        case: the column naming each row's case (default: each row its own case).
        numeric: labels are finite numbers (ordinal scores; integral ones kept as ints);
            else text (integers as their text).

    Raises:
        InputError: for an empty or (``numeric``) non-numeric label, or an empty case.
        ValueError: for a column given twice, a file without rows, and the reader's errors.
    """
    columns = [human, judge, *annotators, *([case] if case else [])]
    if len(set(columns)) < len(columns):
        raise ValueError(f"a column is given twice among {columns}")
    out: dict = {"human": [], "judge": [], "annotators": [], "groups": []}
    errors: list[str] = []
    for where, row in labelled_rows(path, columns):
        for key, column in (("human", human), ("judge", judge)):
            out[key].append(_label(row[column], f"{where} field {column}", errors, numeric=numeric))
        out["annotators"].append(
            [_label(row[a], f"{where} field {a}", errors, numeric=numeric) for a in annotators]
        )
        if case:
            out["groups"].append(_case(row[case], where, errors))
    if errors:
        raise InputError(errors)
    return out | {
        "annotators": out["annotators"] if annotators else None,
        "groups": out["groups"] if case else None,
    }


def items_digest(items: Sequence[ContentItem] | Sequence[ThemeItem]) -> str:
    """The first 10 hex digits of the SHA-256 of the items' labels in order (recorded
    with a judge fitted on them, so a later measurement can tell the same labels)."""
    from editf1.judges.embedding.config import digest

    return digest(
        [
            [it.case, it.prediction, it.reference, it.match]
            if isinstance(it, ContentItem)
            else [it.case, it.text, it.theme]
            for it in items
        ]
    )


def _theme(value, where: str, errors: list[str]) -> str:
    """A theme of :data:`~editf1.themes.THEMES`; else an error naming a near miss."""
    if isinstance(value, str) and value in THEMES:
        return value
    folded = " ".join(str(value).replace("-", " ").split()).casefold()
    near = [t for t in THEMES if " ".join(t.replace("-", " ").split()).casefold() == folded]
    hint = f"expected one of {list(THEMES)}"
    if near and isinstance(value, str):
        hint = f"did you mean {near[0]!r}?"
    errors.append(f"{where}: not a theme ({describe(value)}); {hint}")
    return ""


def read_theme_items(path: str | Path) -> list[ThemeItem]:
    """Read theme labels (format in the module docstring): one :class:`ThemeItem` per
    row, in file order.

    Raises:
        InputError: for a text with no word, an unknown theme (a near miss named), a case
            missing where other rows have one, annotators not two or more on every row.
        ValueError: for a file without rows, and the reader's errors.
    """
    rows = labelled_rows(path, ["text", "theme"])
    with_case = any(row.get("case") not in (None, "") for _, row in rows)
    items, errors, kept, counts = [], [], [], {}
    for i, (where, row) in enumerate(rows):
        bad = len(errors)
        text = _text(row, "text", where, errors)
        theme = _theme(row["theme"], f"{where} field theme", errors)
        case = _case(row.get("case"), where, errors) if with_case else f"row-{i}"
        try:
            given = _list(row.get("annotators"), f"{where} field annotators")
        except ValueError as error:
            errors.append(str(error))
            continue
        annotators = tuple(_theme(a, f"{where} field annotators", errors) for a in given)
        counts.setdefault(len(annotators), where)
        if len(errors) > bad:
            continue
        top = max(set(annotators), key=annotators.count) if annotators else theme
        against = 2 * annotators.count(top) > len(annotators) and top != theme
        kept.append((where, (case if with_case else None, text), against))
        items.append(ThemeItem(case, text, theme, annotators))
    if len(counts) > 1 or 1 in counts:
        errors.append(
            "field annotators: every row needs the same number of annotator themes, none "
            "or two or more (for the human ceiling); "
            + ", ".join(f"{n} first at {where}" for n, where in counts.items())
        )
    if errors:
        raise InputError(errors)
    _warn_rows(
        kept,
        "repeat the sentence of an earlier row (kept, each counts as an item)",
        "have a theme that is not their annotators' majority (kept)",
    )
    return items


def _warn_rows(kept: list[tuple[str, tuple, bool]], repeats: str, against: str) -> None:
    """Warn of the rows ``(where, key, against its annotators' majority)`` that repeat an
    earlier key, then of those against their annotators' majority (up to five named)."""
    first: dict[tuple, str] = {}
    repeated = [f"{w} repeats {first[k]}" for w, k, _ in kept if first.setdefault(k, w) != w]
    for rows, what in ((repeated, repeats), ([w for w, _, off in kept if off], against)):
        if rows:
            shown = "; ".join(rows[:5]) + (" ..." if len(rows) > 5 else "")
            warnings.warn(f"{len(rows)} row(s) {what}: {shown}", stacklevel=3)


def shipped_theme_items() -> list[ThemeItem]:
    """The team-written theme sentences of ``data/theme_sentences.jsonl``, each its own case."""
    raw = read_text("theme_sentences.jsonl")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return [
        ThemeItem(f"row-{i}", r["text"], check_theme(r["theme"]), source="team-written")
        for i, r in enumerate(rows)
    ]


def case_split(
    cases: Sequence[str], *, test_size: float = 0.4, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Split N items by case (scikit-learn's ``GroupShuffleSplit``, one split; as the
    judges' calibration does): ``(train, test)`` arrays of item indices, ``test_size``
    the share of cases held out.

    Raises:
        ValueError: with fewer than two cases.
    """
    groups = np.asarray(cases)
    if len(set(groups.tolist())) < 2:
        raise ValueError("a case-level split needs at least two cases")
    split = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
    train, test = next(split.split(np.zeros(len(groups)), groups=groups))
    return train, test


def select_split(items: Sequence, split: str, *, test_size: float = 0.4, seed: int = 0) -> list:
    """The items of one side of :func:`case_split`: ``"train"``, ``"test"`` or ``"all"``
    (ValueError for another ``split``)."""
    if split == "all":
        return list(items)
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'all', 'train' or 'test', got {split!r}")
    train, test = case_split([it.case for it in items], test_size=test_size, seed=seed)
    return [items[i] for i in (train if split == "train" else test)]
