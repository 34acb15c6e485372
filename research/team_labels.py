"""The team's label sets on real clinical text, stored by reference.

Two label sets, made by the project team's annotators (LLM-based annotator agents, not
clinicians) following its annotation guide, each in the ``data/`` folder of its dataset
card (``datasets/team_theme_labels/``, ``datasets/team_content_labels/``), which copies
the rules and shows the figures of :func:`label_set_summary`:

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
Content labels derived from OncQA's stage-2 edits are in
:mod:`research.stage2_labels`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from editf1.caches import cached
from editf1.themes import THEMES, check_theme
from editf1.validation.labelled import ContentItem, ThemeItem

__all__ = [
    "LABEL_FILES",
    "LABEL_SETS",
    "PRIMARY_ANNOTATOR",
    "REFERENCE_LISTS",
    "SOURCE_NAMES",
    "LabelTextError",
    "content_item",
    "draft_text",
    "field_text",
    "gold_rows_from_labels",
    "label_set_summary",
    "load_team_content_items",
    "load_team_theme_items",
    "read_label_rows",
    "sentence_text",
    "summary_markdown",
    "team_gold_rows",
]

#: The annotator whose label is the item's label; others are kept for the ceiling.
PRIMARY_ANNOTATOR = "team-a"


class LabelTextError(ValueError):
    """A label's text in the data folder is missing or differs from the recorded hash."""


#: The file of each label set, beside its dataset card.
LABEL_FILES = {
    name: Path(__file__).resolve().parents[1] / "datasets" / card / "data" / f"{name}.jsonl"
    for name, card in (
        ("theme_labels", "team_theme_labels"),
        ("content_match_labels", "team_content_labels"),
    )
}


def read_label_rows(name: str) -> list[dict]:
    """The label rows of ``name`` (``"theme_labels"`` or ``"content_match_labels"``,
    :data:`LABEL_FILES`), one dict per (item, annotator), without any text."""
    raw = LABEL_FILES[name].read_text("utf-8")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def _label_groups(name: str) -> dict[tuple, list[dict]]:
    """The rows of ``name`` grouped by item, ``(file, record, field, start, end)`` ->
    its rows, the :data:`PRIMARY_ANNOTATOR`'s first, then the others by annotator id;
    items in the order of their first row."""
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in read_label_rows(name):
        grouped[(row["file"], row["record"], row["field"], row["start"], row["end"])].append(row)
    for rows in grouped.values():
        rows.sort(key=lambda r: (r["annotator"] != PRIMARY_ANNOTATOR, r["annotator"]))
    return dict(grouped)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cached()
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


#: A field that addresses one element of a list (K-QA's ``Must_have[3]``).
_LIST_FIELD = re.compile(r"(?P<name>[^\[\]]+)\[(?P<index>\d+)\]")


def field_text(data_root: str | Path, source: str, file: str, record: str, field: str) -> str:
    """The text of one field of one upstream record.

    ``field`` names a column or key (``"response"``), or one element of a list held
    there: ``"Must_have[3]"`` is the fourth statement of a K-QA record's ``Must_have``.

    Raises:
        LabelTextError: if the record, the field or the list element is missing, or the
            value is not text.
    """
    found = _LIST_FIELD.fullmatch(field)
    try:
        row = _records(str(data_root), source, file)[record]
        value = row[found["name"]][int(found["index"])] if found else row[field]
    except (KeyError, IndexError, TypeError):
        value = None
    if not isinstance(value, str):
        raise LabelTextError(
            f"{source}/{file}: no record {record!r} with field {field!r} in {data_root}"
        )
    return value


def sentence_text(data_root: str | Path, row: dict, where: str) -> str:
    """The labelled sentence of a label ``row``: its field's text cut at ``start``/``end``,
    checked against the row's ``sha256``.

    Raises:
        LabelTextError: naming ``where`` and the file, record, field and offsets (never
            the text) if the record is missing or the text differs from the hash.
    """
    text = field_text(data_root, row["source"], row["file"], row["record"], row["field"])
    sentence = text[row["start"] : row["end"]]
    if _sha256(sentence) != row["sha256"]:
        raise LabelTextError(
            f"{where}: the text at {row['source']}/{row['file']} record {row['record']} "
            f"field {row['field']} [{row['start']}:{row['end']}] does not match its sha256: "
            "the data folder holds another version of the upstream file"
        )
    return sentence


