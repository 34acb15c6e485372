"""prf, zero_division, aggregate and CorpusAccumulator (add, merge, result): micro
averages computed by hand."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

from editf1.aggregate import (
    CorpusAccumulator,
    NonLatinTextWarning,
    UndefinedMetricWarning,
    UnusableJudgementWarning,
    aggregate,
    check_zero_division,
    prf,
)
from editf1.count import count_themes
from editf1.results import PRF, PairResult, SentenceAlignment
from editf1.segment import Sentence
from editf1.themes import CLINICAL_THEMES, THEMES

EMP, SYM, MED, MAE, MPI, LOG, CC, CP = CLINICAL_THEMES

#: A run record by hand, and its string.
RECORD = {
    "content_judge": {"name": "exact", "fingerprint": "exact-sentence-match", "options": {}},
    "theme_judge": None,
    "options": {"splitter": "s", "include_other": False, "zero_division": 0.0},
    "versions": {"edit-f1": "1"},
}
REPRODUCIBILITY = "content:exact-sentence-match|theme:none|splitter:s|include_other:False|" + (
    "zero_division:0.0|edit-f1:1"
)


def pair(
    em,
    ea,
    ed,
    *,
    aligned=None,
    pred_themes=(),
    unusable=(0, 0),
    row=0,
    themes_scored=CLINICAL_THEMES,
    texts=("x", "x"),
):
    """A PairResult with the given counts; ``aligned`` is [(theme, status)] per
    reference sentence and ``pred_themes`` the draft sentences' themes (counted with
    :func:`count_themes`); ``aligned=None`` means no theme judge (then EM sentences
    match and EA do not). ``texts`` are the reply's and the draft's sentence text."""
    statuses = aligned or [(None, "match")] * em + [(None, "no_match")] * ea
    alignment = tuple(
        SentenceAlignment(Sentence(texts[0], 0, 1), status, None, None, theme)
        for theme, status in statuses
    )
    themed = aligned is not None
    theme_counts = None
    if themed:
        theme_counts = count_themes(
            [t for t, _ in aligned], list(pred_themes), [s == "match" for _, s in aligned],
            themes_scored,
        )  # fmt: skip
    return PairResult(
        row=row,
        id=None,
        expected_matches=em,
        expected_additions=ea,
        expected_deletions=ed,
        content=prf(em, ed, ea),
        alignment=alignment,
        expected_deletion_sentences=(),
        prediction_sentences=(Sentence(texts[1], 0, 1),) * (em + ed > 0),
        prediction_sentence_themes=(),
        theme_counts=theme_counts,
        theme=prf(*theme_counts.as_tuple()) if themed else None,
        unusable_judgements=unusable[0],
        unusable_theme_judgements=unusable[1],
    )


# ---------------------------------------------------------------- prf


def test_prf_by_hand():
    # P = 2/(2+1), R = 2/(2+2), F1 = 2PR/(P+R) = 2*(2/3)(1/2)/(7/6) = 4/7
    result = prf(tp=2, fp=1, fn=2)
    assert result.precision == pytest.approx(2 / 3)
    assert result.recall == pytest.approx(1 / 2)
    assert result.f1 == pytest.approx(4 / 7)
    assert result.undefined == ()


def test_nothing_expected_nothing_given_is_perfect():
    assert prf(0, 0, 0) == PRF(1.0, 1.0, 1.0, ())
    assert prf(0, 0, 0, zero_division=0.0) == PRF(1.0, 1.0, 1.0, ())


def test_warn_policy_fills_zero():
    # empty draft vs 3 reference sentences: precision 0/0 → 0.0, recall 0/3, F1 0
    assert prf(0, 0, 3) == PRF(0.0, 0.0, 0.0, ("precision",))
    # 2 draft sentences left, no reference sentence: recall 0/0 → 0.0, F1 0
    assert prf(0, 2, 0, "warn") == PRF(0.0, 0.0, 0.0, ("recall",))


def test_zero_division_one():
    # precision takes 1.0, recall 0/3 = 0 → F1 = 2*1*0/(1+0) = 0
    assert prf(0, 0, 3, zero_division=1.0) == PRF(1.0, 0.0, 0.0, ("precision",))
    assert prf(0, 2, 0, zero_division=1.0) == PRF(0.0, 1.0, 0.0, ("recall",))
    assert prf(0, 0, 3, zero_division=0.0) == PRF(0.0, 0.0, 0.0, ("precision",))


def test_f1_is_zero_when_precision_plus_recall_is_zero():
    # P = 0/2, R = 0/3: both defined and 0 → F1 0, not 0/0
    result = prf(0, 2, 3)
    assert result == PRF(0.0, 0.0, 0.0, ())
    assert not math.isnan(result.f1)


def test_prf_never_warns_by_itself():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prf(0, 0, 3)


@pytest.mark.parametrize("value", ["warn", 0, 0.0, 1, 1.0])
def test_check_zero_division_accepts(value):
    assert check_zero_division(value) == value


@pytest.mark.parametrize("value", [0.5, "zero", "1", None, True, False, -1, 2])
def test_check_zero_division_rejects(value):
    with pytest.raises(ValueError, match=r"zero_division must be 'warn', 0\.0 or 1\.0"):
        check_zero_division(value)


def test_prf_to_dict_prefix():
    assert prf(1, 1, 0).to_dict("theme_") == {
        "theme_precision": 0.5,
        "theme_recall": 1.0,
        "theme_f1": pytest.approx(2 / 3),
    }


# ---------------------------------------------------------------- micro averages


def test_micro_average_sums_counts_then_divides():
    acc = CorpusAccumulator(CLINICAL_THEMES)
    for p in (pair(3, 1, 2), pair(1, 1, 2), pair(0, 2, 0)):
        acc.add(p)
    with pytest.warns(UndefinedMetricWarning, match=r"for 1 row\(s\) \[0\]"):
        result = acc.result()
    # EM = 3+1+0 = 4, EA = 1+1+2 = 4, ED = 2+2+0 = 4
    assert (result.expected_matches, result.expected_additions, result.expected_deletions) == (
        4,
        4,
        4,
    )
    # P = 4/(4+4) = 0.5, R = 4/(4+4) = 0.5, F1 = 0.5
    assert (result.precision, result.recall, result.f1) == pytest.approx((0.5, 0.5, 0.5))
    # macro mean of the pair F1s: pair 1 P 3/5 R 3/4 F1 2/3; pair 2 P 1/3 R 1/2 F1 2/5;
    # pair 3 P 0/0 → 0, R 0/2 → F1 0. Mean (2/3 + 2/5 + 0)/3 = 16/45 ≈ 0.356 ≠ 0.5
    macro = sum(p.content.f1 for p in result.pairs) / 3
    assert macro == pytest.approx(16 / 45)
    assert result.f1 != pytest.approx(macro)
    assert result.n_pairs == 3
    assert result.theme is None and result.per_theme == {} and result.themes_scored == ()


def test_micro_average_two_pairs_differs_from_macro():
    acc = CorpusAccumulator(CLINICAL_THEMES)
    acc.add(pair(1, 0, 0))  # F1 1
    acc.add(pair(1, 9, 0))  # P 1, R 1/10, F1 2/11
    result = acc.result()
    # micro: EM 2, EA 9, ED 0: P 1, R 2/11, F1 = 2*2/(2*2+9+0) = 4/13
    assert result.f1 == pytest.approx(4 / 13)
    macro = (1 + 2 / 11) / 2  # = 13/22 ≈ 0.591
    assert result.f1 != pytest.approx(macro)


def test_corpus_precision_undefined_warns_once_naming_the_row_and_is_zero():
    acc = CorpusAccumulator(CLINICAL_THEMES)
    acc.add(pair(0, 2, 0))  # an empty draft
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = acc.result()
    # the row is named; the corpus-level warning would repeat it
    assert [str(w.message).split(" is undefined")[0] for w in caught] == [
        "precision (prediction has no sentence; theme precision too if the reply has a theme)"
    ]
    assert "1 row(s) [0]" in str(caught[0].message)
    assert (result.precision, result.recall, result.f1) == (0.0, 0.0, 0.0)
    assert result.empty_predictions == 1


def test_corpus_warning_can_be_left_to_the_caller():
    acc = CorpusAccumulator(CLINICAL_THEMES)
    acc.add(pair(0, 2, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = acc.result(warn=False)
    assert result.precision == 0.0


def test_corpus_precision_undefined_with_explicit_policy_is_silent():
    acc = CorpusAccumulator(CLINICAL_THEMES, zero_division=1.0)
    acc.add(pair(0, 2, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = acc.result()
    assert (result.precision, result.recall, result.f1) == (1.0, 0.0, 0.0)


def test_empty_corpus_raises():
    with pytest.raises(ValueError, match="no pairs"):
        CorpusAccumulator(CLINICAL_THEMES).result()


def test_keep_pairs_false_keeps_none_and_unusable_are_summed():
    acc = CorpusAccumulator(CLINICAL_THEMES, keep_pairs=False)
    acc.add(pair(1, 1, 0, unusable=(1, 2)))
    acc.add(pair(1, 0, 0, unusable=(0, 1)))
    with pytest.warns(UnusableJudgementWarning, match=r"1 unusable content and 3 unusable theme"):
        result = acc.result(RECORD)
    assert result.pairs is None
    assert (result.unusable_judgements, result.unusable_theme_judgements) == (1, 3)
    assert result.provenance == RECORD and result.reproducibility == REPRODUCIBILITY
    assert "per_pair" not in result.to_dict()


# ---------------------------------------------------------------- themes


def themed_pairs(themes_scored=CLINICAL_THEMES):
    scored = {"themes_scored": themes_scored}
    return [
        # pair A: reply {MAE, MPI, CP, Other}, draft {MAE, MPI, LOG, Other}
        pair(
            3,
            1,
            2,
            aligned=[("Other", "match"), (MAE, "match"), (MPI, "match"), (CP, "no_match")],
            pred_themes=[MAE, MPI, LOG, "Other", MPI],
            row=0,
            **scored,
        ),
        # pair B: reply {EMP, MPI}, draft {MPI, Other}
        pair(
            1,
            1,
            2,
            aligned=[(EMP, "no_match"), (MPI, "match")],
            pred_themes=[MPI, "Other", "Other"],
            row=1,
            **scored,
        ),
        # pair C: reply {MPI}, draft {} (nothing clinical)
        pair(0, 2, 0, aligned=[(MPI, "unusable")] * 2, row=2, **scored),
    ]


def themed_corpus(themes_scored=CLINICAL_THEMES):
    acc = CorpusAccumulator(themes_scored)
    for p in themed_pairs(themes_scored):
        acc.add(p)
    return acc


def test_theme_micro_over_pair_theme_decisions():
    with pytest.warns(UndefinedMetricWarning, match=r"for 1 row\(s\) \[2\]"):
        result = themed_corpus().result()
    # 8 clinical themes. A: tp MAE, MPI = 2; fp LOG = 1; fn CP = 1.
    # B: tp MPI = 1; fp 0; fn EMP = 1. C: tp 0; fp 0; fn MPI = 1.
    # tp 3, fp 1, fn 3: P 3/4, R 3/6, F1 = 2*3/(2*3+1+3) = 0.6
    assert result.theme.precision == pytest.approx(3 / 4)
    assert result.theme.recall == pytest.approx(1 / 2)
    assert result.theme.f1 == pytest.approx(0.6)
    assert result.themes_scored == CLINICAL_THEMES
    assert set(result.per_theme) == set(CLINICAL_THEMES)


def test_theme_micro_with_other():
    with pytest.warns(UndefinedMetricWarning, match=r"for 1 row\(s\) \[2\]"):
        result = themed_corpus(THEMES).result()
    # Other adds: A tp 1; B fp 1. tp 4, fp 2, fn 3: P 4/6, R 4/7, F1 = 8/(8+2+3) = 8/13
    assert result.theme.precision == pytest.approx(2 / 3)
    assert result.theme.recall == pytest.approx(4 / 7)
    assert result.theme.f1 == pytest.approx(8 / 13)
    assert result.per_theme["Other"].reference_count == 1
    assert result.per_theme["Other"].prediction_count == 2


def test_per_theme_scores_proportions_and_content_recall():
    with pytest.warns(UndefinedMetricWarning, match=r"for 1 row\(s\) \[2\]"):
        per = themed_corpus().result().per_theme
    # MPI: in all 3 replies; drafts A, B → tp 2, fn 1: P 1, R 2/3, F1 0.8
    mpi = per[MPI]
    assert (mpi.precision, mpi.recall, mpi.f1) == pytest.approx((1.0, 2 / 3, 0.8))
    assert (mpi.reference_count, mpi.prediction_count) == (3, 2)
    # proportions over 3 pairs: 3/3 and 2/3
    assert (mpi.reference_proportion, mpi.prediction_proportion) == pytest.approx((1.0, 2 / 3))
    # MPI reference sentences: A 1 (match), B 1 (match), C 2 (unusable) → 2/4
    assert mpi.reference_sentences == 4
    assert mpi.content_recall == pytest.approx(0.5)

    # LOG: only draft A → fp 1: P 0, R 0/0 → 0.0 ("warn"), F1 0; no reference sentence
    log = per[LOG]
    assert (log.precision, log.recall, log.f1) == (0.0, 0.0, 0.0)
    assert (log.reference_proportion, log.prediction_proportion) == pytest.approx((0.0, 1 / 3))
    assert (log.reference_sentences, log.content_recall) == (0, 1.0)

    # EMP: only reply B, its one sentence unmatched → content recall 0/1
    emp = per[EMP]
    assert (emp.precision, emp.recall, emp.f1) == (0.0, 0.0, 0.0)
    assert (emp.reference_sentences, emp.content_recall) == (1, 0.0)

    # MAE: A has it on both sides, its sentence matched → 1.0 everywhere
    assert (per[MAE].f1, per[MAE].content_recall) == (1.0, 1.0)
    # CP: reply A only, sentence unmatched → R 0, content recall 0/1
    assert (per[CP].recall, per[CP].content_recall) == (0.0, 0.0)

    # SYM: in no reply and no draft: tp+fp+fn = 0 → 1.0, proportions 0
    sym = per[SYM]
    assert (sym.precision, sym.recall, sym.f1) == (1.0, 1.0, 1.0)
    assert (sym.reference_count, sym.prediction_count, sym.reference_proportion) == (0, 0, 0.0)


def test_other_is_not_in_clinical_per_theme_figures():
    with pytest.warns(UndefinedMetricWarning, match=r"for 1 row\(s\) \[2\]"):
        result = themed_corpus().result()
    assert "Other" not in result.per_theme
    summary = result.summary()
    assert summary["themes_scored"] == list(CLINICAL_THEMES)
    assert summary["per_theme"][MPI]["content_recall"] == pytest.approx(0.5)


# ---------------------------------------------------------------- re-aggregating subsets


def test_pair_counts_and_micro_prf_re_aggregate_like_the_accumulator():
    from editf1.aggregate import micro_prf, pair_counts

    a = pair(2, 1, 1, aligned=[(MAE, "match"), (CP, "no_match")], pred_themes=[MAE, LOG])
    b = pair(0, 2, 0, aligned=[(EMP, "no_match"), (EMP, "no_match")])
    np.testing.assert_array_equal(pair_counts([a, b], "content"), [[2, 1, 1], [0, 0, 2]])
    # themes: a tp MAE, fp LOG, fn CP; b fn EMP
    np.testing.assert_array_equal(pair_counts([a, b], "theme"), [[1, 1, 1], [0, 0, 1]])
    # both pairs: EM 2, ED 1, EA 3: P 2/3, R 2/5, F1 0.5; pair b alone: P undefined -> 0
    both = micro_prf(pair_counts([a, b], "content"))
    assert (both.precision, both.recall, both.f1) == pytest.approx((2 / 3, 0.4, 0.5))
    assert micro_prf(pair_counts([a, b], "content")[[1]]).precision == 0.0
    assert micro_prf(pair_counts([], "content")).f1 == 1.0  # nothing expected, nothing given
    with pytest.raises(ValueError, match="theme counts need pairs scored with a theme judge"):
        pair_counts([pair(1, 0, 0)], "theme")
    with pytest.raises(ValueError, match="level must be"):
        pair_counts([a], "sentence")


# ---------------------------------------------------------------- aggregate, merge


def test_aggregate_sums_hand_made_pairs():
    pairs = themed_pairs()
    seen = []
    result = aggregate(
        pairs, themes_scored=CLINICAL_THEMES, zero_division=0.0, provenance=RECORD,
        keep_pairs=True, sink=seen.append,
    )  # fmt: skip
    # EM 3+1+0 = 4, EA 1+1+2 = 4, ED 2+2+0 = 4: P 4/8, R 4/8, F1 1/2
    assert (result.expected_matches, result.expected_additions, result.expected_deletions) == (
        4,
        4,
        4,
    )
    assert (result.precision, result.recall, result.f1) == (0.5, 0.5, 0.5)
    # themes, as in test_theme_micro_over_pair_theme_decisions: tp 3, fp 1, fn 3
    assert result.theme.precision == pytest.approx(3 / 4) and result.theme.recall == 0.5
    assert seen == pairs == result.pairs and result.summary()["run"] == RECORD
    assert result.empty_predictions == 1 and result.all_references is None  # pair C
    with pytest.warns(UndefinedMetricWarning, match=r"for 1 row\(s\) \[2\]"):
        assert aggregate(pairs, themes_scored=CLINICAL_THEMES).pairs is None


def test_aggregate_with_several_replies_sums_every_reply_too():
    reply_a, reply_b = pair(1, 1, 0, row=0), pair(1, 0, 1, row=0)
    best = dataclasses.replace(reply_a, best_reference=0, per_reference=(reply_a, reply_b))
    result = aggregate([best, pair(2, 0, 0, row=1)], themes_scored=CLINICAL_THEMES)
    # best replies: EM 1+2, EA 1+0, ED 0+0: P 1, R 3/4
    assert (result.precision, result.recall) == (1.0, 0.75)
    # every (draft, reply) pair: EM 1+1+2 = 4, EA 1+0+0 = 1, ED 0+1+0 = 1: P 4/5, R 4/5
    every = result.all_references
    assert every.n_pairs == 3 and (every.precision, every.recall) == (0.8, 0.8)


def rank_accumulators():
    """Two processes' accumulators of hand-made pairs: rows 0-1, then rows 2-4."""
    first, second = CorpusAccumulator(CLINICAL_THEMES), CorpusAccumulator(CLINICAL_THEMES)
    first.add(pair(2, 1, 1, row=0, aligned=[(MAE, "match"), (MAE, "match"), (CP, "no_match")],
                   pred_themes=[MAE, LOG]))  # fmt: skip
    first.add(pair(0, 1, 0, row=1, aligned=[(MPI, "no_match")]))  # empty draft
    second.add(pair(1, 0, 2, row=2, aligned=[(MPI, "match")], pred_themes=[MPI, "Other"]))
    second.add(pair(0, 2, 0, row=3, aligned=[(EMP, "no_match"), (EMP, "no_match")]))  # empty
    second.add(pair(3, 0, 0, row=4, aligned=[(CP, "match")] * 3, pred_themes=[CP],
                    unusable=(0, 1)))  # fmt: skip
    return first, second


