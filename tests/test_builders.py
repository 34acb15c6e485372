"""Dataset builders on small exports written here: schema, validation errors naming file,
row and field, reproducible splits, annotation builders, Hub-ready folders and cards,
privacy (no network, private uploads only), and ``edit-f1`` on a dataset split."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path
from typing import ClassVar

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCard

from editf1.builders import BUILDER_NAMES, ExportError, builder_class, load_builder, load_split
from editf1.builders.exports import UnusedColumnsWarning, assign_splits
from editf1.builders.hub import card_configs, render_card, size_category, write_hub_folder
from editf1.builders.push import push_to_hub
from editf1.builders.readers import demo_rows
from editf1.builders.schema import CASE_FEATURES, PAIR_FEATURES, case_pairs
from editf1.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore::editf1.builders.exports.UnusedColumnsWarning")

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO / "datasets"
FAST = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]

#: The hospital's own column names -> standard fields.
COLUMN_MAP = {
    "message_id": "MSG_ID",
    "message": "PATIENT_TEXT",
    "response": "REPLY",
    "annotator_id": "DOC",
    "draft": "AI_DRAFT",
    "draft_system": "MODEL",
    "age": "AGE",
    "problems": "PROBLEMS",
    "split": "SPLIT",
}
HEADER = ["MSG_ID", "PATIENT_TEXT", "REPLY", "DOC", "AI_DRAFT", "MODEL", "AGE", "PROBLEMS"]
HEADER += ["SPLIT", "MRN"]
COUGH = "I have a dry cough since the new blood pressure pill."
DRAFT = "A dry cough can be a side effect of lisinopril. Please call us."
ROWS = [
    ["1", COUGH, "Stop lisinopril and start losartan 50 mg.", "dr-a", DRAFT, "gpt-x", "58",
     "HTN; prediabetes", "test", "MRN-001"],
    ["1", COUGH, "Switch to losartan. Check your BP in 2 weeks.", "dr-b", DRAFT, "gpt-x", "58",
     "HTN; prediabetes", "test", "MRN-001"],
    ["2", "Can I get a metformin refill?", "Sent a 90-day refill to your pharmacy.", "dr-a",
     "I sent your refill.", "gpt-x", "63", "T2DM", "train", "MRN-002"],
    ["3", "Rash after amoxicillin, what now?", "Stop amoxicillin and send a photo.", "dr-c",
     "Please stop the antibiotic and send us a photo.", "gpt-x", "34", "", "train", "MRN-003"],
]  # fmt: skip


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def records(header=HEADER, rows=ROWS) -> list[dict]:
    return [dict(zip(header, row)) for row in rows]


def export_kwargs(tmp_path: Path, name: str, **extra) -> dict:
    return {
        "data_dir": str(tmp_path),
        "export_files": (name,),
        "column_map": COLUMN_MAP,
        "cache_dir": str(tmp_path / "cache"),
        **extra,
    }


def build(name: str, config: str, **kwargs) -> datasets.DatasetDict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedColumnsWarning)
        builder = load_builder(name, config, **kwargs)
        builder.download_and_prepare()
    return builder.as_dataset()


# -- schema --------------------------------------------------------------------------
def test_case_pairs_pair_every_draft_with_every_written_reply():
    case = {
        "id": "m1",
        "message": "m",
        "ehr_summary": None,
        "drafts": [{"system": "a", "text": "A."}, {"system": "b", "text": "B."}],
        "responses": [
            {"annotator_id": "x", "text": "X.", "draft_index": None},
            {"annotator_id": "y", "text": "A, edited.", "draft_index": 0},
        ],
    }
    reply = case_pairs(case, "reply")
    assert [(p["id"], p["system"], p["reference"]) for p in reply] == [
        ("m1-1-d1", "a", "X."),
        ("m1-1-d2", "b", "X."),
    ]
    assert [(p["id"], p["prediction"]) for p in case_pairs(case, "edited")] == [("m1-2", "A.")]
    assert set(reply[0]) == set(PAIR_FEATURES)
    case["responses"][1]["draft_index"] = 5
    with pytest.raises(ValueError, match="response 2 edits draft 5, but the case has 2"):
        case_pairs(case, "edited")


def test_assign_splits_is_exact_reproducible_and_order_free():
    ids = [f"m{i:02d}" for i in range(10)]
    fractions = {"train": 0.8, "validation": 0.1, "test": 0.1}
    first = assign_splits(ids, fractions, seed=0)
    assert sorted(first.values()).count("train") == 8
    assert sorted(first.values()).count("test") == 1
    assert assign_splits(list(reversed(ids)), fractions, seed=0) == first
    assert {assign_splits(ids, fractions, seed=s)["m00"] for s in range(20)} == set(fractions)
    # 7 ids: 5.6 / 0.7 / 0.7 -> largest remainders give 6 / 1 / 0 ... ties to the earlier split
    sizes = sorted(assign_splits(ids[:7], fractions, seed=0).values())
    assert (sizes.count("train"), sizes.count("validation"), sizes.count("test")) == (5, 1, 1)
    with pytest.raises(ValueError, match=r"must sum to 1, got 0\.9"):
        assign_splits(ids, {"train": 0.8, "test": 0.1}, seed=0)


# -- hospital export -----------------------------------------------------------------
def test_hospital_csv_export_becomes_cases_and_pairs(tmp_path):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    with pytest.warns(UnusedColumnsWarning, match=r"\['MRN'\] are not mapped"):
        builder = load_builder("ippm", "cases", **export_kwargs(tmp_path, "export.csv"))
        builder.download_and_prepare()
    cases = builder.as_dataset()
    assert list(cases) == ["test", "train"]  # the export's own split column, in file order
    assert cases["test"].num_rows == 1 and cases["train"].num_rows == 2
    cough = cases["test"][0]
    assert cough["id"] == "1" and cough["message"] == COUGH
    assert [r["annotator_id"] for r in cough["responses"]] == ["dr-a", "dr-b"]
    assert cough["drafts"] == [{"system": "gpt-x", "text": DRAFT}]  # one draft, two replies
    assert cough["ehr"]["age"] == "58" and cough["ehr"]["problems"] == ["HTN", "prediabetes"]
    assert cough["ehr_summary"] == "Age: 58\nActive problems: HTN; prediabetes"
    assert cases["train"][1]["ehr"]["problems"] == []  # an empty cell is no problem
    assert "MRN" not in json.dumps(cases["test"][0]) and "MRN-001" not in json.dumps(cough)
    assert cases["test"].features == CASE_FEATURES

    pairs = build("ippm", "pairs", **export_kwargs(tmp_path, "export.csv"))
    assert pairs["test"]["id"] == ["1-1", "1-2"]
    assert pairs["train"]["id"] == ["2-1", "3-1"]
    assert pairs["test"][1]["reference"] == ROWS[1][2] and pairs["test"][1]["prediction"] == DRAFT


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_jsonl_and_parquet_exports_equal_the_csv(tmp_path, kind):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    rows = records()
    for row in rows:  # typed values, as a database export would hold them
        row["MSG_ID"], row["AGE"] = int(row["MSG_ID"]), int(row["AGE"])
        row["PROBLEMS"] = [p.strip() for p in row["PROBLEMS"].split(";") if p.strip()]
    if kind == "jsonl":
        write_jsonl(tmp_path / "export.jsonl", rows)
    else:
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / "export.parquet")
    expected = build("ippm", "cases", **export_kwargs(tmp_path, "export.csv"))
    got = build("ippm", "cases", **export_kwargs(tmp_path, f"export.{kind}"))
    for split in expected:
        assert got[split].to_list() == expected[split].to_list()


def test_seeded_split_without_a_split_column(tmp_path):
    header = HEADER[:-2]
    rows = [[str(i), f"Message {i}?", f"Reply {i}.", "dr", f"Draft {i}.", "m", "40", ""] for i in
            range(20)]  # fmt: skip
    write_csv(tmp_path / "export.csv", header, rows)
    mapping = {k: v for k, v in COLUMN_MAP.items() if k != "split"}
    kwargs = export_kwargs(tmp_path, "export.csv", column_map=mapping)
    cases = build("ippm", "cases", **kwargs)
    assert {s: cases[s].num_rows for s in cases} == {"train": 16, "validation": 2, "test": 2}
    expected = assign_splits([str(i) for i in range(20)], {"train": 0.8, "validation": 0.1,
                                                          "test": 0.1}, 0)  # fmt: skip
    assert sorted(cases["test"]["id"]) == sorted(i for i, s in expected.items() if s == "test")
    again = build("ippm", "cases", **{**kwargs, "cache_dir": str(tmp_path / "other-cache")})
    assert again["test"]["id"] == cases["test"]["id"]
    reseeded = build("ippm", "cases", **kwargs, seed=1)
    assert reseeded["train"]["id"] != cases["train"]["id"]


def test_an_edited_export_is_not_served_from_a_stale_cache(tmp_path):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    kwargs = export_kwargs(tmp_path, "export.csv")
    assert build("ippm", "cases", **kwargs)["train"].num_rows == 2
    write_csv(tmp_path / "export.csv", HEADER, ROWS[:3])
    assert build("ippm", "cases", **kwargs)["train"].num_rows == 1


BROKEN = [
    # (file name, header, rows, expected message)
    (
        "missing_column.csv",
        [h for h in HEADER if h != "REPLY"],
        [[c for h, c in zip(HEADER, ROWS[0]) if h != "REPLY"]],
        "missing_column.csv: no column 'REPLY' for field 'response'; the file has",
    ),
    (
        "empty_message.csv",
        HEADER,
        [ROWS[0], [ROWS[2][0], "  ", *ROWS[2][2:]]],
        "empty_message.csv, line 3: field 'message' is empty",
    ),
    (
        "duplicate_reply.csv",
        HEADER,
        [ROWS[0], [*ROWS[0][:2], "A different reply.", *ROWS[0][3:]]],
        "duplicate_reply.csv, line 3: duplicate reply to message_id '1' by annotator_id 'dr-a' "
        "(first at duplicate_reply.csv, line 2)",
    ),
    (
        "duplicate_row.csv",
        HEADER,
        [ROWS[0], ROWS[0]],
        "duplicate_row.csv, line 3: duplicate row: message_id '1', annotator_id 'dr-a' and "
        "reply as duplicate_row.csv, line 2, adding no new draft",
    ),
    (
        "conflicting_case.csv",
        HEADER,
        [ROWS[0], [ROWS[1][0], "Another message.", *ROWS[1][2:]]],
        "conflicting_case.csv, line 3: field 'message' differs from conflicting_case.csv, line 2 "
        "(same message_id '1')",
    ),
    (
        "system_without_draft.csv",
        HEADER,
        [[*ROWS[0][:4], "", *ROWS[0][5:]]],
        "system_without_draft.csv, line 2: field 'draft' is empty but draft_system is 'gpt-x'",
    ),
    (
        "bad_split.csv",
        HEADER,
        [[*ROWS[0][:8], "test set", ROWS[0][9]]],
        "bad_split.csv, line 2: field 'split' must be a name like 'test' (letters, digits, _), "
        "got str of 8 characters",
    ),
    (
        "half_split.csv",
        HEADER,
        [ROWS[0], [*ROWS[2][:8], "", ROWS[2][9]]],
        "half_split.csv, line 3: field 'split' is empty (other rows give one)",
    ),
]


@pytest.mark.parametrize(("name", "header", "rows", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_csv_exports_name_file_row_and_field(tmp_path, name, header, rows, message):
    write_csv(tmp_path / name, header, rows)
    with pytest.raises(ExportError) as error:
        build("ippm", "cases", **export_kwargs(tmp_path, name))
    assert message in str(error.value)


def test_broken_jsonl_export_lists_every_problem(tmp_path):
    rows = records()
    rows[0]["REPLY"] = 5  # a number, not text
    rows[1]["MSG_ID"] = 1.5  # not an id
    rows[2]["AGE"] = [63]  # not an age
    del rows[3]["PATIENT_TEXT"]  # a JSONL row without the field
    write_jsonl(tmp_path / "export.jsonl", rows)
    with pytest.raises(ExportError) as error:
        build("ippm", "cases", **export_kwargs(tmp_path, "export.jsonl"))
    assert error.value.errors == [
        "export.jsonl, line 4: field 'message' (column 'PATIENT_TEXT') is missing",
    ]
    rows[3]["PATIENT_TEXT"] = "Rash?"
    write_jsonl(tmp_path / "export.jsonl", rows)
    with pytest.raises(ExportError) as error:
        build("ippm", "cases", **export_kwargs(tmp_path, "export.jsonl"))
    assert error.value.errors == [
        "export.jsonl, line 1: field 'response' must be text, got int",
        "export.jsonl, line 2: field 'message_id' must be text or an integer id, got float",
        "export.jsonl, line 3: field 'age' must be text, got list of 1 item",
    ]
    assert str(error.value).startswith("3 bad input(s):")


def test_broken_parquet_export_names_nulls_and_lists(tmp_path):
    rows = records()
    rows[0]["PATIENT_TEXT"] = None
    rows[1]["REPLY"] = ""
    rows[2]["PROBLEMS"] = "[not json"
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "export.parquet")
    with pytest.raises(ExportError) as error:
        build("ippm", "cases", **export_kwargs(tmp_path, "export.parquet"))
    assert error.value.errors[:2] == [
        "export.parquet, row 1: field 'message' is empty",
        "export.parquet, row 2: field 'response' is empty",
    ]
    assert error.value.errors[2].startswith(
        "export.parquet, row 3: field 'problems' is not a valid JSON array"
    )


def test_bad_options_and_empty_splits_are_errors(tmp_path):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    mapping = {k: v for k, v in COLUMN_MAP.items() if k != "split"}
    kwargs = export_kwargs(tmp_path, "export.csv", column_map=mapping)
    with pytest.raises(ValueError, match="split 'test' of config 'cases' would be empty"):
        build("ippm", "cases", **kwargs, split_fractions={"train": 0.9, "test": 0.1})
    with pytest.raises(ValueError, match="column_map has unknown field"):
        build("ippm", "cases", **{**kwargs, "column_map": {"patient": "PATIENT_TEXT"}})
    with pytest.raises(ValueError, match="doesn't have a 'split_fraction' key"):
        load_builder("ippm", "cases", **kwargs, split_fraction={"test": 1.0})
    no_draft = {k: v for k, v in mapping.items() if k not in ("draft", "draft_system")}
    with pytest.raises(ValueError, match="the export has no draft"):
        build("ippm", "pairs", **{**kwargs, "column_map": no_draft, "split_fractions": {"test": 1}})
    with pytest.raises(ValueError, match="reads a local export and never downloads"):
        build("ippm", "cases", cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        builder_class("nope")


def test_builders_never_touch_the_network(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a builder tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    assert build("ippm", "pairs", **export_kwargs(tmp_path, "export.csv"))["test"].num_rows == 2
    assert load_split("demo", "pairs", cache_dir=str(tmp_path / "demo")).num_rows == 12
    folder = write_hub_folder("ippm", tmp_path / "hub", **export_kwargs(tmp_path, "export.csv"))
    assert (folder.path / "data" / "pairs" / "test.parquet").is_file()


# -- uploads: only on request, private for patient data -----------------------------
class FakeApi:
    """Records HfApi calls; ``public`` says whether the repository exists as public."""

    calls: ClassVar[list] = []
    public = False

    def __init__(self, token=None):
        pass

    def create_repo(self, repo_id, **kwargs):
        FakeApi.calls.append(("create_repo", repo_id, kwargs))

    def repo_info(self, repo_id, **kwargs):
        return type("Info", (), {"private": not FakeApi.public})()

    def upload_folder(self, **kwargs):
        """Records the files the real upload_folder would send: huggingface_hub's own
        filter over the folder's files with the call's allow_patterns."""
        from huggingface_hub.utils import filter_repo_objects

        folder = Path(kwargs["folder_path"])
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        sent = list(filter_repo_objects(files, allow_patterns=kwargs.get("allow_patterns")))
        FakeApi.calls.append(("upload_folder", kwargs["repo_id"], kwargs["repo_type"]))
        FakeApi.uploaded = sent
        return type("Commit", (), {"commit_url": "https://hub/commit/1"})()


@pytest.fixture
def fake_hub(monkeypatch):
    import huggingface_hub

    FakeApi.calls, FakeApi.public = [], False
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    return FakeApi


def test_push_to_hub_is_private_and_refuses_public_patient_data(tmp_path, fake_hub):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    kwargs = export_kwargs(tmp_path, "export.csv")
    folder = write_hub_folder("ippm", tmp_path / "hub", **kwargs).path
    # files a user keeps beside an export (the raw export, notes) are never uploaded
    (folder / "export.csv").write_bytes((tmp_path / "export.csv").read_bytes())
    (folder / "notes").mkdir()
    (folder / "notes" / "README.md").write_text("MRN-001 follow-up\n")
    assert push_to_hub("ippm", folder, "org/ippm") == "https://hub/commit/1"
    assert fake_hub.calls == [
        ("create_repo", "org/ippm", {"repo_type": "dataset", "private": True, "exist_ok": True}),
        ("upload_folder", "org/ippm", "dataset"),
    ]
    assert fake_hub.uploaded == [
        "README.md",
        *(f"data/{c}/{s}.parquet" for c in ("cases", "pairs") for s in ("test", "train")),
    ]
    with pytest.raises(ValueError, match="may only go to a private repository"):
        push_to_hub("ippm", folder, "org/ippm", private=False)
    fake_hub.calls, fake_hub.public = [], True
    with pytest.raises(PermissionError, match="exists and is public"):
        push_to_hub("ippm", folder, "org/ippm")
    assert [c[0] for c in fake_hub.calls] == ["create_repo"]  # nothing uploaded
    with pytest.raises(ValueError, match="third party's data set"):
        push_to_hub("oncqa", folder, "org/oncqa")


def test_export_dataset_cli_pushes_only_when_asked(tmp_path, fake_hub, capsys):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    # saved with a byte-order mark, as Windows editors write UTF-8
    (tmp_path / "map.json").write_text(json.dumps(COLUMN_MAP), encoding="utf-8-sig")
    args = ["export-dataset", "ippm", "--data-dir", str(tmp_path), "--export-file", "export.csv"]
    missing = [*args, "--column-map", str(tmp_path / "nomap.json"), "--output", "x"]
    assert main(missing) == 2
    assert "--column-map file" in capsys.readouterr().err
    args += ["--column-map", str(tmp_path / "map.json"), "--output", str(tmp_path / "out")]
    with pytest.warns(UnusedColumnsWarning):
        assert main(args) == 0
    assert fake_hub.calls == []
    out = capsys.readouterr().out
    assert "cases: test 1, train 2 row(s)" in out and "pairs: test 2, train 2 row(s)" in out
    assert main([*args, "--overwrite", "--push-to-hub", "org/ippm"]) == 0
    assert fake_hub.calls[0] == (
        "create_repo",
        "org/ippm",
        {"repo_type": "dataset", "private": True, "exist_ok": True},
    )
    assert main([*args]) == 2  # the folder now holds data: no silent overwrite
    assert "is not empty" in capsys.readouterr().err
    # a third party's set is refused before anything is written
    third_party = ["export-dataset", "oncqa", "--output", str(tmp_path / "oncqa")]
    assert main([*third_party, "--push-to-hub", "org/oncqa"]) == 2
    assert "third party's data set" in capsys.readouterr().err
    assert not (tmp_path / "oncqa").exists()


def test_export_dataset_never_replaces_a_readme_that_is_not_an_edit_f1_card(tmp_path, capsys):
    notes = tmp_path / "out" / "README.md"
    notes.parent.mkdir()
    notes.write_text("MY OWN NOTES\n")
    for extra in ([], ["--card-only"]):
        assert main(["export-dataset", "demo", "--output", str(notes.parent), *extra]) == 2
        assert "README.md is not an edit-f1 dataset card; pass --overwrite" in (
            capsys.readouterr().err
        )
        assert notes.read_text() == "MY OWN NOTES\n"
    # an earlier export's card is replaced; with --overwrite, the user's README too
    assert main(["export-dataset", "demo", "--output", str(notes.parent), "--overwrite"]) == 0
    assert "edit-f1" in notes.read_text()
    assert main(["export-dataset", "demo", "--output", str(notes.parent), "--card-only"]) == 0
    again = ["export-dataset", "demo", "--config", "pairs", "--config", "pairs"]
    assert main([*again, "--output", str(tmp_path / "twice")]) == 2
    assert "a config is named twice" in capsys.readouterr().err
    (tmp_path / "card").mkdir()
    (tmp_path / "card" / "README.md").write_text(notes.read_text())
    assert main(["export-dataset", "demo", "--output", str(tmp_path / "card")]) == 0


def test_a_card_only_folder_says_how_to_build_its_data_before_loading_fails(tmp_path):
    """datasets.load_dataset on a folder holding only a card fails with datasets' own
    FileNotFoundError (no message of ours can reach it): the card's first lines name
    that error and the command that writes the data where the card's configs point;
    running that command makes the folder load."""
    import shlex

    folder = tmp_path / "demo"
    assert main(["export-dataset", "demo", "--card-only", "--output", str(folder)]) == 0
    with pytest.raises(FileNotFoundError, match=f"{folder}/data/pairs/test.parquet"):
        datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "cache"))
    body = DatasetCard.load(folder / "README.md").text
    opening = body.split("\n\n", 2)[1]  # right after the title
    assert opening == (
        "**This folder holds this card only, not the data files.** Until they are built "
        f'here, `datasets.load_dataset("{folder}")` fails with `FileNotFoundError: Unable '
        f"to find '.../{folder}/data/pairs/test.parquet'`. Build them beside this card with:"
    )
    command = body.split("```bash\n")[1].split("\n```")[0]
    assert command == f"edit-f1 export-dataset demo --output {folder}"
    assert main(shlex.split(command)[1:]) == 0
    loaded = datasets.load_dataset(str(folder), "pairs", cache_dir=str(tmp_path / "cache"))
    assert loaded["test"].num_rows == 12
    assert "holds this card only" not in (folder / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "name",
    [
        *("oncqa", "kqa", "kqa_nli", "expertqa_medicine", "syppm", "ippm", "socppm"),
        *("content_matches", "theme_annotations"),
    ],
)
def test_committed_cards_without_data_name_the_error_and_the_command(name, tmp_path):
    folder = DATASETS / name
    card = DatasetCard.load(folder / "README.md")
    first = card.data.configs[0]["data_files"][0]["path"]
    with pytest.raises(FileNotFoundError, match=f"datasets/{name}/{first}"):
        datasets.load_dataset(str(folder), cache_dir=str(tmp_path))
    opening = card.text.split("\n\n", 2)[1]
    assert opening.startswith("**This folder holds this card only, not the data files.**")
    assert f"`FileNotFoundError: Unable to find '.../datasets/{name}/{first}'`" in opening
    command = card.text.split("```bash\n")[1].split("\n```")[0]
    assert command == f"edit-f1 export-dataset {name} --data-dir DIR --output datasets/{name}"


# -- annotation builders ------------------------------------------------------------
MATCH_HEADER = ["item", "reference_sentence", "draft", "span", "annotator", "split"]
MATCH_DRAFT = "Stop lisinopril today. Start losartan 50 mg daily. Call if the cough persists."
MATCH_ROWS = [
    ["s1", "Please stop the lisinopril.", MATCH_DRAFT, "Stop lisinopril today.", "ann-1", "test"],
    ["s1", "Please stop the lisinopril.", MATCH_DRAFT, "Stop lisinopril today.", "ann-2", "test"],
    ["s1", "Please stop the lisinopril.", MATCH_DRAFT, "NO MATCH", "ann-3", "test"],
    ["s2", "Check your BP twice a week.", MATCH_DRAFT, "no match", "ann-1", "test"],
    ["s2", "Check your BP twice a week.", MATCH_DRAFT, "Call if the cough persists.", "ann-2",
     "test"],
]  # fmt: skip
MATCH_MAP = {
    "item_id": "item",
    "prediction": "draft",
    "matched_span": "span",
    "annotator_id": "annotator",
}


def test_content_match_annotations_group_annotators_with_offsets(tmp_path):
    write_csv(tmp_path / "matches.csv", MATCH_HEADER, MATCH_ROWS)
    items = build(
        "content_matches",
        "default",
        **export_kwargs(tmp_path, "matches.csv", column_map=MATCH_MAP),
    )["test"]
    assert items["id"] == ["s1", "s2"]
    first = items[0]
    assert [a["annotator_id"] for a in first["annotations"]] == ["ann-1", "ann-2", "ann-3"]
    assert first["annotations"][0] == {
        "annotator_id": "ann-1",
        "match": True,
        "matched_span": "Stop lisinopril today.",
        "span_start": 0,
        "span_end": 22,
        "label": None,
    }
    assert first["annotations"][2]["matched_span"] is None
    assert first["majority_match"] is True
    assert items[1]["annotations"][1]["span_start"] == MATCH_DRAFT.index("Call")
    assert items[1]["majority_match"] is None  # one match, one NO MATCH: a tie


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            [
                "s1",
                "Please stop the lisinopril.",
                MATCH_DRAFT,
                "Stop lisinopril now.",
                "ann-9",
                "test",
            ],
            "matches.csv, line 7: field 'matched_span' is not a verbatim span of the draft",
        ),
        (
            ["s1", "Please stop the lisinopril.", MATCH_DRAFT, "NO MATCH", "ann-1", "test"],
            "matches.csv, line 7: field 'annotator_id': 'ann-1' already annotated item 's1' at "
            "matches.csv, line 2",
        ),
        (
            ["s1", "Please stop the lisinopril.", MATCH_DRAFT, "", "ann-9", "test"],
            "matches.csv, line 7: field 'matched_span' is empty",
        ),
        (
            ["s1", "Stop the ACE inhibitor.", MATCH_DRAFT, "NO MATCH", "ann-9", "test"],
            "matches.csv, line 7: field 'reference_sentence' differs from matches.csv, line 2 "
            "(same item 's1')",
        ),
    ],
    ids=["not-verbatim", "same-annotator-twice", "empty-span", "item-text-differs"],
)
def test_broken_content_match_exports(tmp_path, row, message):
    write_csv(tmp_path / "matches.csv", MATCH_HEADER, [*MATCH_ROWS, row])
    with pytest.raises(ExportError) as error:
        build(
            "content_matches",
            "default",
            **export_kwargs(tmp_path, "matches.csv", column_map=MATCH_MAP),
        )
    assert message in str(error.value)


def test_theme_annotations_majority_and_unknown_theme(tmp_path):
    rows = [
        {"sentence": "Stop lisinopril.", "theme": "Medical planning instruction", "who": "a"},
        {"sentence": "Stop lisinopril.", "theme": "Medical planning instruction", "who": "b"},
        {"sentence": "Stop lisinopril.", "theme": "Logistics", "who": "c"},
        {"sentence": "I'm sorry you feel unwell.", "theme": "Empathetic communication", "who": "a"},
        {"sentence": "I'm sorry you feel unwell.", "theme": "Other", "who": "b"},
    ]
    write_jsonl(tmp_path / "themes.jsonl", rows)
    kwargs = export_kwargs(
        tmp_path,
        "themes.jsonl",
        column_map={"annotator_id": "who"},
        split_fractions={"test": 1.0},
    )
    items = build("theme_annotations", "default", **kwargs)["test"]
    assert items["id"] == ["0", "1"]  # no item_id: grouped by sentence and context
    assert items["majority_theme"] == ["Medical planning instruction", None]
    assert items[0]["annotations"][2] == {"annotator_id": "c", "theme": "Logistics"}
    write_jsonl(tmp_path / "themes.jsonl", [*rows, {**rows[0], "who": "d", "theme": "Billing"}])
    with pytest.raises(ExportError, match=r"line 6: field 'theme' is not a theme \(str of 7 ") as e:
        build("theme_annotations", "default", **kwargs)
    assert "Billing" not in str(e.value)  # a shifted column could put patient text there


# -- Hub-ready folders and cards -------------------------------------------------------
@pytest.mark.parametrize("file_format", ["parquet", "jsonl"])
def test_hub_folder_loads_with_load_dataset_like_the_builder(tmp_path, file_format):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    kwargs = export_kwargs(tmp_path, "export.csv")
    kwargs.pop("cache_dir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedColumnsWarning)
        folder = write_hub_folder("ippm", tmp_path / "hub", file_format=file_format, **kwargs)
    assert folder.counts == {"cases": {"test": 1, "train": 2}, "pairs": {"test": 2, "train": 2}}
    card = DatasetCard.load(folder.path / "README.md")
    assert card.data.license == "other" and card.data.license_name
    # the largest config has 4 rows; an institution's own export is an original set
    assert (card.data.size_categories, card.data.source_datasets) == (["n<1K"], ["original"])
    assert card.data.license_link == "README.md#licence"  # its terms are the card's
    assert [c["config_name"] for c in card.data.configs] == ["cases", "pairs"]
    assert card.data.configs[0]["default"] is True
    for config in ("cases", "pairs"):
        loaded = datasets.load_dataset(str(folder.path), config, cache_dir=str(tmp_path / "c"))
        built = build("ippm", config, **{**kwargs, "cache_dir": str(tmp_path / "cache")})
        assert list(loaded) == list(built) == ["test", "train"]
        for split in built:
            assert loaded[split].features == built[split].features
            assert loaded[split].to_list() == built[split].to_list()
    row = "| `pairs` | one (draft, clinician reply written without the draft) pair | `test` (2)"
    assert row in card.text


#: the demo set's and the label sets' cards: checked by their own tests, not rendered by a builder
CARDS_WITHOUT_BUILDER = (
    "edit_f1_demo",
    "team_theme_labels",
    "team_content_labels",
    "team_content_labels_v2",
)


def test_committed_folders_are_cards_of_the_builders(tmp_path):
    folders = sorted(p.name for p in DATASETS.iterdir() if p.is_dir())
    assert folders == sorted(
        [
            *("edit_f1_demo", "oncqa", "kqa", "kqa_nli", "expertqa_medicine", "syppm"),
            *("ippm", "socppm", "content_matches", "theme_annotations"),
            *("team_theme_labels", "team_content_labels"),  # tests/test_team_labels.py
            "team_content_labels_v2",  # tests/test_content_labels.py
        ]
    )
    assert not list(DATASETS.rglob("__init__.py")), "datasets/ must never shadow HF datasets"
    for name in folders:
        if name in CARDS_WITHOUT_BUILDER:
            continue
        cls = builder_class(name)
        card_text = (DATASETS / name / "README.md").read_text(encoding="utf-8")
        card_only = f"datasets/{name}"  # as edit-f1 export-dataset --card-only wrote it
        expected = render_card(cls, card_configs(cls), registry_name=name, card_only=card_only)
        assert card_text == expected, name
        card = DatasetCard.load(DATASETS / name / "README.md")
        assert [c["config_name"] for c in card.data.configs] == [
            c.name for c in cls.BUILDER_CONFIGS
        ]
        for section in ("## Source", "## Licence", "## Fields", "## Caveats", "## Citation"):
            assert section in card.text, (name, section)
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
        for config in cls.BUILDER_CONFIGS:
            assert infos[config.name].features == cls.KIND_FEATURES[config.kind]


def test_card_prose_comes_from_the_templates_and_an_undocumented_field_fails():
    """A set's prose is its Markdown template's sections (IPPM reads the hospital export's);
    a field no template describes stops the card instead of leaving a blank line."""
    import jinja2

    from editf1.citation import PAPER_CITATION

    prose = builder_class("ippm").card_prose()
    assert prose["licence"].startswith("Private patient data: use only as the exporting")
    assert prose["caveats"][1] == (
        "Splits are by message: all replies to one message are in one split."
    )
    assert prose["source"] == "A local export, read from the exporting institution's own files."
    kqa = builder_class("kqa")
    citation = kqa.card_prose()["citation"]
    assert citation.startswith("@inproceedings{manes2024kqa,\n  title     = {K-QA: A Real-")
    assert citation.endswith("}\n" + PAPER_CITATION)
    assert (
        builder_class("oncqa")
        .card_prose()["fields"]["flags"]
        .startswith(
            "physician content flags, true when marked: AnyEdu, ExtentEdu, Manage, Inform, "
        )
    )
    assert builder_class("demo").card_prose()["source"].startswith("`editf1/data/demo.jsonl`")

    class Undocumented(kqa):
        KIND_FEATURES: ClassVar[dict] = {
            "pairs_reply": datasets.Features({**PAIR_FEATURES, "mood": datasets.Value("string")}),
            "cases": CASE_FEATURES,
        }

    with pytest.raises(jinja2.UndefinedError, match="mood"):
        render_card(Undocumented, card_configs(Undocumented))


@pytest.mark.parametrize(
    ("name", "size", "source", "link"),
    [
        ("edit_f1_demo", "n<1K", "original", "https://www.apache.org/licenses/LICENSE-2.0"),
        (
            "kqa",
            "n<1K",
            "extended|other-k-qa",
            "https://github.com/Itaymanes/K-QA/blob/HEAD/LICENSE",
        ),
        ("oncqa", "n<1K", "extended|other-oncqa", "README.md#licence"),
        ("syppm", "unknown", "extended", "README.md#licence"),
        ("socppm", "unknown", "original", "README.md#licence"),
    ],
)
def test_committed_cards_give_size_source_and_licence_link(name, size, source, link):
    """Counted cards (the demo: 12 pairs; the public sets' published rows: OncQA 263 at
    most) give their size; cards of sets known only once built (SyPPM, a hospital's
    export) say unknown. The licence link is the upstream licence file, the licence text, or the
    card's Licence section where the terms are not a standard licence."""
    card = DatasetCard.load(DATASETS / name / "README.md")
    assert card.data.size_categories == [size]
    assert card.data.source_datasets == [source]
    assert card.data.license_link == link
    if link == "README.md#licence":
        assert "\n## Licence\n" in card.text


def test_size_categories_follow_the_hub_bounds():
    assert [size_category(n) for n in (0, 999, 1_000, 9_999, 10_000, 10**6)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "1K<n<10K",
        "10K<n<100K",
        "1M<n<10M",
    ]
    assert (size_category(10**13), size_category(None)) == ("n>1T", "unknown")


def test_committed_demo_folder_loads_and_is_up_to_date(tmp_path):
    folder = DATASETS / "edit_f1_demo"
    pairs = datasets.load_dataset(str(folder), "pairs", split="test", cache_dir=str(tmp_path))
    demo = demo_rows()
    assert pairs.num_rows == 12
    assert pairs["id"] == [r["id"] for r in demo]
    assert pairs["prediction"] == [r["prediction"] for r in demo]
    assert pairs["reference"] == [r["reference"] for r in demo]
    cases = datasets.load_dataset(str(folder), "cases", split="test", cache_dir=str(tmp_path))
    assert cases.features == CASE_FEATURES and cases[0]["drafts"][0]["system"] == "draft-model-a"
    assert datasets.load_dataset(str(folder), cache_dir=str(tmp_path))["test"].num_rows == 12
    fresh = write_hub_folder("demo", tmp_path / "demo", file_format="jsonl").path
    for path in sorted(p for p in fresh.rglob("*") if p.is_file()):
        relative = path.relative_to(fresh)
        assert (folder / relative).read_bytes() == path.read_bytes(), f"{relative} is stale"


def test_demo_builder_pairs_equal_the_shipped_rows(tmp_path):
    pairs = load_split("demo", cache_dir=str(tmp_path))
    assert [(r["id"], r["prediction"], r["reference"], r["system"]) for r in pairs] == [
        (r["id"], r["prediction"], r["reference"], r["system"]) for r in demo_rows()
    ]
    assert set(BUILDER_NAMES) >= {"demo", "oncqa", "kqa", "kqa_nli", "expertqa_medicine"}


# -- edit-f1 score on a dataset split -------------------------------------------------
def test_score_a_dataset_split_and_a_hub_folder(tmp_path, capsys):
    out = tmp_path / "demo.jsonl"
    code = main(["score", "--dataset", "demo", "--split", "test", "-o", str(out), *FAST])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in demo_rows()]
    assert "edit-F1 on 12 pair(s)" in capsys.readouterr().out
    folder = tmp_path / "folder.jsonl"
    demo_folder = str(DATASETS / "edit_f1_demo")
    args = ["score", "--dataset", demo_folder, "--config", "pairs", "-o", str(folder), *FAST]
    assert main(args) == 0
    assert folder.read_text() == out.read_text()  # same rows, same scores