def draft_text(data_root: str | Path, row: dict, where: str) -> str:
    """The whole draft a content label ``row`` was judged against (``draft_file``,
    ``draft_record``, ``draft_field``), checked against its ``draft_sha256``.

    Raises:
        LabelTextError: naming ``where``, the draft file and record if the record is
            missing or the text differs from the hash.
    """
    draft = field_text(
        data_root, row["source"], row["draft_file"], row["draft_record"], row["draft_field"]
    )
    if _sha256(draft) != row["draft_sha256"]:
        raise LabelTextError(
            f"{where}: the draft {row['draft_file']} record {row['draft_record']} "
            "does not match its sha256"
        )
    return draft


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
    items = []
    for key, rows in _label_groups("theme_labels").items():
        text = sentence_text(root, rows[0], f"theme label {key}")
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
    return [
        content_item(data_root, rows, f"content label {key}")
        for key, rows in _label_groups("content_match_labels").items()
    ]


def content_item(data_root: str | Path, rows: list[dict], where: str) -> ContentItem:
    """One content item from its label ``rows`` (the primary annotator's first): the
    sentence and the draft read from ``data_root`` with both hashes checked.

    Returns:
        A :class:`~editf1.validation.labelled.ContentItem` whose ``match``, ``span`` and
        ``span_start`` are the first row's, ``annotators`` every row's decision (empty
        for one row), ``source`` ``"<source>/<file>"`` of the sentence.

    Raises:
        LabelTextError: naming ``where`` if a record is missing or a hash differs.
    """
    first = rows[0]
    draft = draft_text(data_root, first, where)
    match = bool(first["match"])
    return ContentItem(
        case=first["case"],
        prediction=draft,
        reference=sentence_text(data_root, first, where),
        match=match,
        span=draft[first["span_start"] : first["span_end"]] if match else None,
        annotators=tuple(bool(r["match"]) for r in rows) if len(rows) > 1 else (),
        source=f"{first['source']}/{first['file']}",
        span_start=first["span_start"] if match else None,
    )


def _pair_key(data_root: Path, row: dict) -> str:
    """The scored pair a content label belongs to: for OncQA stage-1 replies the id of
    ``edit-f1 score --dataset oncqa --config own_reply`` (``"<case>-<n>"``), else
    ``"<source>/<file>:<record>"``."""
    if (row["source"], row["file"]) == ("oncqa", "stage1.csv"):
        return _oncqa_ids(str(data_root / "oncqa"))[int(row["record"])]
    return f"{row['source']}/{row['file']}:{row['record']}"


@cached()
def _oncqa_ids(folder: str) -> tuple[str, ...]:
    from editf1.builders.readers import oncqa_rows

    return tuple(r["id"] for r in oncqa_rows(folder, "own_reply"))


def team_gold_rows(
    data_root: str | Path, *, annotator: str = PRIMARY_ANNOTATOR
) -> tuple[list[dict], list[dict]]:
    """The team's content-match labels as pairs and gold-label rows
    (:mod:`editf1.gold.labels`): one pair per labelled reply, each against its draft.

    Themes are added where the theme label set gives ``annotator``'s theme for every
    sentence of the reply and of the draft (OncQA's drafts are labelled in part only, so
    its rows carry none). See :func:`gold_rows_from_labels`.

    Args:
        data_root: the folder holding ``oncqa/``.
        annotator: whose labels (default the :data:`PRIMARY_ANNOTATOR`).

    Returns:
        ``(pairs, rows)`` of :func:`gold_rows_from_labels`; OncQA pairs have the ids of
        ``oncqa_rows(..., "own_reply")``.

    Raises:
        FileNotFoundError: if an upstream file is missing.
        LabelTextError: if a text does not match its recorded hash.
    """
    root = Path(data_root)
    rows = [r for rs in _label_groups("content_match_labels").values() for r in rs]
    themes = {
        key: row["theme"]
        for key, rows_ in _label_groups("theme_labels").items()
        for row in rows_
        if row["annotator"] == annotator
    }
    pairs, gold, _ = gold_rows_from_labels(
        root, [r for r in rows if r["annotator"] == annotator], key=lambda r: _pair_key(root, r),
        themes=themes,
    )  # fmt: skip
    return pairs, gold


#: The lists that together make a record's reference, where labels name list elements:
#: a K-QA record's statements are its ``Must_have`` and its ``Nice_to_have`` ones.
REFERENCE_LISTS = {("kqa", "questions_w_answers.jsonl"): ("Must_have", "Nice_to_have")}