def test_two_rank_merge_by_hand():
    first, second = rank_accumulators()
    first.merge(second)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        merged = first.result()
    # content: EM 2+0+1+0+3 = 6, EA 1+1+0+2+0 = 4, ED 1+0+2+0+0 = 3
    assert (merged.expected_matches, merged.expected_additions, merged.expected_deletions) == (
        6,
        4,
        3,
    )
    # P = 6/9, R = 6/10, F1 = 2*6/(2*6+4+3) = 12/19
    assert merged.precision == pytest.approx(2 / 3)
    assert merged.recall == pytest.approx(0.6)
    assert merged.f1 == pytest.approx(12 / 19)
    # themes per pair (tp, fp, fn): row 0 {MAE, CP} vs {MAE, LOG}: (1, 1, 1); row 1 {MPI}
    # vs {}: (0, 0, 1); row 2 {MPI} vs {MPI}: (1, 0, 0); row 3 {EMP} vs {}: (0, 0, 1);
    # row 4 {CP} vs {CP}: (1, 0, 0). Sum (3, 1, 3): P 3/4, R 3/6, F1 6/10
    assert (merged.theme.precision, merged.theme.recall, merged.theme.f1) == (0.75, 0.5, 0.6)
    # CP: replies 0 and 4, draft 4: tp 1, fn 1; reply sentences 1 + 3, matched 0 + 3
    cp = merged.per_theme[CP]
    assert (cp.reference_count, cp.prediction_count, cp.recall) == (2, 1, 0.5)
    assert (cp.reference_sentences, cp.content_recall) == (4, 0.75)
    assert merged.per_theme[MAE].reference_sentences == 2  # two MAE sentences in row 0
    assert (merged.n_pairs, merged.empty_predictions, merged.unusable_theme_judgements) == (5, 2, 1)
    # one warning of each kind, naming the rows by their input numbers across ranks: the
    # empty drafts of rows 1 (first rank) and 3 (second), the unusable label of row 4
    assert [w.category for w in caught] == [UndefinedMetricWarning, UnusableJudgementWarning]
    assert (
        "precision (prediction has no sentence; theme precision too if the reply has a theme) "
        "is undefined (zero denominator) for 2 row(s) [1, 3]" in str(caught[0].message)
    )
    assert "1 unusable theme judgement(s) in 1 row(s) (first: [4])" in str(caught[1].message)


