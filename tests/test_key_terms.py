"""Clinical key terms (editf1.judges.key_terms): extraction and comparison by hand."""

from __future__ import annotations

import pytest

from editf1.judges.key_terms import compare, extract

# ---------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    ("text", "quantities"),
    [
        ("Take 20 mg now.", {("mass", 20.0, 20.0)}),
        ("Take 500 mcg.", {("mass", 0.5, 0.5)}),
        ("Take 1-2 tablets.", {("tablets", 1.0, 2.0)}),
        ("See you in two weeks.", {("time", 336.0, 336.0)}),  # 2 x 168 hours
        ("It lasts 3 to 5 days.", {("time", 72.0, 120.0)}),
        ("A fever of 100.4 degrees F.", {("fahrenheit", 100.4, 100.4)}),
        ("Come at 10:30 am or 2 pm.", {("clock", 630.0, 630.0), ("clock", 840.0, 840.0)}),
        ("You had 5 cycles.", {("cycles", 5.0, 5.0)}),
        ("Rest well.", set()),
    ],
)
def test_quantities(text, quantities):
    assert extract(text).quantities == quantities


@pytest.mark.parametrize(
    ("text", "frequencies"),
    [
        ("Take it twice daily.", {2.0}),
        ("Take it three times a day.", {3.0}),
        ("Take it every 8 hours.", {3.0}),
        ("Take it bid.", {2.0}),
        ("Take it once a week.", {1 / 7}),
        ("Use it as needed.", {"as needed"}),
        ("Take it daily.", {1.0}),
    ],
)
def test_frequencies(text, frequencies):
    assert extract(text).frequencies == frequencies


def test_a_frequency_is_not_also_a_quantity():
    # "every 8 hours" is 3 per day, and its "8 hours" is not a duration
    assert extract("Take 1 tablet every 8 hours.").quantities == {("tablets", 1.0, 1.0)}


@pytest.mark.parametrize(
    ("text", "directions"),
    [
        ("Continue taking it.", {"continue"}),
        ("We increased the dose.", {"increase"}),
        ("We are reducing the dose.", {"decrease"}),
        ("Please stop it and start the new one.", {"stop", "start"}),
        ("We will hold your chemotherapy.", {"hold"}),
        ("Keep taking your omeprazole.", {"continue"}),
        # negated within three words: no change stated
        ("The dose should not be increased.", set()),
        ("Don't stop the tablets.", set()),
        # an adjective, not a direction
        ("Your lower back pain may be muscular.", set()),
    ],
)
def test_directions(text, directions):
    assert extract(text).directions == directions


def test_drugs_and_tests():
    terms = extract("If the pain returns, don't take tylenol or omeprazole before your CT scan?")
    assert terms.drugs == {"tylenol", "omeprazole"}
    assert terms.tests == {"ct"}
    # "april" ends in the stem "pril" but has under six letters
    assert extract("See you in April.").drugs == set()
    assert extract("Pembrolizumab and cisplatin.").drugs == {"pembrolizumab", "cisplatin"}
    assert extract("Rest.") == extract("Sleep.")  # no key term


# ---------------------------------------------------------------- comparison


def test_the_dose_change_of_oncqa_case_12_is_a_direction_conflict():
    reference = extract(
        "I would recommend increasing your dose of omeprazole, as it may help better "
        "manage heartburn and indigestion."
    )
    span = extract(
        "I recommend that you continue taking your omeprazole as prescribed, as it can "
        "help manage heartburn and indigestion."
    )
    # key terms of the reference: increase, omeprazole; the span keeps omeprazole and
    # says continue instead of increase
    assert compare(reference, span) == {"direction"}


@pytest.mark.parametrize(
    ("reference", "span", "conflicts"),
    [
        # 20 mg (mass) and daily (1/day): the dose differs, the frequency is kept
        ("Take 20 mg daily.", "Take 40 mg daily.", {"quantity"}),
        # 2 weeks = 14 days: kept
        ("Come back in 2 weeks.", "Come back in 14 days.", set()),
        # 1-2 tablets against 2 tablets: the intervals overlap
        ("Take 1-2 tablets.", "Take 2 tablets.", set()),
        ("Take it daily.", "Take it twice daily.", {"frequency"}),
        ("Take omeprazole.", "Take pantoprazole.", {"drug"}),
        ("You need a CT.", "You need an MRI.", {"test"}),
        # omitted, not contradicted: no conflict
        ("Take 20 mg of omeprazole.", "Take your medicine.", set()),
        # the span has the reference's direction too: kept, no conflict
        ("Stop the ibuprofen.", "Stop the ibuprofen and continue the rest.", set()),
        ("Start the new tablets.", "Hold the new tablets.", {"direction"}),
        # increase and start are not opposed
        ("Increase the dose.", "Start the dose.", set()),
        # three terms (20 mg, twice daily, omeprazole), two kept
        ("Omeprazole 20 mg twice daily.", "Omeprazole 20 mg.", set()),
    ],
)
def test_compare(reference, span, conflicts):
    assert compare(extract(reference), extract(span)) == conflicts


# ---------------------------------------------------------------- rules version

#: :data:`editf1.judges.key_terms.RULES_VERSION` -> the digest of the rules' answers on
#: every (reference sentence, draft sentence) pair of the shipped demo set. A rule change
#: that moves an answer fails here: bump ``RULES_VERSION`` (the fingerprints of judges
#: that read the rules name it) and record the new digest.
RULES_DIGESTS = {2: "8939d4ca0335404e"}


def _rules_answers() -> list:
    """Every demo pair's key-term and clause conflicts, as JSON values."""
    import json
    from importlib import resources

    from editf1.judges.clauses import clause_conflicts, clauses
    from editf1.segment import SentenceSplitter

    split = SentenceSplitter().split
    lines = resources.files("editf1.data").joinpath("demo.jsonl").read_text("utf-8")
    answers = []
    for row in map(json.loads, lines.splitlines()):
        for ref in split(row["reference"]):
            for span in split(row["prediction"]):
                c = compare(extract(ref.text), extract(span.text))
                answers.append(
                    [
                        sorted(c),
                        sorted(clause_conflicts(clauses(ref.text), clauses(span.text))),
                    ]
                )
    return answers


def test_rules_answers_are_those_of_the_rules_version():
    import hashlib
    import json

    from editf1.judges.key_terms import RULES_VERSION

    answers = _rules_answers()
    assert len(answers) == 778  # every pair of the demo set
    assert any(a[0] for a in answers) and any(a[1] for a in answers)  # conflicts found
    digest = hashlib.sha256(json.dumps(answers).encode()).hexdigest()[:16]
    assert RULES_DIGESTS.get(RULES_VERSION) == digest, (
        f"the key-term or clause rules answer differently: bump RULES_VERSION and record {digest}"
    )
