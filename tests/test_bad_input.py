"""The bad-input suite: every kind of bad or odd input below goes through the Python API
(``editf1.score``), the evaluate module (``evaluate.load("metrics/edit_f1").compute``)
and the command line (``edit-f1 score``), each with the exact judge where the judge does
not matter. For every one: no crash (a documented result, or a documented error:
``TypeError``, ``ValueError`` or :class:`editf1.InputError`; exit 2 with one
``edit-f1: error:`` line on the command line), no NaN in any result, no silently dropped
row (rows in = rows out, in order) and no text of a row in any message or warning.

52 kinds of input, in four tables:

Rows (ROW_CASES, 33; one odd row between two good ones, all three shells):
 1 plain pair (control)                     18 lone surrogate in a draft
 2 empty draft                              19 lone surrogate in a reply
 3 whitespace-only draft                    20 several replies (a list)
 4 punctuation-only draft                   21 an empty list of replies
 5 emoji-only draft                         22 a list of replies holding None
 6 empty reply                              23 HTML markup
 7 whitespace-only reply                    24 Chinese text
 8 punctuation-only reply                   25 right-to-left text
 9 emoji-only reply                         26 zero-width and combining marks
10 None draft                               27 CRLF, vertical tab, form feed
11 None reply                               28 NUL characters
12 int draft                                29 one 20,000-character sentence
13 float NaN draft                          30 500 sentences
14 bool draft                               31 draft identical to the reply
15 bytes draft (no JSON form: not on the CLI)  32 one sentence repeated 5 times
16 dict draft                               33 a list nested in the replies
17 list as a draft
Corpora (CORPUS_CASES, 7; Python API and evaluate module):
34 empty lists  35 lengths differ  36 a bare string  37 a generator  38 a dict  39 None
40 one reply for a draft and a list of replies for the next (mixed kinds)
Options (OPTION_CASES, 7; Python API and evaluate module, and the command line's own):
41 include_other="False"  42 batch_size=1.5  43 batch_size="7"  44 batch_size=True
45 batch_size=0  46 zero_division=0.5  47 keep_pairs / return_pairs "yes"
Files (FILE_CASES, 5; the command line):
48 invalid JSON line  49 a JSON line that is not an object  50 a missing field
51 bytes that are not UTF-8  52 an escaped lone surrogate ("\\ud800") in JSON
"""

from __future__ import annotations

import json
import math
import re
import warnings

import evaluate
import pytest

import editf1
from editf1.aggregate import UndefinedMetricWarning
from editf1.builders.readers import demo_rows
from editf1.cli.main import main
from editf1.inputs import InputError
from editf1.scorer import EditF1Scorer

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
EXACT = {"content_judge": "exact", "theme_judge": None}
FAST = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]
#: A word no message may contain: every row's text holds it.
SECRET = "Zorblaxia"
GOOD_DRAFT = f"Hi {SECRET}, rest today. Drink water."
GOOD_REPLY = f"Hi {SECRET}, rest today. Take ibuprofen."
LONG = (SECRET + " has pain ") * 1300
MANY = " ".join(f"{SECRET} step {i} is fine." for i in range(500))