def test_merged_accumulators_equal_one_accumulator_of_every_pair():
    first, second = rank_accumulators()
    whole = CorpusAccumulator(CLINICAL_THEMES)
    for p in [*first.pairs, *second.pairs]:
        whole.add(p)
    first.merge(second)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert first.result().summary() == whole.result().summary()
    assert [p.row for p in first.pairs] == [0, 1, 2, 3, 4]


def test_only_the_process_that_warns_warns():
    first, second = rank_accumulators()
    first.merge(second)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first.result(warn=False)  # another process: the same figures, no warning


def test_merge_refuses_other_themes_or_policies():
    with pytest.raises(ValueError, match="cannot merge"):
        CorpusAccumulator(CLINICAL_THEMES).merge(CorpusAccumulator(THEMES))
    with pytest.raises(ValueError, match="cannot merge"):
        CorpusAccumulator(CLINICAL_THEMES).merge(CorpusAccumulator(CLINICAL_THEMES, 0.0))


def test_a_warning_names_the_first_ten_rows_across_merges():
    first, second = CorpusAccumulator(CLINICAL_THEMES), CorpusAccumulator(CLINICAL_THEMES)
    for row in range(12):
        (second if row % 2 else first).add(pair(0, 1, 0, row=row))  # empty drafts
    second.merge(first)  # merged out of order: the rows are still named in order
    with pytest.warns(UndefinedMetricWarning) as caught:
        second.result()
    assert "for 12 row(s) [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]" in str(caught[0].message)


def test_text_outside_latin_script_is_warned_naming_the_judges():
    rows = [pair(1, 0, 0, row=0), pair(1, 0, 0, row=1, texts=("请多喝水。", "x"))]
    with pytest.warns(NonLatinTextWarning) as caught:
        aggregate(rows, themes_scored=CLINICAL_THEMES,
                  judges="content: exact-sentence-match; theme: none")  # fmt: skip
    message = str(caught[0].message)
    assert message.startswith("1 row(s) (first: [1])")
    assert "the judges in use (content: exact-sentence-match; theme: none)" in message
    assert "请" not in message
