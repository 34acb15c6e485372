"""EditF1Scorer end to end with scripted judges, so every value is known by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from editf1.aggregate import UndefinedMetricWarning
from editf1.inputs import InputError
from editf1.judges.base import ContentJudgement
from editf1.judges.exact import ExactMatchContentJudge
from editf1.scorer import EditF1Scorer, UnusableJudgementWarning
from editf1.segment import Sentence
from editf1.themes import CLINICAL_THEMES, THEMES

EMP, SYM, MED, MAE, MPI, LOG, CC, CP = CLINICAL_THEMES

# Reference sentences (offsets): "Hi Ann," 0-7, "Your test results are normal." 8-37,
# "Keep taking the iron pills." 38-65, "Call us if you feel dizzy." 66-92
REF_0 = (
    "Hi Ann,\nYour test results are normal. Keep taking the iron pills. Call us if you feel dizzy."
)
# Draft sentences: "Hello Ann." 0-10, "Good news: your results were normal." 11-47,
# "Please keep taking iron." 48-72, "We can schedule a follow-up visit." 73-107
DRAFT_0 = (
    "Hello Ann. Good news: your results were normal. Please keep taking iron. "
    "We can schedule a follow-up visit."
)
# "I am sorry you are in pain." 0-27, "Take ibuprofen 400 mg every 8 hours." 28-64
REF_1 = "I am sorry you are in pain. Take ibuprofen 400 mg every 8 hours."
# "Take ibuprofen 400 mg every 8 hours." 0-36, "Best wishes," 37-49, "Dr. Cole" 50-58
DRAFT_1 = "Take ibuprofen 400 mg every 8 hours.\nBest wishes,\nDr. Cole"

CONTENT = {
    "Hi Ann,": "Hello Ann.",
    "Your test results are normal.": "your results were normal.",  # inside a sentence
    "Keep taking the iron pills.": "Please keep taking iron.",
    "Call us if you feel dizzy.": None,
    "I am sorry you are in pain.": None,
    "Take ibuprofen 400 mg every 8 hours.": "Take ibuprofen 400 mg every 8 hours.",
}
THEME_LABELS = {
    "Hi Ann,": "Other",
    "Your test results are normal.": MAE,
    "Keep taking the iron pills.": MPI,
    "Call us if you feel dizzy.": CP,
    "Hello Ann.": "Other",
    "Good news: your results were normal.": MAE,
    "Please keep taking iron.": MPI,
    "We can schedule a follow-up visit.": LOG,
    "I am sorry you are in pain.": EMP,
    "Take ibuprofen 400 mg every 8 hours.": MPI,
    "Best wishes,": "Other",
    "Dr. Cole": "Other",
}


@pytest.fixture
def judges(content_judge_cls, theme_judge_cls):
    return content_judge_cls(CONTENT), theme_judge_cls(THEME_LABELS, default=None)


@pytest.fixture
def scorer(judges):
    return EditF1Scorer(*judges)


def finite(value):
    """Every float inside a nested to_dict() is finite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return True


# ---------------------------------------------------------------- content level


def test_content_scores_and_alignment_by_hand(scorer):
    result = scorer.score(predictions=[DRAFT_0, DRAFT_1], references=[REF_0, REF_1])
    a, b = result.pairs
    # pair 0: EM 3, EA 1 (dizzy), ED 2 ("Good news:" left of sentence 2, "We can schedule...")
    assert (a.expected_matches, a.expected_additions, a.expected_deletions) == (3, 1, 2)
    # P 3/5, R 3/4, F1 = 2*3/(2*3+1+2) = 2/3
    assert (a.content.precision, a.content.recall, a.content.f1) == pytest.approx(
        (0.6, 0.75, 2 / 3)
    )
    assert a.expected_deletion_sentences == (
        Sentence("Good news:", 11, 21),
        Sentence("We can schedule a follow-up visit.", 73, 107),
    )
    # pair 1: EM 1, EA 1, ED 2 ("Best wishes,", "Dr. Cole"): P 1/3, R 1/2, F1 2/(2+1+2) = 0.4
    assert (b.expected_matches, b.expected_additions, b.expected_deletions) == (1, 1, 2)
    assert (b.content.precision, b.content.recall, b.content.f1) == pytest.approx((1 / 3, 0.5, 0.4))
    # corpus micro: EM 4, EA 2, ED 4 → P 4/8, R 4/6, F1 = 8/(8+2+4) = 4/7
    assert (result.expected_matches, result.expected_additions, result.expected_deletions) == (
        4,
        2,
        4,
    )
    assert (result.precision, result.recall, result.f1) == pytest.approx((0.5, 2 / 3, 4 / 7))
    # ... which is not the macro mean (2/3 + 0.4)/2 = 8/15
    assert result.f1 != pytest.approx(8 / 15)

    alignment = a.alignment
    assert [s.status for s in alignment] == ["match", "match", "match", "no_match"]
    assert alignment[1].reference == Sentence("Your test results are normal.", 8, 37)
    # "your results were normal." starts after "Hello Ann. Good news: " (22 chars)
    assert alignment[1].match == Sentence("your results were normal.", 22, 47)
    assert DRAFT_0[22:47] == "your results were normal."
    assert alignment[0].match == Sentence("Hello Ann.", 0, 10)
    assert alignment[3].match is None and alignment[3].reference.start == 66
    assert [s.theme for s in alignment] == ["Other", MAE, MPI, CP]
    assert b.alignment[1].match == Sentence("Take ibuprofen 400 mg every 8 hours.", 0, 36)
    assert b.prediction_sentence_themes == (MPI, "Other", "Other")
    assert finite(result.to_dict())


