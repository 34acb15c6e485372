"""Issue 20's clinically decisive corruptions, and OncQA case 12's dose change, against
every shipped content judge: each judge must call a corrupted span NO MATCH and the
same span uncorrupted a match (the control: a judge answering NO MATCH to everything
cannot pass both).

What a judge still misses is recorded per judge as a strict expected failure: the day a
judge calls one NO MATCH, its test passes, the xfail fails, and its set must shrink
(docs/judges.md points here for the record, per judge)."""

from __future__ import annotations

import functools

import pytest

from editf1.judges import load_content_judge
from editf1.judges.base import JudgeRequest
from editf1.judges.cross_encoder import WEIGHTS_FILE, shipped_model
from editf1.segment import SentenceSplitter
from editf1.training.corruptions import corrupt

pytestmark = pytest.mark.slow

#: A matched (sentence, span) pair per corruption class, each with its corrupted span
#: (the generator's output, fixed here so the test does not depend on its seed).
CORRUPTED = {
    "number": ("Take 20 mg of omeprazole daily.", "Take 40 mg of omeprazole daily."),
    "unit": ("Take 20 mg of omeprazole daily.", "Take 20 mcg of omeprazole daily."),
    "frequency": ("Take omeprazole twice a day.", "Take omeprazole once a day."),
    "drug": ("Take omeprazole every morning.", "Take warfarin every morning."),
    "negation": (
        "You should take your medication with food.",
        "You should not take your medication with food.",
    ),
    "direction": (
        "Please continue taking your tamoxifen.",
        "Please stop taking your tamoxifen.",
    ),
    "time_frame": (
        "The rash should go away within 2 days.",
        "The rash should go away within 2 months.",
    ),
    "condition": (
        "Please go to the emergency room.",
        "If you develop a fever, please go to the emergency room.",
    ),
}

#: judge -> (load_content_judge arguments, the corruption classes it still matches,
#: whether it still matches case 12's dose change)
JUDGES = {
    # cosine and word recall with the veto: quantities (dose, unit, time frame),
    # frequency, direction, drug, and the negation and condition conflicts
    "default": (("embedding", {}), set(), False),
    # the fine-tuned cross-encoder, with the same veto on top
    "cross-encoder": (("cross-encoder", {}), set(), False),
}

SHIPPED_CROSS_ENCODER = (shipped_model() / WEIGHTS_FILE).is_file()


@functools.cache
def _judge(name: str):
    if name == "cross-encoder" and not SHIPPED_CROSS_ENCODER:
        pytest.skip("the shipped cross-encoder is absent")
    return load_content_judge(*JUDGES[name][0])


def _judgement(name: str, sentence: str, span: str):
    """Judge ``name`` on ``sentence`` against a three-sentence draft holding ``span``."""
    splitter = SentenceSplitter()
    draft = f"Thank you for your message. {span} Let us know how you feel."
    request = JudgeRequest(tuple(splitter.split(sentence)), draft, tuple(splitter.split(draft)))
    ((judgement,),) = _judge(name).match([request])
    return judgement


def _missed(name: str, why: str):
    return pytest.mark.xfail(strict=True, reason=f"the shipped {name} judge {why}")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        pytest.param(name, kind, marks=_missed(name, "matches this corruption"))
        if kind in missed
        else (name, kind)
        for name, (_, missed, _) in JUDGES.items()
        for kind in CORRUPTED
    ],
)
def test_judge_calls_each_corruption_class_no_match(name, kind):
    sentence, corrupted = CORRUPTED[kind]
    assert corrupt(sentence, sentence, kind) is not None  # the class applies to it
    judgement = _judgement(name, sentence, corrupted)
    assert judgement.status == "no_match", (name, kind, judgement.score)


@pytest.mark.parametrize(("name", "kind"), [(n, k) for n in JUDGES for k in CORRUPTED])
def test_judge_matches_each_sentence_uncorrupted(name, kind):
    sentence, _ = CORRUPTED[kind]
    assert _judgement(name, sentence, sentence).status == "match", (name, kind)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=_missed(name, "matches the dose change")) if dose else name
        for name, (_, _, dose) in JUDGES.items()
    ],
)
def test_judge_calls_case_12_dose_change_no_match(name, shared_data):
    """OncQA case 12, second oncologist: "increasing your dose of omeprazole" against the
    GPT-4 draft's "continue taking your omeprazole as prescribed" (stage-2 label: NO
    MATCH)."""
    from editf1.validation.agreement import judge_content_items
    from research.stage2_labels import oncqa_stage2_content_items

    (dose,) = [
        item
        for item in oncqa_stage2_content_items(shared_data)
        if item.case == "oncqa:12"
        and item.reference.startswith("I would recommend increasing your dose of omeprazole")
    ]
    assert not dose.match
    (judgement,) = judge_content_items(_judge(name), [dose])
    assert judgement.status == "no_match", name


#: the veto kind that rules out each corruption class's span
VETO_KIND = {
    "number": "quantity",
    "unit": "quantity",
    "frequency": "frequency",
    "drug": "drug",
    "negation": "negation",
    "direction": "direction",
    "time_frame": "quantity",
    "condition": "condition",
}


@pytest.mark.parametrize("kind", list(CORRUPTED))
def test_default_names_the_vetoed_span_and_why(kind):
    """The default's NO MATCH names the corrupted span it would have matched without the
    veto, and the veto kind that ruled it out; the uncorrupted match names none."""
    sentence, corrupted = CORRUPTED[kind]
    judgement = _judgement("default", sentence, corrupted)
    assert judgement.status == "no_match" and judgement.vetoed is not None
    assert judgement.vetoed.span.text == corrupted
    assert VETO_KIND[kind] in judgement.vetoed.kinds
    assert judgement.vetoed.probability >= _judge("default").threshold > judgement.score
    assert _judgement("default", sentence, sentence).vetoed is None
