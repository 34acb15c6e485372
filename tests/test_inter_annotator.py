"""Several clinicians per message: best-matching and mean scores against several replies,
the evaluate module with lists of references, and inter-annotator predictability (§4.2,
Table 11), by hand on small cases and for real on the OncQA cases with two oncologists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editf1.analysis.multi_reference import inter_annotator_predictability, score_multi_reference
from editf1.cli.main import main
from editf1.scorer import EditF1Scorer
from editf1.validate import InputError

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


def test_best_and_mean_over_references_by_hand(scorer):
    result = score_multi_reference(
        scorer,
        ["Rest today. Drink water.", "Call us."],
        [["Rest today. Take ibuprofen.", "Drink water. Rest today."], ["Call us. Rest today."]],
        ids=["a", "b"],
    )
    first, second = result.pairs
    # Draft a: vs reply 0 EM 1, EA 1, ED 1 (F1 0.5); vs reply 1 EM 2 (F1 1.0): best 1.
    assert first.best_reference == 1 and first.id == "a"
    assert [p.content.f1 for p in first.per_reference] == [0.5, 1.0]
    assert (first.mean.precision, first.mean.recall, first.mean.f1) == (0.75, 0.75, 0.75)
    # Themes of a: {plan} vs {plan, medication} (F1 2/3) and vs {plan} (F1 1).
    assert first.theme_mean.recall == 0.75 and first.theme_mean.f1 == pytest.approx(5 / 6)
    # Draft b: EM 1, EA 1, ED 0 against its only reply.
    assert second.best_reference == 0 and second.mean.f1 == pytest.approx(2 / 3)
    # Best pairs: EM 3, EA 1, ED 0; every pair: EM 4, EA 2, ED 1.
    best, every = result.best, result.all_references
    assert (best.expected_matches, best.expected_additions, best.expected_deletions) == (3, 1, 0)
    assert (best.precision, best.recall, best.f1) == pytest.approx((1.0, 0.75, 6 / 7))
    assert (every.expected_matches, every.expected_additions, every.expected_deletions) == (4, 2, 1)
    assert (every.precision, every.recall, every.f1) == pytest.approx((0.8, 2 / 3, 8 / 11))
    assert every.n_pairs == 3 and [p.row for p in every.pairs] == [0, 0, 1]
    # Best-pair themes: tp 2 ({plan}, {contingency}), fn 1 (plan missing from b): F1 0.8.
    assert (best.theme.precision, best.theme.recall, best.theme.f1) == pytest.approx(
        (1.0, 2 / 3, 0.8)
    )
    out = result.to_dict()
    assert out["f1"] == pytest.approx(6 / 7) and out["all_references"]["f1"] == pytest.approx(
        8 / 11
    )
    assert out["per_pair"][0]["best_reference"] == 1 and out["per_pair"][0]["n_references"] == 2
    assert out["per_pair"][0]["mean_f1"] == 0.75 and out["per_pair"][0]["id"] == "a"
    assert [r["f1"] for r in out["per_pair"][0]["per_reference"]] == [0.5, 1.0]


def test_ties_go_to_higher_recall_then_the_earlier_reply(content_only):
    # "Rest. Sleep." vs "Rest. Sleep. Eat. Walk.": P 1, R 0.5; vs "Rest.": P 0.5, R 1.
    # Same F1 (2/3): the higher recall wins.
    result = score_multi_reference(
        content_only,
        ["Rest. Sleep.", "Rest. Sleep."],
        [["Rest. Sleep. Eat. Walk.", "Rest."], ["Rest. Eat.", "Sleep. Walk."]],
    )
    assert result.pairs[0].best_reference == 1
    assert result.pairs[1].best_reference == 0  # equal F1 and recall: the earlier reply


def test_one_reply_each_equals_single_reference_scoring(content_only):
    drafts, replies = ["Rest today. Drink water.", "Call us."], ["Rest today.", "Call us now."]
    multi = score_multi_reference(content_only, drafts, [[r] for r in replies])
    single = content_only.score(drafts, replies)
    assert multi.best.summary() == single.summary() == multi.all_references.summary()


def test_bad_multi_reference_input_is_named(content_only):
    with pytest.raises(InputError) as error:
        score_multi_reference(content_only, ["a.", 3, "c."], [[], ["ok."], "a string"])
    text = str(error.value)
    assert "references[0] is an empty list" in text
    assert "predictions[1] must be a string" in text
    assert "references[2] must be a list of clinician replies" in text
    with pytest.raises(InputError, match=r"references\[0\]\[1\] has no word"):
        score_multi_reference(content_only, ["a."], [["Rest.", " "]])
    with pytest.raises(ValueError, match="2 predictions and 1 lists of references"):
        score_multi_reference(content_only, ["a.", "b."], [["c."]])


def test_evaluate_module_accepts_lists_of_references():
    evaluate = pytest.importorskip("evaluate")
    metric = evaluate.load(str(ROOT / "metrics" / "edit_f1"), content_judge="exact",
                           theme_judge=None)  # fmt: skip
    out = metric.compute(
        predictions=["Rest today. Drink water."],
        references=[["Rest today. Take ibuprofen.", "Drink water. Rest today."]],
    )
    assert out["f1"] == 1.0 and out["all_references"]["f1"] == 0.75
    assert out["per_pair"][0]["best_reference"] == 1
    # evaluate would turn a later list into its string form: mixing is refused.
    with pytest.raises(TypeError, match=r"references\[1\] is list"):
        metric.compute(predictions=["a.", "b."], references=["x.", ["y.", "b."]])
    metric.add_batch(predictions=["Rest."], references=[["Rest.", "Eat."]])
    with pytest.raises(TypeError, match=r"references\[0\] is str"):
        metric.add_batch(predictions=["Rest."], references=["Rest."])
    accumulated = metric.compute(return_pairs=False)
    assert (accumulated["f1"], accumulated["all_references"]["f1"]) == (1.0, 0.5)
    assert "per_pair" not in accumulated


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
def test_iap_on_oncqa_cases_with_two_oncologists(tmp_path, capsys):
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
    f1 = figures["f1"]
    assert 0.0 <= f1["low"] <= f1["value"] <= f1["high"] <= 1.0
    rows = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert len(rows) == 74 and rows[0]["id"].endswith(":0->1")


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
