"""Clinically decisive corruptions (each class by hand, seeded generator) and the
span-level examples every content label gives."""

from __future__ import annotations

import random

import pytest

from editf1.judges.key_terms import compare, extract
from editf1.training.corruptions import (
    CORRUPTION_KINDS,
    REPLACEMENT_DRUGS,
    corrupt,
    corrupt_pairs,
)
from editf1.training.span_examples import SpanExample, corruption_examples, span_examples
from editf1.validation.labelled import ContentItem

REF = "I would recommend taking 20 mg of omeprazole twice a day for 2 weeks."
SPAN = "Take omeprazole 20 mg twice a day for 2 weeks."


def test_number_changes_a_number_the_reference_states():
    # 20 and 2 are both stated; each rewrite replaces one of them, everywhere in the span
    seen = {corrupt(REF, SPAN, "number", random.Random(seed)) for seed in range(20)}
    expected = {SPAN.replace("20 mg", f"{v} mg") for v in ("40", "10", "21", "200")}
    expected |= {SPAN.replace("2 weeks", f"{v} weeks") for v in ("4", "1", "3")}
    assert seen <= expected and len(seen) > 2
    # 20 is the reference's too and 200 (x10) is not the reference's: still allowed
    assert corrupt("Take 5 mg.", "Take 5 mg, 5 mg at night.", "number", random.Random(0)) in {
        f"Take {v} mg, {v} mg at night." for v in ("10", "2.5", "6", "50")
    }
    # a number only the span states is not the reference's: nothing to change
    assert corrupt("Take omeprazole.", "Take omeprazole 20 mg.", "number") is None
    assert corrupt("Take two tablets.", "Take two tablets.", "number") != "Take two tablets."


def test_unit_changes_the_unit_after_a_number():
    assert corrupt(REF, SPAN, "unit") == "Take omeprazole 20 mcg twice a day for 2 weeks."
    assert corrupt("A fever is 100.4°F.", "Call for 100.4°F.", "unit") == "Call for 100.4°C."
    assert corrupt("Use 5 ml.", "Use 5ml now.", "unit") == "Use 5l now."
    assert corrupt("Take it.", "Take 5 mg.", "unit") is None  # the reference has no unit


def test_frequency_changes_the_longest_shared_phrase():
    assert corrupt(REF, SPAN, "frequency") == "Take omeprazole 20 mg once a day for 2 weeks."
    assert corrupt("Use it daily.", "Apply it daily.", "frequency") == "Apply it weekly."
    assert corrupt("Take as needed.", "Take it as needed.", "frequency") == "Take it every day."
    assert corrupt("Take it.", "Take it daily.", "frequency") is None


def test_drug_becomes_one_neither_text_names():
    changed = corrupt(REF, SPAN, "drug", random.Random(3))
    (drug,) = set(changed.split()) - set(SPAN.split())
    assert changed == SPAN.replace("omeprazole", drug) and drug in REPLACEMENT_DRUGS
    assert drug != "omeprazole"
    assert corrupt("Tylenol helps.", "Tylenol can help.", "drug").startswith(
        tuple(d.capitalize() for d in REPLACEMENT_DRUGS)
    )
    assert corrupt("Rest helps.", "Omeprazole helps.", "drug") is None


def test_negation_is_removed_or_added():
    assert corrupt("Do not stop it.", "Please do not stop it.", "negation") == "Please do stop it."
    assert corrupt("It is not serious.", "This isn't serious.", "negation") == "This is serious."
    assert corrupt("Never skip it.", "Never skip a dose.", "negation") == "Always skip a dose."
    assert corrupt("This is common.", "This is common.", "negation") == "This is not common."
    assert corrupt("Rest.", "Please rest.", "negation") == "Please do not rest."
    assert corrupt(REF, SPAN, "negation") is None  # "I would" / "Take": not one imperative
    assert corrupt("Take it.", "Take it with food.", "negation") == "Do not take it with food."
    assert corrupt("It is fine.", "Rest. It is fine.", "negation") is None  # two sentences
    assert corrupt("However, rest.", "However, rest.", "negation") is None  # not a verb


def test_direction_becomes_an_opposite_one():
    ref = "I would recommend increasing your dose of omeprazole."
    span = "Increase your omeprazole dose."
    assert corrupt(ref, span, "direction") == "Decrease your omeprazole dose."
    assert corrupt("Continue it.", "Keep taking it: continue.", "direction") in {
        "Keep taking it: stop.",
    }
    assert corrupt("Hold it.", "I would hold it for now.", "direction") == (
        "I would continue it for now."
    )
    assert corrupt("Take it.", "Start it.", "direction") is None  # not the reference's


def test_time_frame_changes_a_shared_time():
    assert corrupt(REF, SPAN, "time_frame") == "Take omeprazole 20 mg twice a day for 2 months."
    assert corrupt("Rest 3 days.", "Rest for three Days.", "time_frame") == "Rest for three Weeks."
    assert corrupt("Take it daily.", "Take it once a day.", "time_frame") is None
    assert corrupt("Call today.", "Please call us today.", "time_frame") == (
        "Please call us next week."
    )
    assert corrupt("Go to the ER right away.", "Go to the ER right away.", "time_frame") == (
        "Go to the ER within a few weeks."
    )