def test_score_explains_bad_dataset_choices(tmp_path, capsys):
    assert main(["score", "--dataset", "demo", "--config", "cases", *FAST]) == 2
    assert "demo/cases has no column ['prediction', 'reference']" in capsys.readouterr().err
    assert main(["score", "--dataset", "demo", "--split", "train", *FAST]) == 2
    assert "demo/pairs: no split 'train'; splits are ['test']" in capsys.readouterr().err
    assert main(["score", "--dataset", "no-such-set", *FAST]) == 2
    assert "is neither a known dataset" in capsys.readouterr().err
    assert main(["score", "--dataset", "oncqa", *FAST]) == 2
    assert "dataset oncqa needs --data-dir" in capsys.readouterr().err


SHA = "0123456789abcdef0123456789abcdef01234567"


def test_score_a_hub_dataset_at_its_revision(tmp_path, monkeypatch, capsys):
    calls = []
    pairs = datasets.DatasetDict({"test": load_split("demo", cache_dir=str(tmp_path / "c"))})

    def load_dataset(path, name=None, **kwargs):  # stands in for the Hub: no network here
        calls.append((path, name, kwargs["revision"]))
        return pairs

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    out = tmp_path / "hub.jsonl"
    hub = ["score", "--dataset", "org/name", "--download", *FAST]
    assert main([*hub, "--revision", SHA, "-o", str(out)]) == 0
    assert calls == [("org/name", None, SHA)]  # was called without the revision
    assert len(out.read_text().splitlines()) == 12
    assert main([*hub, "-o", str(tmp_path / "main.jsonl")]) == 0
    assert calls[-1] == ("org/name", None, None)  # no --revision: the Hub's default branch
    capsys.readouterr()
    # builder options would be dropped for a Hub dataset or a folder: refused, named
    assert main([*hub, "--export-file", "a.csv", "--split-seed", "3"]) == 2
    assert (
        "--export-file, --split-seed do(es) not apply to a Hub dataset (--dataset org/name)"
        in capsys.readouterr().err
    )
    folder = ["score", "--dataset", str(DATASETS / "edit_f1_demo"), *FAST]
    assert main([*folder, "--revision", SHA]) == 2
    assert "--revision do(es) not apply to a folder" in capsys.readouterr().err
    assert len(calls) == 2