OK = "ok"
#: (kind, draft, reply, outcome): outcome OK (scored) or the error; the odd row is row 1.
ROW_CASES = [
    ("plain pair", f"{SECRET} rests today.", f"{SECRET} rests today. Call us.", OK),
    ("empty draft", "", GOOD_REPLY, OK),
    ("whitespace-only draft", " \n\t ", GOOD_REPLY, OK),
    ("punctuation-only draft", "...!?", GOOD_REPLY, OK),
    ("emoji-only draft", "🙂🙂 👍", GOOD_REPLY, OK),
    ("empty reply", GOOD_DRAFT, "", InputError),
    ("whitespace-only reply", GOOD_DRAFT, " \n ", InputError),
    ("punctuation-only reply", GOOD_DRAFT, "... --", InputError),
    ("emoji-only reply", GOOD_DRAFT, "🙂", InputError),
    ("None draft", None, GOOD_REPLY, InputError),
    ("None reply", GOOD_DRAFT, None, InputError),
    ("int draft", 42, GOOD_REPLY, InputError),
    ("float NaN draft", float("nan"), GOOD_REPLY, InputError),
    ("bool draft", True, GOOD_REPLY, InputError),
    ("bytes draft", SECRET.encode(), GOOD_REPLY, InputError),
    ("dict draft", {"text": GOOD_DRAFT}, GOOD_REPLY, InputError),
    ("list as a draft", [GOOD_DRAFT], GOOD_REPLY, InputError),
    ("lone surrogate in a draft", f"{SECRET} rests \ud800 today.", GOOD_REPLY, InputError),
    ("lone surrogate in a reply", GOOD_DRAFT, f"{SECRET} \udfff rests.", InputError),
    ("several replies", GOOD_DRAFT, [GOOD_REPLY, f"{SECRET}: drink water."], OK),
    ("an empty list of replies", GOOD_DRAFT, [], InputError),
    ("a list of replies holding None", GOOD_DRAFT, [GOOD_REPLY, None], InputError),
    ("HTML markup", f"<p>Hi {SECRET},</p><br><b>Rest</b> today.", GOOD_REPLY, OK),
    ("Chinese text", f"您好，{SECRET}。\n请每天服用两次布洛芬。", GOOD_REPLY, OK),
    ("right-to-left text", f"مرحبا {SECRET}. خذ الدواء.", GOOD_REPLY, OK),
    (
        "zero-width and combining marks",
        f"Hi {SECRET}\u200d, re\u0301st\u200b today.",
        GOOD_REPLY,
        OK,
    ),
    (
        "CRLF, vertical tab, form feed",
        f"Hi {SECRET},\r\nrest today.\x0bDrink\x0cwater.",
        GOOD_REPLY,
        OK,
    ),
    ("NUL characters", f"Hi {SECRET},\x00 rest today.\x00", GOOD_REPLY, OK),
    ("one 20,000-character sentence", LONG, GOOD_REPLY, OK),
    ("500 sentences", MANY, MANY, OK),
    ("draft identical to the reply", GOOD_REPLY, GOOD_REPLY, OK),
    ("one sentence repeated 5 times", f"{SECRET} rests. " * 5, f"{SECRET} rests.", OK),
    ("a list nested in the replies", GOOD_DRAFT, [[GOOD_REPLY]], InputError),
]


def _generator():
    return (draft for draft in [GOOD_DRAFT])


#: (kind, predictions, references, outcome of editf1.score, outcome of evaluate);
#: callables are called for each use (a generator is consumed once).
CORPUS_CASES = [
    ("empty lists", [], [], ValueError, ValueError),
    ("lengths differ", [GOOD_DRAFT, GOOD_DRAFT], [GOOD_REPLY], ValueError, ValueError),
    ("a bare string", GOOD_DRAFT, GOOD_REPLY, TypeError, TypeError),
    ("a generator", _generator, [GOOD_REPLY], TypeError, TypeError),
    ("a dict", {"r0": GOOD_DRAFT}, [GOOD_REPLY], TypeError, TypeError),
    ("None", None, [GOOD_REPLY], TypeError, TypeError),
    # one reply for a draft, several for the next: the library scores each row as given;
    # evaluate would store the list as its string form, so the module refuses the mix
    ("mixed kinds", [GOOD_DRAFT, GOOD_DRAFT], [GOOD_REPLY, [GOOD_REPLY]], OK, TypeError),
]

#: (kind, editf1.score options, evaluate compute options, error, option named).
OPTION_CASES = [
    ("include_other='False'", {"include_other": "False"}, None, TypeError, "include_other"),
    ("batch_size=1.5", {"batch_size": 1.5}, None, TypeError, "batch_size"),
    ("batch_size='7'", {"batch_size": "7"}, None, TypeError, "batch_size"),
    ("batch_size=True", {"batch_size": True}, None, TypeError, "batch_size"),
    ("batch_size=0", {"batch_size": 0}, None, ValueError, "batch_size"),
    ("zero_division=0.5", {"zero_division": 0.5}, None, ValueError, "zero_division"),
    ("keep_pairs='yes'", {"keep_pairs": "yes"}, {"return_pairs": "yes"}, TypeError, "_pairs"),
]

