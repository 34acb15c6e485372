"""Decision mode of the generative judges on a tiny random model built here: a
probability for every option (candidate spans and NO MATCH; the nine labels), checked
against the model's own logits by hand, batched scoring equal to one forward pass per
option, the NO MATCH threshold, the fingerprint and option errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("peft", reason="the generative judges need the llm extra")

from editf1.judges import JudgeRequest, load_content_judge, load_theme_judge
from editf1.judges.generative import LLMContentJudge, LLMThemeJudge
from editf1.judges.generative.constraints import DraftTokens
from editf1.judges.generative.prompts import NO_MATCH, content_prompt, theme_prompt
from editf1.judges.generative.scoring import Item, score_options, score_options_one_at_a_time
from editf1.judges.generative.tiny import build_tiny_causal_lm
from editf1.judges.spans import candidate_spans
from editf1.scorer import EditF1Scorer, UnusableJudgementWarning
from editf1.themes import THEMES

ROOT = Path(__file__).resolve().parents[1]

DRAFTS = [
    "Hi Maria, thank you for your message. Please take 2.5 mg of lisinopril twice daily "
    "with food.\nIf the swelling gets worse, call 911.",
    "Your lab results look normal. We will schedule a follow-up visit next week.",
    "Rest. Rest. NO MATCH",
    "",
]
REFERENCES = [
    "Take lisinopril twice daily. Call 911 if it gets worse. Thank you for writing.",
    "Labs are normal. Please fast before the test.",
    "Please rest.",
    "Rest.",
]


@pytest.fixture(scope="module", autouse=True)
def one_thread(one_torch_thread):
    """The tiny models of this file run on one torch thread (conftest.one_torch_thread)."""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """Weights small enough (std 0.2) that options get middling probabilities."""
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny") / "base", init_std=0.2, seed=1)


@pytest.fixture(scope="module")
def requests_(splitter):
    return [
        JudgeRequest(tuple(splitter.split(r)), d, tuple(splitter.split(d)))
        for d, r in zip(DRAFTS, REFERENCES)
    ]


@pytest.fixture(scope="module")
def decision(tiny):
    return LLMContentJudge(str(tiny), mode="decision", batch_size=3)


def _renormalised(logits, token: int, allowed) -> float:
    """The probability of ``token`` among ``allowed`` under ``logits``, by hand."""
    chosen = np.exp(logits[sorted(allowed)].double().numpy())
    return float(np.exp(logits[token].double().item()) / chosen.sum())


# --- probabilities ---------------------------------------------------------------------


def test_every_option_gets_a_probability_and_they_sum_to_one(decision, requests_, tiny):
    probabilities = decision.probabilities(requests_)
    for request, per_sentence in zip(requests_, probabilities):
        texts = list(
            dict.fromkeys(
                s.text
                for s in candidate_spans(request.prediction, request.prediction_sentences, 2)
                if s.text != NO_MATCH
            )
        )
        assert len(per_sentence) == len(request.reference_sentences)
        for options in per_sentence:
            assert list(options) == [*texts, NO_MATCH]
            assert sum(options.values()) == pytest.approx(1.0, abs=1e-9)
            assert all(0.0 <= p <= 1.0 for p in options.values())
    # "Rest." twice is one option, and the sentence reading NO MATCH is none
    assert list(probabilities[2][0]) == ["Rest.", "Rest. Rest.", "Rest. NO MATCH", NO_MATCH]
    # a draft without sentences is NO MATCH for certain, without the model
    assert probabilities[3] == [{NO_MATCH: 1.0}]
    # window=1: sentences alone
    single = LLMContentJudge(str(tiny), mode="decision", window=1)
    [[options]] = single.probabilities(requests_[2:3])
    assert list(options) == ["Rest.", NO_MATCH]
    assert single.fingerprint.endswith(",mode=decision,window=1,batching=shared_prefix)")
    themes = LLMThemeJudge(str(tiny), mode="decision").probabilities(["Rest.", "Call us."])
    for options in themes:
        assert list(options) == list(THEMES)
        assert sum(options.values()) == pytest.approx(1.0, abs=1e-9)


def test_probabilities_are_the_models_next_token_probabilities_renormalised(tiny, splitter):
    """Draft "Rest. Call us." against "Please rest.": the options "Rest.", "Call us.",
    "Rest. Call us." and NO MATCH start with three distinct tokens ("Rest." and
    "Rest. Call us." share theirs), so P = renormalised first-token probability, times,
    for the two "Rest." options, the probability of EOS (or of " Call") after "Rest."
    among those two; every other token is certain."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    draft, sentence = "Rest. Call us.", "Please rest."
    judge = LLMContentJudge(str(tiny), mode="decision")
    request = JudgeRequest(tuple(splitter.split(sentence)), draft, tuple(splitter.split(draft)))
    [[got]] = judge.probabilities([request])

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    eos = tokenizer.eos_token_id
    prefix, after = content_prompt(judge.loaded.prompt, draft)
    prompt = [*prefix, *judge.loaded.prompt.suffix(sentence, after)]
    tokens = DraftTokens.of(tokenizer, draft)
    rest = tokens.ids[: tokens.token_range(0, 5)[1] + 1]
    call = tokens.ids[tokens.token_range(6, 14)[0] :]
    no_match = tokenizer(NO_MATCH, add_special_tokens=False).input_ids
    assert len({rest[0], call[0], no_match[0]}) == 3
    with torch.no_grad():
        first = model(torch.tensor([prompt])).logits[0, -1]
        after_rest = model(torch.tensor([[*prompt, *rest]])).logits[0, -1]
    firsts = {rest[0], call[0], no_match[0]}
    p_rest = _renormalised(first, rest[0], firsts)
    p_stop = _renormalised(after_rest, eos, {eos, call[0]})
    expected = {
        "Rest.": p_rest * p_stop,
        "Call us.": _renormalised(first, call[0], firsts),
        "Rest. Call us.": p_rest * (1 - p_stop),
        NO_MATCH: _renormalised(first, no_match[0], firsts),
    }
    assert list(got) == list(expected)
    assert list(got.values()) == pytest.approx(list(expected.values()), abs=1e-5)


