"""The team's second round of content-match labels and the third (seven sets), stored by
reference in ``datasets/team_content_labels_v2/data/content_labels_v2.jsonl``.

Each item is one reference sentence (a :class:`~editf1.segment.SentenceSplitter`
sentence of a clinician's or physician's text) against one draft text; the label is the
verbatim draft span that says the same thing, or NO MATCH, following the team's
annotation guide and the rules added while labelling (the dataset card
``datasets/team_content_labels_v2/README.md`` copies both). Unlike the first set
(:func:`research.team_labels.load_team_content_items`), one sentence is judged
against several drafts, so an item is named by the sentence's coordinates *and* the
draft's.

The sets (:data:`CONTENT_SETS`):

* ``oncqa_other_reply``: a stage-1 oncologist's sentence against the *other*
  oncologist's reply to the same message (the 37 OncQA cases with two replies);
* ``oncqa_edited_draft``: a stage-1 oncologist's sentence against each
  oncologist-edited draft of the case (``stage2.csv`` ``doc_change``);
* ``oncqa_edit_vs_draft``: a sentence of the oncologist-edited reply against the GPT-4
  draft it was edited from (``stage2.csv`` ``raw_response``);
* ``kqa_statements``: a K-QA physician-curated ``Must_have`` / ``Nice_to_have``
  statement against an LLM answer to the same question (``NLI_medical_annotator.csv``);
* ``kqa_free_form``: a sentence of the physicians' free-form answer against the same
  LLM answers;
* ``expertqa_revision``: a sentence of an ExpertQA expert's revised answer against the
  system answer it revised;
* ``kqa_physician``: a K-QA physician-curated statement against the physicians'
  free-form answer to the same question it was written from (mostly paraphrase
  matches).

Each row of the label file is one annotator's label of one item and holds no text:
``set``, ``source``, ``file``, ``record``, ``field``, ``start``, ``end``, ``sha256`` (the
sentence), ``case``, ``draft_file``, ``draft_record``, ``draft_field``,
``draft_sha256`` (the whole draft), ``annotator``, ``match``, ``span_start`` /
``span_end`` (the span's offsets in the draft; null for NO MATCH) and ``reason`` (the
annotator's NO MATCH reason, one of :data:`REASONS`, or null). The loaders read the
text from the data folder and verify both hashes (:class:`LabelTextError`).

:func:`convert_annotations` turns the annotators' output files (which quote the span
text) into these rows; ``benchmarks/content_labels_v2.py`` runs it, writes the label
file and refreshes the card's figures.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

from editf1.validation.labelled import ContentItem
from research.team_labels import LabelTextError, content_item, gold_rows_from_labels

__all__ = [
    "CONTENT_SETS",
    "LABEL_FILE",
    "REASONS",
    "ROW_FIELDS",
    "SECOND_ANNOTATOR",
    "LabelTextError",
    "content_set_gold_rows",
    "content_sets_markdown",
    "content_sets_summary",
    "convert_annotations",
    "load_content_sets",
    "read_content_rows",
]

#: The label file, beside its dataset card.
LABEL_FILE = (
    Path(__file__).resolve().parents[1]
    / "datasets"
    / "team_content_labels_v2"
    / "data"
    / "content_labels_v2.jsonl"
)

#: set name -> its primary annotator (the item's label) and what it compares.
CONTENT_SETS: dict[str, dict[str, str]] = {
    "oncqa_other_reply": {
        "primary": "team-d",
        "reference": "OncQA oncologist's reply (`stage1.csv` `response`)",
        "draft": "the other oncologist's reply to the same message",
    },
    "oncqa_edited_draft": {
        "primary": "team-c",
        "reference": "OncQA oncologist's reply (`stage1.csv` `response`)",
        "draft": "each oncologist-edited draft of the case (`stage2.csv` `doc_change`)",
    },
    "oncqa_edit_vs_draft": {
        "primary": "team-d",
        "reference": "OncQA oncologist-edited reply (`stage2.csv` `doc_change`)",
        "draft": "the GPT-4 draft it was edited from (`stage2.csv` `raw_response`)",
    },
    "kqa_statements": {
        "primary": "team-e",
        "reference": "K-QA `Must_have` / `Nice_to_have` statements",
        "draft": "LLM answers to the same question (`NLI_medical_annotator.csv` `answer`)",
    },
    "kqa_free_form": {
        "primary": "team-e",
        "reference": "K-QA physicians' free-form answer (`Free_form_answer`)",
        "draft": "LLM answers to the same question (`NLI_medical_annotator.csv` `answer`)",
    },
    "expertqa_revision": {
        "primary": "team-e",
        "reference": "ExpertQA expert's revision (`revised_answer_string`)",
        "draft": "the system answer it revised (`answer_string`)",
    },
    "kqa_physician": {
        "primary": "team-g",
        "reference": "K-QA `Must_have` / `Nice_to_have` statements",
        "draft": "the physicians' free-form answer to the same question (`Free_form_answer`)",
    },
}

#: The second, blind annotator, on the items of a sample of cases.
SECOND_ANNOTATOR = "team-f"

#: The NO MATCH reasons an annotator may give (the labelling instructions' list).
REASONS = (
    "absent",
    "omits_key_part",
    "changed_number_or_dose",
    "changed_drug_or_test",
    "changed_direction",
    "negated",
    "conditional_changed",
    "too_generic",
    "weaker_or_stronger",
    "other",
)

_SENTENCE = ("source", "file", "record", "field", "start", "end", "sha256", "case")
_DRAFT = ("draft_file", "draft_record", "draft_field", "draft_sha256")
#: The fields of every label row, in file order.
ROW_FIELDS = ("set", *_SENTENCE, *_DRAFT, "annotator", "match", "span_start", "span_end")
ROW_FIELDS += ("reason",)
#: What names an item: the set, the sentence's coordinates and the draft's.
_ITEM_KEY = ("set", "file", "record", "field", "start", "end", "draft_file", "draft_record")
_ITEM_KEY += ("draft_field",)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonl(path: Path) -> list[tuple[int, dict]]:
    """(1-based line number, object) of each non-blank line."""
    with path.open(encoding="utf-8") as f:
        return [(n, json.loads(line)) for n, line in enumerate(f, 1) if line.strip()]


def _label_row(item: dict, label: dict, where: str) -> dict:
    """One annotator's label of one item (with text) as a row without text."""
    if (
        _sha256(item["sentence"]) != item["sha256"]
        or _sha256(item["draft"]) != item["draft_sha256"]
    ):
        raise ValueError(f"{where}: the item's text does not match its recorded sha256")
    if not isinstance(label.get("match"), bool):
        raise ValueError(f"{where}: field match must be true or false")
    reason = label.get("reason")
    if reason is not None and reason not in REASONS:
        raise ValueError(f"{where}: field reason must be one of {list(REASONS)}, got {reason!r}")
    span_start = span_end = None
    if label["match"]:
        span, draft = label.get("span"), item["draft"]
        if not isinstance(span, str) or not span.strip():
            raise ValueError(f"{where}: a match needs field span")
        given = label.get("span_start")
        if isinstance(given, int) and not isinstance(given, bool):
            span_start = given
        elif draft.count(span) == 1:
            span_start = draft.find(span)
        else:
            raise ValueError(
                f"{where}: field span occurs {draft.count(span)} times in the draft "
                "(give span_start)"
            )
        span_end = span_start + len(span)
        if draft[span_start:span_end] != span:
            raise ValueError(f"{where}: field span is not verbatim in the draft at span_start")
        reason = None
    elif label.get("span") not in (None, ""):
        raise ValueError(f"{where}: a NO MATCH has field span null")
    return (
        {"set": item["set"]}
        | {k: item[k] for k in _SENTENCE + _DRAFT}
        | {"record": str(item["record"]), "draft_record": str(item["draft_record"])}
        | {"annotator": label["annotator"], "match": label["match"]}
        | {"span_start": span_start, "span_end": span_end, "reason": reason}
    )