#: (kind, JSON Lines bytes, what the message names).
FILE_CASES = [
    ("invalid JSON line", b'{"prediction": "a.", "reference": "b."}\n{"Zorblaxia\n', "line 2"),
    ("not an object", b'["Zorblaxia rests."]\n', "line 1"),
    ("a missing field", b'{"prediction": "Zorblaxia rests."}\n', "line 1"),
    (
        "not UTF-8",
        '{"prediction": "Zorblaxia café", "reference": "a."}\n'.encode("latin-1"),
        "line 1",
    ),
    (
        "escaped lone surrogate",
        b'{"prediction": "Zorblaxia \\ud800 rests.", "reference": "Zorblaxia rests."}\n',
        "pairs.jsonl, line 1: field 'prediction' is not valid Unicode",
    ),
]


def test_the_docstring_counts_every_kind_of_input():
    tables = {"ROW_CASES": ROW_CASES, "CORPUS_CASES": CORPUS_CASES}
    tables |= {"OPTION_CASES": OPTION_CASES, "FILE_CASES": FILE_CASES}
    for name, table in tables.items():
        assert f"({name}, {len(table)};" in __doc__, name
        assert len({case[0] for case in table}) == len(table), name
    total = sum(len(table) for table in tables.values())
    assert f"\n{total} kinds of input" in __doc__ and total >= 40


# ---------------------------------------------------------------- checks of every result


def finite(value) -> bool:
    """No NaN or infinity anywhere in a result."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    return True


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, bytes):
        return [value.decode("utf-8", "replace")]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _texts(v)]
    return []


def assert_private(messages: list[str], *values) -> None:
    """No message repeats a row's text: not the word every row holds, nor any 12
    characters of a row (windows every 6 characters catch any quote of 18 or more)."""
    for message in messages:
        assert SECRET not in message, message
        for text in (t for v in values for t in _texts(v)):
            for i in range(0, max(len(text) - 11, 0), 6):
                piece = text[i : i + 12]
                assert not (piece.strip() and piece in message), (piece, message)


def assert_names_row_1(message: str) -> None:
    rows = re.findall(r"(?:predictions?|references?)\[(\d+)\]", message)
    assert rows and set(rows) == {"1"}, message


def _rows(draft, reply) -> tuple[list, list]:
    """The odd row between two good ones; every reply a list if the odd one is."""
    several = isinstance(reply, list)
    good = [GOOD_REPLY] if several else GOOD_REPLY
    return [GOOD_DRAFT, draft, GOOD_DRAFT], [good, reply, good]


def _call(function):
    """(result or None, error or None, warning messages) of ``function()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, error = function(), None
        except (TypeError, ValueError) as raised:  # InputError is a ValueError
            result, error = None, raised
    return result, error, [str(w.message) for w in caught]


def _expect(outcome, error) -> None:
    if outcome is OK:
        assert error is None, f"{type(error).__name__}: {error}"
    else:
        assert type(error) is outcome, f"expected {outcome.__name__}, got {error!r}"


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(ROOT / "metrics" / "edit_f1"), "exact+none")


ROW_IDS = [case[0] for case in ROW_CASES]


# ---------------------------------------------------------------- rows, in every shell


@pytest.mark.parametrize(("kind", "draft", "reply", "outcome"), ROW_CASES, ids=ROW_IDS)
def test_rows_through_the_python_api(kind, draft, reply, outcome):
    predictions, references = _rows(draft, reply)
    result, error, warned = _call(
        lambda: editf1.score(predictions=predictions, references=references, **EXACT)
    )
    _expect(outcome, error)
    if error is None:
        assert result.n_pairs == 3 and [p.row for p in result.pairs] == [0, 1, 2]
        assert finite(result.to_dict())
    else:
        assert_names_row_1(str(error))
    assert_private([*warned, str(error or "")], draft, reply)


@pytest.mark.parametrize(("kind", "draft", "reply", "outcome"), ROW_CASES, ids=ROW_IDS)
def test_rows_through_the_evaluate_module(metric, kind, draft, reply, outcome):
    predictions, references = _rows(draft, reply)
    result, error, warned = _call(
        lambda: metric.compute(predictions=predictions, references=references)
    )
    _expect(outcome, error)
    if error is None:
        assert result["n_pairs"] == 3 and len(result["per_pair"]) == 3
        assert finite(result)
    else:
        assert_names_row_1(str(error))
    assert_private([*warned, str(error or "")], draft, reply)


