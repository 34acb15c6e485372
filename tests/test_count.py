"""count_content: Algorithm 1 counting (EM, EA, ED) on hand-checked drafts."""

from __future__ import annotations

import pytest

from editf1.count import claim_copies, count_content, count_themes
from editf1.judges.base import ContentJudgement
from editf1.segment import Sentence


def match(span):
    return ContentJudgement("match", span, 1.0)


NO_MATCH = ContentJudgement("no_match", None, 0.0)


def count(splitter, draft, judgements):
    counts = count_content(draft, splitter.split(draft), judgements, splitter)
    assert counts.expected_matches + counts.expected_additions == len(judgements)
    assert counts.expected_deletions == len(counts.deletions)
    return counts


def test_whole_sentences(splitter, span):
    draft = "Rest today. Drink water. Call us."
    counts = count(splitter, draft, [match(span(draft, "Rest today.")), NO_MATCH])
    # EM 1 ("Rest today."), EA 1 (NO MATCH), ED 2 (the two draft sentences left)
    assert (counts.expected_matches, counts.expected_additions) == (1, 1)
    assert counts.expected_deletions == 2
    # "Rest today. " is 0-12, "Drink water." 12-24, " ", "Call us." 25-33
    assert counts.deletions == (Sentence("Drink water.", 12, 24), Sentence("Call us.", 25, 33))
    assert counts.unusable == 0


def test_span_in_the_middle_of_a_sentence_leaves_one_deletion(splitter, span):
    draft = "I think you should rest today. Call us."
    counts = count(splitter, draft, [match(span(draft, "you should rest"))])
    # "I think" + "today." are what is left of ONE sentence: one deletion, spaces squeezed;
    # offsets run from "I" (0) to the end of "today." (30) in the draft
    assert counts.deletions == (Sentence("I think today.", 0, 30), Sentence("Call us.", 31, 39))
    assert (counts.expected_matches, counts.expected_additions, counts.expected_deletions) == (
        1,
        0,
        2,
    )


def test_fragment_before_a_sentence_boundary_is_not_glued_to_the_next(splitter, span):
    draft = "I think you should rest. Call us."
    counts = count(splitter, draft, [match(span(draft, "you should rest."))])
    # "I think" (0-7) stays its own deletion: it is not joined with "Call us." (25-33)
    assert counts.deletions == (Sentence("I think", 0, 7), Sentence("Call us.", 25, 33))
    assert counts.expected_deletions == 2


def test_middle_of_sentence_leftover_with_list_and_greeting(splitter, span):
    draft = (
        "Hello Ann. Good news: your results were normal. Please keep taking iron. "
        "We can schedule a follow-up visit."
    )
    judgements = [match(span(draft, "your results were normal.")), match(span(draft, "Hello Ann."))]
    counts = count(splitter, draft, judgements)
    # left: "Good news:" (11-21), "Please keep taking iron." (48-72),
    # "We can schedule a follow-up visit." (73-107)
    assert counts.deletions == (
        Sentence("Good news:", 11, 21),
        Sentence("Please keep taking iron.", 48, 72),
        Sentence("We can schedule a follow-up visit.", 73, 107),
    )
    assert (counts.expected_matches, counts.expected_additions, counts.expected_deletions) == (
        2,
        0,
        3,
    )


def test_duplicate_spans_from_two_reference_sentences(splitter, span):
    draft = "Rest today. Drink water. Call us."
    same = span(draft, "Drink water.")
    counts = count(splitter, draft, [match(same), match(same)])
    # both reference sentences match (EM 2); the span is removed once: ED 2
    assert (counts.expected_matches, counts.expected_additions, counts.expected_deletions) == (
        2,
        0,
        2,
    )
    assert [d.text for d in counts.deletions] == ["Rest today.", "Call us."]


def test_overlapping_spans_from_two_reference_sentences(splitter, span):
    draft = "Rest today. Drink water. Call us."
    judgements = [match(span(draft, "Rest today. Drink water.")), match(span(draft, "water. Call"))]
    counts = count(splitter, draft, judgements)
    # removed: 0-24 and 18-29 → what is left is "us." (30-33) of the third sentence
    assert counts.deletions == (Sentence("us.", 30, 33),)
    assert (counts.expected_matches, counts.expected_deletions) == (2, 1)


def test_span_covering_two_sentences(splitter, span):
    draft = "Rest today. Drink water. Call us."
    counts = count(splitter, draft, [match(span(draft, "Rest today. Drink water.")), NO_MATCH])
    # one EM removes two draft sentences; "Call us." is the only deletion
    assert (counts.expected_matches, counts.expected_additions, counts.expected_deletions) == (
        1,
        1,
        1,
    )
    assert counts.deletions == (Sentence("Call us.", 25, 33),)