def convert_annotations(
    items_dir: str | Path,
    labels_dir: str | Path,
    *,
    sets: dict[str, dict[str, str]] | None = None,
    second: str = SECOND_ANNOTATOR,
) -> list[dict]:
    """The annotators' output files as label rows without text (:data:`ROW_FIELDS`).

    Reads ``items_dir/<set>.jsonl`` (the items, with their text and coordinates) and
    ``labels_dir/<set>.<annotator>.jsonl`` for each set's primary annotator and for
    ``second`` (each line ``item_id``, ``annotator``, ``match``, ``span`` verbatim,
    optional ``span_start`` where the span occurs more than once, optional ``reason``).
    The last line for an item wins (the annotators correct by appending). An annotator
    who has not finished contributes the items labelled so far; a missing file, none.

    Args:
        items_dir, labels_dir: the two folders.
        sets: set name -> ``{"primary": annotator, ...}``; default :data:`CONTENT_SETS`.
        second: the second annotator's id.

    Returns:
        Rows in item order, the primary annotator's label first; each span is turned
        into ``span_start`` / ``span_end`` offsets in the draft.

    Raises:
        ValueError: naming the set, annotator and line of an unknown item, a label of
            another annotator, a bad ``match``, ``reason`` or span (not verbatim, or
            repeated in the draft without ``span_start``), or an item whose text no
            longer matches its hash.
        FileNotFoundError: if a set's items file is missing.
    """
    rows = []
    for name, spec in (CONTENT_SETS if sets is None else sets).items():
        items = {item["item_id"]: item for _, item in _jsonl(Path(items_dir) / f"{name}.jsonl")}
        labelled: dict[str, list[dict]] = defaultdict(list)
        for annotator in dict.fromkeys((spec["primary"], second)):
            path = Path(labels_dir) / f"{name}.{annotator}.jsonl"
            last: dict[str, tuple[int, dict]] = {}
            for n, label in _jsonl(path) if path.is_file() else []:
                where = f"{path.name} line {n}"
                if label.get("item_id") not in items:
                    raise ValueError(f"{where}: unknown item_id")
                if label.get("annotator") != annotator:
                    raise ValueError(f"{where}: field annotator is not {annotator!r}")
                last[label["item_id"]] = (n, label)
            for item_id, (n, label) in last.items():
                where = f"{path.name} line {n}"
                labelled[item_id].append(_label_row(items[item_id], label, where))
        rows += [row for item_id in items for row in labelled.get(item_id, [])]
    return rows


