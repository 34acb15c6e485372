"""editf1.gold.report on the shipped demo set with the exact judge: three estimates of each
figure and the judge's agreement, worked out by hand from the counts."""

from __future__ import annotations

import numpy as np
import pytest

from editf1.gold.apply import score_with_gold, with_gold
from editf1.gold.labels import PairText, bind_gold
from editf1.gold.report import (
    FEW_LABELLED,
    LAM_LEGEND,
    format_gold_report,
    gold_report,
    prediction_powered_difference,
)
from editf1.inputs import InputError, check_pairs
from editf1.scorer import EditF1Scorer

# The exact judge on the demo set (EM, ED, EA): demo-02 (5, 1, 0), demo-08 (6, 0, 0),
# demo-09 (0, 13, 6). Gold labels of these three agree with it except one sentence of
# demo-09, which the clinician matched to the draft's first sentence: gold (1, 12, 5).


@pytest.fixture
def scored(exact_demo):
    rows, result = exact_demo
    pairs = [PairText(r["id"], r["prediction"], r["reference"]) for r in rows]
    return EditF1Scorer(content_judge="exact", theme_judge=None), result, pairs


def test_three_estimates_and_the_agreement_by_hand(scored, demo_gold_rows):
    scorer, result, pairs = scored
    gold = bind_gold(demo_gold_rows(result), pairs, scorer.splitter)
    assert [g.content_counts for g in gold.pairs] == [(5, 1, 0), (6, 0, 0), (1, 12, 5)]
    report = gold_report(result, gold, n_resamples=200)
    precision = report.content["precision"]
    # judge only: the corpus figure; gold only: EM 12 / (EM 12 + ED 13)
    assert precision.judge_only.value == pytest.approx(result.precision)
    assert precision.gold_only.value == pytest.approx(12 / 25)
    # PPI++ with the reported lam, from the counts: numerator EM, denominator EM + ED
    judge = np.array([p.content_counts for p in result.pairs], dtype=float)
    labelled = [1, 7, 8]  # rows of demo-02, -08, -09
    unlabelled = [k for k in range(12) if k not in labelled]
    gold_counts = np.array([g.content_counts for g in gold.pairs], dtype=float)
    lam = precision.prediction_powered.lam
    a = gold_counts[:, 0].mean() + lam * (judge[unlabelled, 0].mean() - judge[labelled, 0].mean())
    b = (gold_counts[:, 0] + gold_counts[:, 1]).mean() + lam * (
        (judge[unlabelled, 0] + judge[unlabelled, 1]).mean()
        - (judge[labelled, 0] + judge[labelled, 1]).mean()
    )
    assert 0 <= lam <= 1
    assert precision.prediction_powered.value == pytest.approx(a / b)
    assert precision.prediction_powered.n == 3
    assert precision.prediction_powered.n_unlabelled == (9 if lam else 0)
    # recall's gold only: EM 12 / (EM 12 + EA 5); F1: 24 / (24 + 13 + 5)
    assert report.content["recall"].gold_only.value == pytest.approx(12 / 17)
    assert report.content["f1"].gold_only.value == pytest.approx(24 / 42)
    # 17 reply sentences labelled; the judge disagrees on one (a match it missed)
    agreement = report.content_agreement
    assert (agreement["n"], agreement["pairs"]) == (17, 3)
    assert agreement["agreement"].value == pytest.approx(16 / 17)
    assert agreement["gold_match_rate"].value == pytest.approx(12 / 17)
    assert agreement["judge_match_rate"].value == pytest.approx(11 / 17)
    assert agreement["match_rate_bias"].value == pytest.approx(-1 / 17)
    assert agreement["confusion_matrix"] == [[5, 0], [1, 11]]
    assert report.theme is None and report.theme_agreement is None
    small = (
        "only 3 labelled pairs (fewer than 30): n is too small for these intervals to be "
        "precise (they can span [0, 1]); label more pairs"
    )
    assert report.notes == (
        small,
        "the gold labels record no sampling: the estimates assume the labelled pairs are a "
        "uniform random sample of the scored pairs",
    )
    text = format_gold_report(report.to_dict())
    lines = text.splitlines()
    assert lines[0] == "gold labels: 3 of 12 pairs (sampling not recorded); 95% CIs"
    line = next(x for x in lines if x.lstrip().startswith("content precision"))
    shown = [str(precision.judge_only), str(precision.gold_only), str(precision.prediction_powered)]
    assert line.split()[2:] == [*" ".join(shown).split(), "(lam", f"{lam:.2f})"]
    # under the table (header, 3 rows): the legend of lam, then the note that n is small
    assert [x.split()[1] for x in lines[2:5]] == ["precision", "recall", "f1"]
    legend = " ".join(x.strip() for x in lines[5 : lines.index(f"  note: {small}")])
    assert legend == LAM_LEGEND
    assert legend.startswith("lam: the PPI++ power-tuning weight on the judge's counts")
    assert "0 = gold labels only, 1 = the judge at full weight" in legend
    assert lines[lines.index(f"  note: {small}") + 2].startswith("  the judge against the gold")


