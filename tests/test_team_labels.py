"""The team's label sets on real text: rows hold no text, loaders verify every hash, the
primary annotator's label is the item's, the counts and agreement of the dataset cards,
and the stage-2 content labels derived from oncologists' edits, checked by hand."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard

from editf1.validation.labelled import ContentItem
from research import team_labels
from research.stage2_labels import (
    Stage2Pair,
    critical_words,
    oncqa_stage2_content_items,
    stage2_markdown,
    stage2_pairs,
    stage2_summary,
)
from research.team_labels import (
    LabelTextError,
    label_set_summary,
    load_team_content_items,
    load_team_theme_items,
    read_label_rows,
    summary_markdown,
)

ROOT = Path(__file__).resolve().parents[1]
CARDS = {
    "theme_labels": ROOT / "datasets" / "team_theme_labels" / "README.md",
    "content_match_labels": ROOT / "datasets" / "team_content_labels" / "README.md",
}
GUIDE = ROOT.parent / "shared" / "ANNOTATION_GUIDE.md"
THEME_FIELDS = {"source", "file", "record", "field", "start", "end", "sha256", "case"}
THEME_FIELDS |= {"annotator", "theme"}
CONTENT_FIELDS = THEME_FIELDS - {"theme"} | {"match", "span_start", "span_end"}
CONTENT_FIELDS |= {"draft_file", "draft_record", "draft_field", "draft_sha256"}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])


def _block(text: str, marker: str) -> str:
    """The text between ``<!-- marker ... -->`` and ``<!-- end marker -->``."""
    found = re.search(rf"<!-- {marker}[^>]*-->\n\n(.*?)\n<!-- end {marker} -->", text, re.S)
    assert found, f"no {marker!r} block"
    return found.group(1)


# -- the label rows hold no text ---------------------------------------------------------


def test_label_rows_hold_only_references_and_labels():
    for name, fields in (("theme_labels", THEME_FIELDS), ("content_match_labels", CONTENT_FIELDS)):
        rows = read_label_rows(name)
        assert rows and all(set(r) == fields for r in rows), name
        assert all(re.fullmatch(r"[0-9a-f]{64}", r["sha256"]) for r in rows)
        assert all(r["end"] > r["start"] >= 0 for r in rows)


# -- the loaders on a tiny data folder: hashes and the primary annotator ------------------


def _theme_row(record: str, start: int, end: int, text: str, annotator: str, theme: str) -> dict:
    return {
        "source": "oncqa",
        "file": "stage1.csv",
        "record": record,
        "field": "response",
        "start": start,
        "end": end,
        "sha256": _sha(text),
        "case": "oncqa:7",
        "annotator": annotator,
        "theme": theme,
    }


REPLY = "Hi Ana,\nCall us today."


@pytest.fixture
def tiny_theme_labels(tmp_path, monkeypatch):
    """A data folder with one stage-1 reply and label rows on its two sentences: the
    second annotator's row first, so the order in the file does not decide."""
    _write_csv(tmp_path / "oncqa" / "stage1.csv", ["id", "response"], [["7", REPLY]])
    rows = [
        _theme_row("0", 8, 22, "Call us today.", "team-b", "Logistics"),
        _theme_row("0", 0, 7, "Hi Ana,", "team-a", "Other"),
        _theme_row("0", 8, 22, "Call us today.", "team-a", "Care coordination"),
    ]
    monkeypatch.setattr(team_labels, "read_label_rows", lambda name: rows)
    return tmp_path


def test_primary_annotators_label_is_the_items_label(tiny_theme_labels):
    items = load_team_theme_items(tiny_theme_labels)
    # items in the order of their first row; the primary annotator team-a wins a tie of two
    assert [(i.text, i.theme, i.annotators) for i in items] == [
        ("Call us today.", "Care coordination", ("Care coordination", "Logistics")),
        ("Hi Ana,", "Other", ()),
    ]
    assert {(i.case, i.source) for i in items} == {("oncqa:7", "oncqa/stage1.csv")}