def read_content_rows() -> list[dict]:
    """The label rows (:data:`LABEL_FILE`), one dict per (item, annotator)."""
    raw = LABEL_FILE.read_text("utf-8")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def _groups(rows: list[dict]) -> dict[str, list[list[dict]]]:
    """set -> its items, each the list of its rows, the set's primary annotator's first
    (then the others by id); sets in :data:`CONTENT_SETS` order, items in file order.
    Items the primary annotator has not labelled are left out."""
    items: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        items[tuple(row[k] for k in _ITEM_KEY)].append(row)
    out: dict[str, list[list[dict]]] = {name: [] for name in CONTENT_SETS}
    for members in items.values():
        primary = CONTENT_SETS[members[0]["set"]]["primary"]
        members.sort(key=lambda r: (r["annotator"] != primary, r["annotator"]))
        if members[0]["annotator"] == primary:
            out[members[0]["set"]].append(members)
    return out


def load_content_sets(
    data_root: str | Path, names: list[str] | None = None
) -> dict[str, list[ContentItem]]:
    """The label sets as :class:`~editf1.validation.labelled.ContentItem` objects.

    Args:
        data_root: the folder holding ``oncqa/``, ``kqa/`` and ``expertqa/``.
        names: the sets to load (default: all of :data:`CONTENT_SETS`).

    Returns:
        set name -> one item per labelled (sentence, draft), in file order: ``match``,
        ``span`` and ``span_start`` are the primary annotator's; ``annotators`` holds
        (primary, second) decisions where the second annotator labelled the item;
        ``case`` is ``"<source>:<case id>"`` (``"oncqa:<id>"``, ``"kqa:kqa<line>"``,
        ``"expertqa:ex<line>"``: the cases of the first set and of the other loaders,
        so case splits keep a case's items together across sets); ``source`` is
        ``"<source>/<file>"`` of the sentence.

    Raises:
        KeyError: for an unknown set name.
        FileNotFoundError: if an upstream file is missing.
        LabelTextError: if a sentence or draft does not match its recorded hash.
    """
    groups = _groups(read_content_rows())
    out = {}
    for name in names or list(CONTENT_SETS):
        out[name] = []
        for rows in groups[name]:
            r = rows[0]
            where = f"{name} label {r['record']} {r['field']} [{r['start']}:{r['end']}] "
            where += f"against {r['draft_file']} {r['draft_record']}"
            out[name].append(content_item(data_root, rows, where))
    return out