def test_unusable_judgement_counts_as_addition_and_as_unusable(splitter, span):
    draft = "Rest today. Drink water. Call us."
    judgements = [
        match(span(draft, "Rest today.")),
        ContentJudgement("unusable", raw="I think the span is 'Drink lots'"),
        NO_MATCH,
    ]
    counts = count(splitter, draft, judgements)
    # EM 1; EA 2 = the unusable one + NO MATCH; ED 2 (nothing removed for the unusable)
    assert (counts.expected_matches, counts.expected_additions, counts.expected_deletions) == (
        1,
        2,
        2,
    )
    assert counts.unusable == 1


def test_draft_repeating_one_sentence_five_times(splitter, span):
    draft = " ".join(["Rest today."] * 5)
    counts = count(splitter, draft, [match(span(draft, "Rest today."))])
    # the one reference sentence matches the first copy: EM 1, ED 4 (copies at 12, 24, 36, 48)
    assert (counts.expected_matches, counts.expected_additions, counts.expected_deletions) == (
        1,
        0,
        4,
    )
    assert counts.deletions == tuple(Sentence("Rest today.", s, s + 11) for s in (12, 24, 36, 48))


def test_empty_draft(splitter):
    counts = count(splitter, "", [NO_MATCH, NO_MATCH])
    assert (counts.expected_matches, counts.expected_additions, counts.expected_deletions) == (
        0,
        2,
        0,
    )
    assert counts.deletions == ()


def test_punctuation_left_after_removal_is_not_a_deletion(splitter, span):
    draft = "Rest today! Call us."
    counts = count(splitter, draft, [match(span(draft, "Rest today"))])
    # "!" holds no word: ignored; ED 1 ("Call us.")
    assert counts.deletions == (Sentence("Call us.", 12, 20),)


def test_judgement_span_iff_match():
    with pytest.raises(ValueError):
        ContentJudgement("match")
    with pytest.raises(ValueError):
        ContentJudgement("no_match", Sentence("x", 0, 1))


def test_nothing_matched_every_draft_sentence_is_a_deletion(splitter):
    # re-splitting what is left must find the draft's own sentences again, list items
    # and inline lists included
    draft = "Hi Ann,\nYou can: 1. Rest. 2. Ice the knee.\n- Elevate it\n3) Call us."
    sentences = splitter.split(draft)
    counts = count(splitter, draft, [NO_MATCH])
    assert counts.deletions == tuple(sentences)
    # "Hi Ann,", "You can: 1.", "Rest.", "Ice the knee.", "Elevate it", "Call us."
    assert counts.expected_deletions == 6


# ---------------------------------------------------------------- themes


def test_count_themes_by_hand():
    clinical = ("Logistics", "Care coordination", "Contingency planning")
    counts = count_themes(
        ["Logistics", "Logistics", "Care coordination", "Other", None],
        ["Care coordination", "Contingency planning", "Other", None],
        [True, False, False, True, True],
        clinical,
    )
    # reply {Logistics, Care coordination}, draft {Care coordination, Contingency planning};
    # the sentence of each without a usable label (None) counts against the pair: a
    # false negative in the reply, a false positive in the draft
    assert counts.reference_themes == {"Logistics", "Care coordination"}
    assert counts.prediction_themes == {"Care coordination", "Contingency planning"}
    assert counts.as_tuple() == (1, 1 + 1, 1 + 1)
    # two Logistics sentences (one matched), one Care coordination; Other is not scored
    assert counts.reference_sentences == {"Logistics": 2, "Care coordination": 1}
    assert counts.matched_sentences == {"Logistics": 1}
    with_other = count_themes(["Other"], ["Other"], [True], (*clinical, "Other"))
    assert with_other.as_tuple() == (1, 0, 0) and with_other.matched_sentences == {"Other": 1}


def test_count_themes_of_texts_without_a_scored_theme():
    counts = count_themes(["Other"], [], [False], ("Logistics",))
    assert counts.as_tuple() == (0, 0, 0) and counts.reference_sentences == {}
    # an unusable label is no scored theme, but counts against the pair (issue 22)
    counts = count_themes([None, "Other"], [None], [False, False], ("Logistics",))
    assert counts.as_tuple() == (0, 1, 1) and counts.reference_sentences == {}
    with pytest.raises(ValueError):  # one match flag per reply sentence
        count_themes(["Logistics"], [], [], ("Logistics",))


# ---------------------------------------------------------------- claim_copies


def spans(judgements):
    return [None if j.span is None else (j.span.start, j.span.end) for j in judgements]