def _reply_text(data_root: Path, first: dict, fields: list[str]) -> tuple[str, dict[str, int]]:
    """A pair's reply and where each labelled field starts in it: one field's text, or,
    for fields that are list elements (K-QA's ``Must_have[3]``), every element of the
    record's :data:`REFERENCE_LISTS` (and of any other list labelled), one per line."""
    source, file, record = first["source"], first["file"], first["record"]
    seen = [m["name"] for f in fields if (m := _LIST_FIELD.fullmatch(f))]
    known = REFERENCE_LISTS.get((source, file), ()) if seen else ()
    lists = list(dict.fromkeys([*known, *seen]))
    if not lists:
        return field_text(data_root, source, file, record, fields[0]), {fields[0]: 0}
    parts, offsets, position = [], {}, 0
    for name in lists:
        k = 0
        while True:
            try:
                text = field_text(data_root, source, file, record, f"{name}[{k}]")
            except LabelTextError:
                break
            offsets[f"{name}[{k}]"] = position
            parts.append(text)
            position += len(text) + 1
            k += 1
    return "\n".join(parts), offsets


def gold_rows_from_labels(
    data_root: str | Path,
    rows: list[dict],
    *,
    key,
    themes: dict | None = None,
) -> tuple[list[dict], list[dict], list[str]]:
    """One annotator's content labels (rows of a team label set: ``source``, ``file``,
    ``record``, ``field``, ``start``, ``end``, ``sha256``, the ``draft_*`` fields,
    ``match``, ``span_start``, ``span_end``) as pairs and gold-label rows
    (:mod:`editf1.gold.labels`): one pair per (reply, draft).

    A reply is one field's text, or, where the labelled fields are list elements (K-QA's
    statements), all elements of those lists, one per line. A pair becomes a gold row
    only when every sentence of its reply (as :class:`~editf1.segment.SentenceSplitter`
    splits it) is labelled; the rows give each sentence's span (offsets into the draft)
    or NO MATCH and the digests of the reply and draft, and record no sampling.

    Args:
        data_root: the data folder.
        rows: the label rows (one annotator's).
        key: maps a pair's first label row to the pair's id.
        themes: ``(file, record, field, start, end)`` -> theme, to add themes where they
            cover every sentence of the reply and the draft (optional).

    Returns:
        ``(pairs, gold_rows, incomplete)``: ``pairs`` are dicts with ``id``,
        ``prediction`` (the draft), ``reference`` (the reply) and ``source``
        (``"<source>/<file>"`` of the reply), in label-file order; ``gold_rows`` one per
        pair; ``incomplete`` the ids of pairs left out because a sentence is unlabelled.

    Raises:
        FileNotFoundError: if an upstream file is missing.
        LabelTextError: if a text does not match its recorded hash.
    """
    from editf1.segment import SentenceSplitter

    root, splitter = Path(data_root), SentenceSplitter()
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        sentence_text(root, row, f"content label of {row['file']} record {row['record']}")
        base = m["name"] if (m := _LIST_FIELD.fullmatch(row["field"])) else row["field"]
        reply_of = (row["source"], row["file"], row["record"], base if not m else "[list]")
        grouped[(*reply_of, row["draft_file"], row["draft_record"], row["draft_field"])].append(row)
    pairs, gold, incomplete = [], [], []
    for members in grouped.values():
        first = members[0]
        fields = list(dict.fromkeys(r["field"] for r in members))
        reply, offsets = _reply_text(root, first, fields)
        draft = draft_text(
            root, first, f"content label of {first['file']} record {first['record']}"
        )
        pair_id = key(first)
        labelled = sorted(members, key=lambda r: offsets[r["field"]] + r["start"])
        spans = [
            (offsets[r["field"]] + r["start"], offsets[r["field"]] + r["end"]) for r in labelled
        ]
        if spans != [(s.start, s.end) for s in splitter.split(reply)]:
            incomplete.append(pair_id)
            continue
        sentences = [
            {"start": a, "end": b,
             "match": {"start": r["span_start"], "end": r["span_end"]} if r["match"] else None}
            for (a, b), r in zip(spans, labelled)
        ]  # fmt: skip
        out = {"id": pair_id, "reference_sentences": sentences, "reference_sha256": _sha256(reply),
               "prediction_sha256": _sha256(draft), "annotator": first["annotator"]}  # fmt: skip
        reply_themes = [
            (themes or {}).get((r["file"], r["record"], r["field"], r["start"], r["end"]))
            for r in labelled
        ]
        draft_spans = _draft_theme_spans(themes or {}, first, draft)
        if None not in reply_themes and draft_spans is not None:
            for sentence, theme in zip(sentences, reply_themes):
                sentence["theme"] = theme
            out["prediction_sentences"] = draft_spans
        pairs.append({"id": pair_id, "prediction": draft, "reference": reply,
                      "source": f"{first['source']}/{first['file']}"})  # fmt: skip
        gold.append(out)
    return pairs, gold, incomplete