@pytest.mark.parametrize(("kind", "draft", "reply", "outcome"), ROW_CASES, ids=ROW_IDS)
def test_rows_through_the_command_line(tmp_path, capsys, kind, draft, reply, outcome):
    if isinstance(draft, bytes):
        pytest.skip("bytes have no JSON form: a file holds text")
    predictions, references = _rows(draft, reply)
    source, out = tmp_path / "pairs.jsonl", tmp_path / "scores.jsonl"
    rows = [
        {"id": f"r{i}", "prediction": p, "reference": r}
        for i, (p, r) in enumerate(zip(predictions, references))
    ]
    source.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    code, _, warned = _call(lambda: main(["score", str(source), *FAST, "-o", str(out)]))
    printed = capsys.readouterr()
    if outcome is OK:
        assert code == 0, printed.err
        scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [row["id"] for row in scored] == ["r0", "r1", "r2"]
        assert finite(scored)
    else:
        assert code == 2 and not out.exists()
        (first, *_) = printed.err.splitlines()
        assert first.startswith("edit-f1: error: ") and "Traceback" not in printed.err
        # the odd row is named by file and line (line 2), never by a 0-based index
        assert set(re.findall(r"pairs\.jsonl, line (\d+)", printed.err)) == {"2"}, printed.err
        assert not re.findall(r"(?:prediction|reference)\[", printed.err), printed.err
    assert_private([*warned, printed.out, printed.err], draft, reply)


# ---------------------------------------------------------------- whole corpora


def _value(value):
    return value() if callable(value) else value


@pytest.mark.parametrize(
    ("kind", "predictions", "references", "api", "module"),
    CORPUS_CASES,
    ids=[case[0] for case in CORPUS_CASES],
)
def test_corpora_through_the_python_api_and_the_evaluate_module(
    metric, kind, predictions, references, api, module
):
    for outcome, function in (
        (
            api,
            lambda: editf1.score(
                predictions=_value(predictions), references=_value(references), **EXACT
            ),
        ),
        (
            module,
            lambda: metric.compute(predictions=_value(predictions), references=_value(references)),
        ),
    ):
        result, error, warned = _call(function)
        _expect(outcome, error)
        if error is None:
            n_pairs = result.n_pairs if hasattr(result, "n_pairs") else result["n_pairs"]
            assert n_pairs == len(predictions)
        assert_private([*warned, str(error or "")], _value(predictions), _value(references))


