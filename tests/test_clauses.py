"""Negation and condition clauses (editf1.judges.clauses), by hand on small sentences."""

from __future__ import annotations

import pytest

from editf1.judges.clauses import clause_conflicts, clauses
from editf1.judges.key_terms import CONFLICT_KINDS, check_veto


def test_negated_asserted_and_conditional_words():
    c = clauses("If you still feel dizzy, do not drive, but rest at home.")
    # "drive" heads the negation; the clause ends at the comma; words as five letters
    assert c.negated == {"drive"}
    assert c.asserted == {"feel", "dizzy", "rest", "home"}
    assert c.words == {"feel", "dizzy", "drive", "rest", "home"}
    assert c.condition == {"feel", "dizzy"}
    # a word negated in one clause and asserted in another counts as negated only
    c = clauses("Take the tablets, not the syrup; do not take them at night.")
    assert c.negated == {"syrup", "take"} and "take" not in c.asserted
    assert clauses("Rest.") == clauses("Rest.") and clauses("").words == frozenset()


@pytest.mark.parametrize(
    ("reference", "span", "conflicts"),
    [
        # a negated head ("take") asserted in the other text, either way round
        ("Take it with food.", "Do not take it with food.", {"negation"}),
        ("You should not take it.", "You should take it.", {"negation"}),
        # negated in both, or the negation's head is not in the other text: no conflict
        ("Do not take ibuprofen.", "Avoid ibuprofen.", set()),
        ("There is no fever.", "The scan was clear.", set()),
        # only the head is negated: "pain" of "not responding to pain medicine" is not
        ("Severe pain not responding to pain medicine.", "Severe pain.", set()),
        # "do not hesitate to call" asks to call
        ("Please call us.", "Please don't hesitate to call us.", set()),
        # a condition the other text does not mention, either way round
        ("Go to the emergency room.", "If you develop a fever, go to the emergency room.",
         {"condition"}),
        ("If you develop a fever, go to the emergency room.", "Go to the emergency room.",
         {"condition"}),
        # the same condition in other words ("fever" in both): no conflict
        ("Call us if you have a fever.", "If you get a fever, call us.", set()),
        # both conditional: conditions are not compared, not even a changed one (a
        # known miss) nor the same one in other words
        ("Call us if you're worried.", "You may call us if you are concerned.", set()),
        ("Call us if the fever lasts three days.", "Call us if you have a rash.", set()),
        # both at once
        ("If it hurts, do not run.", "Run.", {"negation", "condition"}),
    ],
)  # fmt: skip
def test_clause_conflicts(reference, span, conflicts):
    assert clause_conflicts(clauses(reference), clauses(span)) == conflicts


def test_a_veto_can_name_the_clause_kinds():
    assert CONFLICT_KINDS[-2:] == ("negation", "condition")
    assert check_veto(["drug", "negation", "condition"]) == ("drug", "negation", "condition")
    with pytest.raises(ValueError, match="unknown veto kind"):
        check_veto(["negations"])


def test_train_judge_help_names_every_veto_kind(capsys):
    from editf1.cli.main import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["train-judge", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ", ".join(CONFLICT_KINDS) in help_text


def test_a_long_hostile_text_reads_each_negation_once():
    """Thousands of cues and conditions in one clause (no punctuation): each negation
    reads at most five words ahead and a clause's condition is read once, so this stays
    linear in the text's length; the answer is what the rules say."""
    text = "no " * 5000 + "fever " + "if you can " * 5000 + "rest"
    c = clauses(text)
    assert c.negated == {"fever"} and c.asserted == {"rest"}
    assert c.condition == {"rest"}  # "you" and "can" are function words
    assert clause_conflicts(c, clauses("You have a fever.")) == {"negation", "condition"}