def test_a_second_annotator_gives_the_human_ceiling(scored, demo_gold_rows):
    scorer, result, pairs = scored
    first = bind_gold(demo_gold_rows(result), pairs, scorer.splitter)
    second = bind_gold(demo_gold_rows(result, matched_first=()), pairs, scorer.splitter)
    report = gold_report(result, first, second=second, n_resamples=200)
    ceiling = report.inter_annotator
    assert (ceiling["pairs"], ceiling["sentences"]) == (3, 17)
    assert ceiling["content"]["agreement"].value == pytest.approx(16 / 17)


def test_the_result_must_hold_the_pairs_the_labels_were_checked_against(scored, demo_gold_rows):
    scorer, result, pairs = scored
    gold = bind_gold(
        demo_gold_rows(result), [*pairs, PairText("extra", "Hi.", "Hi.")], scorer.splitter
    )
    with pytest.raises(ValueError, match="checked against 13 pairs, the result holds 12 pairs"):
        gold_report(result, gold)


def test_difference_of_two_systems_by_hand():
    # 4 pairs, rows 0 and 1 labelled; at lam 0 the gold figures alone: baseline precision
    # (0 + 1)/(2 + 2) = 1/4, system (2 + 1)/(2 + 2) = 3/4. Per pair, psi = system's
    # (a - 3/4 b)/2 - baseline's (a - 1/4 b)/2 = (1/4 + 1/4, -1/4 - 1/4): Var 1/2 (divisor
    # n - 1), se = sqrt(1/2 / 2)
    baseline = [[0, 2, 1], [1, 1, 1], [1, 1, 1], [0, 1, 0]]
    system = [[2, 0, 0], [1, 1, 0], [1, 0, 0], [1, 1, 0]]
    d = prediction_powered_difference(
        baseline, system, baseline[:2], system[:2], [0, 1], "precision", lam=0
    )
    assert d.value == pytest.approx(0.5)
    assert d.standard_error == pytest.approx(0.5)
    tuned = prediction_powered_difference(baseline, system, baseline[:2], system[:2], [0, 1])
    assert 0 <= tuned.lam <= 1 and -1 <= tuned.low <= tuned.value <= tuned.high <= 1
    with pytest.raises(ValueError, match="differ in shape"):
        prediction_powered_difference(baseline, system[:3], baseline[:2], system[:2], [0, 1])


def test_theme_estimates_and_agreement_by_hand(theme_judge_cls):
    plan, logistics, contingency = (
        "Medical planning instruction",
        "Logistics",
        "Contingency planning",
    )
    pairs = [
        PairText("a", "Rest today.", "Rest today. Book a visit."),
        PairText("b", "Call us if worse.", "Rest today."),
        PairText("c", "Rest.", "Rest."),
        PairText("d", "Rest.", "Rest."),
    ]
    scorer = EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(default=plan))
    result = scorer.score(
        [p.prediction for p in pairs], [p.reference for p in pairs], ids=[p.key for p in pairs]
    )
    rows = [
        {
            "id": "a",
            "reference_sentences": [
                {"start": 0, "end": 11, "match": {"start": 0, "end": 11}, "theme": plan},
                {"start": 12, "end": 25, "match": None, "theme": logistics},
            ],
            "prediction_sentences": [{"start": 0, "end": 11, "theme": plan}],
        },
        {
            "id": "b",
            "reference_sentences": [{"start": 0, "end": 11, "match": None, "theme": plan}],
            "prediction_sentences": [{"start": 0, "end": 17, "theme": contingency}],
        },
    ]
    gold = bind_gold(rows, pairs, scorer.splitter)
    report = gold_report(result, gold, n_resamples=100)
    # gold themes: a reply {plan, logistics} vs draft {plan}: tp 1, fn 1; b reply {plan}
    # vs draft {contingency}: fp 1, fn 1. precision 1/2, recall 1/3, F1 2/(2 + 1 + 2)
    theme = report.theme
    assert theme["precision"].gold_only.value == pytest.approx(1 / 2)
    assert theme["recall"].gold_only.value == pytest.approx(1 / 3)
    assert theme["f1"].gold_only.value == pytest.approx(2 / 5)
    # the judge labels every sentence planning: each pair tp 1, so 1.0 on all four
    assert theme["precision"].judge_only.value == pytest.approx(1.0)
    # theme agreement on the 5 labelled sentences: planning is right on 3
    assert report.theme_agreement["micro_f1"].value == pytest.approx(3 / 5)
    assert report.theme_agreement["n"] == 5