def test_the_theme_probability_is_the_label_trie_renormalised(tiny):
    """Nine labels: renormalised over their distinct first tokens, and deeper only where
    labels share tokens (e.g. "Medical ..." and "Medication-related ...")."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    judge = LLMThemeJudge(str(tiny), mode="decision")
    [got] = judge.probabilities(["Call us if it hurts."])
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    prefix, after = theme_prompt(judge.loaded.prompt)
    prompt = [*prefix, *judge.loaded.prompt.suffix("Call us if it hurts.", after)]
    labels = [
        (*tokenizer(t, add_special_tokens=False).input_ids, tokenizer.eos_token_id) for t in THEMES
    ]
    expected = []
    with torch.no_grad():
        for label in labels:
            logits = model(torch.tensor([[*prompt, *label]])).logits[0, len(prompt) - 1 :]
            p = 1.0
            for t, token in enumerate(label):
                allowed = {other[t] for other in labels if other[:t] == label[:t]}
                p *= _renormalised(logits[t], token, allowed)
            expected.append(p)
    assert [got[t] for t in THEMES] == pytest.approx(expected, abs=1e-5)


# --- decisions -------------------------------------------------------------------------


def test_decisions_are_the_most_probable_option(decision, requests_, tiny):
    judgements = decision.match(requests_)
    probabilities = decision.probabilities(requests_)
    decided = {"match": 0, "no_match": 0}
    for answers, per_sentence in zip(judgements, probabilities):
        for answer, options in zip(answers, per_sentence):
            best = max(options, key=options.get)
            assert answer.score == pytest.approx(1.0 - options[NO_MATCH], abs=1e-12)
            if best == NO_MATCH:
                assert (answer.status, answer.span) == ("no_match", None)
            else:
                assert answer.status == "match" and answer.span.text == best
            decided[answer.status] += 1
    assert decided["match"] and decided["no_match"]  # the fixture's model does both
    # spans keep their offsets into the draft
    for request, answers in zip(requests_, judgements):
        for answer in answers:
            if answer.span is not None:
                assert request.prediction[answer.span.start : answer.span.end] == answer.span.text
    texts = [s.text for r in requests_ for s in r.reference_sentences]
    theme = LLMThemeJudge(str(tiny), mode="decision")
    for label, options in zip(theme.classify(texts), theme.probabilities(texts)):
        assert label.theme == max(options, key=options.get)
        assert label.score == pytest.approx(options[label.theme], abs=1e-12)


def test_a_no_match_threshold_decides_on_the_probability_of_no_match(tiny, requests_):
    probabilities = LLMContentJudge(str(tiny), mode="decision").probabilities(requests_)
    no_match = [options[NO_MATCH] for per in probabilities for options in per]
    threshold = float(np.median(no_match))
    for t in (0.0, threshold, 1.0):
        judge = LLMContentJudge(str(tiny), mode="decision", no_match_threshold=t)
        answers = [a for per in judge.match(requests_) for a in per]
        flat = [options for per in probabilities for options in per]
        for answer, options in zip(answers, flat):
            assert answer.score == pytest.approx(1.0 - options[NO_MATCH], abs=1e-12)
            if options[NO_MATCH] >= t:
                assert answer.status == "no_match"
            else:
                spans = {k: v for k, v in options.items() if k != NO_MATCH}
                assert answer.span.text == max(spans, key=spans.get)
    # 0: always NO MATCH; 1: a match wherever the draft has a sentence
    zero = LLMContentJudge(str(tiny), mode="decision", no_match_threshold=0.0)
    assert {a.status for per in zero.match(requests_) for a in per} == {"no_match"}
    one = LLMContentJudge(str(tiny), mode="decision", no_match_threshold=1)
    assert [a.status for per in one.match(requests_[:3]) for a in per] == ["match"] * 6


def test_batched_scoring_equals_one_forward_pass_per_option(tiny, requests_):
    batched = LLMContentJudge(str(tiny), mode="decision", batch_size=2)
    naive = LLMContentJudge(str(tiny), mode="decision", batching="per_sentence")
    a, b = batched.probabilities(requests_), naive.probabilities(requests_)
    for p, q in zip(a, b):
        for x, y in zip(p, q):
            assert list(x) == list(y)
            assert list(x.values()) == pytest.approx(list(y.values()), abs=1e-5)
    assert [[(j.status, j.span) for j in p] for p in batched.match(requests_)] == [
        [(j.status, j.span) for j in p] for p in naive.match(requests_)
    ]
    texts = [s.text for r in requests_ for s in r.reference_sentences]
    themes = LLMThemeJudge(str(tiny), mode="decision", batch_size=1).classify(texts)
    naive_themes = LLMThemeJudge(str(tiny), mode="decision", batching="per_sentence")
    assert [(t.theme, pytest.approx(t.score, abs=1e-5)) for t in themes] == [
        (t.theme, t.score) for t in naive_themes.classify(texts)
    ]


def test_score_options_splits_batches_and_reuses_prefixes(tiny):
    """Items of two prefixes, one with more step-3 rows than a batch holds: every
    batch size gives the one-forward-pass-per-option numbers."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    eos = tokenizer.eos_token_id

    def ids(text):
        return tuple(tokenizer(text, add_special_tokens=False).input_ids)

    prefixes = [ids(DRAFTS[0]), ids(DRAFTS[1])]
    options = tuple(
        (*ids(t), eos) for t in ["Rest", "Rest today", "Rest today now", "Call", "Call us"]
    )
    items = [
        Item(0, ids("Please rest."), options),
        Item(1, ids("Labs."), options[3:]),
        Item(0, ids("Call?"), options[:2]),
    ]
    expected = score_options_one_at_a_time(model, prefixes, items)
    for p in expected:
        assert np.exp(p).sum() == pytest.approx(1.0, abs=1e-6)
    for batch_size in (1, 2, 16):
        got = score_options(model, prefixes, items, pad_id=eos, batch_size=batch_size)
        for g, e in zip(got, expected):
            assert g == pytest.approx(e, abs=1e-5)
    with pytest.raises(ValueError, match="distinct"):
        score_options(model, prefixes, [Item(0, (1,), (options[0], options[0]))], pad_id=eos)
    with pytest.raises(ValueError, match="prefix of another"):
        score_options(model, prefixes, [Item(0, (1,), ((5,), (5, 6)))], pad_id=eos)
    with pytest.raises(ValueError, match="empty suffix"):
        score_options(model, prefixes, [Item(0, (), options)], pad_id=eos)
    with pytest.raises(ValueError, match="batch_size"):
        score_options(model, prefixes, items, pad_id=eos, batch_size=0)


