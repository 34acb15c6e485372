"""The issue's bad-input matrix through EditF1Scorer with the real embedded judges.

Each input gets a finite, documented score: no NaN, no dropped row.
"""

from __future__ import annotations

import math
import warnings

import pytest

from editf1.aggregate import UndefinedMetricWarning
from editf1.builders.readers import demo_rows
from editf1.scorer import EditF1Scorer

pytestmark = pytest.mark.slow

PLAIN = "Hi Ann,\nYour results are normal. Keep taking iron."


@pytest.fixture(scope="module")
def scorer(real_content_judge, real_theme_judge):
    return EditF1Scorer(real_content_judge, real_theme_judge)


def finite(value):
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return True


def score(scorer, predictions, references, **kwargs):
    """Score, check that no row is dropped and nothing is NaN, return the result."""
    result = scorer.score(predictions, references, **kwargs)
    assert result.n_pairs == len(predictions) == len(result.pairs)
    assert [p.row for p in result.pairs] == list(range(len(predictions)))
    assert finite(result.to_dict())
    for pair, reference in zip(result.pairs, references):
        assert len(pair.alignment) == len(scorer.splitter.split(reference))
        assert pair.expected_matches + pair.expected_additions == len(pair.alignment)
    return result


def test_text_of_50000_characters(scorer):
    rows = demo_rows()
    block = "\n".join(r["prediction"] for r in rows[:3])
    long_text = ("\n".join([block] * (50_000 // len(block) + 1)))[:50_000]
    one_sentence = ("word " * 10_000)[:50_000]  # one 50,000-character "sentence"
    reference = rows[0]["reference"]
    assert len(long_text) == len(one_sentence) == 50_000
    result = score(
        scorer,
        [long_text, rows[0]["prediction"], one_sentence, one_sentence],
        [reference, long_text, reference, one_sentence],
    )
    long_draft, long_reply, word_salad, same = result.pairs
    n_long = len(scorer.splitter.split(long_text))
    assert n_long > 300
    # a long draft: every reference sentence answered; each match removes at most a
    # window of 2 draft sentences, everything else is an expected deletion
    assert len(long_draft.prediction_sentences) == n_long
    assert n_long - 2 * long_draft.expected_matches <= long_draft.expected_deletions <= n_long
    assert long_draft.content.precision < 0.05
    # a long reply: one judgement per reference sentence
    assert len(long_reply.alignment) == n_long
    assert long_reply.content.recall < 0.5
    # one very long line without punctuation is one sentence; the encoder truncates it
    assert len(word_salad.prediction_sentences) == 1
    assert word_salad.expected_matches == 0
    assert (same.content.f1, same.expected_matches, same.expected_deletions) == (1.0, 1, 0)


SPANISH = (
    "Hola María, gracias por su mensaje. Tome el ibuprofeno dos veces al día con comida. "
    "Si tiene fiebre, llame a la clínica."
)
CHINESE = "您好，王女士。\n请每天服用两次布洛芬。\n如果发烧，请给诊所打电话。"
ENGLISH = (
    "Hi Maria, thanks for writing. Take ibuprofen twice daily with food. "
    "If you have a fever, call the clinic."
)


def test_non_english_text(scorer):
    result = score(scorer, [SPANISH, CHINESE, SPANISH], [SPANISH, CHINESE, ENGLISH])
    spanish, chinese, cross = result.pairs
    # identical non-English texts: every sentence matches itself
    assert (spanish.expected_matches, spanish.content.f1) == (3, 1.0)
    assert [a.match.text for a in spanish.alignment] == [
        "Hola María, gracias por su mensaje.",
        "Tome el ibuprofeno dos veces al día con comida.",
        "Si tiene fiebre, llame a la clínica.",
    ]
    # Chinese: one sentence per line (Punkt does not split at "。")
    assert (chinese.expected_matches, chinese.content.f1) == (3, 1.0)
    # documented limitation: the English encoder does not match across languages
    assert (cross.expected_matches, cross.expected_additions, cross.expected_deletions) == (
        0,
        3,
        3,
    )
    assert cross.content.f1 == 0.0


def test_html(scorer):
    html = (
        "<p>Hi Ann,</p>\n"
        "<p>Your results are <b>normal</b>.</p>\n"
        "<ul><li>Keep taking iron.</li></ul>"
    )
    result = score(scorer, [html, PLAIN], [PLAIN, html])
    as_draft, as_reply = result.pairs
    # tags stay inside the sentences (one per line) and the judge still matches them
    assert [s.text for s in as_draft.prediction_sentences] == [
        "<p>Hi Ann,</p>",
        "<p>Your results are <b>normal</b>.</p>",
        "<ul><li>Keep taking iron.</li></ul>",
    ]
    assert as_draft.expected_matches == 3 and as_draft.content.f1 == 1.0
    assert as_reply.expected_matches == 3 and as_reply.content.f1 == 1.0


def test_emoji(scorer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = score(
            scorer, ["Hi Ann! 🙂\nYour results are normal 👍\n🎉🎉", "🙂🙂"], [PLAIN] * 2
        )
    with_emoji, only_emoji = result.pairs
    # emoji-only pieces are not sentences; the rest match: EM 2, EA 1, ED 0
    assert [s.text for s in with_emoji.prediction_sentences] == [
        "Hi Ann!",
        "Your results are normal 👍",
    ]
    assert (with_emoji.expected_matches, with_emoji.expected_additions) == (2, 1)
    # P 2/2, R 2/3, F1 = 2*2/(2*2+1+0) = 0.8
    assert with_emoji.content.f1 == pytest.approx(0.8)
    # an emoji-only draft has no sentence: precision 0 ("warn"), one warning naming row 1
    assert only_emoji.prediction_sentences == ()
    assert (only_emoji.content.precision, only_emoji.content.f1) == (0.0, 0.0)
    undefined = [w for w in caught if issubclass(w.category, UndefinedMetricWarning)]
    assert len(undefined) == 1 and "[1]" in str(undefined[0].message)


def test_reference_identical_to_the_draft(scorer):
    references = [r["reference"] for r in demo_rows()]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        result = score(scorer, references, references)
    assert all(p.content.f1 == 1.0 and p.theme.f1 == 1.0 for p in result.pairs)
    assert (result.f1, result.theme.f1) == (1.0, 1.0)
    assert result.expected_additions == result.expected_deletions == 0


def test_draft_repeating_one_sentence_five_times(scorer):
    sentence = "Please rest and drink plenty of fluids."
    result = score(scorer, [" ".join([sentence] * 5)], [sentence])
    pair = result.pairs[0]
    # the reference sentence matches one copy: EM 1, EA 0, ED 4
    assert (pair.expected_matches, pair.expected_additions, pair.expected_deletions) == (1, 0, 4)
    assert pair.alignment[0].match.text == sentence
    assert [d.text for d in pair.expected_deletion_sentences] == [sentence] * 4
    # P 1/5, R 1/1, F1 = 2*1/(2*1+0+4) = 1/3
    assert (pair.content.precision, pair.content.recall) == pytest.approx((0.2, 1.0))
    assert pair.content.f1 == pytest.approx(1 / 3)