def test_condition_is_removed_or_added():
    ref = "If you have a fever, call us."
    assert corrupt(ref, "If you get a fever, call us.", "condition") == "Call us."
    assert corrupt("Call if feverish.", "Call us if you have a fever.", "condition") == "Call us."
    added = corrupt("Call us today.", "Please call us today.", "condition", random.Random(0))
    assert added.endswith(", please call us today.") and added.startswith("If ")
    # only one side is conditional: removing or adding would not make it differ
    assert corrupt("Call us if needed.", "Call us.", "condition") is None
    added = corrupt("I will call you.", "I will call you.", "condition")
    assert added.endswith(", I will call you.")
    assert corrupt("Recommendations:", "Recommendations:", "condition") is None  # a header
    assert corrupt("It is common.", "This is common.", "condition") is None  # no instruction
    # "... and if not, call": the condition is not the last clause, left alone
    assert corrupt("Rest if tired.", "Rest and if not tired, walk.", "condition") is None


@pytest.mark.parametrize(
    ("kind", "conflict"),
    [("number", "quantity"), ("unit", "quantity"), ("frequency", "frequency"), ("drug", "drug")],
)
def test_key_term_comparison_sees_the_corruption(kind, conflict):
    """An independent check: the key-term module reads the corrupted span as
    contradicting the reference on the kind changed, and not the original span."""
    changed = corrupt(REF, SPAN, kind, random.Random(1))
    assert conflict not in compare(extract(REF), extract(SPAN))
    assert conflict in compare(extract(REF), extract(changed))


def test_direction_corruption_is_a_key_term_conflict():
    ref = "Please continue your omeprazole as prescribed."
    changed = corrupt(ref, "Continue taking omeprazole.", "direction")
    assert changed == "Stop taking omeprazole."
    assert "direction" in compare(extract(ref), extract(changed))


def test_corrupt_pairs_is_seeded_and_keeps_kinds_apart():
    pairs = [("c1", REF, SPAN), ("c2", "Hello.", "Hi there."), ("c3", REF, SPAN)]
    first = corrupt_pairs(pairs, seed=7, per_pair=3)
    assert first == corrupt_pairs(pairs, seed=7, per_pair=3)
    assert [c.case for c in first] == ["c1"] * 3 + ["c3"] * 3  # "Hi there." has none
    assert len({c.kind for c in first[:3]}) == 3 and all(c.corrupted != SPAN for c in first)
    # six specific kinds apply to REF/SPAN: they come before negation and condition
    assert not {c.kind for c in first} & {"negation", "condition"}
    assert {c.kind for c in corrupt_pairs(pairs, seed=0, kinds=["unit"])} == {"unit"}
    everything = corrupt_pairs(pairs[:1], per_pair=len(CORRUPTION_KINDS))
    assert {c.kind for c in everything} == set(CORRUPTION_KINDS) - {"negation", "direction"}
    with pytest.raises(ValueError, match="per_pair must be >= 1"):
        corrupt_pairs(pairs, per_pair=0)
    with pytest.raises(ValueError, match=r"unknown corruption kind\(s\) \['dose'\]"):
        corrupt_pairs(pairs, kinds=["dose"])
    with pytest.raises(ValueError, match="unknown corruption kind 'dose'"):
        corrupt(REF, SPAN, "dose")


# -- span-level examples -----------------------------------------------------------------

DRAFT = "Rest well. Take 20 mg of omeprazole daily, with food. Call us."


def test_span_examples_by_hand():
    """Draft sentences A = "Rest well.", B = "Take ... food.", C = "Call us.", window 2:
    candidates A, B, C, AB, BC. Gold span is a clause of B: B contains it (positive);
    AB and BC overlap it (left out); A and C are negatives."""
    match = ContentItem("c1", DRAFT, "Take 20 mg omeprazole daily.", True, "Take 20 mg of "
                        "omeprazole daily", span_start=11)  # fmt: skip
    no_match = ContentItem("c2", DRAFT, "Stop it.", False)
    unknown = ContentItem("c3", DRAFT, "Rest.", True)  # a match without a span: no example
    examples = span_examples([match, no_match, unknown])
    assert [(e.item, e.kind, e.span, e.label) for e in examples] == [
        (0, "gold", "Take 20 mg of omeprazole daily", True),
        (0, "containing", "Take 20 mg of omeprazole daily, with food.", True),
        (0, "candidate", "Rest well.", False),
        (0, "candidate", "Call us.", False),
        (1, "candidate", "Rest well.", False),
        (1, "candidate", "Take 20 mg of omeprazole daily, with food.", False),
        (1, "candidate", "Call us.", False),
        (1, "candidate", "Rest well. Take 20 mg of omeprazole daily, with food.", False),
        (1, "candidate", "Take 20 mg of omeprazole daily, with food. Call us.", False),
    ]
    assert {e.case for e in examples} == {"c1", "c2"}


def test_a_gold_sentence_is_its_own_candidate_and_bad_spans_are_refused():
    item = ContentItem("c", DRAFT, "Call us.", True, "Call us.")
    kinds = [(e.kind, e.span) for e in span_examples([item], window=1)]
    assert kinds == [("gold", "Call us."), ("candidate", "Rest well."), ("candidate", kinds[2][1])]
    assert kinds[2][1].startswith("Take 20")
    with pytest.raises(ValueError, match="item 0: field span is not verbatim"):
        span_examples([ContentItem("c", DRAFT, "x", True, "Call us.", span_start=0)])


def test_corruption_examples_come_from_gold_spans_only():
    item = ContentItem("c1", DRAFT, "Take 20 mg of omeprazole daily.", True, "Take 20 mg of "
                       "omeprazole daily", span_start=11)  # fmt: skip
    examples = span_examples([item])
    made = corruption_examples(examples, seed=0, per_pair=2)
    assert len(made) == 2 and all(isinstance(e, SpanExample) for e in made)
    assert {(e.kind, e.label, e.item, e.case) for e in made} == {("corruption", False, 0, "c1")}
    assert len({e.corruption for e in made}) == 2
    assert all(e.span != "Take 20 mg of omeprazole daily" for e in made)