def _draft_theme_spans(themes: dict, row: dict, draft: str) -> list[dict] | None:
    """Every sentence of the row's draft (as the splitter splits it) with its theme, or
    ``None`` unless the theme labels cover each of them."""
    from editf1.segment import SentenceSplitter

    where = (row["draft_file"], row["draft_record"], row["draft_field"])
    spans = [(s.start, s.end) for s in SentenceSplitter().split(draft)]
    labels = [themes.get((*where, start, end)) for start, end in spans]
    if not spans or None in labels:
        return None
    return [{"start": s, "end": e, "theme": t} for (s, e), t in zip(spans, labels)]


#: Label sets :func:`label_set_summary` knows, and their labels in table order.
LABEL_SETS = {"theme_labels": THEMES, "content_match_labels": ("match", "no_match")}

#: What each labelled upstream file holds, for the cards' tables.
SOURCE_NAMES = {
    "oncqa/stage1.csv": "OncQA oncologists' replies",
    "oncqa/Master2.csv": "OncQA GPT-4 drafts",
    "kqa/questions_w_answers.jsonl": "K-QA physicians' answers",
    "expertqa/medicine_val.jsonl": "ExpertQA experts' revisions",
}


def _label(name: str, row: dict) -> str:
    if name == "theme_labels":
        return row["theme"]
    return "match" if row["match"] else "no_match"


def _source_order(rows: list[dict]) -> int:
    """Position of an item's source in :data:`SOURCE_NAMES` (unknown sources last)."""
    order = list(SOURCE_NAMES)
    source = f"{rows[0]['source']}/{rows[0]['file']}"
    return order.index(source) if source in order else len(order)


def label_set_summary(name: str, *, n_resamples: int = 2000, seed: int = 0) -> dict:
    """Counts and inter-annotator figures of a label set, from its label rows
    alone (no text needed): the figures of the set's dataset card.

    Args:
        name: ``"theme_labels"`` or ``"content_match_labels"`` (:data:`LABEL_SETS`).
        n_resamples, seed: the case-level bootstrap's (:func:`editf1.stats.bootstrap`).

    Returns:
        A dict:

        * ``labels``: the set's labels in table order (the nine themes, or ``"match"``,
          ``"no_match"``); ``items`` (labelled sentences), ``cases``;
        * ``sources``: ``"<source>/<file>"`` (in :data:`SOURCE_NAMES` order) ->
          ``{"field", "items", "cases", "double_labelled", "labels": {label: items}}``,
          with each item's label that of the :data:`PRIMARY_ANNOTATOR` (the label the
          loaders give);
        * ``annotators``: annotator id -> ``{"items", "labels": {label: items}}``;
        * ``double_labelled``: the items a second annotator labelled, primary against
          second: ``items``, ``cases``, ``agreed`` (items labelled alike),
          ``agreement`` and ``cohen_kappa`` (:class:`~editf1.stats.Estimate`, 95%
          percentile CI over cases, via
          :func:`editf1.validation.agreement.inter_annotator_report`),
          ``sources`` (``"<source>/<file>"`` -> ``{"items", "agreed"}``) and
          ``disagreements`` (``(primary label, second label)`` -> items, most
          frequent first); content sets add ``both_match`` (items both matched),
          ``same_span`` and ``overlapping_span`` (of those, items whose two draft
          spans have the same offsets, or share at least one character).

    Raises:
        KeyError: for an unknown ``name``.
        ValueError: from the bootstrap (e.g. ``n_resamples < 1``).
    """
    from editf1.validation.agreement import inter_annotator_report

    labels = LABEL_SETS[name]
    groups = list(_label_groups(name).values())

    def by_label(rows) -> dict[str, int]:
        counts = Counter(_label(name, r) for r in rows)
        return {label: counts[label] for label in labels}

    sources: dict[str, list[list[dict]]] = defaultdict(list)
    for rows in sorted(groups, key=_source_order):
        sources[f"{rows[0]['source']}/{rows[0]['file']}"].append(rows)
    annotators: dict[str, list[dict]] = defaultdict(list)
    for row in read_label_rows(name):
        annotators[row["annotator"]].append(row)
    double = [rows for rows in groups if len(rows) > 1]
    first = [_label(name, rows[0]) for rows in double]
    second = [_label(name, rows[1]) for rows in double]
    ceiling = inter_annotator_report(
        [first, second],
        groups=[rows[0]["case"] for rows in double],
        n_resamples=n_resamples,
        seed=seed,
    )
    double_sources: dict[str, list[bool]] = defaultdict(list)
    for rows, a, b in sorted(zip(double, first, second), key=lambda d: _source_order(d[0])):
        double_sources[f"{rows[0]['source']}/{rows[0]['file']}"].append(a == b)
    summary_double = {
        "items": len(double),
        "cases": len({rows[0]["case"] for rows in double}),
        "agreed": sum(a == b for a, b in zip(first, second)),
        "agreement": ceiling["agreement"],
        "cohen_kappa": ceiling["cohen_kappa"],
        "sources": {s: {"items": len(v), "agreed": sum(v)} for s, v in double_sources.items()},
        "disagreements": dict(
            Counter((a, b) for a, b in zip(first, second) if a != b).most_common()
        ),
    }
    if name == "content_match_labels":
        both = [rows for rows in double if rows[0]["match"] and rows[1]["match"]]
        summary_double["both_match"] = len(both)
        spans = [[(r["span_start"], r["span_end"]) for r in rows[:2]] for rows in both]
        summary_double["same_span"] = sum(a == b for a, b in spans)
        summary_double["overlapping_span"] = sum(a[0] < b[1] and b[0] < a[1] for a, b in spans)
    return {
        "labels": labels,
        "items": len(groups),
        "cases": len({rows[0]["case"] for rows in groups}),
        "sources": {
            source: {
                "field": members[0][0]["field"],
                "items": len(members),
                "cases": len({rows[0]["case"] for rows in members}),
                "double_labelled": sum(len(rows) > 1 for rows in members),
                "labels": by_label(rows[0] for rows in members),
            }
            for source, members in sources.items()
        },
        "annotators": {
            annotator: {"items": len(rows), "labels": by_label(rows)}
            for annotator, rows in sorted(annotators.items())
        },
        "double_labelled": summary_double,
    }


