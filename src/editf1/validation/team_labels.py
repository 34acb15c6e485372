"""The team's label sets on real clinical text, stored by reference.

Two label sets ship with the package (``editf1/data/labels/``), made by the project
team's annotators following its annotation guide (the rules are copied into each set's
dataset card under ``datasets/``):

* ``theme_labels.jsonl``: one of the nine themes for sentences of OncQA oncologists'
  replies (``stage1.csv`` ``response``), GPT-4 drafts (``Master2.csv`` ``Output``),
  K-QA physicians' answers (``Free_form_answer``) and ExpertQA expert revisions
  (``revised_answer_string``); a second annotator labelled a sample independently.
* ``content_match_labels.jsonl``: for sentences of OncQA oncologists' replies, the
  verbatim span of the GPT-4 draft of the same case that says the same thing, or NO
  MATCH (the paper's setting); a second annotator on a sample.

OncQA has no licence file, so no text is stored: each label names its source, file,
record (the 0-based data row of ``stage1.csv``; the ``pin`` of ``Master2.csv``; the
0-based line of a JSON Lines file, with ``:<system>`` for ExpertQA's answers), field,
the sentence's character ``start``/``end`` in that field and the sha256 of the sentence
text. The loaders read the text from the data folder (``../shared/data`` in this
workplace) and verify every hash, so labels never silently attach to changed text.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections import defaultdict
from functools import cache
from importlib import resources
from pathlib import Path

from editf1.themes import check_theme
from editf1.validation.labelled import ContentItem, ThemeItem

__all__ = [
    "LabelTextError",
    "load_team_content_items",
    "load_team_theme_items",
    "read_label_rows",
]

#: The annotator whose label is the item's label; others are kept for the ceiling.
PRIMARY_ANNOTATOR = "team-a"


class LabelTextError(ValueError):
    """A label's text in the data folder is missing or differs from the recorded hash."""


def read_label_rows(name: str) -> list[dict]:
    """The shipped label rows of ``name`` (``"theme_labels"`` or ``"content_match_labels"``),
    one dict per (item, annotator), without any text."""
    raw = resources.files("editf1.data").joinpath("labels", f"{name}.jsonl").read_text("utf-8")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def _records(data_root: str, source: str, file: str) -> dict[str, dict]:
    """record id -> row of one upstream file."""
    from editf1.io import read_rows

    path = Path(data_root) / source / file
    if file == "stage1.csv":
        return {str(i): row for i, row in enumerate(read_rows(path, ["id", "response"]))}
    if file == "Master2.csv":
        return {row["pin"]: row for row in read_rows(path, ["pin", "Output"])}
    lines = read_rows(path, [])
    if source == "expertqa":
        out = {}
        for i, row in enumerate(lines):
            answers = row["answers"]
            answers = ast.literal_eval(answers) if isinstance(answers, str) else answers
            for system, answer in answers.items():
                out[f"{i}:{system}"] = answer
        return out
    return {str(i): row for i, row in enumerate(lines)}


def _field_text(data_root: Path, source: str, file: str, record: str, field: str) -> str:
    try:
        return _records(str(data_root), source, file)[record][field]
    except KeyError:
        raise LabelTextError(
            f"{source}/{file}: no record {record!r} with field {field!r} in {data_root}"
        ) from None


def _sentence(data_root: Path, row: dict, where: str) -> str:
    text = _field_text(data_root, row["source"], row["file"], row["record"], row["field"])
    sentence = text[row["start"] : row["end"]]
    if _sha256(sentence) != row["sha256"]:
        raise LabelTextError(
            f"{where}: the text at {row['source']}/{row['file']} record {row['record']} "
            f"field {row['field']} [{row['start']}:{row['end']}] does not match its sha256: "
            "the data folder holds another version of the upstream file"
        )
    return sentence


def load_team_theme_items(data_root: str | Path) -> list[ThemeItem]:
    """The team's theme labels as :class:`~editf1.validation.labelled.ThemeItem` objects.

    Args:
        data_root: the folder holding ``oncqa/``, ``kqa/`` and ``expertqa/``.

    Returns:
        One item per labelled sentence, in file order: ``theme`` is the primary
        annotator's label; ``annotators`` holds every annotator's label (primary first)
        where two labelled it; ``case`` is ``"<source>:<case id>"`` (both oncologists'
        replies and the GPT-4 draft of one OncQA message share a case); ``source`` is
        ``"<source>/<file>"``.

    Raises:
        FileNotFoundError: if an upstream file is missing.
        LabelTextError: if a sentence's text does not match its recorded hash.
    """
    root = Path(data_root)
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in read_label_rows("theme_labels"):
        grouped[(row["file"], row["record"], row["field"], row["start"], row["end"])].append(row)
    items = []
    for key, rows in grouped.items():
        rows.sort(key=lambda r: (r["annotator"] != PRIMARY_ANNOTATOR, r["annotator"]))
        text = _sentence(root, rows[0], f"theme label {key}")
        themes = tuple(check_theme(r["theme"]) for r in rows)
        items.append(
            ThemeItem(
                case=rows[0]["case"],
                text=text,
                theme=themes[0],
                annotators=themes if len(themes) > 1 else (),
                source=f"{rows[0]['source']}/{rows[0]['file']}",
            )
        )
    return items


def load_team_content_items(data_root: str | Path) -> list[ContentItem]:
    """The team's content-match labels (oncologist sentence vs the GPT-4 draft of the
    same case) as :class:`~editf1.validation.labelled.ContentItem` objects.

    Args:
        data_root: the folder holding ``oncqa/``.

    Returns:
        One item per labelled sentence: ``match`` and ``span`` (the verbatim draft span)
        are the primary annotator's; ``annotators`` holds each annotator's decision where
        two labelled it; ``case`` is ``"oncqa:<case id>"``.

    Raises:
        FileNotFoundError: if an upstream file is missing.
        LabelTextError: if a sentence or draft does not match its recorded hash.
    """
    root = Path(data_root)
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in read_label_rows("content_match_labels"):
        grouped[(row["file"], row["record"], row["field"], row["start"], row["end"])].append(row)
    items = []
    for key, rows in grouped.items():
        rows.sort(key=lambda r: (r["annotator"] != PRIMARY_ANNOTATOR, r["annotator"]))
        first = rows[0]
        sentence = _sentence(root, first, f"content label {key}")
        draft = _field_text(
            root, first["source"], first["draft_file"], first["draft_record"], first["draft_field"]
        )
        if _sha256(draft) != first["draft_sha256"]:
            raise LabelTextError(
                f"content label {key}: the draft {first['draft_file']} record "
                f"{first['draft_record']} does not match its sha256"
            )
        span = draft[first["span_start"] : first["span_end"]] if first["match"] else None
        items.append(
            ContentItem(
                case=first["case"],
                prediction=draft,
                reference=sentence,
                match=bool(first["match"]),
                span=span,
                annotators=tuple(bool(r["match"]) for r in rows) if len(rows) > 1 else (),
                source=f"{first['source']}/{first['file']}",
            )
        )
    return items