def test_pair_to_dict_carries_the_alignment(scorer):
    pair = scorer.score([DRAFT_0], [REF_0], ids=["case-7"]).pairs[0]
    out = pair.to_dict()
    assert out["id"] == "case-7" and out["row"] == 0
    assert out["alignment"][1] == {
        "reference_sentence": {"text": "Your test results are normal.", "start": 8, "end": 37},
        "status": "match",
        "match": {"text": "your results were normal.", "start": 22, "end": 47},
        "score": 1.0,
        "theme": MAE,
    }
    assert out["expected_deletion_sentences"][0] == {"text": "Good news:", "start": 11, "end": 21}
    assert out["prediction_sentences"][3]["theme"] == LOG


# ---------------------------------------------------------------- theme level


def test_theme_scores_clinical_themes_only(scorer):
    result = scorer.score([DRAFT_0, DRAFT_1], [REF_0, REF_1])
    a, b = result.pairs
    # pair 0: reply {MAE, MPI, CP}, draft {MAE, MPI, LOG}: tp 2, fp 1, fn 1 → 2/3 each
    assert a.reference_themes == {MAE, MPI, CP}
    assert a.prediction_themes == {MAE, MPI, LOG}
    assert (a.theme.precision, a.theme.recall, a.theme.f1) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    # pair 1: reply {EMP, MPI}, draft {MPI}: tp 1, fp 0, fn 1 → P 1, R 1/2, F1 2/3
    assert (b.theme.precision, b.theme.recall, b.theme.f1) == pytest.approx((1.0, 0.5, 2 / 3))
    # micro: tp 3, fp 1, fn 2 → P 3/4, R 3/5, F1 = 6/(6+1+2) = 2/3
    assert (result.theme.precision, result.theme.recall, result.theme.f1) == pytest.approx(
        (0.75, 0.6, 2 / 3)
    )
    assert result.themes_scored == CLINICAL_THEMES
    per = result.per_theme
    # MPI: both replies, both drafts; 2 reference sentences, both matched
    assert (per[MPI].f1, per[MPI].reference_proportion, per[MPI].content_recall) == (1.0, 1.0, 1.0)
    # EMP: reply 1 only, its sentence unmatched: proportion 1/2, content recall 0/1
    assert (per[EMP].recall, per[EMP].reference_proportion, per[EMP].content_recall) == (
        0.0,
        0.5,
        0.0,
    )
    # LOG: draft 0 only → precision 0/1, prediction proportion 1/2
    assert (per[LOG].precision, per[LOG].prediction_proportion) == (0.0, 0.5)


def test_theme_scores_with_other(judges):
    scorer = EditF1Scorer(*judges, include_other=True)
    result = scorer.score([DRAFT_0, DRAFT_1], [REF_0, REF_1])
    a, b = result.pairs
    # pair 0 adds Other on both sides: tp 3, fp 1, fn 1 → 3/4 each
    assert (a.theme.precision, a.theme.recall, a.theme.f1) == pytest.approx((0.75, 0.75, 0.75))
    # pair 1 adds Other to the draft only: tp 1, fp 1, fn 1 → 1/2 each
    assert (b.theme.precision, b.theme.recall, b.theme.f1) == pytest.approx((0.5, 0.5, 0.5))
    # micro: tp 4, fp 2, fn 2 → 4/6 each
    assert (result.theme.precision, result.theme.recall, result.theme.f1) == pytest.approx(
        (2 / 3, 2 / 3, 2 / 3)
    )
    assert result.themes_scored == THEMES
    # Other in 1 of 2 replies, in 2 of 2 drafts
    other = result.per_theme["Other"]
    assert (other.reference_proportion, other.prediction_proportion) == (0.5, 1.0)
    assert "include_other:True" in result.reproducibility


# ---------------------------------------------------------------- zero division


