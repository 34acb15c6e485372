"""Readers of the shipped demo set and the real public data in ../shared/data."""

from __future__ import annotations

from collections import Counter

import pytest

from editf1.builders.readers import ONCQA_SETTINGS, demo_rows, kqa_nli_rows, oncqa_rows
from editf1.segment import has_word

ACCEPTABILITY = {
    "Acceptable with no modifications": 57,
    "Acceptable with modifications": 24,
    "Unacceptable (Major modifications or rewrite required)": 19,
}


def test_demo_rows():
    rows = demo_rows()
    assert len(rows) == 12
    fields = {"id", "message", "ehr_summary", "reference", "prediction", "system"}
    assert all(set(r) == fields for r in rows)
    assert len({r["id"] for r in rows}) == 12
    assert all(isinstance(r[f], str) for r in rows for f in fields)
    assert all(has_word(r["reference"]) and has_word(r["prediction"]) for r in rows)


@pytest.fixture(scope="module")
def oncqa(shared_data):
    folder = shared_data / "oncqa"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


def test_oncqa_own_reply(oncqa):
    rows = oncqa_rows(oncqa)  # default setting: the paper's
    assert len(rows) == 100
    per_case = Counter(r["case_id"] for r in rows)
    # 63 cases; 37 answered by two oncologists, 26 by one: 37*2 + 26 = 100
    assert len(per_case) == 63
    assert sum(n == 2 for n in per_case.values()) == 37
    assert sum(n == 1 for n in per_case.values()) == 26
    assert len({r["id"] for r in rows}) == 100
    two = next(case for case, n in per_case.items() if n == 2)
    pair = [r for r in rows if r["case_id"] == two]
    assert [r["id"] for r in pair] == [f"{two}-1", f"{two}-2"]
    assert pair[0]["prediction"] == pair[1]["prediction"]  # one GPT-4 draft per case
    assert pair[0]["reference"] != pair[1]["reference"]
    assert all(set(r) == {"id", "case_id", "prediction", "reference"} for r in rows)
    assert all(has_word(r["reference"]) and has_word(r["prediction"]) for r in rows)


def test_oncqa_edited(oncqa):
    rows = oncqa_rows(oncqa, "edited")
    assert len(rows) == 100
    assert all(type(r["edit_distance"]) is int and r["edit_distance"] >= 0 for r in rows)
    assert Counter(r["acceptability"] for r in rows) == ACCEPTABILITY
    assert len({r["id"] for r in rows}) == 100
    # harm is stage2.csv's q5, row for row, as the builder's `edited` config carries it
    from editf1.io import read_csv

    assert [r["harm"] for r in rows] == [r["q5"] for r in read_csv(oncqa / "stage2.csv")]


def test_oncqa_setting_must_be_known(tmp_path):
    assert ONCQA_SETTINGS == ("own_reply", "edited")
    with pytest.raises(ValueError, match="setting must be one of"):
        oncqa_rows(tmp_path, "stage3")
    with pytest.raises(FileNotFoundError):
        oncqa_rows(tmp_path)


def test_kqa_nli_rows(shared_data):
    folder = shared_data / "kqa"
    if not (folder / "NLI_medical_annotator.csv").is_file():
        pytest.skip(f"{folder / 'NLI_medical_annotator.csv'} is absent")
    rows = kqa_nli_rows(folder)
    assert len(rows) == 208
    assert sum(r["match"] for r in rows) == 77
    assert len({r["question"] for r in rows}) == 27
    assert all(len(r["annotator_matches"]) == 3 for r in rows)
    # a match is a majority (2 or 3 of 3) of Entailment votes
    assert all(r["match"] == (sum(r["annotator_matches"]) >= 2) for r in rows)