def test_a_prompt_longer_than_the_context_is_unusable_and_counted(tmp_path, splitter):
    short = build_tiny_causal_lm(tmp_path / "short", context=64)
    request = JudgeRequest(
        tuple(splitter.split("Rest.")), DRAFTS[0], tuple(splitter.split(DRAFTS[0]))
    )
    judge = LLMContentJudge(str(short), mode="decision")
    [[answer]] = judge.match([request])
    assert answer.status == "unusable" and "does not fit the model's 64-token context" in answer.raw
    assert judge.probabilities([request]) == [[None]]
    theme = LLMThemeJudge(str(short), mode="decision")
    assert theme.classify(["Rest."])[0].theme is None and theme.probabilities(["Rest."]) == [None]
    with pytest.warns(UnusableJudgementWarning):
        result = EditF1Scorer(content_judge=judge, theme_judge=None).score(
            [DRAFTS[0]], ["Rest. Call us."]
        )
    assert result.unusable_judgements == 2


# --- options, registry, fingerprint ----------------------------------------------------


def test_the_fingerprint_names_the_mode_and_threshold(tiny):
    generate = LLMContentJudge(str(tiny)).fingerprint
    assert "mode=" not in generate and "decoding=constrained" in generate  # as before
    decided = LLMContentJudge(str(tiny), mode="decision").fingerprint
    assert decided.startswith("llm-content(base=")
    assert decided.endswith(",mode=decision,window=2,batching=shared_prefix)")
    assert "decoding=" not in decided and "max_new_tokens" not in decided
    threshold = LLMContentJudge(str(tiny), mode="decision", no_match_threshold=0.25).fingerprint
    assert threshold.endswith(",batching=shared_prefix,no_match_threshold=0.25)")
    theme = LLMThemeJudge(str(tiny), mode="decision").fingerprint
    assert theme.endswith(",mode=decision,batching=shared_prefix)")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "vote"}, "mode must be one of"),
        ({"mode": "decision", "decoding": "free"}, "decoding applies to mode='generate'"),
        ({"mode": "decision", "max_new_tokens": 8}, "max_new_tokens applies"),
        ({"no_match_threshold": 0.5}, "needs mode='decision'"),
        ({"mode": "decision", "no_match_threshold": 1.5}, r"in \[0, 1\]"),
        ({"mode": "decision", "no_match_threshold": True}, r"in \[0, 1\]"),
        ({"mode": "decision", "no_match_threshold": "0.5"}, r"in \[0, 1\]"),
        ({"window": 1}, "window applies"),
        ({"mode": "decision", "window": 0}, "window must be an integer >= 1"),
        ({"mode": "decision", "window": 1.5}, "window must be an integer >= 1"),
    ],
)
def test_bad_options_are_refused(tiny, options, message):
    with pytest.raises(ValueError, match=message):
        LLMContentJudge(str(tiny), **options)