def test_a_repeated_span_moves_to_the_drafts_next_copy(splitter, span):
    # "Call us." 0-8, "Rest today." 9-20, "Call us." 21-29
    draft = "Call us. Rest today. Call us."
    first = match(span(draft, "Call us."))
    judgements = claim_copies(draft, [first, match(span(draft, "Rest today.")), first])
    assert spans(judgements) == [(0, 8), (9, 20), (21, 29)]
    assert judgements[2].span == Sentence("Call us.", 21, 29)
    assert [j.status for j in judgements] == ["match"] * 3 and judgements[2].score == 1.0
    # counted: every draft sentence removed, none left to delete (it was ED 1 before)
    assert count(splitter, draft, judgements).expected_deletions == 0
    assert count(splitter, draft, [first, judgements[1], first]).expected_deletions == 1


def test_a_repeat_with_no_free_copy_keeps_its_span():
    # one copy only: every reference sentence keeps (10, 18); a third "Call us." has
    # nowhere to go either
    draft = "Rest now. Call us."
    call = match(Sentence("Call us.", 10, 18))
    assert spans(claim_copies(draft, [call, call, call])) == [(10, 18)] * 3


def test_a_copy_inside_a_longer_word_is_not_taken():
    # "us." 5-8 repeated: "virus." holds "us." at 16-19 but not at a word boundary;
    # "Ask us." holds it at 24-27
    draft = "Call us. The virus. Ask us."
    us = match(Sentence("us.", 5, 8))
    assert spans(claim_copies(draft, [us, us])) == [(5, 8), (24, 27)]
    assert spans(claim_copies("Call us. The virus.", [us, us])) == [(5, 8), (5, 8)]


def test_a_copy_overlapping_a_span_already_matched_is_not_taken():
    # "Call us." 0-8 and 9-17; the second copy lies inside the run "Call us. Rest." (9-23)
    # that reference sentence 2 matched, so the repeat in sentence 3 stays at 0-8
    draft = "Call us. Call us. Rest."
    call, run = match(Sentence("Call us.", 0, 8)), match(Sentence("Call us. Rest.", 9, 23))
    assert spans(claim_copies(draft, [call, run, call])) == [(0, 8), (9, 23), (0, 8)]


def test_a_span_inside_an_earlier_run_moves_to_its_next_copy():
    # "Call us. Rest." (0-14) is matched first; "Call us." (0-8) lies inside it, so as
    # Algorithm 1 removes the run first, the words are found again at 15-23
    draft = "Call us. Rest. Call us."
    run, call = match(Sentence("Call us. Rest.", 0, 14)), match(Sentence("Call us.", 0, 8))
    assert spans(claim_copies(draft, [run, call])) == [(0, 14), (15, 23)]
    # spans that touch without overlapping are both kept: "Rest." 9-14 after "Call us."
    rest = match(Sentence("Rest.", 9, 14))
    assert spans(claim_copies(draft, [call, rest])) == [(0, 8), (9, 14)]


def test_claims_of_several_sentences_interleave_and_touching_spans_stay_free():
    # "A." 0-2, "B." 3-5, "A." 6-8, "B." 9-11, "A." 12-14: each repeat takes the next free
    # copy of its own words; the fifth "A." has none left and stays at 0-2
    draft = "A. B. A. B. A."
    a, b = match(Sentence("A.", 0, 2)), match(Sentence("B.", 3, 5))
    assert spans(claim_copies(draft, [a, b, a, b, a, a])) == [
        (0, 2),
        (3, 5),
        (6, 8),
        (9, 11),
        (12, 14),
        (0, 2),
    ]
    # "Call us." 0-8 and "Rest." 8-13 touch; the copy at 13-21 touches them and is free
    draft = "Call us.Rest.Call us."
    call, rest = match(Sentence("Call us.", 0, 8)), match(Sentence("Rest.", 8, 13))
    assert spans(claim_copies(draft, [call, rest, call])) == [(0, 8), (8, 13), (13, 21)]


def test_a_reply_repeating_a_sentence_hundreds_of_times_takes_every_copy_in_order():
    draft = "Call us. " * 600  # copies at 0, 9, 18, ...
    call = match(Sentence("Call us.", 0, 8))
    judgements = claim_copies(draft, [call] * 601)
    assert spans(judgements[:600]) == [(9 * k, 9 * k + 8) for k in range(600)]
    assert spans(judgements[600:]) == [(0, 8)]  # no copy left


def test_only_repeats_move_and_no_match_unusable_and_vetoed_pass_through():
    draft = "Call us. Call us."
    call = match(Sentence("Call us.", 0, 8))
    unusable = ContentJudgement("unusable", raw="<garbled>")
    given = [NO_MATCH, call, unusable, NO_MATCH, call]
    judgements = claim_copies(draft, given)
    assert judgements[:4] == given[:4]  # the first claim of a span is never moved
    assert spans(judgements) == [None, (0, 8), None, None, (9, 17)]
    assert claim_copies(draft, []) == []