def test_an_offline_hub_download_is_one_error_line(tmp_path):
    cli = Path(sys.executable).with_name("edit-f1")
    args = ["score", "--dataset", "org/name", "--download", "--revision", SHA, *FAST]
    env = os.environ | {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    out = subprocess.run(
        [str(cli), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edit-f1: error: "), out.stderr
    assert "org/name" in lines[0] and "Traceback" not in out.stderr


# -- SyPPM: a local copy, or the Hub repository at a pinned revision ---------------------
def syppm_rows() -> list[dict]:
    return [
        {
            "message_id": f"sy-{i}",
            "message": f"Semi-synthetic message {i}?",
            "ehr_summary": f"Chart {i}.",
            "response": f"Theme-guided reply {i}.",
            "annotator_id": "clinician-1",
            "draft": f"Draft {i}.",
            "draft_system": "model-z",
        }
        for i in range(3)
    ]


def test_syppm_reads_a_local_copy_as_one_test_split(tmp_path):
    write_jsonl(tmp_path / "syppm.jsonl", syppm_rows())
    pairs = build("syppm", "pairs", data_dir=str(tmp_path), cache_dir=str(tmp_path / "cache"))
    assert list(pairs) == ["test"] and pairs["test"]["id"] == ["sy-0-1", "sy-1-1", "sy-2-1"]
    assert pairs["test"][0]["ehr_summary"] == "Chart 0."


def test_syppm_downloads_only_with_hub_repo_and_revision(tmp_path, monkeypatch):
    import huggingface_hub

    with pytest.raises(ValueError, match=r"pass data_dir=.*or hub_repo= and revision="):
        build("syppm", "cases", cache_dir=str(tmp_path / "cache"))
    calls = []

    def snapshot_download(repo_id, **kwargs):
        calls.append((repo_id, kwargs["repo_type"], kwargs["revision"], kwargs["allow_patterns"]))
        folder = tmp_path / "snapshot"
        folder.mkdir(exist_ok=True)
        write_jsonl(folder / "data.jsonl", syppm_rows())
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    cases = build(
        "syppm",
        "cases",
        hub_repo="org/syppm",
        revision="abc123",
        cache_dir=str(tmp_path / "cache"),
    )
    assert cases["test"].num_rows == 3
    assert calls[0][:3] == ("org/syppm", "dataset", "abc123")
    assert "*.jsonl" in calls[0][3] and "*.parquet" in calls[0][3]


def test_keep_columns_are_carried_only_when_named(tmp_path):
    write_csv(tmp_path / "export.csv", HEADER, ROWS)
    kwargs = export_kwargs(tmp_path, "export.csv", keep_columns=("MRN",))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedColumnsWarning)  # nothing left unused
        cases = build("ippm", "cases", **kwargs)
    responses = cases["test"][0]["responses"]
    assert responses[0]["attributes"] == [{"name": "MRN", "value": "MRN-001"}]
    # and into the pairs a user scores: each pair carries its reply's kept columns
    pairs = build("ippm", "pairs", **kwargs)
    assert [(p["id"], p["attributes"]) for p in pairs["train"]] == [
        ("2-1", [{"name": "MRN", "value": "MRN-002"}]),
        ("3-1", [{"name": "MRN", "value": "MRN-003"}]),
    ]
    assert (
        build("ippm", "pairs", **export_kwargs(tmp_path, "export.csv"))["test"][0]["attributes"]
        == []
    )  # none kept: an empty list
    with pytest.raises(ExportError, match="no column 'VISIT' to keep"):
        build("ippm", "cases", **{**kwargs, "keep_columns": ("VISIT",)})
    with pytest.raises(ValueError, match="carries no extra columns"):
        build("content_matches", "default", **{**kwargs, "column_map": MATCH_MAP})


def test_rows_of_one_reply_that_disagree_on_a_kept_column_are_an_error(tmp_path):
    """Two rows of one clinician's reply may add drafts, but the reply keeps one value per
    kept column: a second, different value would be dropped, so it is an error that names
    the rows and the column, never the values."""
    second_draft = [*ROWS[0][:4], "Another draft.", *ROWS[0][5:9], "MRN-009"]
    write_csv(tmp_path / "export.csv", HEADER, [ROWS[0], second_draft])
    kwargs = export_kwargs(tmp_path, "export.csv", keep_columns=("MRN",))
    with pytest.raises(ExportError) as error:
        build("ippm", "cases", **kwargs)
    assert error.value.errors == [
        "export.csv, line 3: kept column(s) 'MRN' differ from export.csv, line 2 (same reply "
        "to message_id '1' by annotator_id 'dr-a'); a reply carries one value of each"
    ]
    write_csv(tmp_path / "export.csv", HEADER, [ROWS[0], [*second_draft[:9], "MRN-001"]])
    cases = build("ippm", "cases", **{**kwargs, "cache_dir": str(tmp_path / "cache2")})
    (case,) = cases["test"]
    assert [d["text"] for d in case["drafts"]] == [DRAFT, "Another draft."]
    assert case["responses"][0]["attributes"] == [{"name": "MRN", "value": "MRN-001"}]


def test_an_export_without_a_header_row_is_never_quoted(tmp_path):
    """Issue 22, class 5: without a header row the first row (a patient's message, an
    MRN) would be read as the header; no error or warning quotes it."""
    write_csv(tmp_path / "export.csv", ROWS[0], ROWS[1:])  # the header row left out
    kwargs = export_kwargs(tmp_path, "export.csv", keep_columns=("MRN",))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ExportError) as error:
            load_builder("ippm", "cases", **kwargs).download_and_prepare()
    messages = [*error.value.errors, *(str(w.message) for w in caught)]
    # the three messages: a required column, a mapped column, a column to keep
    assert (
        "export.csv: no column 'MSG_ID' for field 'message_id'; the file has 10 cells, not"
        in (messages[0])
    )
    assert any("no column 'MRN' to keep; the file has 10 cells, not shown" in m for m in messages)
    assert not any(issubclass(w.category, UnusedColumnsWarning) for w in caught)
    for text in (COUGH, "MRN-001", "dr-a", "HTN", "lisinopril"):
        assert not any(text in m for m in messages), text


def test_syppm_names_the_collection_the_paper_releases_it_in(capsys):
    """The SyPPM builder, its card and --hub-repo's help name the Hugging Face collection
    of footnote 1 of arXiv 2601.11344; the repository inside it stays the user's option."""
    from editf1.builders.hospital import SYPPM_COLLECTION
    from editf1.cli import main

    assert SYPPM_COLLECTION == (
        "PortalPal-AI/evaluating-alignment-for-patient-message-response-drafting"
    )
    assert SYPPM_COLLECTION in builder_class("syppm").card_prose()["source"]
    assert SYPPM_COLLECTION in (DATASETS / "syppm" / "README.md").read_text(encoding="utf-8")
    assert main(["export-dataset", "--help"]) == 0
    help_text = "".join(capsys.readouterr().out.split())
    assert "--hub-repoHUB_REPOsyppm:theHubdatasetrepositorytodownload" in help_text
    assert SYPPM_COLLECTION.replace("-", "") in help_text.replace("-", "")
