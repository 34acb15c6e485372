"""The second round of content-match labels (issue 20 §1): the converter from the
annotators' files, rows without text, the loaders' hash checks and list fields, the
per-set figures by hand, and the dataset card against the shipped rows."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard

from research import content_labels
from research.content_labels import (
    CONTENT_SETS,
    ROW_FIELDS,
    LabelTextError,
    content_sets_markdown,
    content_sets_summary,
    convert_annotations,
    load_content_sets,
    read_content_rows,
)
from research.team_labels import field_text

ROOT = Path(__file__).resolve().parents[1]
CARD = ROOT / "datasets" / "team_content_labels_v2" / "README.md"
GUIDE = ROOT.parent / "shared" / "ANNOTATION_GUIDE.md"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _block(text: str) -> str:
    found = re.search(r"<!-- figures[^>]*-->\n\n(.*?)\n<!-- end figures -->", text, re.S)
    assert found, "no figures block"
    return found.group(1)


# -- the converter: annotators' files (with text) -> rows without text -------------------

SENTENCE = "Take 20 mg daily."
DRAFT = "Take 20 mg daily. Rest. Rest."
OTHER_DRAFT = "Drink water."


def _item(draft_record: str, draft: str, start: int = 0) -> dict:
    return {
        "item_id": f"kqa_statements|q.jsonl|0|Must_have[0]|{start}|17|n.csv|{draft_record}|answer",
        "set": "kqa_statements",
        "case": "kqa:kqa0",
        "source": "kqa",
        "file": "questions_w_answers.jsonl",
        "record": "0",
        "field": "Must_have[0]",
        "start": start,
        "end": 17,
        "sha256": _sha(SENTENCE),
        "draft_file": "NLI_medical_annotator.csv",
        "draft_record": draft_record,
        "draft_field": "answer",
        "draft_sha256": _sha(draft),
        "sentence": SENTENCE,
        "draft": draft,
        "identical_in_draft": False,
        "second": True,
    }


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")


SETS = {"kqa_statements": {"primary": "team-e"}}


@pytest.fixture
def annotated(tmp_path):
    """One sentence against two drafts; the primary annotator corrects item 0 by
    appending; the second annotator labels item 1 only."""
    items = [_item("0", DRAFT), _item("1", OTHER_DRAFT)]
    ids = [i["item_id"] for i in items]
    _write_jsonl(tmp_path / "items" / "kqa_statements.jsonl", items)
    _write_jsonl(
        tmp_path / "out" / "kqa_statements.team-e.jsonl",
        [
            {"item_id": ids[0], "annotator": "team-e", "match": False, "span": None},
            {"item_id": ids[1], "annotator": "team-e", "match": False, "span": None,
             "reason": "absent"},
            {"item_id": ids[0], "annotator": "team-e", "match": True, "span": SENTENCE},
        ],
    )  # fmt: skip
    _write_jsonl(
        tmp_path / "out" / "kqa_statements.team-f.jsonl",
        [{"item_id": ids[1], "annotator": "team-f", "match": True, "span": "water."}],
    )
    return tmp_path


def test_converter_rows_by_hand(annotated):
    rows = convert_annotations(annotated / "items", annotated / "out", sets=SETS)
    assert [tuple(r) for r in rows] == [ROW_FIELDS] * 3
    assert [(r["draft_record"], r["annotator"], r["match"]) for r in rows] == [
        ("0", "team-e", True),  # the appended line wins
        ("1", "team-e", False),
        ("1", "team-f", True),
    ]
    assert (rows[0]["span_start"], rows[0]["span_end"], rows[0]["reason"]) == (0, 17, None)
    assert (rows[1]["span_start"], rows[1]["reason"]) == (None, "absent")
    assert (rows[2]["span_start"], rows[2]["span_end"]) == (6, 12)  # "water." in OTHER_DRAFT
    text = json.dumps(rows)
    assert "Take" not in text and "water" not in text and "Rest" not in text


def _relabel(folder: Path, label: dict) -> None:
    item_id = _item("0", DRAFT)["item_id"]
    path = folder / "out" / "kqa_statements.team-e.jsonl"
    _write_jsonl(path, [{"item_id": item_id, "annotator": "team-e"} | label])


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ({"match": True, "span": "Rest."}, r"occurs 2 times in the draft \(give span_start\)"),
        ({"match": True, "span": "Rest.", "span_start": 19}, "not verbatim in the draft at"),
        ({"match": True, "span": "Walk."}, "occurs 0 times"),
        ({"match": True, "span": ""}, "a match needs field span"),
        ({"match": "yes", "span": None}, "field match must be true or false"),
        ({"match": False, "span": None, "reason": "vague"}, "field reason must be one of"),
        ({"match": False, "span": "Rest."}, "a NO MATCH has field span null"),
    ],
)
def test_converter_refuses_bad_labels_naming_file_and_line(annotated, label, message):
    _relabel(annotated, label)
    with pytest.raises(ValueError, match=message) as caught:
        convert_annotations(annotated / "items", annotated / "out", sets=SETS)
    assert "kqa_statements.team-e.jsonl line 1" in str(caught.value)
    assert "Take 20" not in str(caught.value)


def test_converter_takes_a_repeated_span_at_its_start(annotated):
    _relabel(annotated, {"match": True, "span": "Rest.", "span_start": 24})
    (row, *_) = convert_annotations(annotated / "items", annotated / "out", sets=SETS)
    assert (row["span_start"], row["span_end"]) == (24, 29)


def test_converter_refuses_unknown_items_and_other_annotators(annotated):
    path = annotated / "out" / "kqa_statements.team-f.jsonl"
    _write_jsonl(path, [{"item_id": "nope", "annotator": "team-f", "match": False}])
    with pytest.raises(ValueError, match=r"team-f\.jsonl line 1: unknown item_id"):
        convert_annotations(annotated / "items", annotated / "out", sets=SETS)
    item_id = _item("0", DRAFT)["item_id"]
    _write_jsonl(path, [{"item_id": item_id, "annotator": "team-e", "match": False}])
    with pytest.raises(ValueError, match="field annotator is not 'team-f'"):
        convert_annotations(annotated / "items", annotated / "out", sets=SETS)


# -- the loader: list fields, both hashes, one item per (sentence, draft) -----------------


@pytest.fixture
def tiny_data(tmp_path, annotated, monkeypatch):
    """A K-QA folder whose record 0 holds the statement as ``Must_have[1]`` and an NLI
    file with both drafts; the shipped rows replaced by the converted ones (moved to
    ``Must_have[1]``)."""
    kqa = tmp_path / "data" / "kqa"
    _write_jsonl(kqa / "questions_w_answers.jsonl", [{"Must_have": ["Rest.", SENTENCE]}])
    with (kqa / "NLI_medical_annotator.csv").open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["Question", "answer"], ["q", DRAFT], ["q", OTHER_DRAFT]])
    rows = convert_annotations(annotated / "items", annotated / "out", sets=SETS)
    rows = [r | {"field": "Must_have[1]"} for r in rows]
    monkeypatch.setattr(content_labels, "read_content_rows", lambda: rows)
    return tmp_path / "data", rows


def test_loader_one_item_per_sentence_and_draft(tiny_data):
    data, _ = tiny_data
    items = load_content_sets(data, ["kqa_statements"])["kqa_statements"]
    assert [(i.prediction, i.match, i.span, i.span_start, i.annotators) for i in items] == [
        (DRAFT, True, SENTENCE, 0, ()),
        (OTHER_DRAFT, False, None, None, (False, True)),
    ]
    assert {(i.reference, i.case, i.source) for i in items} == {
        (SENTENCE, "kqa:kqa0", "kqa/questions_w_answers.jsonl")
    }


def test_loader_checks_both_hashes_without_quoting_text(tiny_data, monkeypatch):
    data, rows = tiny_data
    for changed, where in (
        ({"field": "Must_have[0]"}, "field Must_have[0] [0:17] does not match its sha256"),
        ({"draft_record": "1"}, "the draft NLI_medical_annotator.csv record 1 does not match"),
        ({"field": "Must_have[2]"}, "no record '0' with field 'Must_have[2]'"),
    ):
        monkeypatch.setattr(content_labels, "read_content_rows", lambda c=changed: [rows[0] | c])
        with pytest.raises(LabelTextError, match=re.escape(where)) as caught:
            load_content_sets(data, ["kqa_statements"])
        assert "Take" not in str(caught.value) and "Rest" not in str(caught.value)


def test_field_text_reads_list_elements(tiny_data):
    data, _ = tiny_data
    assert field_text(data, "kqa", "questions_w_answers.jsonl", "0", "Must_have[0]") == "Rest."
    with pytest.raises(LabelTextError, match="field 'Must_have'"):  # a list, not text
        field_text(data, "kqa", "questions_w_answers.jsonl", "0", "Must_have")


# -- the figures by hand ------------------------------------------------------------------


def _row(record: str, annotator: str, match: bool, case: str, span=(None, None)) -> dict:
    return {
        "set": "oncqa_other_reply",
        "file": "stage1.csv",
        "record": record,
        "field": "response",
        "start": 0,
        "end": 5,
        "draft_file": "stage1.csv",
        "draft_record": "9",
        "draft_field": "response",
        "case": case,
        "annotator": annotator,
        "match": match,
        "span_start": span[0],
        "span_end": span[1],
        "reason": None if match else "absent",
    }


def test_summary_by_hand():
    """Four items in two cases, the primary (team-d) matched items 0 and 1; team-f
    labelled items 0-2 and differs on item 1: agreement 2/3; kappa: p_o = 2/3, team-d
    matched 2/3 and team-f 1/3, p_e = 2/3 * 1/3 + 1/3 * 2/3 = 4/9, kappa = (2/3 - 4/9)
    / (1 - 4/9) = 0.4. Item 4 has only a second label: left out."""
    rows = [
        _row("0", "team-f", True, "oncqa:1", (3, 9)),
        _row("0", "team-d", True, "oncqa:1", (0, 4)),
        _row("1", "team-d", True, "oncqa:1", (0, 4)),
        _row("1", "team-f", False, "oncqa:1"),
        _row("2", "team-d", False, "oncqa:2"),
        _row("2", "team-f", False, "oncqa:2"),
        _row("3", "team-d", False, "oncqa:2") | {"reason": None},
        _row("4", "team-f", True, "oncqa:2", (0, 4)),
    ]
    summary = content_sets_summary(rows, n_resamples=100)
    s = summary["sets"]["oncqa_other_reply"]
    assert (s["primary"], s["items"], s["cases"], s["matches"], s["match_rate"]) == (
        "team-d",
        4,
        2,
        2,
        0.5,
    )
    assert s["reasons"] == {"absent": 1, "none given": 1}
    d = s["double_labelled"]
    assert (d["items"], d["cases"], d["agreed"], d["both_match"], d["overlapping_span"]) == (
        3,
        2,
        2,
        1,
        1,
    )
    assert d["agreement"].value == pytest.approx(2 / 3)
    assert d["cohen_kappa"].value == pytest.approx(0.4)
    assert summary["sets"]["kqa_statements"]["items"] == 0
    assert summary["sets"]["kqa_statements"]["double_labelled"]["cohen_kappa"] is None
    assert summary["all"]["items"] == 4 and summary["all"]["double_labelled"]["agreed"] == 2
    markdown = content_sets_markdown(summary)
    assert "| `oncqa_other_reply` | 3 (2) | 2 | 0.667 [" in markdown
    assert "| `kqa_statements` | 0 (0) | 0 | – | – | 0 | 0 |" in markdown
    assert "| none given | 1 | 0 | 0 | 0 | 0 | 0 |" in markdown


# -- the shipped rows, the real data and the card -----------------------------------------


def test_shipped_rows_hold_only_references_and_labels():
    rows = read_content_rows()
    assert rows and all(tuple(r) == ROW_FIELDS for r in rows)
    hashes = [r[k] for r in rows for k in ("sha256", "draft_sha256")]
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes)
    assert all(r["end"] > r["start"] >= 0 for r in rows)
    assert all((r["span_start"] is None) == (not r["match"]) for r in rows)
    assert {r["set"] for r in rows} == set(CONTENT_SETS)


def test_real_sets_load_with_every_hash_verified(shared_data):
    sets = load_content_sets(shared_data)
    counts = {name: (len(v), sum(i.match for i in v)) for name, v in sets.items()}
    assert counts == {
        "oncqa_other_reply": (248, 39),
        "oncqa_edited_draft": (584, 117),
        "oncqa_edit_vs_draft": (1046, 973),
        "kqa_statements": (211, 47),
        "kqa_free_form": (134, 21),
        "expertqa_revision": (640, 542),
        "kqa_physician": (1586, 1507),
    }
    for items in sets.values():
        for i in items:
            assert (i.span is None) == (not i.match)
            assert not i.match or i.prediction[i.span_start :].startswith(i.span)
    assert sum(bool(i.annotators) for v in sets.values() for i in v) >= 200


@pytest.fixture(scope="module")
def quick_summary() -> dict:
    return content_sets_summary(n_resamples=100)


def test_card_figures_except_the_cis_are_the_summarys(quick_summary):
    ci = re.compile(r" \[-?\d\.\d{3}, -?\d\.\d{3}\]")
    card = _block(CARD.read_text(encoding="utf-8"))
    assert ci.sub("", card) == ci.sub("", content_sets_markdown(quick_summary))


@pytest.mark.slow  # 14 x 2,000 bootstrap statistics, about a minute on two busy cores
def test_card_figures_are_the_summarys():
    card = _block(CARD.read_text(encoding="utf-8"))
    assert card == content_sets_markdown(content_sets_summary())


def test_card_metadata_sections_and_added_rules():
    card = DatasetCard.load(CARD)
    data = card.data.to_dict()
    assert data["license"] == "other" and data["size_categories"] == ["1K<n<10K"]
    assert set(data["source_datasets"]) >= {"AIM-Harvard/OncQA", "Itaymanes/K-QA"}
    for section in ("## Annotators", "## Annotation guide", "## Rules the annotators added"):
        assert section in card.text
    for section in ("## Stored by reference", "## Caveats", "## Licence", "## Citation"):
        assert section in card.text
    assert "not clinicians" in card.text
    rules = re.findall(r"^- (H\d) ([^.]+)\.", card.text, re.M)
    assert [r[0] for r in rules] == [f"H{k}" for k in range(1, 10)]
    assert rules[0][1] == "Contact versus visit" and rules[4][1] == "Span length"


@pytest.mark.skipif(not GUIDE.is_file(), reason=f"annotation guide {GUIDE} is absent")
def test_card_copies_the_guides_content_rules_in_full():
    guide = GUIDE.read_text(encoding="utf-8")
    card = " ".join(CARD.read_text(encoding="utf-8").split())
    for section in ("## Sentences", "## Content matches", "## How to store"):
        body = guide.split(section, 1)[1].split("\n", 1)[1].split("\n## ", 1)[0]
        for rule in body.strip().split("\n- "):
            assert " ".join(rule.split()) in card, rule[:60]


# -- one split by case across every set ---------------------------------------------------


def test_split_by_case_holds_a_case_out_in_every_set():
    from editf1.validation.labelled import ContentItem, case_split
    from research.content_splits import split_by_case

    def items(cases):
        return [ContentItem(c, "draft", "sentence", k % 2 == 0) for k, c in enumerate(cases)]

    onc = [f"oncqa:{k}" for k in range(10)]
    questions = {f"kqa:kqa{k}": f"question {k}" for k in range(10)}
    sets = {
        "team": items(onc),
        "kqa": items([f" question {k} " if k % 3 else f"question {k}" for k in range(10)]),
        "oncqa_other_reply": items(onc[::-1]),
        "kqa_statements": items(list(questions)),
        "expertqa_revision": items([f"expertqa:ex{k}" for k in range(10)]),
    }
    split = split_by_case(sets, questions)
    held = {c for c in onc if c in {sets["team"][i].case for i in split["team"][1]}}
    _, test = case_split(onc)  # the team split, independently
    assert held == {onc[i] for i in test} and len(held) == 4
    assert {sets["oncqa_other_reply"][i].case for i in split["oncqa_other_reply"][1]} == held
    kqa_held = {sets["kqa"][i].case.strip() for i in split["kqa"][1]}
    statements = {questions[sets["kqa_statements"][i].case] for i in split["kqa_statements"][1]}
    assert statements == kqa_held and len(kqa_held) == 4
    for name, (fit, out) in split.items():
        assert sorted([*fit, *out]) == list(range(10)), name
    with pytest.raises(ValueError, match="kqa_statements item 0: no K-QA question"):
        split_by_case(sets, {})