def test_options_that_do_not_apply_are_refused(tiny, requests_):
    with pytest.raises(ValueError, match="content judge only"):
        LLMThemeJudge(str(tiny), mode="decision", no_match_threshold=0.5)
    with pytest.raises(ValueError, match="window applies to the content judge"):
        LLMThemeJudge(str(tiny), mode="decision", window=2)
    with pytest.raises(ValueError, match="need mode='decision'"):
        LLMContentJudge(str(tiny)).probabilities(requests_)
    with pytest.raises(ValueError, match="need mode='decision'"):
        LLMThemeJudge(str(tiny)).probabilities(["Rest."])


def test_registry_evaluate_and_cli_take_the_decision_mode(tiny, tmp_path, capsys):
    import evaluate

    from editf1.cli.main import main

    options = {"base": str(tiny), "mode": "decision", "no_match_threshold": 0.5}
    judge = load_content_judge("llm", options)
    assert isinstance(judge, LLMContentJudge) and judge.no_match_threshold == 0.5
    assert load_theme_judge("llm", {"base": str(tiny), "mode": "decision"}).mode == "decision"
    expected = EditF1Scorer(content_judge=judge, theme_judge=None).score(DRAFTS[:2], REFERENCES[:2])
    metric = evaluate.load(str(ROOT / "metrics" / "edit_f1"), "llm+none")
    results = metric.compute(
        predictions=DRAFTS[:2], references=REFERENCES[:2], content_judge_options=options
    )
    assert results["f1"] == expected.f1
    assert "mode=decision" in results["reproducibility"]
    data = tmp_path / "pairs.jsonl"
    data.write_text(
        "".join(
            json.dumps({"prediction": p, "reference": r}) + "\n"
            for p, r in zip(DRAFTS[:2], REFERENCES[:2])
        )
    )
    out = tmp_path / "out.json"
    code = main(
        [
            "score",
            str(data),
            "--content-judge",
            "llm",
            "--content-judge-option",
            f"base={tiny}",
            "--content-judge-option",
            "mode=decision",
            "--content-judge-option",
            "no_match_threshold=0.5",
            "--theme-judge",
            "none",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    assert "mode=decision,window=2,batching=shared_prefix,no_match_threshold=0.5" in (
        capsys.readouterr().out
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["expected_matches"] for r in rows] == [p.expected_matches for p in expected.pairs]
    # the probabilities are in the per-row output: 1 - P(NO MATCH) per reference sentence
    assert [a["score"] for a in rows[0]["alignment"]] == pytest.approx(
        [a.score for a in expected.pairs[0].alignment], abs=1e-9
    )
