"""Inter-annotator predictability (§4.2, Table 11): clinicians scored on each other, by
hand on small cases and for real on the OncQA cases with two oncologists."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest

from editf1.analysis.inter_annotator import inter_annotator_predictability
from editf1.cli.main import main
from editf1.inputs import InputError
from editf1.scorer import EditF1Scorer

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
needs_oncqa = pytest.mark.skipif(
    not (SHARED_DATA / "oncqa" / "stage1.csv").is_file(),
    reason="../shared/data/oncqa is absent (the team's read-only copy of AIM-Harvard/OncQA)",
)
PLAN, MED, CONT = (
    "Medical planning instruction",
    "Medication-related follow-up questions",
    "Contingency planning",
)
THEMES = {"Rest today.": PLAN, "Drink water.": PLAN, "Take ibuprofen.": MED, "Call us.": CONT}


@pytest.fixture
def scorer(theme_judge_cls):
    return EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(THEMES))


@pytest.fixture
def content_only():
    return EditF1Scorer(content_judge="exact", theme_judge=None)


REPLIES = {
    "m1": ["Rest today. Drink water.", "Rest today.", "Drink water. Call us."],
    "m2": ["Call us.", "Call us. Rest today."],
    "m3": ["Hi."],
}


def test_inter_annotator_predictability_by_hand(scorer):
    iap = inter_annotator_predictability(scorer, REPLIES, n_resamples=2000, seed=0)
    # m1, six ordered pairs (draft -> reference), (EM, EA, ED):
    #   0->1 (1,0,1)  0->2 (1,1,1)  1->0 (1,1,0)  1->2 (0,2,1)  2->0 (1,1,1)  2->1 (0,1,2)
    # m2: 0->1 (1,1,0)  1->0 (1,0,1). Sum: EM 6, EA 7, ED 7: P = R = F1 = 6/13.
    c = iap.corpus
    assert (c.expected_matches, c.expected_additions, c.expected_deletions) == (6, 7, 7)
    assert iap.f1.value == iap.precision.value == iap.recall.value == pytest.approx(6 / 13)
    assert [p.id for p in c.pairs[:3]] == ["m1:0->1", "m1:0->2", "m1:1->0"]
    assert (iap.n_messages, iap.n_ordered_pairs, iap.single_reply_messages) == (2, 8, ("m3",))
    # Resampling two messages: m1 alone gives 4/10, m2 alone 2/3, both 6/13; each
    # "alone" draw has probability 1/4, so the 95% CI is [0.4, 2/3].
    assert (iap.f1.low, iap.f1.high) == pytest.approx((0.4, 2 / 3))
    # Themes: m1 tp 6, fp 2, fn 2; m2 tp 2, fp 1, fn 1: F1 = 16/22.
    assert iap.theme_f1.value == pytest.approx(8 / 11)
    assert c.theme.precision == c.theme.recall == pytest.approx(8 / 11)
    summary = iap.summary()
    assert summary["n_single_reply_messages"] == 1 and summary["f1"]["n"] == 8
    assert inter_annotator_predictability(scorer, REPLIES, seed=0).f1 == iap.f1


def test_inter_annotator_predictability_needs_two_replies(content_only):
    with pytest.raises(ValueError, match="needs a message with two replies"):
        inter_annotator_predictability(content_only, {"m": ["Rest."]})
    with pytest.raises(InputError, match=r"replies\['m'\]\[1\] has no word"):
        inter_annotator_predictability(content_only, {"m": ["Rest.", "  "]})
    with pytest.raises(TypeError, match="replies must map"):
        inter_annotator_predictability(content_only, [["Rest.", "Eat."]])


@needs_oncqa
def test_iap_on_oncqa_cases_with_two_oncologists(tmp_path, capsys, exact_counts):
    summary = tmp_path / "iap.json"
    pairs = tmp_path / "iap.jsonl"
    args = ["iap", "--dataset", "oncqa", "--data-dir", str(SHARED_DATA / "oncqa"),
            "--content-judge", "exact", "--theme-judge", "none", "--n-resamples", "200",
            "-o", str(pairs), "--summary-json", str(summary)]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "37 message(s) with two or more replies (74 ordered pairs; 26 message(s)" in printed
    figures = json.loads(summary.read_text())
    assert (figures["n_messages"], figures["n_ordered_pairs"]) == (37, 74)
    # worked out here from stage1.csv read with the csv module: every ordered pair
    # "<case>:<i>-><j>" (reply i as the draft, reply j as the reference) of each case's
    # replies, counted without the library's judge or counter
    replies: dict[str, list[str]] = {}
    with (SHARED_DATA / "oncqa" / "stage1.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            replies.setdefault(row["id"], []).append(row["response"])
    expected = {
        f"{case}:{i}->{j}": exact_counts(texts[i], texts[j])
        for case, texts in replies.items()
        for i, j in itertools.permutations(range(len(texts)), 2)
    }
    rows = [json.loads(line) for line in pairs.read_text().splitlines()]
    counts = {
        r["id"]: (r["expected_matches"], r["expected_additions"], r["expected_deletions"])
        for r in rows
    }
    assert len(rows) == 74 and counts == expected
    em, ea, ed = (sum(c[k] for c in expected.values()) for k in range(3))
    # no two oncologists wrote a sentence with the same words: EM 0, and the 248
    # sentences of the 74 replies are each once a reference (EA) and once a draft (ED)
    assert (em, ea, ed) == (0, 248, 248)
    corpus = figures["corpus"]
    assert (corpus["expected_matches"], corpus["expected_additions"]) == (em, ea)
    assert corpus["expected_deletions"] == ed
    f1 = figures["f1"]
    assert (f1["value"], f1["low"], f1["high"]) == (2 * em / (2 * em + ea + ed), 0.0, 0.0)


@pytest.mark.slow
@needs_oncqa
def test_iap_on_oncqa_with_embedded_judges(tmp_path):
    from editf1.builders.readers import oncqa_rows

    replies: dict[str, list[str]] = {}
    for row in oncqa_rows(SHARED_DATA / "oncqa", "own_reply"):
        replies.setdefault(row["case_id"], []).append(row["reference"])
    iap = inter_annotator_predictability(EditF1Scorer(), replies, n_resamples=500)
    assert (iap.n_messages, iap.n_ordered_pairs, len(iap.single_reply_messages)) == (37, 74, 26)
    # Oncologists rarely write the same sentences but often cover the same themes.
    assert 0.0 < iap.f1.value < iap.theme_f1.value < 1.0
    assert iap.theme_f1.low <= iap.theme_f1.value <= iap.theme_f1.high


def test_iap_rows_without_a_message_id_or_with_a_list_of_replies_are_named(tmp_path, capsys):
    rows = [
        {"message_id": None, "reference": "Rest today."},  # grouped as "None" before
        {"message_id": "", "reference": "Call us."},
        {"message_id": "m1", "reference": ["Rest today.", "Call us."]},  # a traceback
        {"message_id": "m1", "reference": "Rest today."},
    ]
    source = tmp_path / "replies.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["iap", str(source), "--content-judge", "exact", "--theme-judge", "none"]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        "edit-f1: error: 3 bad input(s):",
        f"  {source}, line 1: field 'message_id' must be a message id (text or an integer), "
        "got None",
        f"  {source}, line 2: field 'message_id' must be a message id (text or an integer), "
        "got str of 0 characters",
        f"  {source}, line 3: field 'reference' must be a string, got list of 2 items: one "
        "reply per row, the rows of one message_id being its replies",
    ]