def _same_offsets():
    """Pairs a and b whose replies have the same sentence offsets (0-11), scored a, b by
    the exact judge: a's sentence is in its draft (a match), b's is not (no match)."""
    pairs = [
        PairText("a", "Rest today.", "Rest today."),
        PairText("b", "Ice the knee.", "Call today."),
    ]
    scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
    result = scorer.score([p.prediction for p in pairs], [p.reference for p in pairs],
                          ids=[p.key for p in pairs])  # fmt: skip
    rows = [  # the clinician agrees with the judge on both
        {"id": "a", "reference_sentences": [
            {"start": 0, "end": 11, "match": {"start": 0, "end": 11}}]},
        {"id": "b", "reference_sentences": [{"start": 0, "end": 11, "match": None}]},
    ]  # fmt: skip
    return pairs, result, rows


def test_labels_bound_in_another_order_meet_their_own_pairs():
    """Labels checked against the pairs in the order [b, a] (b at row 0) and a result
    scored [a, b]: the labels are found by id, so the judge agrees with both (by hand:
    a match and a match, no match and no match: agreement 2/2 = 1.0, kappa 1), where
    matching by row would pair a's labels with b's judgement (agreement 0.0)."""
    pairs, result, rows = _same_offsets()
    gold = bind_gold(rows, pairs[::-1])
    assert [(g.key, g.row) for g in gold.pairs] == [("a", 1), ("b", 0)]
    report = gold_report(result, gold, n_resamples=100)
    agreement = report.content_agreement
    assert agreement["agreement"].value == 1.0 and agreement["n"] == 2
    assert agreement["cohen_kappa"].value == pytest.approx(1.0)
    assert agreement["confusion_matrix"] == [[1, 0], [0, 1]]
    assert agreement["match_rate_bias"].value == 0.0
    # gold counts (EM, ED, EA): a (1, 0, 0), b (0, 1, 1); F1 2/(2 + 1 + 1), the judge's too
    assert report.content["f1"].gold_only.value == pytest.approx(0.5)
    assert report.content["f1"].prediction_powered.value == pytest.approx(0.5)
    assert report.content["f1"].judge_only.value == pytest.approx(0.5)


def test_a_labelled_id_the_result_lacks_is_named():
    pairs, _, rows = _same_offsets()
    other = EditF1Scorer(content_judge="exact", theme_judge=None).score(
        [p.prediction for p in pairs], [p.reference for p in pairs], ids=["a", "x"]
    )
    gold = bind_gold(rows, pairs)
    with pytest.raises(
        ValueError, match=r"1 labelled pair\(s\) have no scored pair of that id \(e.g. 'b'\)"
    ):
        gold_report(other, gold, n_resamples=100)


def test_n_resamples_too_few_and_one_labelled_pair_are_refused(scored, demo_gold_rows):
    scorer, result, pairs = scored
    gold = bind_gold(demo_gold_rows(result), pairs, scorer.splitter)
    with pytest.raises(
        ValueError, match=r"n_resamples must be an integer of at least 100 .*, got 2$"
    ):
        gold_report(result, gold, n_resamples=2)
    one = bind_gold(demo_gold_rows(result)[:1], pairs, scorer.splitter)
    with pytest.raises(ValueError, match="needs at least 2 labelled pairs, got 1"):
        gold_report(result, one)