# ---------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("kind", "options", "compute_options", "error", "named"),
    OPTION_CASES,
    ids=[case[0] for case in OPTION_CASES],
)
def test_options_through_the_python_api_and_the_evaluate_module(
    metric, kind, options, compute_options, error, named
):
    pairs = {"predictions": [GOOD_DRAFT], "references": [GOOD_REPLY]}
    for function in (
        lambda: editf1.score(**pairs, **EXACT, **options),
        lambda: EditF1Scorer(**EXACT, **options) if "keep_pairs" not in options else None,
        lambda: metric.compute(**pairs, **(compute_options or options)),
    ):
        result, raised, warned = _call(function)
        if "keep_pairs" in options and result is None and raised is None:
            continue  # keep_pairs is an option of score, not of the scorer
        assert type(raised) is error, raised
        assert named in str(raised)
        assert_private([*warned, str(raised)], GOOD_DRAFT, GOOD_REPLY)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--batch-size", "1.5"], "argument --batch-size: invalid int value"),
        (["--batch-size", "0"], "batch_size must be >= 1, got 0"),
        (["--zero-division", "0.5"], "argument --zero-division: expected warn, 0 or 1, got '0.5'"),
    ],
)
def test_bad_options_on_the_command_line_are_one_error_line(tmp_path, capsys, option, message):
    source = tmp_path / "pairs.jsonl"
    source.write_text(json.dumps({"prediction": GOOD_DRAFT, "reference": GOOD_REPLY}) + "\n")
    assert main(["score", str(source), *FAST, *option, "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("edit-f1: error: ") and message in err and len(err.splitlines()) == 1
    assert_private([err], GOOD_DRAFT, GOOD_REPLY)


# ---------------------------------------------------------------- files


@pytest.mark.parametrize(
    ("kind", "content", "named"), FILE_CASES, ids=[case[0] for case in FILE_CASES]
)
def test_broken_files_on_the_command_line(tmp_path, capsys, kind, content, named):
    source, out = tmp_path / "pairs.jsonl", tmp_path / "scores.jsonl"
    source.write_bytes(content)
    code, _, warned = _call(lambda: main(["score", str(source), *FAST, "-o", str(out)]))
    printed = capsys.readouterr()
    assert code == 2 and not out.exists()
    assert printed.err.startswith("edit-f1: error: ") and "Traceback" not in printed.err
    assert named in printed.err
    assert_private([*warned, printed.out, printed.err], content)


# ---------------------------------------------------------------- with the real judges

PLAIN = "Hi Ann,\nYour results are normal. Keep taking iron."


@pytest.fixture(scope="module")
def scorer(real_content_judge, real_theme_judge):
    return EditF1Scorer(real_content_judge, real_theme_judge)


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


@pytest.mark.slow
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
    # one very long line without punctuation is cut into pieces of max_words=80 words
    # (editf1.segment): 10,000 words -> 125 sentences
    assert len(word_salad.prediction_sentences) == 125
    assert {len(s.text.split()) for s in word_salad.prediction_sentences} == {80}
    assert word_salad.expected_matches == 0
    # the same text as reply: its 125 identical sentences each match (Algorithm 1 judges
    # every reference sentence on its own) and, as matched spans are removed one after
    # another, each takes the next of the draft's 125 copies (editf1.count.claim_copies):
    # EM 125, EA 0, ED 0, F1 1.0 (the judge gave all of them the first copy, which left
    # 124 pieces as deletions)
    assert (same.expected_matches, same.expected_additions, same.expected_deletions) == (
        125,
        0,
        0,
    )
    assert [a.match.start for a in same.alignment] == [s.start for s in same.prediction_sentences]
    assert same.content.f1 == 1.0


SPANISH = (
    "Hola María, gracias por su mensaje. Tome el ibuprofeno dos veces al día con comida. "
    "Si tiene fiebre, llame a la clínica."
)
CHINESE = "您好，王女士。\n请每天服用两次布洛芬。\n如果发烧，请给诊所打电话。"
ENGLISH = (
    "Hi Maria, thanks for writing. Take ibuprofen twice daily with food. "
    "If you have a fever, call the clinic."
)


@pytest.mark.slow
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


@pytest.mark.slow
def test_html(scorer):
    html = (
        "<p>Hi Ann,</p>\n"
        "<p>Your results are <b>normal</b>.</p>\n"
        "<ul><li>Keep taking iron.</li></ul>"
    )
    result = score(scorer, [html, PLAIN], [PLAIN, html])
    as_draft, as_reply = result.pairs
    # tags are not text: one sentence per block, its text plain, its offsets the
    # original's ("Hi Ann," is html[3:10], inside "<p>...</p>")
    assert [s.text for s in as_draft.prediction_sentences] == [
        "Hi Ann,",
        "Your results are normal.",
        "Keep taking iron.",
    ]
    assert [(s.start, s.end) for s in as_draft.prediction_sentences] == [
        (3, 10),
        (18, 49),
        (62, 79),
    ]
    assert as_draft.expected_matches == 3 and as_draft.content.f1 == 1.0
    assert as_reply.expected_matches == 3 and as_reply.content.f1 == 1.0


@pytest.mark.slow
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


@pytest.mark.slow
def test_reference_identical_to_the_draft(scorer):
    references = [r["reference"] for r in demo_rows()]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        result = score(scorer, references, references)
    assert all(p.content.f1 == 1.0 and p.theme.f1 == 1.0 for p in result.pairs)
    assert (result.f1, result.theme.f1) == (1.0, 1.0)
    assert result.expected_additions == result.expected_deletions == 0


@pytest.mark.slow
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