def test_empty_draft_scores_precision_zero_with_one_warning(scorer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = scorer.score([DRAFT_0, ""], [REF_0, REF_1])
    undefined = [w for w in caught if issubclass(w.category, UndefinedMetricWarning)]
    assert len(undefined) == 1
    assert "1 row(s) [1]" in str(undefined[0].message)
    empty = result.pairs[1]
    # EM 0, EA 2, ED 0: precision 0/0 → 0.0 ("warn"), recall 0/2, F1 0
    assert (empty.expected_matches, empty.expected_additions, empty.expected_deletions) == (0, 2, 0)
    assert (empty.content.precision, empty.content.recall, empty.content.f1) == (0.0, 0.0, 0.0)
    assert empty.content.undefined == ("precision",)
    assert empty.warnings and "prediction has no sentence" in empty.warnings[0]
    # corpus: EM 3, EA 1+2, ED 2 → P 3/5, R 3/6, F1 6/11
    assert (result.precision, result.recall, result.f1) == pytest.approx((0.6, 0.5, 6 / 11))
    assert result.n_pairs == 2  # no row dropped
    assert finite(result.to_dict())


def test_single_empty_draft_gives_one_warning_not_two(scorer):
    # corpus precision is undefined too (EM 0 + ED 0), but it is the same row's fault:
    # one warning, naming row 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = scorer.score([""], [REF_1])
    undefined = [w for w in caught if issubclass(w.category, UndefinedMetricWarning)]
    assert [str(w.message).split(" is undefined")[0] for w in undefined] == [
        "precision (prediction has no sentence; theme precision too if the reply has a theme)"
    ]
    assert "1 row(s) [0]" in str(undefined[0].message)
    assert (result.precision, result.recall, result.f1) == (0.0, 0.0, 0.0)


def test_empty_draft_with_zero_division_one_is_silent(judges):
    scorer = EditF1Scorer(*judges, zero_division=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = scorer.score([""], [REF_1])
    # precision 0/0 → 1.0, recall 0/2 = 0, F1 0; corpus the same
    assert (result.precision, result.recall, result.f1) == (1.0, 0.0, 0.0)


def test_identical_texts_score_one_with_scripted_judge(content_judge_cls, theme_judge_cls):
    sentences = [s for s in CONTENT if s in REF_0]
    identity = {s: s for s in sentences}  # every reference sentence matches itself
    assert len(identity) == 4
    scorer = EditF1Scorer(content_judge_cls(identity), theme_judge_cls(THEME_LABELS))
    result = scorer.score([REF_0], [REF_0])
    assert (result.expected_matches, result.expected_additions, result.expected_deletions) == (
        4,
        0,
        0,
    )
    assert (result.precision, result.recall, result.f1) == (1.0, 1.0, 1.0)
    assert (result.theme.precision, result.theme.recall, result.theme.f1) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("judge", ["exact", ExactMatchContentJudge()])
def test_identical_texts_score_one_with_exact_judge(judge):
    scorer = EditF1Scorer(content_judge=judge, theme_judge=None)
    result = scorer.score([REF_0, DRAFT_1], [REF_0, DRAFT_1])
    assert (result.precision, result.recall, result.f1) == (1.0, 1.0, 1.0)
    assert all(p.content.f1 == 1.0 for p in result.pairs)
    assert result.theme is None and result.pairs[0].theme is None


# ---------------------------------------------------------------- unusable judgements


def test_unusable_judgements_are_counted_reported_and_warned_once(
    content_judge_cls, theme_judge_cls, unusable
):
    content = CONTENT | {"Call us if you feel dizzy.": unusable}
    labels = THEME_LABELS | {"We can schedule a follow-up visit.": None, "Dr. Cole": None}
    scorer = EditF1Scorer(content_judge_cls(content), theme_judge_cls(labels, default=None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = scorer.score([DRAFT_0, DRAFT_1], [REF_0, REF_1])
    unusable_warnings = [w for w in caught if issubclass(w.category, UnusableJudgementWarning)]
    assert len(unusable_warnings) == 1
    message = str(unusable_warnings[0].message)
    assert "1 unusable content and 2 unusable theme" in message and "[0, 1]" in message
    a, b = result.pairs
    # pair 0: the unusable sentence is an expected addition: EM 3, EA 1, ED 2 as before
    assert (a.expected_matches, a.expected_additions, a.unusable_judgements) == (3, 1, 1)
    assert a.alignment[3].status == "unusable"
    assert a.alignment[3].judge_output == "<garbled output>"
    assert a.unusable_theme_judgements == 1 and b.unusable_theme_judgements == 1
    # the unlabelled draft sentence takes no theme: draft {MAE, MPI} vs reply {MAE, MPI, CP},
    # and counts against the pair as a theme the reply lacks: tp 2, fp 0 + 1, fn 1
    assert a.prediction_themes == {MAE, MPI}
    assert (a.theme.precision, a.theme.recall) == pytest.approx((2 / 3, 2 / 3))
    assert a.prediction_sentence_themes[3] is None
    assert any("unusable" in note for note in a.warnings)
    assert (result.unusable_judgements, result.unusable_theme_judgements) == (1, 2)
    summary = result.summary()
    assert (summary["unusable_judgements"], summary["unusable_theme_judgements"]) == (1, 2)


# ---------------------------------------------------------------- broken judges


@pytest.mark.parametrize(
    ("status", "score", "error"),
    [
        ("maybe", None, "status is one of"),  # it was counted as an expected addition
        ("no_match", float("nan"), r"score is None or a number in \[0, 1\]"),  # NaN in JSON
        ("no_match", 7.0, r"score is None or a number in \[0, 1\]"),
        ("no_match", "0.5", r"score is None or a number in \[0, 1\]"),
    ],
)
def test_a_judgement_outside_the_interface_cannot_be_made(status, score, error):
    with pytest.raises(ValueError, match=error):
        ContentJudgement(status, score=score)
    assert ContentJudgement("no_match", score=np.float32(0.25)).score == 0.25


def test_non_verbatim_span_raises(content_judge_cls):
    judge = content_judge_cls({"Hi Ann,": Sentence("Hi Anne,", 0, 8)})
    scorer = EditF1Scorer(judge, None)
    with pytest.raises(RuntimeError, match="not verbatim"):
        scorer.score([DRAFT_0], [REF_0])


def test_wrong_number_of_content_answers_raises(content_judge_cls):
    class DropsLast(content_judge_cls):
        def match(self, requests):
            return [answers[:-1] for answers in super().match(requests)]

    class DropsPair(content_judge_cls):
        def match(self, requests):
            return super().match(requests)[:-1]

    with pytest.raises(RuntimeError, match="answered 3 of 4 reference sentences"):
        EditF1Scorer(DropsLast(CONTENT), None).score([DRAFT_0], [REF_0])
    with pytest.raises(RuntimeError, match="answered 1 of 2 pairs"):
        EditF1Scorer(DropsPair(CONTENT), None).score([DRAFT_0, DRAFT_1], [REF_0, REF_1])


def test_wrong_number_of_theme_labels_raises(content_judge_cls, theme_judge_cls):
    class DropsLabel(theme_judge_cls):
        def classify(self, sentences):
            return super().classify(sentences)[:-1]

    scorer = EditF1Scorer(content_judge_cls(CONTENT), DropsLabel(THEME_LABELS))
    with pytest.raises(RuntimeError, match="labels for"):
        scorer.score([DRAFT_0], [REF_0])


# ---------------------------------------------------------------- batching and streaming


def test_batch_size_does_not_change_results(content_judge_cls, theme_judge_cls):
    predictions = [DRAFT_0, DRAFT_1, "", REF_1]
    references = [REF_0, REF_1, REF_0, REF_1]
    results, calls = [], []
    for size in (1, 128):
        content = content_judge_cls(CONTENT)
        scorer = EditF1Scorer(content, theme_judge_cls(THEME_LABELS), batch_size=size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            results.append(scorer.score(predictions, references).to_dict())
        calls.append(content.calls)
    assert results[0] == results[1]
    assert calls == [4, 1]  # 4 batches of one pair vs one batch


def test_score_stream_sink_in_row_order_without_keeping_pairs(scorer):
    rows = ((f"id-{i}", p, r) for i, (p, r) in enumerate([(DRAFT_0, REF_0), (DRAFT_1, REF_1)] * 3))
    seen = []
    result = scorer.score_stream(rows, sink=seen.append)
    assert [p.row for p in seen] == [0, 1, 2, 3, 4, 5]
    assert [p.id for p in seen] == [f"id-{i}" for i in range(6)]
    assert result.pairs is None and result.n_pairs == 6
    # three copies of the two-pair corpus: EM 12, EA 6, ED 12 → same ratios as one copy
    assert (result.expected_matches, result.expected_additions, result.expected_deletions) == (
        12,
        6,
        12,
    )
    assert result.f1 == pytest.approx(4 / 7)


def test_score_keep_pairs_false_and_ids(scorer):
    assert scorer.score([DRAFT_0], [REF_0], keep_pairs=False).pairs is None
    result = scorer.score([DRAFT_0, DRAFT_1], [REF_0, REF_1], ids=["a", "b"])
    assert [p.id for p in result.pairs] == ["a", "b"]
    assert [p["id"] for p in result.to_dict()["per_pair"]] == ["a", "b"]


# ---------------------------------------------------------------- theme cache


def test_theme_cache_skips_reference_sentences_for_a_second_system(
    content_judge_cls, theme_judge_cls
):
    theme_judge = theme_judge_cls(THEME_LABELS)
    scorer = EditF1Scorer(content_judge_cls(CONTENT), theme_judge)
    scorer.score([DRAFT_0, DRAFT_1], [REF_0, REF_1])
    # first system: 6 reference + 7 draft sentences, each distinct text classified once,
    # in one call: "Take ibuprofen 400 mg every 8 hours." is in reply 1 and draft 1 → 12
    assert theme_judge.calls == 1 and len(theme_judge.classified) == 12
    first = list(theme_judge.classified)

    system_b = ["Your labs are fine. Rest up.", "Sorry to hear that. Take ibuprofen."]
    scorer.score(system_b, [REF_0, REF_1])
    second = theme_judge.classified[len(first) :]
    # only system B's 4 new draft sentences are classified; no reference sentence again
    assert second == ["Your labs are fine.", "Rest up.", "Sorry to hear that.", "Take ibuprofen."]
    assert not set(second) & {s for s in first}

    scorer.score(system_b, [REF_0, REF_1])  # everything cached: the judge is not called
    assert theme_judge.calls == 2


def test_theme_scores_undefined_for_a_draft_without_themes_warn_once(
    content_judge_cls, theme_judge_cls
):
    # The draft's only sentence is labelled Other, which is not scored by default: the
    # draft has no scored theme, so theme precision is 0/0 -> 0.0, named in one warning.
    labels = {"Rest today.": "Medical planning instruction", "Hello there.": "Other"}
    scorer = EditF1Scorer(content_judge_cls({}), theme_judge_cls(labels), zero_division="warn")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = scorer.score(["Hello there."], ["Rest today."])
    messages = [str(w.message) for w in caught if issubclass(w.category, UndefinedMetricWarning)]
    assert len(messages) == 1 and messages[0].startswith("theme precision or recall")
    pair = result.pairs[0]
    assert pair.theme.undefined == ("precision",)
    assert (pair.theme.precision, pair.theme.recall, pair.theme.f1) == (0.0, 0.0, 0.0)


# ---------------------------------------------------------------- constructor


def test_constructor_rejects_bad_options(judges):
    with pytest.raises(ValueError, match="batch_size"):
        EditF1Scorer(*judges, batch_size=0)
    with pytest.raises(ValueError, match="zero_division"):
        EditF1Scorer(*judges, zero_division=0.5)
    with pytest.raises(ValueError, match="content_judge must be one of"):
        EditF1Scorer("no-such-judge", None)


def test_reproducibility_names_judges_and_splitter(scorer):
    text = scorer.reproducibility
    assert "content:scripted-content" in text and "theme:scripted-theme" in text
    assert "splitter:punkt-clinical:" in text and "zero_division:warn" in text


# Several clinicians' replies per draft: the pair is the best-matching reply.


MULTI_THEMES = {
    "Rest today.": MPI,
    "Drink water.": MPI,
    "Take ibuprofen.": MED,
    "Call us.": CP,
}


@pytest.fixture
def multi_scorer(theme_judge_cls):
    return EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(MULTI_THEMES))


@pytest.fixture
def content_only():
    return EditF1Scorer(content_judge="exact", theme_judge=None)


def test_best_and_mean_over_references_by_hand(multi_scorer):
    result = multi_scorer.score(
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
    best, every = result, result.all_references
    assert (best.expected_matches, best.expected_additions, best.expected_deletions) == (3, 1, 0)
    assert (best.precision, best.recall, best.f1) == pytest.approx((1.0, 0.75, 6 / 7))
    assert (every.expected_matches, every.expected_additions, every.expected_deletions) == (4, 2, 1)
    assert (every.precision, every.recall, every.f1) == pytest.approx((0.8, 2 / 3, 8 / 11))
    assert every.n_pairs == 3 and [p.row for p in first.per_reference] == [0, 0]
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
    result = content_only.score(
        ["Rest. Sleep.", "Rest. Sleep."],
        [["Rest. Sleep. Eat. Walk.", "Rest."], ["Rest. Eat.", "Sleep. Walk."]],
    )
    assert result.pairs[0].best_reference == 1
    assert result.pairs[1].best_reference == 0  # equal F1 and recall: the earlier reply


def test_one_reply_each_equals_single_reference_scoring(content_only):
    drafts, replies = ["Rest today. Drink water.", "Call us."], ["Rest today.", "Call us now."]
    multi = content_only.score(drafts, [[r] for r in replies])
    single = content_only.score(drafts, replies)
    assert single.all_references is None
    assert multi.all_references.summary() == single.summary()
    assert {k: v for k, v in multi.summary().items() if k != "all_references"} == single.summary()
    assert [p.content for p in multi.pairs] == [p.content for p in single.pairs]


def test_bad_multi_reference_input_is_named(content_only):
    with pytest.raises(InputError) as error:
        content_only.score(["a.", 3, "c.", "d."], [[], ["ok."], "one reply", [7]])
    text = str(error.value)
    assert "references[0] is an empty list" in text
    assert "predictions[1] must be a string" in text
    assert "references[3][0] must be a string, got int" in text
    assert "references[2]" not in text  # one reply as a string beside lists is fine
    with pytest.raises(InputError, match=r"references\[0\]\[1\] has no word"):
        content_only.score(["a."], [["Rest.", " "]])
    with pytest.raises(ValueError, match="2 predictions and 1 references"):
        content_only.score(["a.", "b."], [["c."]])


# --- text the splitter once returned as one sentence (hardening, section 1): with it,
# one matching reference sentence removed the whole draft and every deletion with it


def test_html_paragraphs_are_scored_sentence_by_sentence(content_only):
    # "<p>" 0-3, "Rest today." 3-14, "</p>" 14-18, "<p>" 18-21, "Drink water." 21-33:
    # "Rest today." matches, "Drink water." is left: EM 1, EA 0, ED 1
    draft = "<p>Rest today.</p><p>Drink water.</p>"
    for reply in ("Rest today.", "<div>Rest&nbsp;<b>today</b>.</div>"):
        result = content_only.score([draft], [reply])
        pair = result.pairs[0]
        counts = (pair.expected_matches, pair.expected_additions, pair.expected_deletions)
        assert counts == (1, 0, 1)
        assert pair.expected_deletion_sentences == (Sentence("Drink water.", 21, 33),)
        assert pair.alignment[0].match == Sentence("Rest today.", 3, 14)
        assert (result.precision, result.recall) == (0.5, 1.0)


def test_sentences_joined_without_a_blank_are_scored_apart(content_only):
    # "Rest today." 0-11, "Drink water." 11-23, "Call us." 23-31; the reply matches the
    # middle one: EM 1, EA 0, ED 2
    result = content_only.score(["Rest today.Drink water.Call us."], ["Drink water."])
    pair = result.pairs[0]
    assert (pair.expected_matches, pair.expected_additions, pair.expected_deletions) == (1, 0, 2)
    assert pair.expected_deletion_sentences == (
        Sentence("Rest today.", 0, 11),
        Sentence("Call us.", 23, 31),
    )
    assert result.precision == pytest.approx(1 / 3) and result.recall == 1.0


def test_long_run_on_text_whose_second_part_differs(content_only):
    # 140 words, no sentence end: both texts are cut after the comma at word 70 into two
    # pieces the encoder reads whole; the first pieces match, the second ones do not:
    # EM 1, EA 1 (the reply's second piece), ED 1 (the draft's)
    first = " ".join(["keep the knee raised and rest it"] * 10) + ","
    draft = first + " " + " ".join(["call us if the pain gets worse"] * 10) + "."
    reply = first + " " + " ".join(["bring your insurance card and photo id"] * 10) + "."
    result = content_only.score([draft], [reply])
    pair = result.pairs[0]
    assert [len(s.text.split()) for s in pair.prediction_sentences] == [70, 70]
    assert (pair.expected_matches, pair.expected_additions, pair.expected_deletions) == (1, 1, 1)
    assert pair.expected_deletion_sentences == (
        Sentence(draft[len(first) + 1 :], len(first) + 1, len(draft)),
    )
    assert (result.precision, result.recall, result.f1) == (0.5, 0.5, 0.5)


def test_rows_outside_latin_script_get_one_warning_naming_them(content_only):
    from editf1.scorer import NonLatinTextWarning

    drafts = [
        "Rest today.",
        "कृपया दवा लें।",  # Hindi draft
        "Drink water.",
        "Call us.",
        "Call Dr Wang 王 today.",  # 1 letter of 16 outside Latin: not warned
    ]
    replies = [
        "Rest today.",
        "Take your medicine.",
        "请多喝水。",  # Chinese reply
        ["Call us.", "Позвоните нам."],  # a second reply in Russian
        "Call Dr Wang today.",
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        content_only.score(drafts, replies)
    found = [w for w in caught if issubclass(w.category, NonLatinTextWarning)]
    assert len(found) == 1
    message = str(found[0].message)
    assert message.startswith("3 row(s) (first: [1, 2, 3])") and "20%" in message
    # the judges in use, not the embedded judges' encoder whatever judges there are
    assert "(content: exact-sentence-match; theme: none)" in message
    assert "MiniLM" not in message
    # names rows, never quotes their text
    assert not any(word in message for word in ("कृपया", "请", "Позвоните", "Wang"))


# -- unusable theme labels never score better than usable ones (issue 22, class 3) -----

REPLY_TWO, DRAFT_TWO = "Rest one. Rest two.", "Call three. Call four."
#: Labels a completion may give an unusable sentence: three scored themes and Other.
COMPLETIONS = ("Logistics", "Care coordination", "Contingency planning", "Other")


def _theme_prf_by_hand(reference_labels, prediction_labels):
    """(precision, recall, F1) of completed labels, from the sets (§3.2), zero_division 0."""
    reference = {t for t in reference_labels if t in CLINICAL_THEMES}
    prediction = {t for t in prediction_labels if t in CLINICAL_THEMES}
    tp, fp, fn = (
        len(reference & prediction),
        len(prediction - reference),
        len(reference - prediction),
    )
    if tp + fp + fn == 0:
        return 1.0, 1.0, 1.0
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def test_a_theme_judge_whose_every_label_is_unusable_scores_zero_not_one(theme_judge_cls):
    scorer = EditF1Scorer("exact", theme_judge_cls(default=None), zero_division=0.0)
    with pytest.warns(UnusableJudgementWarning):
        result = scorer.score([DRAFT_TWO], [REPLY_TWO])
    # 2 reply and 2 draft sentences without a usable label: tp 0, fp 2, fn 2
    assert (result.theme.precision, result.theme.recall, result.theme.f1) == (0.0, 0.0, 0.0)
    assert result.unusable_theme_judgements == 4
    # read back from the per-row output (edit-f1 report, compare): the same counts
    from editf1.analysis.compare import pair_result_from_dict

    [pair] = result.pairs
    assert pair_result_from_dict(pair.to_dict()).theme_counts.as_tuple() == (0, 2, 2)


def test_unusable_theme_labels_never_beat_any_usable_labelling(theme_judge_cls):
    """Every labelling of two reply and two draft sentences from two themes, Other and
    unusable: the score with unusable labels is at most that of every completion of
    them (each unusable label replaced by one of four labels), by hand."""
    import itertools

    reply, draft = ["Rest one.", "Rest two."], ["Call three.", "Call four."]
    labels = ("Logistics", "Care coordination", "Other", None)
    for given in itertools.product(labels, repeat=4):
        judge = theme_judge_cls(dict(zip(reply + draft, given)), default="Other")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theme = (
                EditF1Scorer("exact", judge, zero_division=0.0)
                .score([DRAFT_TWO], [REPLY_TWO])
                .theme
            )
        unusable = [i for i, label in enumerate(given) if label is None]
        for filled in itertools.product(COMPLETIONS, repeat=len(unusable)):
            completed = list(given)
            for i, label in zip(unusable, filled):
                completed[i] = label
            usable = _theme_prf_by_hand(completed[:2], completed[2:])
            ours = (theme.precision, theme.recall, theme.f1)
            assert all(a <= b + 1e-12 for a, b in zip(ours, usable)), (given, completed)


# ---------------------------------------------------------------- progress


class _RecordingBar:
    """Stands in for tqdm in editf1.scorer: keeps the last bar, its n after every
    update and its notes."""

    last = None

    def __init__(self, total=None, disable=False, unit=""):
        self.n, self.total, self.disable, self.seen, self.notes = 0, total, disable, [], []
        _RecordingBar.last = self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        self.n += n
        self.seen.append(self.n)

    def set_postfix_str(self, text, refresh=True):
        self.notes.append(text)


class _ReportingJudge(ExactMatchContentJudge):
    """The exact judge, reporting one sentence judged at a time (as the server judge
    does per answer) and noting the bar's n after each report."""

    def __init__(self, report: bool = True):
        super().__init__()
        self.report, self.n_after = report, []

    def match(self, requests):
        from editf1.judges.progress import judged

        for request in requests:
            for _ in request.reference_sentences:
                if self.report:
                    judged(1)
                    self.n_after.append(_RecordingBar.last.n)
        return super().match(requests)


def test_the_progress_bar_counts_pairs_as_their_sentences_are_judged(monkeypatch):
    """Three pairs of 2, 1 and 3 reference sentences in one batch: a judge that reports
    each sentence moves the bar to 0, 1, 2, 2, 2, 3 pairs; one that never reports (a
    plug-in) moves it once, when its call returns; the notes count the sentences."""
    import editf1.scorer

    monkeypatch.setattr(editf1.scorer, "tqdm", _RecordingBar)
    drafts = ["Rest.", "Call us.", "Drink water."]
    replies = ["Rest. Sleep.", "Call us.", "Drink water. Eat. Walk."]
    judge = _ReportingJudge()
    scorer = EditF1Scorer(content_judge=judge, theme_judge=None, progress=True)
    result = scorer.score(drafts, replies)
    assert judge.n_after == [0, 1, 2, 2, 2, 3]
    bar = _RecordingBar.last
    assert bar.n == 3 and bar.total == 3 and "6/6 sentences judged" in bar.notes
    assert result.expected_matches == 3
    silent = _ReportingJudge(report=False)
    EditF1Scorer(content_judge=silent, theme_judge=None, progress=True).score(drafts, replies)
    assert _RecordingBar.last.seen[:1] == [3]  # the contract settles it when match returns
    # and batch by batch: batch_size 2 settles the first two pairs, then the third
    judge = _ReportingJudge()
    EditF1Scorer(content_judge=judge, theme_judge=None, progress=True, batch_size=2).score(
        drafts, replies
    )
    assert _RecordingBar.last.n == 3 and judge.n_after == [0, 1, 2, 2, 2, 3]


def test_a_verbatim_copy_of_a_reply_that_repeats_a_sentence_scores_1():
    # both "Call us." of the reply took the draft's first copy, leaving its second as an
    # expected deletion: the copy scored 6/7, below a draft that drops the repeat
    reply = "Call us. Rest today. Call us."
    copy = EditF1Scorer("exact", None).score([reply], [reply])
    shorter = EditF1Scorer("exact", None).score(["Call us. Rest today."], [reply])
    assert (copy.expected_matches, copy.expected_deletions, copy.f1) == (3, 0, 1.0)
    assert (shorter.expected_matches, shorter.expected_deletions, shorter.f1) == (3, 0, 1.0)


def test_any_judge_repeating_a_span_gives_a_verbatim_copy_1(content_judge_cls):
    # the scripted judge answers "Call us." with its first occurrence for both reply
    # sentences (as the embedded and LLM judges do); the scorer hands the second the
    # draft's second copy, so the alignment shows it and nothing is left to delete
    reply = "Call us. Rest today. Call us."
    judge = content_judge_cls({"Call us.": "Call us.", "Rest today.": "Rest today."})
    result = EditF1Scorer(judge, None).score([reply], [reply])
    pair = result.pairs[0]
    assert [(a.match.start, a.match.end) for a in pair.alignment] == [(0, 8), (9, 20), (21, 29)]
    assert (result.expected_matches, result.expected_deletions, result.f1) == (3, 0, 1.0)
    # a draft with one copy: both reply sentences are matched to it, nothing to delete
    shorter = EditF1Scorer(judge, None).score(["Call us. Rest today."], [reply])
    assert (shorter.expected_matches, shorter.expected_deletions) == (3, 0)
    assert [a.match.start for a in shorter.pairs[0].alignment] == [0, 9, 0]


@pytest.mark.slow
def test_the_default_judge_scores_a_verbatim_copy_with_a_repeat_1(real_content_judge):
    # OncQA stage 2, case 61: a draft the oncologist sent unchanged repeats one sentence;
    # the default judge gave both copies' reference sentences the first copy (F1 0.963)
    reply = (
        "Stop the cream tonight. These pills are sold over the counter. "
        "Call us if the rash spreads. These pills are sold over the counter."
    )
    result = EditF1Scorer(real_content_judge, None).score([reply], [reply])
    assert [a.match.start for a in result.pairs[0].alignment] == [0, 24, 63, 92]
    assert (result.expected_matches, result.expected_deletions, result.f1) == (4, 0, 1.0)


class _OtherLabels:
    """A fake theme judge: greetings and sign-offs are Other, the rest Logistics."""

    fingerprint = "fake-other"

    def classify(self, sentences):
        from editf1.judges.base import ThemeJudgement

        other = ("Hi ", "Best,")
        return [ThemeJudgement("Other" if s.startswith(other) else "Logistics") for s in sentences]


def test_leave_out_other_drops_greetings_and_sign_offs_from_the_content_counts():
    """Reply "Hi Ann. Take ibuprofen. Best, Bo" against draft "Hi Ann. Rest today.
    Best, Bo" (the exact judge): the paper's counts match the greeting and the sign-off
    (EM 2, EA 1, ED 1: F1 2/3); left out, only "Take ibuprofen." (EA) and "Rest today."
    (ED) count: F1 0. The alignment still lists all three reply sentences."""
    from editf1.judges.base import ThemeJudge

    theme = type("OtherLabels", (_OtherLabels, ThemeJudge), {})()
    draft, reply = "Hi Ann. Rest today. Best, Bo", "Hi Ann. Take ibuprofen. Best, Bo"
    paper = EditF1Scorer(ExactMatchContentJudge(), theme, zero_division=0.0)
    (pair,) = paper.score([draft], [reply]).pairs
    counts = (pair.expected_matches, pair.expected_additions, pair.expected_deletions)
    assert counts == (2, 1, 1) and pair.content.f1 == pytest.approx(2 / 3)
    left = EditF1Scorer(ExactMatchContentJudge(), theme, leave_out_other=True, zero_division=0.0)
    result = left.score([draft], [reply])
    (pair,) = result.pairs
    counts = (pair.expected_matches, pair.expected_additions, pair.expected_deletions)
    assert counts == (0, 1, 1) and pair.content.f1 == 0.0
    assert [d.text for d in pair.expected_deletion_sentences] == ["Rest today."]
    assert len(pair.alignment) == 3
    assert "leave_out_other:True" in result.reproducibility
    assert "leave_out_other" not in paper.score([draft], [reply]).reproducibility


def test_leave_out_other_needs_a_theme_judge():
    with pytest.raises(ValueError, match="leave_out_other needs a theme judge"):
        EditF1Scorer(ExactMatchContentJudge(), None, leave_out_other=True)