def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def summary_markdown(summary: dict) -> str:
    """The figures block of a label set's dataset card: Markdown tables of
    :func:`label_set_summary`'s counts and inter-annotator figures.

    Args:
        summary: what :func:`label_set_summary` returned.

    Returns:
        Markdown text (tables with a bold title line each), ending in a newline.
    """
    labels, sources = summary["labels"], summary["sources"]
    double = summary["double_labelled"]
    names = [SOURCE_NAMES.get(s, s) for s in sources]
    out = ["**Items per source** (one item is one labelled sentence)", ""]
    out += _table(
        ["source", "file", "field", "items", "cases", "double-labelled"],
        [
            [name, f"`{s}`", f"`{v['field']}`", v["items"], v["cases"], v["double_labelled"]]
            for name, (s, v) in zip(names, sources.items())
        ]
        + [["all", "", "", summary["items"], summary["cases"], double["items"]]],
    )
    per_label = {label: [v["labels"][label] for v in sources.values()] for label in labels}
    out += ["", f"**Labels per source** (the primary annotator's, `{PRIMARY_ANNOTATOR}`)", ""]
    out += _table(
        ["label", *names, "all"],
        [[label, *counts, sum(counts)] for label, counts in per_label.items()],
    )
    out += ["", "**Labels per annotator** (every row of the label file)", ""]
    annotators = summary["annotators"]
    out += _table(
        ["label", *annotators],
        [[label, *(a["labels"][label] for a in annotators.values())] for label in labels]
        + [["all", *(a["items"] for a in annotators.values())]],
    )
    out += ["", "**Inter-annotator agreement** (primary against second annotator)", ""]
    rows = [
        ["double-labelled items (cases)", f"{double['items']} ({double['cases']})"],
        ["items labelled alike", double["agreed"]],
        ["agreement [95% CI]", str(double["agreement"])],
        ["Cohen's kappa [95% CI]", str(double["cohen_kappa"])],
    ]
    rows += [
        [f"agreed, {SOURCE_NAMES.get(s, s)}", f"{v['agreed']} of {v['items']}"]
        for s, v in double["sources"].items()
    ]
    if "both_match" in double:
        rows += [
            [f"{what} where both matched", f"{double[key]} of {double['both_match']}"]
            for what, key in [
                ("same draft span", "same_span"),
                ("overlapping draft spans", "overlapping_span"),
            ]
        ]
    out += _table(["", "value"], rows)
    out += ["", "**Disagreements** (primary label → second label)", ""]
    out += _table(
        ["primary", "second", "items"], [[a, b, n] for (a, b), n in double["disagreements"].items()]
    )
    return "\n".join(out) + "\n"