def _double_labelled(items: list[list[dict]], n_resamples: int, seed: int) -> dict:
    """Primary against second annotator on the ``items`` both labelled."""
    from editf1.validation.agreement import inter_annotator_report

    double = [rows for rows in items if len(rows) > 1]
    a, b = [r[0]["match"] for r in double], [r[1]["match"] for r in double]
    cases = [rows[0]["case"] for rows in double]
    figures = {"agreement": None, "cohen_kappa": None}
    if len(set(cases)) > 1:
        report = inter_annotator_report([a, b], groups=cases, n_resamples=n_resamples, seed=seed)
        figures = {k: report[k] for k in figures}
    both = [rows for rows in double if rows[0]["match"] and rows[1]["match"]]
    overlapping = [
        r[0]["span_start"] < r[1]["span_end"] and r[1]["span_start"] < r[0]["span_end"]
        for r in both
    ]
    return {
        "items": len(double),
        "cases": len(set(cases)),
        "agreed": sum(x == y for x, y in zip(a, b)),
        "both_match": len(both),
        "overlapping_span": sum(overlapping),
    } | figures


def content_sets_summary(
    rows: list[dict] | None = None, *, n_resamples: int = 2000, seed: int = 0
) -> dict:
    """Counts and inter-annotator figures of each set, and of all sets pooled, from the
    label rows alone (no text needed): the figures of the sets' dataset card.

    Args:
        rows: label rows (default: the label file's, :func:`read_content_rows`).
        n_resamples, seed: the case-level bootstrap's (:func:`editf1.stats.bootstrap`).

    Returns:
        ``{"sets": {name: figures} (in :data:`CONTENT_SETS` order), "all": figures}``;
        a set's figures are ``primary`` (its primary annotator), ``items``, ``cases``,
        ``matches``, ``match_rate`` (the primary annotator's matches over items, a
        fraction rounded to 4 decimals; ``None`` without items), ``reasons`` (NO MATCH
        reason -> items, in :data:`REASONS` order, ``"none given"`` last, only those
        given) and ``double_labelled``: on the items the second annotator also
        labelled, ``items``, ``cases``, ``agreed``, ``both_match``,
        ``overlapping_span`` (items both matched whose two spans share a character)
        and ``agreement`` / ``cohen_kappa`` (:class:`~editf1.stats.Estimate`, 95%
        percentile CI over cases, via
        :func:`editf1.validation.agreement.inter_annotator_report`; ``None`` with
        fewer than two double-labelled cases). ``all`` has ``items``, ``cases``,
        ``matches``, ``match_rate`` and ``double_labelled`` of every set's items
        together (resampled by case across sets).

    Raises:
        ValueError: from the bootstrap (e.g. ``n_resamples < 1``).
    """
    groups = _groups(read_content_rows() if rows is None else rows)
    sets = {}
    for name, items in groups.items():
        primary = [rows[0] for rows in items]
        matches = sum(r["match"] for r in primary)
        reasons = Counter(r["reason"] or "none given" for r in primary if not r["match"])
        sets[name] = {
            "primary": CONTENT_SETS[name]["primary"],
            "items": len(items),
            "cases": len({r["case"] for r in primary}),
            "matches": matches,
            "match_rate": round(matches / len(items), 4) if items else None,
            "reasons": {k: reasons[k] for k in (*REASONS, "none given") if reasons[k]},
            "double_labelled": _double_labelled(items, n_resamples, seed),
        }
    pooled = [rows for items in groups.values() for rows in items]
    matches = sum(rows[0]["match"] for rows in pooled)
    return {
        "sets": sets,
        "all": {
            "items": len(pooled),
            "cases": len({rows[0]["case"] for rows in pooled}),
            "matches": matches,
            "match_rate": round(matches / len(pooled), 4) if pooled else None,
            "double_labelled": _double_labelled(pooled, n_resamples, seed),
        },
    }


