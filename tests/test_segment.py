"""SentenceSplitter: abbreviations, lists, lines, offsets and odd input (issue 2)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from editf1.segment import Sentence, SentenceSplitter, has_word


def texts(splitter, text):
    sentences = splitter.split(text)
    for s in sentences:  # every sentence points back at the source
        assert text[s.start : s.end] == s.text
    return [s.text for s in sentences]


@pytest.mark.parametrize(
    "sentence",
    [
        "Dr. Lee will call you tomorrow.",
        "Use a pain reliever, e.g. ibuprofen, twice a day.",
        "Rest the ankle, i.e. no running, for a week.",
        "Come in at 3 p.m. tomorrow for the blood draw.",
        "Tylenol vs. ibuprofen is your choice.",
        "Drink approx. two liters of water a day.",
        "Take 2.5 mg of warfarin tonight.",
        "Take amoxicillin b.i.d. with food.",
        "Take Tylenol 500 mg q.6h. as needed for pain.",
        "Use the inhaler q.4h. while you are wheezing.",
    ],
)
def test_abbreviations_and_decimals_stay_inside_a_sentence(splitter, sentence):
    text = f"Thanks for writing. {sentence} Call us with questions."
    assert texts(splitter, text) == ["Thanks for writing.", sentence, "Call us with questions."]


def test_abbreviation_followed_by_sentence_starter_splits(splitter):
    # documented limitation: after "p.m." a frequent starter ("Please") opens a sentence
    assert texts(splitter, "Come at 3 p.m. Please fast first.") == [
        "Come at 3 p.m.",
        "Please fast first.",
    ]


def test_numbered_list_items_exclude_the_marker(splitter):
    text = "1. Rest.\n2. Fluids.\n10) Ice the knee."
    sentences = splitter.split(text)
    # "1. " is 0-3, "Rest." 3-8, "\n" 8, "2. " 9-12, "Fluids." 12-19, "\n" 19,
    # "10) " 20-24, "Ice the knee." 24-37
    assert sentences == [
        Sentence("Rest.", 3, 8),
        Sentence("Fluids.", 12, 19),
        Sentence("Ice the knee.", 24, 37),
    ]


def test_inline_numbered_list_markers_are_not_sentences(splitter):
    # Punkt cuts after "1." / "2." inside a line; a bare marker is not a sentence
    text = "You can: 1. Rest. 2. Ice the knee. 3. Elevate it."
    assert texts(splitter, text) == ["You can: 1.", "Rest.", "Ice the knee.", "Elevate it."]
    # a number that ends a sentence is kept
    assert texts(splitter, "Your pain score was 2. That is fine.") == [
        "Your pain score was 2.",
        "That is fine.",
    ]


@pytest.mark.parametrize("marker", ["-", "*", "•", "a)", "b."])
def test_bulleted_list_items_exclude_the_marker(splitter, marker):
    text = f"Plan:\n{marker} Rest the knee\n  {marker} Take ibuprofen"
    assert texts(splitter, text) == ["Plan:", "Rest the knee", "Take ibuprofen"]


def test_line_breaks_split_even_without_punctuation(splitter):
    text = "Rest the knee\nIce it twice a day\r\nCall if it swells"
    assert texts(splitter, text) == ["Rest the knee", "Ice it twice a day", "Call if it swells"]


def test_greeting_and_sign_off_lines_are_sentences(splitter):
    text = "Hi Maria,\n\nYour labs look good. Keep it up.\n\nBest,\nDr. Okafor"
    assert texts(splitter, text) == [
        "Hi Maria,",
        "Your labs look good.",
        "Keep it up.",
        "Best,",
        "Dr. Okafor",
    ]


def test_offsets_index_into_the_source(splitter):
    text = "  Hi Ann,\n   Your iron is low.  Take one tablet daily.  \n- Recheck in 3 months."
    sentences = splitter.split(text)
    # leading blanks of a line are not part of a sentence
    assert sentences == [
        Sentence("Hi Ann,", 2, 9),
        Sentence("Your iron is low.", 13, 30),
        Sentence("Take one tablet daily.", 32, 54),
        Sentence("Recheck in 3 months.", 59, 79),
    ]
    assert all(text[s.start : s.end] == s.text for s in sentences)
    assert all(a.end <= b.start for a, b in pairwise(sentences))


@pytest.mark.parametrize(
    "text", ["", "   ", " \n\t\r\n ", "...", "?!.", "- ", "1.", "🙂", "🙂 👍 ❤️"]
)
def test_inputs_without_a_word_give_no_sentence(splitter, text):
    assert splitter.split(text) == []


def test_emoji_inside_text_are_kept_and_emoji_only_pieces_dropped(splitter):
    text = "Great news! 🎉\n👍\nSee you soon 🙂"
    # "🎉" after "!" and the line "👍" hold no word: not sentences; a trailing emoji
    # stays part of its sentence
    assert texts(splitter, text) == ["Great news!", "See you soon 🙂"]


def test_spanish_with_accents(splitter):
    text = "Hola María, tome el medicamento dos veces al día. Llame si tiene fiebre."
    assert texts(splitter, text) == [
        "Hola María, tome el medicamento dos veces al día.",
        "Llame si tiene fiebre.",
    ]


def test_chinese_stays_one_sentence_per_line(splitter):
    # documented: Punkt does not know "。", so a Chinese line is one sentence
    text = "请多喝水。如果发烧请打电话。\n谢谢。"
    assert texts(splitter, text) == ["请多喝水。如果发烧请打电话。", "谢谢。"]


def test_html_is_split_as_plain_text(splitter):
    # documented: tags are characters like any other; lines and Punkt decide
    text = "<p>Hello Anna,</p>\n<p>Please rest. Call us.</p>"
    assert texts(splitter, text) == ["<p>Hello Anna,</p>", "<p>Please rest.", "Call us.</p>"]


def test_has_word_any_script():
    assert has_word("a") and has_word("7") and has_word("día") and has_word("水")
    assert not has_word("") and not has_word(" .,!? ") and not has_word("🙂") and not has_word("_")


def test_custom_abbreviations_and_fingerprint():
    plain = SentenceSplitter(abbreviations=frozenset())
    clinical = SentenceSplitter()
    text = "Ask Dr. Lee today."
    assert [s.text for s in clinical.split(text)] == ["Ask Dr. Lee today."]
    # without "dr" as an abbreviation Punkt ends a sentence after "Dr."
    assert [s.text for s in plain.split(text)] == ["Ask Dr.", "Lee today."]
    assert plain.fingerprint != clinical.fingerprint
    assert clinical.fingerprint == SentenceSplitter().fingerprint
    assert clinical.fingerprint.startswith("punkt-clinical:")