def test_changed_text_raises_naming_file_and_record_without_quoting_it(tmp_path, monkeypatch):
    changed = "Hi Ana,\nCall us later."
    _write_csv(tmp_path / "oncqa" / "stage1.csv", ["id", "response"], [["7", changed]])
    row = _theme_row("0", 8, 22, "Call us today.", "team-a", "Logistics")
    monkeypatch.setattr(team_labels, "read_label_rows", lambda name: [row])
    with pytest.raises(LabelTextError) as caught:
        load_team_theme_items(tmp_path)
    message = str(caught.value)
    assert "oncqa/stage1.csv record 0 field response [8:22]" in message
    assert "Call us" not in message and "today" not in message


def test_a_missing_record_raises_naming_it(tmp_path, monkeypatch):
    _write_csv(tmp_path / "oncqa" / "stage1.csv", ["id", "response"], [["7", REPLY]])
    row = _theme_row("3", 8, 22, "Call us today.", "team-a", "Logistics")
    monkeypatch.setattr(team_labels, "read_label_rows", lambda name: [row])
    with pytest.raises(LabelTextError, match=r"oncqa/stage1.csv: no record '3' with field"):
        load_team_theme_items(tmp_path)


def test_a_tampered_copy_of_the_real_files_is_refused(shared_data, tmp_path):
    """One character of the first content label's sentence changed in a copy of
    ``stage1.csv`` (in tmp_path, never in the repository), then one of its draft."""
    row = read_label_rows("content_match_labels")[0]
    shutil.copytree(shared_data / "oncqa", tmp_path / "oncqa")
    path = tmp_path / "oncqa" / "stage1.csv"
    with path.open(newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    sentence = table[int(row["record"])]["response"][row["start"] : row["end"]]
    text = table[int(row["record"])]["response"]
    table[int(row["record"])]["response"] = text[: row["start"]] + "#" + text[row["start"] + 1 :]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    with pytest.raises(LabelTextError) as caught:
        load_team_content_items(tmp_path)
    message = str(caught.value)
    assert f"oncqa/stage1.csv record {row['record']} field response" in message
    assert sentence[:20] not in message and sentence[1:20] not in message


# -- the real label sets: every hash, counts and agreement --------------------------------


def test_real_label_sets_load_with_every_hash_verified(shared_data):
    themes = load_team_theme_items(shared_data)
    contents = load_team_content_items(shared_data)
    assert len(themes) == 856 and sum(bool(i.annotators) for i in themes) == 160
    assert len(contents) == 336 and sum(bool(i.annotators) for i in contents) == 70
    assert all(i.span in i.prediction for i in contents if i.match)
    assert all(i.span is None for i in contents if not i.match)
    assert {i.case.split(":")[0] for i in themes} == {"oncqa", "kqa", "expertqa"}


def test_labelled_sentences_are_the_splitters_and_cover_every_reply(shared_data, splitter):
    """The cards say so: each label is a SentenceSplitter sentence of its field, and every
    sentence of the 100 stage-1 replies has a theme and a content label."""
    from editf1.io import read_rows

    replies = read_rows(shared_data / "oncqa" / "stage1.csv", ["response"])
    sentences = {
        (str(i), s.start, s.end)
        for i, r in enumerate(replies)
        for s in splitter.split(r["response"])
    }
    assert len(replies) == 100
    for name in CARDS:
        rows = read_label_rows(name)
        labelled = {(r["record"], r["start"], r["end"]) for r in rows if r["file"] == "stage1.csv"}
        assert labelled == sentences, name
    for row in read_label_rows("theme_labels"):
        text = team_labels._records(str(shared_data), row["source"], row["file"])[row["record"]]
        spans = {(s.start, s.end) for s in splitter.split(text[row["field"]])}
        assert (row["start"], row["end"]) in spans, (row["file"], row["record"])


@pytest.fixture(scope="module")
def quick_summaries() -> dict:
    """Both summaries with 10 resamples: every figure but the CIs is that of 2,000."""
    return {name: label_set_summary(name, n_resamples=100) for name in CARDS}


def test_label_set_counts_are_pinned_change_detector(quick_summaries):
    """A change detector: the counts as they were when the label sets were committed
    (team-a's themes per source, team-b's themes and content labels, the 146/160 and
    68/70 items the two agreed on). They were said to match the annotators' notes, but
    no such notes are in the repository, so they are no independent source; that the
    summary counts the label rows correctly is checked by
    test_label_set_summary_counts_the_rows_as_read_with_json."""
    themes, content = quick_summaries["theme_labels"], quick_summaries["content_match_labels"]
    replies = themes["sources"]["oncqa/stage1.csv"]
    assert replies["items"] == 336 and replies["cases"] == 63
    assert replies["labels"]["Medical planning instruction"] == 106
    assert replies["labels"]["Symptom-related follow-up questions"] == 74
    assert replies["labels"]["Empathetic communication"] == 3
    drafts = themes["sources"]["oncqa/Master2.csv"]["labels"]
    assert (drafts["Other"], drafts["Care coordination"]) == (63, 29)
    public = [themes["sources"][s]["labels"] for s in team_labels.SOURCE_NAMES if "oncqa" not in s]
    assert sum(p["Medical assessment explanation"] for p in public) == 137
    assert sum(p["Medication-related follow-up questions"] for p in public) == 0
    assert themes["annotators"]["team-b"]["items"] == 160
    assert themes["annotators"]["team-b"]["labels"]["Symptom-related follow-up questions"] == 15
    assert (themes["items"], themes["cases"]) == (856, 63 + 96 + 66)
    assert content["annotators"]["team-a"]["labels"] == {"match": 71, "no_match": 265}
    assert content["annotators"]["team-b"]["labels"] == {"match": 18, "no_match": 52}
    double = themes["double_labelled"]
    assert (double["items"], double["agreed"]) == (160, 146)
    assert double["agreement"].value == 146 / 160
    assert round(double["cohen_kappa"].value, 3) == 0.888
    assert sum(double["disagreements"].values()) == 14
    double = content["double_labelled"]
    assert (double["items"], double["agreed"], double["disagreements"]) == (
        70,
        68,
        {("no_match", "match"): 2},
    )
    assert round(double["cohen_kappa"].value, 3) == 0.922
    assert (double["both_match"], double["same_span"], double["overlapping_span"]) == (16, 9, 15)


@pytest.mark.parametrize("name", list(CARDS))
def test_label_set_summary_counts_the_rows_as_read_with_json(name, quick_summaries):
    """Every count of the summary, worked out from the shipped JSON Lines file read with
    json alone: an item is one sentence (file, record, field, offsets), its label is
    team-a's, a second row is the second annotator's; kappa from scikit-learn."""
    from sklearn.metrics import cohen_kappa_score

    path = team_labels.LABEL_FILES[name]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def label(row):
        return row["theme"] if name == "theme_labels" else ["no_match", "match"][row["match"]]

    items: dict[tuple, dict] = {}
    for row in rows:
        key = (row["file"], row["record"], row["field"], row["start"], row["end"])
        items.setdefault(key, {})[row["annotator"]] = row
    summary = quick_summaries[name]
    assert (summary["items"], summary["cases"]) == (
        len(items),
        len({item["team-a"]["case"] for item in items.values()}),
    )
    by_source = defaultdict(list)
    for item in items.values():
        by_source[f"{item['team-a']['source']}/{item['team-a']['file']}"].append(item)
    assert set(summary["sources"]) == set(by_source)
    for source, members in by_source.items():
        got = summary["sources"][source]
        assert got["items"] == len(members)
        assert got["cases"] == len({item["team-a"]["case"] for item in members})
        assert got["double_labelled"] == sum(len(item) == 2 for item in members)
        counted = Counter(label(item["team-a"]) for item in members)
        assert {k: v for k, v in got["labels"].items() if v} == dict(counted), source
    for annotator in ("team-a", "team-b"):
        counted = Counter(label(r) for r in rows if r["annotator"] == annotator)
        got = summary["annotators"][annotator]
        assert got["items"] == sum(counted.values())
        assert {k: v for k, v in got["labels"].items() if v} == dict(counted), annotator
    double = [item for item in items.values() if len(item) == 2]
    first = [label(item["team-a"]) for item in double]
    second = [label(item["team-b"]) for item in double]
    got = summary["double_labelled"]
    assert (got["items"], got["agreed"]) == (len(double), sum(map(str.__eq__, first, second)))
    assert got["agreement"].value == pytest.approx(got["agreed"] / len(double))
    assert got["cohen_kappa"].value == pytest.approx(cohen_kappa_score(first, second))
    disagreements = Counter((a, b) for a, b in zip(first, second) if a != b)
    assert got["disagreements"] == dict(disagreements)
    if name == "content_match_labels":
        both = [item for item in double if item["team-a"]["match"] and item["team-b"]["match"]]
        spans = [
            [(item[a]["span_start"], item[a]["span_end"]) for a in ("team-a", "team-b")]
            for item in both
        ]
        assert got["both_match"] == len(both)
        assert got["same_span"] == sum(a == b for a, b in spans)
        assert got["overlapping_span"] == sum(a[0] < b[1] and b[0] < a[1] for a, b in spans)


def test_summary_of_a_tiny_label_set_by_hand(tiny_theme_labels):
    """One double-labelled item where the two disagree: agreement 0; kappa 0 because
    the second annotator's one label makes chance agreement equal observed agreement
    (p_o = 0, p_e = 1 * 0 = 0 → kappa = 0)."""
    summary = label_set_summary("theme_labels", n_resamples=100)
    assert summary["items"] == 2 and summary["cases"] == 1
    source = summary["sources"]["oncqa/stage1.csv"]
    assert (source["field"], source["items"], source["double_labelled"]) == ("response", 2, 1)
    assert source["labels"]["Care coordination"] == 1 and source["labels"]["Other"] == 1
    assert summary["annotators"]["team-b"] == {
        "items": 1,
        "labels": {t: int(t == "Logistics") for t in team_labels.THEMES},
    }
    double = summary["double_labelled"]
    assert (double["items"], double["cases"], double["agreed"]) == (1, 1, 0)
    assert double["agreement"].value == 0.0 and double["cohen_kappa"].value == 0.0
    assert double["disagreements"] == {("Care coordination", "Logistics"): 1}
    markdown = summary_markdown(summary)
    assert (
        "| OncQA oncologists' replies | `oncqa/stage1.csv` | `response` | 2 | 1 | 1 |" in markdown
    )
    assert "| Care coordination | Logistics | 1 |" in markdown


# -- the dataset cards -------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CARDS))
def test_cards_metadata_and_sections(name):
    card = DatasetCard.load(CARDS[name])
    data = card.data.to_dict()
    assert data["license"] == "other" and data["license_name"]
    assert "AIM-Harvard/OncQA" in data["source_datasets"]
    assert data["task_categories"] == ["text-classification"]
    assert data["pretty_name"] and "edit-f1" in data["tags"]
    for section in ("## Annotators", "## Annotation guide", "## Rules the annotators added"):
        assert section in card.text, (name, section)
    for section in ("## Stored by reference", "## Caveats", "## Licence", "## Citation"):
        assert section in card.text, (name, section)
    assert "not clinicians" in card.text and "0.842" in card.text and "0.651" in card.text


@pytest.mark.parametrize("name", list(CARDS))
def test_cards_quote_the_kqa_physicians_ceiling_of_the_results_file(name):
    """The card's K-QA ceiling is a generated figure (research.docs_tables; fresh by
    tests/test_docs.py), the one of the content judges' results file."""
    results = ROOT / "benchmarks" / "results" / "content_judge_real.json"
    ceiling = json.loads(results.read_text(encoding="utf-8"))["ceiling"]["kqa"]
    figures = [
        f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"
        for e in (ceiling["agreement"], ceiling["cohen_kappa"])
    ]
    card = CARDS[name].read_text(encoding="utf-8")
    quoted = f"agreement {figures[0]}, Cohen's kappa {figures[1]}"
    assert f"<!-- figure: kqa-ceiling -->{quoted}<!-- end figure -->" in card


@pytest.mark.parametrize("name", list(CARDS))
def test_cards_figures_except_the_cis_are_the_summarys(name, quick_summaries):
    ci = re.compile(r" \[-?\d\.\d{3}, -?\d\.\d{3}\]")
    card = _block(CARDS[name].read_text(encoding="utf-8"), "figures")
    assert ci.sub("", card) == ci.sub("", summary_markdown(quick_summaries[name]))


@pytest.mark.slow  # 2 x 4,000 bootstrap statistics, about 10 s on two cores
@pytest.mark.parametrize("name", list(CARDS))
def test_cards_figures_are_the_summarys(name):
    card = _block(CARDS[name].read_text(encoding="utf-8"), "figures")
    assert card == summary_markdown(label_set_summary(name))


@pytest.mark.skipif(not GUIDE.is_file(), reason=f"annotation guide {GUIDE} is absent")
@pytest.mark.parametrize(
    ("name", "sections"),
    [
        ("theme_labels", ("## Sentences", "## Themes", "## How to store")),
        ("content_match_labels", ("## Sentences", "## Content matches", "## How to store")),
    ],
)
def test_cards_copy_the_guides_rules_in_full(name, sections):
    guide = GUIDE.read_text(encoding="utf-8")
    card = " ".join(CARDS[name].read_text(encoding="utf-8").split())
    for section in sections:
        body = guide.split(section, 1)[1].split("\n", 1)[1].split("\n## ", 1)[0]
        for rule in body.strip().split("\n- "):  # each paragraph, table or rule
            assert " ".join(rule.split()) in card, (name, rule[:60])


# -- stage-2 pairs for free --------------------------------------------------------------


def test_critical_words_by_category():
    assert sorted(critical_words("Take 2.5 mg twice daily for 3 days.").elements()) == [
        "2.5",
        "3",
        "daily",
        "days",
        "mg",
        "twice",
    ]
    assert sorted(critical_words("You don't need it, not now, never.").elements()) == [
        "don't",
        "never",
        "not",
    ]
    assert sorted(critical_words("Continue, then increasing; stopped or held.").elements()) == [
        "continue",
        "held",
        "increasing",
        "stopped",
    ]
    # INN stems (omeprazole, lisinopril, pembrolizumab) and named drugs and regimens
    words = critical_words("Omeprazole, lisinopril, pembrolizumab, aspirin and FOLFOX.")
    assert sorted(words) == ["aspirin", "folfox", "lisinopril", "omeprazole", "pembrolizumab"]
    assert critical_words("Please schedule a visit with your doctor.") == {}
    assert critical_words("") == {}


DRAFT = (
    "Dear Ana,\n\nThank you for your message. Please continue your omeprazole as prescribed. "
    "Take 20 mg daily. Omeprazole can help with heartburn. Avoid spicy food. "
    "Call us if it worsens."
)


def test_stage2_pairs_by_hand():
    edited = (
        "Dear Ana,\n\nPlease call us if it worsens. "  # moved (and reworded): left out
        "Please increase your omeprazole. "  # direction: NO MATCH
        "Take 40 mg daily. "  # dose: NO MATCH
        "Omeprazole can really help with heartburn. "  # no critical change: left out
        "Do not eat any spicy or fatty food at all. "  # under half the words alike: left out
        "Thank you for your message. "  # moved, identical: match
        "We will see you on Monday."  # inserted: left out
    )
    assert stage2_pairs(DRAFT, edited) == [
        Stage2Pair("Dear Ana,", "Dear Ana,", True),
        Stage2Pair(
            "Please increase your omeprazole.",
            "Please continue your omeprazole as prescribed.",
            False,
        ),
        Stage2Pair("Take 40 mg daily.", "Take 20 mg daily.", False),
        Stage2Pair("Thank you for your message.", "Thank you for your message.", True),
    ]


def test_stage2_negation_and_drug_changes_are_no_match():
    draft = "Take omeprazole daily. This is serious."
    edited = "Take pantoprazole daily. This is not serious."
    assert [(p.reference, p.match) for p in stage2_pairs(draft, edited)] == [
        ("Take pantoprazole daily.", False),
        ("This is not serious.", False),
    ]
    assert stage2_pairs(draft, draft) == [
        Stage2Pair(s, s, True) for s in ("Take omeprazole daily.", "This is serious.")
    ]
    assert stage2_pairs("", "") == [] and stage2_pairs(draft, "") == []


def test_stage2_known_limitation_a_reworded_negation_is_no_match():
    """'Avoid' reworded as 'do not': half the words alike and a negation added."""
    pairs = stage2_pairs("Avoid spicy food.", "Do not eat spicy food.")
    assert pairs == [Stage2Pair("Do not eat spicy food.", "Avoid spicy food.", False)]


def test_stage2_items_from_a_tiny_file(tmp_path):
    """Two oncologists edit the draft of case 7: the sentence both kept is one item."""
    header = ["id", "raw_response", "doc_change", "edit_distance", "q3", "q5"]
    edit_1 = DRAFT.replace("Take 20 mg daily.", "Take 40 mg daily.")
    edit_2 = DRAFT.replace("Avoid spicy food. ", "")
    _write_csv(
        tmp_path / "oncqa" / "stage2.csv",
        header,
        [["7", DRAFT, edit_1, "1", "ok", "No harm"], ["7", DRAFT, edit_2, "18", "ok", ""]],
    )
    items = oncqa_stage2_content_items(tmp_path)
    draft_sentences = 7
    assert len(items) == draft_sentences + 1  # 7 kept sentences once, 1 NO MATCH
    assert {(i.case, i.source, i.prediction) for i in items} == {
        ("oncqa:7", "oncqa/stage2.csv", DRAFT)
    }
    assert [i for i in items if not i.match] == [
        ContentItem("oncqa:7", DRAFT, "Take 40 mg daily.", False, None, (), "oncqa/stage2.csv")
    ]
    assert all(i.span == i.reference for i in items if i.match)


def test_stage2_on_the_real_file_case_12(shared_data):
    """OncQA case 12, second oncologist (row 12-2): "continue taking your omeprazole as
    prescribed" became "increasing your dose of omeprazole": NO MATCH."""
    from editf1.builders.readers import oncqa_rows

    row = next(r for r in oncqa_rows(shared_data / "oncqa", "edited") if r["id"] == "12-2")
    changed = [p for p in stage2_pairs(row["prediction"], row["reference"]) if not p.match]
    assert len(changed) == 1
    assert "increasing your dose of omeprazole" in changed[0].reference
    assert "continue taking your omeprazole as prescribed" in changed[0].draft_sentence
    items = oncqa_stage2_content_items(shared_data)
    case_12 = [i for i in items if i.case == "oncqa:12" and not i.match]
    assert [i.reference for i in case_12] == [changed[0].reference]


def test_content_cards_stage2_figures_are_the_real_files(shared_data):
    summary = stage2_summary(shared_data)
    assert (summary["edits"], summary["cases"]) == (100, 63)
    assert summary["items"] == summary["match"] + summary["no_match"]
    card = CARDS["content_match_labels"].read_text(encoding="utf-8")
    assert _block(card, "stage-2 figures") == stage2_markdown(summary)


#: Every team label set's card and the label file its ``configs`` name (in its data/).
LABEL_FILES = {
    "team_theme_labels": "theme_labels.jsonl",
    "team_content_labels": "content_match_labels.jsonl",
    "team_content_labels_v2": "content_labels_v2.jsonl",
}


@pytest.mark.parametrize("folder", list(LABEL_FILES))
def test_each_label_card_loads_its_rows_and_gives_their_size(folder, tmp_path, monkeypatch):
    """datasets.load_dataset on the card's folder (offline, from the repository root)
    reads the label file beside it, the one the loaders read, through the card's configs,
    row for row; the card's size category is the Hub's for that many rows."""
    import datasets

    from editf1.builders.hub import size_category
    from research.content_labels import LABEL_FILE

    shipped = ROOT / "datasets" / folder / "data" / LABEL_FILES[folder]
    loaded_by = {
        "team_theme_labels": team_labels.LABEL_FILES["theme_labels"],
        "team_content_labels": team_labels.LABEL_FILES["content_match_labels"],
        "team_content_labels_v2": LABEL_FILE,
    }
    assert loaded_by[folder] == shipped
    rows = [json.loads(line) for line in shipped.read_text(encoding="utf-8").splitlines()]
    card = DatasetCard.load(ROOT / "datasets" / folder / "README.md")
    assert card.data.size_categories == [size_category(len(rows))]
    assert f"# {len(rows):,} rows" in card.text
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    loaded = datasets.load_dataset(
        f"datasets/{folder}", split="test", cache_dir=str(tmp_path / "cache")
    )
    assert loaded.num_rows == len(rows)
    assert loaded[0]["sha256"] == rows[0]["sha256"] and loaded[-1]["case"] == rows[-1]["case"]