def _cell(value) -> str:
    return "–" if value is None else str(value)


def _agreement_row(name: str, d: dict) -> str:
    return (
        f"| {name} | {d['items']} ({d['cases']}) | {d['agreed']} | {_cell(d['agreement'])} | "
        f"{_cell(d['cohen_kappa'])} | {d['both_match']} | {d['overlapping_span']} |"
    )


def content_sets_markdown(summary: dict) -> str:
    """The figures block of the sets' dataset card: Markdown tables of
    :func:`content_sets_summary`.

    Args:
        summary: what :func:`content_sets_summary` returned.

    Returns:
        Markdown text (tables with a bold title line each), ending in a newline.
    """
    sets, pooled = summary["sets"], summary["all"]
    header = ["set", "reference sentences", "draft", "primary", "items", "cases", "matches"]
    out = ["**Items per set** (one item is one reference sentence against one draft)", ""]
    out += ["| " + " | ".join([*header, "match rate"]) + " |", "|" + "---|" * (len(header) + 1)]
    for name, s in sets.items():
        spec = CONTENT_SETS[name]
        out.append(
            f"| `{name}` | {spec['reference']} | {spec['draft']} | {s['primary']} | "
            f"{s['items']} | {s['cases']} | {s['matches']} | {_cell(s['match_rate'])} |"
        )
    out.append(
        f"| all | | | | {pooled['items']} | {pooled['cases']} | {pooled['matches']} | "
        f"{_cell(pooled['match_rate'])} |"
    )
    given = {r for s in sets.values() for r in s["reasons"]}
    out += ["", "**NO MATCH reasons** (the primary annotator's)", ""]
    out += ["| reason | " + " | ".join(f"`{n}`" for n in sets) + " |"]
    out += ["|---|" + "---|" * len(sets)]
    out += [
        f"| {r} | " + " | ".join(str(s["reasons"].get(r, 0)) for s in sets.values()) + " |"
        for r in (*REASONS, "none given")
        if r in given
    ]
    title = f"primary against the second annotator, `{SECOND_ANNOTATOR}`, on the items both"
    header = ["set", "items (cases)", "labelled alike", "agreement [95% CI]"]
    header += ["Cohen's kappa [95% CI]", "both matched", "overlapping spans"]
    out += ["", f"**Inter-annotator agreement** ({title} labelled)", ""]
    out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += [_agreement_row(f"`{name}`", s["double_labelled"]) for name, s in sets.items()]
    out.append(_agreement_row("all", pooled["double_labelled"]))
    return "\n".join(out) + "\n"


def content_set_gold_rows(
    data_root: str | Path, name: str, *, annotator: str | None = None
) -> tuple[list[dict], list[dict], list[str]]:
    """One set's labels as pairs and gold-label rows (:mod:`editf1.gold.labels`), one pair
    per (reference text, draft) whose every sentence is labelled
    (:func:`research.team_labels.gold_rows_from_labels`; a K-QA record's
    statements are its reference, one per line).

    Args:
        data_root: the folder holding ``oncqa/``, ``kqa/`` and ``expertqa/``.
        name: one of :data:`CONTENT_SETS`.
        annotator: whose labels (default the set's primary annotator).

    Returns:
        ``(pairs, gold_rows, incomplete)``; pair ids are
        ``"<set>:<file>:<record>|<draft file>:<draft record>"``.

    Raises:
        KeyError: for an unknown set.
        FileNotFoundError, LabelTextError: as the loaders.
    """
    who = annotator or CONTENT_SETS[name]["primary"]
    rows = [r for r in read_content_rows() if r["set"] == name and r["annotator"] == who]

    def key(row: dict) -> str:
        return f"{name}:{row['file']}:{row['record']}|{row['draft_file']}:{row['draft_record']}"

    return gold_rows_from_labels(data_root, rows, key=key)