def test_the_small_n_note_is_given_below_30_labelled_pairs():
    """30 one-sentence pairs, all labelled as the exact judge decides (a match where the
    draft is the reply): no note at 30, the note at 29."""
    pairs = [PairText(f"p{k}", "Rest.", "Rest." if k % 3 else "Ice.") for k in range(30)]
    result = EditF1Scorer(content_judge="exact", theme_judge=None).score(
        [p.prediction for p in pairs], [p.reference for p in pairs], ids=[p.key for p in pairs]
    )
    rows = [
        {"id": p.key, "reference_sentences": [
            {"start": 0, "end": len(p.reference),
             "match": {"start": 0, "end": 5} if p.reference == "Rest." else None}]}
        for p in pairs
    ]  # fmt: skip
    assert FEW_LABELLED == 30
    full = gold_report(result, bind_gold(rows, pairs), n_resamples=100)
    assert full.n_labelled == 30 and not any(n.startswith("only") for n in full.notes)
    assert full.content_agreement["agreement"].value == 1.0
    fewer = gold_report(result, bind_gold(rows[:29], pairs), n_resamples=100)
    assert fewer.notes[0].startswith("only 29 labelled pairs (fewer than 30): n is too small")
    assert f"  note: {fewer.notes[0]}" in fewer.format()


def test_with_gold_gives_the_report_of_scoring_with_gold_without_judging_again(
    content_judge_cls,
):
    """A judge that counts its calls: scoring with gold= calls it, with_gold on the
    result in hand does not, and both give the same report. By hand: the judge matches
    "Rest today." of pair a and nothing of b; the clinician also matches b's "Ice it."
    Gold counts (EM, ED, EA): a (1, 1, 0), b (1, 0, 1), F1 4/(4 + 1 + 1) = 2/3; the
    judge's: a (1, 1, 0), b (0, 1, 2), F1 2/(2 + 2 + 2) = 1/3 on these two."""
    judge = content_judge_cls({"Rest today.": "Rest today."})
    scorer = EditF1Scorer(content_judge=judge, theme_judge=None)
    drafts = ["Rest today. Drink water.", "Ice it.", "Call us."]
    replies = ["Rest today.", "Ice it. Rest.", "Call us."]
    ids = ["a", "b", "c"]
    gold = [
        {"id": "a", "reference_sentences": [
            {"start": 0, "end": 11, "match": {"start": 0, "end": 11}}]},
        {"id": "b", "reference_sentences": [
            {"start": 0, "end": 7, "match": {"start": 0, "end": 7}},
            {"start": 8, "end": 13, "match": None}]},
    ]  # fmt: skip
    result = scorer.score(drafts, replies, ids=ids)
    calls = judge.calls
    assert calls > 0 and result.gold is None
    scored = score_with_gold(scorer, check_pairs(drafts, replies, ids), gold, n_resamples=100)
    assert judge.calls > calls
    calls = judge.calls
    applied = with_gold(result, gold, predictions=drafts, references=replies, ids=ids,
                        n_resamples=100)  # fmt: skip
    assert judge.calls == calls  # not judged again
    assert result.gold is None and applied.gold is not None
    assert applied.gold.to_dict() == scored.gold.to_dict()
    assert applied.f1 == result.f1 and applied.pairs is result.pairs
    f1 = applied.gold.content["f1"]
    assert f1.gold_only.value == pytest.approx(2 / 3)
    agreement = applied.gold.content_agreement
    assert agreement["agreement"].value == pytest.approx(2 / 3)  # b's "Ice it." missed
    assert agreement["confusion_matrix"] == [[1, 0], [1, 1]]
    # ids left out: the labels name a and b, the pairs are then "0", "1", "2"
    with pytest.raises(InputError, match="no scored pair has this id"):
        with_gold(result, gold, predictions=drafts, references=replies)
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_resample'"):
        with_gold(result, gold, predictions=drafts, references=replies, ids=ids, n_resample=9)
    with pytest.raises(ValueError, match="n_resamples must be an integer of at least 100"):
        score_with_gold(scorer, check_pairs(drafts, replies, ids), gold, n_resamples=2)
    assert judge.calls == calls  # refused before any judge ran
