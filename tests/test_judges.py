"""The judges: exact baseline, embedded judges on real sentences, and the registry."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from editf1.judges import (
    CONTENT_JUDGES,
    ContentJudge,
    ContentJudgement,
    JudgeConfig,
    JudgeRequest,
    ThemeJudge,
    load_content_judge,
    load_theme_judge,
)
from editf1.judges.embedding import (
    EmbeddingContentConfig,
    EmbeddingContentJudge,
    EmbeddingThemeConfig,
    EmbeddingThemeJudge,
    load_params,
    theme_sentence_features,
    theme_word_vectorizer,
    word_recall,
)
from editf1.judges.exact import ExactMatchContentJudge, normalize
from editf1.judges.spans import candidate_spans
from editf1.segment import Sentence
from editf1.themes import THEMES
from editf1.training.classifiers import load_theme_sentences

ROOT = Path(__file__).resolve().parents[1]


def request(splitter, reference, draft):
    return JudgeRequest(tuple(splitter.split(reference)), draft, tuple(splitter.split(draft)))


# ---------------------------------------------------------------- exact judge


def test_normalize():
    assert normalize("Call us  at 5 p.m.!") == ("call", "us", "at", "5", "p", "m")
    assert normalize("🙂 ...") == ()


def test_exact_judge_ignores_case_punctuation_and_spacing(splitter):
    draft = "Rest today. Call us at 5 p.m.!  Rest today."
    answers = ExactMatchContentJudge().match(
        [request(splitter, "call US, at 5 P.M.\nDrink water. REST, today", draft)]
    )[0]
    assert [a.status for a in answers] == ["match", "no_match", "match"]
    assert answers[0].span == Sentence("Call us at 5 p.m.!", 12, 30)
    # the first of two identical draft sentences
    assert answers[2].span == Sentence("Rest today.", 0, 11)
    assert [a.score for a in answers] == [1.0, 0.0, 1.0]


def test_exact_judge_claims_copies_of_the_same_words_that_claim_copies_cannot():
    """The exact judge hands repeated reply sentences the draft's copies itself: its
    copies are the same words, which :func:`editf1.count.claim_copies` (verbatim copies
    only) cannot find. "call us!" is the second copy of "Call us.": both reply sentences
    are matched, once each, and only "Rest today." is left to delete (EM 2, EA 0, ED 1;
    answering the first copy twice would leave "call us!" too, ED 2). A third repeat,
    with no copy left, takes the last copy."""
    from editf1.scorer import EditF1Scorer

    scorer = EditF1Scorer(content_judge=ExactMatchContentJudge(), theme_judge=None)
    draft = "Call us. Rest today. call us!"
    (pair,) = scorer.score([draft], ["Call us. Call us."]).pairs
    assert [(a.match.start, a.match.end) for a in pair.alignment] == [(0, 8), (21, 29)]
    assert pair.content_counts == (2, 1, 0)  # (EM, ED, EA)
    (pair,) = scorer.score([draft], ["Call us. CALL US. call us"]).pairs
    assert [(a.match.start, a.match.end) for a in pair.alignment] == [(0, 8), (21, 29), (21, 29)]
    assert pair.content_counts == (3, 1, 0)


def test_exact_judge_empty_draft(splitter):
    answers = ExactMatchContentJudge().match([request(splitter, "Rest.", "")])
    assert [a.status for a in answers[0]] == ["no_match"]


# ---------------------------------------------------------------- features


def test_candidate_spans_windows(splitter):
    draft = "Rest. Drink water. Call us."
    sentences = splitter.split(draft)
    assert [c.text for c in candidate_spans(draft, sentences, 1)] == [
        "Rest.",
        "Drink water.",
        "Call us.",
    ]
    three = candidate_spans(draft, sentences, 3)
    # 3 singles, 2 pairs, 1 triple; spans keep the draft's own characters and offsets
    assert [c.text for c in three] == [
        "Rest.",
        "Drink water.",
        "Call us.",
        "Rest. Drink water.",
        "Drink water. Call us.",
        "Rest. Drink water. Call us.",
    ]
    assert all(draft[c.start : c.end] == c.text for c in three)
    assert candidate_spans(draft, sentences, 5) == three  # no window past the end
    assert candidate_spans("", [], 2) == []


def test_candidate_spans_across_lines_keep_the_line_break(splitter):
    draft = "Hi Ann,\nRest."
    spans = candidate_spans(draft, splitter.split(draft), 2)
    assert spans[-1] == Sentence("Hi Ann,\nRest.", 0, 13)


def test_word_recall_by_hand():
    references = ["Take two tablets daily.", "Call us", "rest rest REST"]
    candidates = ["take two pills", "Tablets, daily!", "call me", "Rest."]
    values = word_recall(references, candidates)
    assert values.shape == (3, 4)
    # ref 0 {take, two, tablets, daily}: cand 0 has take, two → 2/4; cand 1 tablets,
    # daily → 2/4; cand 2, 3 → 0
    # ref 1 {call, us}: cand 2 has call → 1/2
    # ref 2 {rest} (distinct words, case-folded): cand 3 → 1/1
    expected = [[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]]
    np.testing.assert_allclose(values, expected)
    assert word_recall([], ["x"]).shape == (0, 1)
    assert word_recall(["x"], []).shape == (1, 0)


def test_word_recall_reference_without_words():
    # no word: denominator clamped to 1, recall 0, never NaN
    assert word_recall(["..."], ["Rest."]).tolist() == [[0.0]]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threshold": 1.5}, "threshold"),
        ({"window": 0}, "window"),
        ({"span_margin": -0.1}, "span_margin"),
    ],
)
def test_embedding_content_judge_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EmbeddingContentJudge(encoder=object(), **kwargs)


class TableEncoder:
    """Embeddings from a table {text: vector}; records every text it is asked for."""

    name = "table"
    dimension = 3

    def __init__(self, table):
        self.table = {text: np.asarray(v, dtype=np.float32) for text, v in table.items()}
        self.asked: list[str] = []

    def encode(self, texts):
        self.asked += texts
        return np.array([self.table[t] for t in texts], dtype=np.float32).reshape(-1, 3)


# probability = sigmoid(10 * cosine - 8): a match from cosine 0.8 up, word overlap ignored
STEEP = {"weights": {"cosine": 10.0, "word_recall": 0.0}, "bias": -8.0, "window": 2}


def bounded_case(splitter, span_vector, first_vector):
    reference, draft = "Rest more.", "Sleep early. Avoid screens. Call us."
    encoder = TableEncoder(
        {
            "Rest more.": [1, 0, 0],
            "Sleep early.": first_vector,
            "Avoid screens.": [0, 1, 0],
            "Call us.": [0, 0, 1],
            "Sleep early. Avoid screens.": span_vector,
            "Avoid screens. Call us.": [0, 1, 0],
        }
    )
    return encoder, request(splitter, reference, draft)


def test_bounded_span_search_skips_runs_that_cannot_match(splitter):
    # sentences at cosine 0, 0, 0 with the reference: bound 0 + 0.4 < 0.8, no run encoded
    encoder, req = bounded_case(splitter, [1, 0, 0], [0, 0, 1])
    judge = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(STEEP), encoder=encoder, span_margin=0.4
    )
    (scores,) = judge.span_scores([req])
    assert [s.text for s in scores.spans] == ["Sleep early.", "Avoid screens.", "Call us."]
    assert "Sleep early. Avoid screens." not in encoder.asked
    assert scores.probability.shape == (1, 3)
    (answer,) = judge.match([req])[0]
    assert answer.status == "no_match" and answer.score == pytest.approx(1 / (1 + np.exp(8)))
    # the exhaustive search finds the run this bound wrongly ruled out (cosine 1.0, a
    # gain of 1.0 over its best sentence, far beyond any seen on real data)
    everything = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(STEEP), encoder=encoder, span_margin=None
    )
    (answer,) = everything.match([req])[0]
    assert answer.status == "match" and answer.span.text == "Sleep early. Avoid screens."


def test_bounded_span_search_scores_runs_that_could_match(splitter):
    # "Sleep early." at cosine 0.6: bound 1.0 >= 0.8 for the first run only
    encoder, req = bounded_case(splitter, [1, 0, 0], [0.6, 0.8, 0])
    judge = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(STEEP), encoder=encoder, span_margin=0.4
    )
    (scores,) = judge.span_scores([req])
    assert [s.text for s in scores.spans][3:] == ["Sleep early. Avoid screens."]
    assert scores.cosine[0].tolist() == pytest.approx([0.6, 0.0, 0.0, 1.0])
    assert "Avoid screens. Call us." not in encoder.asked
    (answer,) = judge.match([req])[0]
    assert answer.status == "match" and answer.span.text == "Sleep early. Avoid screens."
    assert answer.score == pytest.approx(1 / (1 + np.exp(-2)))
    # every_span scores both runs and gives the same answer
    (full,) = judge.span_scores([req], every_span=True)
    assert len(full.spans) == 5 and full.probability.argmax() == 3


def test_run_rule_a_run_with_a_sentence_below_the_floor_is_no_candidate(splitter):
    """Probability sigmoid(10 * cosine - 8). "Sleep early." at cosine 0.6 (p 0.12),
    "Avoid screens." at 0 (p 0.0003), the run at 1.0 (p 0.88): without a floor the run
    matches; with run_floor 0.1 "Avoid screens." is below it, the run is ruled out
    (probability 0, named in run_ruled_out) and never encoded, so NO MATCH with the
    best sentence's 0.12. The second run ("Avoid screens. Call us.") is ruled out too."""
    encoder, req = bounded_case(splitter, [1, 0, 0], [0.6, 0.8, 0])
    config = EmbeddingContentConfig.from_json(STEEP)
    (free,) = EmbeddingContentJudge(config=config, encoder=encoder).match([req])[0]
    assert free.status == "match" and free.span.text == "Sleep early. Avoid screens."
    encoder.asked.clear()
    ruled = EmbeddingContentJudge(config=config, encoder=encoder, run_floor=0.1)
    (scores,) = ruled.span_scores([req])
    assert "Sleep early. Avoid screens." not in encoder.asked
    assert [s.text for s in scores.spans] == ["Sleep early.", "Avoid screens.", "Call us."]
    (answer,) = ruled.match([req])[0]
    assert answer.status == "no_match" and answer.score == pytest.approx(1 / (1 + np.exp(2)))
    (every,) = ruled.span_scores([req], every_span=True)
    assert every.run_ruled_out[0].tolist() == [False, False, False, True, True]
    assert every.probability[0, 3:].tolist() == [0.0, 0.0]
    assert (
        "run_floor=0.1" in ruled.fingerprint
        and "run_floor" not in EmbeddingContentJudge(config=config, encoder=encoder).fingerprint
    )


def test_the_default_judge_leaves_a_sentence_saying_nothing_of_the_reply_as_a_deletion():
    """The README's evaluate example: "Rest today. Drink water." against "Rest today and
    take ibuprofen." The run would match (probability 0.53) but "Drink water." alone is
    below the default's run floor, and "Rest today." alone (0.47) leaves out the
    ibuprofen: NO MATCH, both draft sentences are expected deletions."""
    import editf1

    result = editf1.score(
        predictions=["Rest today. Drink water."],
        references=["Rest today and take ibuprofen."],
        theme_judge=None,
    )
    (pair,) = result.pairs
    assert (pair.expected_matches, pair.expected_additions, pair.expected_deletions) == (0, 1, 2)
    assert [s.text for s in pair.expected_deletion_sentences] == ["Rest today.", "Drink water."]
    assert result.f1 == 0.0


def test_probabilities_within_rounding_are_a_tie_won_by_the_earliest_span(splitter):
    # the later sentence is more similar by 1.2e-7 in cosine (float32 rounding of
    # identical texts in a matrix product differs by as much): a tie, to the earliest
    draft = "Sleep early. Avoid screens. Call us."
    encoder = TableEncoder(
        {
            "Rest more.": [1, 0, 0],
            "Sleep early.": [0.99999988, 0.00048990, 0],
            "Avoid screens.": [0, 1, 0],
            "Call us.": [1, 0, 0],
            "Sleep early. Avoid screens.": [0, 0, 1],
            "Avoid screens. Call us.": [0, 0, 1],
        }
    )
    judge = EmbeddingContentJudge(config=EmbeddingContentConfig.from_json(STEEP), encoder=encoder)
    (scores,) = judge.span_scores([request(splitter, "Rest more.", draft)])
    assert scores.probability[0, 2] > scores.probability[0, 0]
    (answer,) = judge.match([request(splitter, "Rest more.", draft)])[0]
    assert answer.span.text == "Sleep early."


def test_bounded_span_search_without_references_encodes_no_run(splitter):
    encoder, _ = bounded_case(splitter, [1, 0, 0], [0.6, 0.8, 0])
    req = JudgeRequest(
        (), "Sleep early. Avoid screens.", tuple(splitter.split("Sleep early. Avoid screens."))
    )
    judge = EmbeddingContentJudge(config=EmbeddingContentConfig.from_json(STEEP), encoder=encoder)
    (scores,) = judge.span_scores([req])
    assert len(scores.spans) == 2 and scores.probability.shape == (0, 2)
    assert encoder.asked == ["Sleep early.", "Avoid screens."]


# ---------------------------------------------------------------- veto, params


E1, E2, E3 = [1, 0, 0], [0, 1, 0], [0, 0, 1]


class WordEncoder:
    """Each word a fixed vector: ``encode`` gives the normalised sum."""

    name = "words"
    dimension = 3

    def __init__(self, vectors):
        self.vectors = {w: np.asarray(v, dtype=np.float32) for w, v in vectors.items()}

    def _words(self, text):
        return [w.strip(".,").lower() for w in text.split()]

    def _pooled(self, text):
        total = sum(self.vectors[w] for w in self._words(text))
        return total / np.linalg.norm(total)

    def encode(self, texts):
        return np.array([self._pooled(t) for t in texts], dtype=np.float32).reshape(-1, 3)


WORDS = WordEncoder(
    {
        "increase": E1,
        "continue": [0.9, 0.43589, 0],
        "your": E2,
        "omeprazole": E3,
        "rest": [0, 0.6, 0.8],
    }
)
# probability = sigmoid(10 * cosine - 8)
VETOING = STEEP | {"features": ["cosine"], "weights": {"cosine": 10.0}, "veto": ["direction"]}


def test_veto_rules_out_a_span_that_contradicts_a_direction(splitter):
    req = request(splitter, "Increase your omeprazole.", "Continue your omeprazole.")
    plain = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(VETOING | {"veto": []}), encoder=WORDS
    )
    (plain_answer,) = plain.match([req])[0]
    assert plain_answer.status == "match"  # cosine 0.97: similar words, opposite advice
    assert plain_answer.vetoed is None
    vetoing = EmbeddingContentJudge(config=EmbeddingContentConfig.from_json(VETOING), encoder=WORDS)
    (scores,) = vetoing.span_scores([req])
    assert scores.vetoed.tolist() == [[True]]
    (answer,) = vetoing.match([req])[0]
    assert answer.status == "no_match" and answer.score == 0.0
    # the NO MATCH names the span it refused, why, and its probability without the veto
    assert answer.vetoed.span == plain_answer.span and answer.vetoed.kinds == ("direction",)
    assert answer.vetoed.probability == pytest.approx(plain_answer.score)
    # the same sentence in the draft is no conflict, and wins
    req = request(
        splitter, "Increase your omeprazole.", "Continue your omeprazole. Increase your omeprazole."
    )
    (answer,) = vetoing.match([req])[0]
    assert answer.status == "match" and answer.span.text == "Increase your omeprazole."


def test_vetoed_span_is_written_in_the_alignment_and_read_back(splitter):
    """A vetoed span reaches the per-row output (``"vetoed"``: span, kinds, probability
    without the veto) and :func:`editf1.analysis.compare.pair_result_from_dict` reads it
    back; a sentence without one has no such key."""
    from editf1.analysis.compare import pair_result_from_dict
    from editf1.scorer import EditF1Scorer

    judge = EmbeddingContentJudge(config=EmbeddingContentConfig.from_json(VETOING), encoder=WORDS)
    scorer = EditF1Scorer(content_judge=judge, theme_judge=None)
    draft, reply = "Continue your omeprazole.", "Increase your omeprazole. Rest."
    (pair,) = scorer.score([draft], [reply]).pairs
    first, second = (a.to_dict() for a in pair.alignment)
    assert first["status"] == "no_match" and first["vetoed"]["kinds"] == ["direction"]
    assert first["vetoed"]["span"] == {"text": draft, "start": 0, "end": 25}
    increase, cont = (np.add.reduce([WORDS.vectors[w] for w in (v, "your", "omeprazole")])
                      for v in ("increase", "continue"))  # fmt: skip
    cosine = increase @ cont / np.linalg.norm(increase) / np.linalg.norm(cont)
    probability = 1 / (1 + np.exp(8 - 10 * cosine))  # VETOING: sigmoid(10 * cosine - 8)
    assert first["vetoed"]["probability"] == pytest.approx(probability, abs=1e-5)
    assert "vetoed" not in second  # "Rest." has no span above the threshold
    again = pair_result_from_dict(pair.to_dict())
    assert again.alignment == pair.alignment


def test_shipped_content_judge_fingerprint_is_pinned_change_detector():
    """Change detector: today's digest of the shipped weights, pinned so that a change to
    the file or to what the digest covers is noticed (the theme cache and every score's
    reproducibility string name it). What the fingerprint follows is checked by
    test_content_judge_fingerprint_follows_weights_and_options_only."""
    today = EmbeddingContentJudge(encoder=WORDS)
    assert "logreg:9b3bf397fd,threshold=0.5,window=2" in today.fingerprint
    assert today.fingerprint.endswith(",rules=2,run_floor=0.35)")


def test_default_content_judge_is_the_kqa_fit_with_the_full_veto():
    """The default, ``content_judge_veto_nc.json``, is what ``edit-f1 train-judge
    embedding-content --veto quantity,...,condition`` writes on K-QA: the two features'
    weights, :data:`VETO_NC`, threshold 0.5, and its held-out agreement measured with the
    veto on the 76 held-out items."""
    from editf1.judges.embedding import DEFAULT_CONTENT_PARAMS
    from editf1.training.classifiers import KQA_FITTED_ON, VETO_NC

    assert DEFAULT_CONTENT_PARAMS == "content_judge_veto_nc.json"
    params = load_params(DEFAULT_CONTENT_PARAMS)
    assert params["veto"] == list(VETO_NC) == [
        "quantity", "frequency", "direction", "drug", "negation", "condition"
    ]  # fmt: skip
    assert params["fitted_on"] == KQA_FITTED_ON and params["split"]["by"] == "question"
    assert params["agreement"]["n"] == params["split"]["test_items"] == 76
    judge = EmbeddingContentJudge(encoder=WORDS)
    assert judge.veto == VETO_NC
    assert judge.features == ("cosine", "word_recall") and judge.threshold == 0.5
    assert judge.weights.tolist() == [params["weights"]["cosine"], params["weights"]["word_recall"]]


def test_fingerprint_names_the_rules_version_of_judges_that_read_key_terms(monkeypatch):
    """A judge that reads the key-term and clause rules (a veto) names
    :data:`editf1.judges.key_terms.RULES_VERSION`, so a changed rule changes its
    fingerprint; the same weights without a veto read none and keep their fingerprint."""
    from editf1.judges import key_terms
    from editf1.judges.embedding import content

    params = load_params("content_judge_veto_nc.json")
    judges = [
        EmbeddingContentJudge(
            config=EmbeddingContentConfig.from_json(params | {"veto": []}), encoder=WORDS
        ),
        EmbeddingContentJudge(config=EmbeddingContentConfig.from_json(params), encoder=WORDS),
    ]
    before = [j.fingerprint for j in judges]
    assert [f",rules={key_terms.RULES_VERSION}," in f for f in before] == [False, True]
    monkeypatch.setattr(content, "RULES_VERSION", key_terms.RULES_VERSION + 1)
    after = [j.fingerprint for j in judges]
    assert after[0] == before[0] and after[1] != before[1]


def _reversed_keys(value):
    """``value`` with every dict's keys in reverse order (the same parameters)."""
    if isinstance(value, dict):
        return {k: _reversed_keys(value[k]) for k in reversed(list(value))}
    return value


def test_content_judge_fingerprint_follows_weights_and_options_only(tmp_path):
    name = "content_judge_veto_nc.json"
    params = load_params(name)
    shipped = EmbeddingContentJudge(params_file=name, encoder=WORDS).fingerprint
    # the same judge: keys in another order, a re-indented copy on disk, other metadata
    copy = tmp_path / name
    copy.write_text(json.dumps(_reversed_keys(params), indent=4), encoding="utf-8")
    same = [
        EmbeddingContentJudge(
            config=EmbeddingContentConfig.from_json(_reversed_keys(params)), encoder=WORDS
        ),
        EmbeddingContentJudge(params_file=str(copy), encoder=WORDS),
        EmbeddingContentJudge(
            config=EmbeddingContentConfig.from_json(
                params | {"date": "1999-01-01", "encoder": "x"}
            ),
            encoder=WORDS,
        ),
        EmbeddingContentJudge(
            window=params["window"], config=EmbeddingContentConfig.from_json(params), encoder=WORDS
        ),
        EmbeddingContentJudge(
            span_embedding="encoded", config=EmbeddingContentConfig.from_json(params), encoder=WORDS
        ),
    ]
    assert [judge.fingerprint for judge in same] == [shipped] * len(same)
    # another judge: one weight, the bias, the veto or an option changed
    weights = params["weights"] | {"word_recall": params["weights"]["word_recall"] + 1e-6}
    changed = [
        {"config": EmbeddingContentConfig.from_json(params | {"weights": weights})},
        {"config": EmbeddingContentConfig.from_json(params | {"bias": params["bias"] + 1e-6})},
        {"config": EmbeddingContentConfig.from_json(params | {"veto": params["veto"][:-1]})},
        {"threshold": 0.55},
        {"window": params["window"] + 1},
        {"span_margin": 0.25},
        {"span_margin": None},
        {"span_embedding": "composed"},
    ]
    prints = [EmbeddingContentJudge(encoder=WORDS, **kwargs).fingerprint for kwargs in changed]
    assert len({shipped, *prints}) == 1 + len(changed)


def test_params_file_from_a_path(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"weights": {"cosine": 1.0, "word_recall": 0.0}, "bias": 0, "window": 1}')
    judge = EmbeddingContentJudge(params_file=str(path), encoder=WORDS)
    assert judge.window == 1 and judge.weights.tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("params", "kwargs", "error", "message"),
    [
        (STEEP, {"params_file": "content_judge_veto_nc.json"}, ValueError, "not both"),
        (None, {"params_file": "nowhere.json"}, FileNotFoundError, "nowhere.json"),
        (STEEP | {"features": ["cosine", "tone"]}, {}, ValueError, "tone"),
        (STEEP | {"features": ["cosine", "token_recall"]}, {}, ValueError, "token_recall"),
        (STEEP | {"features": ["cosine"], "weights": {}}, {}, ValueError, "cosine"),
        (STEEP | {"veto": ["mood"]}, {}, ValueError, "mood"),
    ],
)
def test_bad_params(params, kwargs, error, message):
    with pytest.raises(error, match=message):
        config = None if params is None else EmbeddingContentConfig.from_json(params)
        EmbeddingContentJudge(encoder=WORDS, config=config, **kwargs)


@pytest.mark.slow
def test_real_encoder_composes_a_run_from_its_sentences_token_embeddings():
    from editf1.judges.encoder import SentenceEncoder, default_encoder

    model = default_encoder().model
    first, second = "Take 20 mg of omeprazole daily.", "Call us if the pain is worse."
    encoder = SentenceEncoder(model, "minilm")
    # sentence-transformers' own pooled embeddings, in one call as before the sorted batches
    plain = model.encode([first, second], normalize_embeddings=True)
    np.testing.assert_allclose(encoder.encode([first, second]), plain, atol=1e-6)
    # by hand: the mean of both sentences' token embeddings ([CLS] and [SEP] included,
    # as mean pooling reads them), normalised
    tokens = model.encode([first, second], output_value="token_embeddings")
    total = sum(t.sum(0).numpy() for t in tokens)
    (composed,) = encoder.compose([[first, second]])
    np.testing.assert_allclose(composed, total / np.linalg.norm(total), atol=1e-5)
    assert encoder.encoded == 2  # composed from the cache
    # encoded as one text, attention crosses the boundary: close, not the same
    whole = model.encode([f"{first} {second}"], normalize_embeddings=True)[0]
    assert 0.8 < float(composed @ whole) < 0.999


@pytest.mark.slow
def test_default_judge_calls_the_oncqa_case_12_dose_change_no_match(shared_data, splitter):
    """OncQA case 12: the second oncologist changed the draft's "continue taking your
    omeprazole as prescribed" into "increasing your dose of omeprazole"; the default's
    direction veto makes it NO MATCH against the draft."""
    from editf1.validation.agreement import judge_content_items
    from research.stage2_labels import oncqa_stage2_content_items

    (item,) = [
        i
        for i in oncqa_stage2_content_items(shared_data)
        if i.case == "oncqa:12" and "increasing your dose of omeprazole" in i.reference
    ]
    assert not item.match
    judge = load_content_judge("embedding")
    (answer,) = judge_content_items(judge, [item])
    assert answer.status == "no_match"
    (scores,) = judge.span_scores(
        [request(splitter, item.reference, item.prediction)], every_span=True
    )
    continued = [
        k for k, s in enumerate(scores.spans) if "continue taking your omeprazole" in s.text
    ]
    assert continued and scores.vetoed[0, continued].all()


# ---------------------------------------------------------------- encoder: batches, composed runs


def test_compose_is_the_mean_over_all_the_runs_tokens(bag_model):
    from editf1.judges.encoder import SentenceEncoder

    encoder = SentenceEncoder(bag_model(), "bag")
    # tokens rest rest drink + drink: mean (0.5, 0.5), unit (0.7071, 0.7071). Averaging
    # the two unit embeddings would give (0.894, 0.447) + (0, 1) -> (0.526, 0.851).
    run = ["Rest rest drink.", "Drink."]
    np.testing.assert_allclose(encoder.compose([run]), [[0.5**0.5] * 2], atol=1e-6)
    composed = encoder.compose(
        [["Rest call.", "Drink drink."], ["Rest call."], ["Drink.", "Rest rest drink.", "Call."]]
    )
    # rest call (1.6, 0.8) + drink drink (0, 2) = (1.6, 2.8)
    np.testing.assert_allclose(composed[0], np.array([1.6, 2.8]) / np.hypot(1.6, 2.8), atol=1e-6)
    # a run of one text is that text's embedding
    np.testing.assert_allclose(composed[1], encoder.encode(["Rest call."])[0], atol=1e-6)
    # drink (0, 1) + rest rest drink (2, 1) + call (0.6, 0.8) = (2.6, 2.8)
    np.testing.assert_allclose(composed[2], np.array([2.6, 2.8]) / np.hypot(2.6, 2.8), atol=1e-6)
    # each distinct text ran through the model once
    seen = sorted(t for batch in encoder.model.batches for t in batch)
    assert seen == sorted(["Rest rest drink.", "Drink.", "Rest call.", "Drink drink.", "Call."])
    assert encoder.encoded == 5
    with pytest.raises(ValueError, match="holds no text"):
        encoder.compose([["Rest."], []])


def test_encoder_batches_texts_by_length_and_counts_their_tokens(bag_model):
    from editf1.judges.encoder import SentenceEncoder

    model = bag_model()
    encoder = SentenceEncoder(model, "bag", batch_size=2)
    # 1, 3, 2, 5 (over the window of 4: read in windows of 4 and 1) and 3 words
    texts = ["Rest.", "Rest drink call.", "Rest drink.", "Rest drink call rest drink.", "Call."]
    texts[4] = "Call call call."
    vectors = encoder.encode(texts)
    # longest first, two at a time (the windows count as 4 word pieces); equal lengths
    # keep their order
    assert model.batches == [
        ["rest drink call rest", "drink"],
        ["Rest drink call.", "Call call call."],
        ["Rest drink.", "Rest."],
    ]
    assert encoder.tokens_encoded == 1 + 3 + 2 + 5 + 3 and encoder.encoded == 5
    assert encoder.windowed == 1
    # rows in the order asked, unit norm; the long text is every word's mean:
    # rest drink call rest drink: (2.6, 2.8)
    np.testing.assert_allclose(vectors[0], [1.0, 0.0])
    np.testing.assert_allclose(vectors[3], np.array([2.6, 2.8]) / np.hypot(2.6, 2.8), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_compose_refuses_a_model_that_does_not_pool_by_the_mean(bag_model):
    from types import SimpleNamespace

    from editf1.judges.encoder import SentenceEncoder

    model = bag_model()
    model._modules = {"0": SimpleNamespace(), "1": SimpleNamespace(pooling_mode="cls")}
    with pytest.raises(ValueError, match=r"pools by .*'cls'.* not by the mean"):
        SentenceEncoder(model, "bag").compose([["Rest.", "Drink."]])


def test_composed_runs_score_as_encoded_runs_when_no_attention_crosses_them(splitter, bag_model):
    from editf1.judges.encoder import SentenceEncoder

    # reference "rest drink" (0.707, 0.707): the run "Rest. Drink." has cosine 1, each of
    # its sentences 0.707
    params = {"weights": {"cosine": 10.0, "word_recall": 0.0}, "bias": -8.0, "window": 2}
    req = request(splitter, "Rest drink.", "Rest. Drink. Call call.")
    encoded_model, composed_model = bag_model(), bag_model()
    encoded = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(params),
        encoder=SentenceEncoder(encoded_model, "bag"),
        span_margin=None,
    )
    composed = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(params),
        encoder=SentenceEncoder(composed_model, "bag"),
        span_margin=None,
        span_embedding="composed",
    )
    (a,), (b,) = encoded.span_scores([req]), composed.span_scores([req])
    assert [s.text for s in b.spans] == [s.text for s in a.spans]
    assert [s.text for s in b.spans][3:] == ["Rest. Drink.", "Drink. Call call."]
    np.testing.assert_allclose(b.cosine, a.cosine, atol=1e-6)
    # call call (0.6, 0.8): 1.4 / sqrt(2); drink + call call (1.2, 2.6): 3.8 / (2.8636 sqrt(2))
    assert b.cosine[0].tolist() == pytest.approx(
        [0.5**0.5, 0.5**0.5, 0.98995, 1.0, 0.93834], abs=1e-5
    )
    # the composed judge ran only the sentences through the model, the encoded one the
    # runs too
    ran = sorted(t for batch in composed_model.batches for t in batch)
    assert ran == ["Call call.", "Drink.", "Rest drink.", "Rest."]
    assert {"Rest. Drink.", "Drink. Call call."} <= {
        t for batch in encoded_model.batches for t in batch
    }
    (answer,) = composed.match([req])[0]
    assert answer.status == "match" and answer.span.text == "Rest. Drink."
    assert "span_embedding=composed" in composed.fingerprint
    assert "span_embedding" not in encoded.fingerprint


def test_span_embedding_defaults_to_the_way_the_parameters_were_fitted():
    params = load_params("content_judge_veto_nc.json")
    assert EmbeddingContentJudge(encoder=WORDS).span_embedding == "encoded"
    fitted = params | {"span_embedding": "composed"}
    assert (
        EmbeddingContentJudge(
            config=EmbeddingContentConfig.from_json(fitted), encoder=WORDS
        ).span_embedding
        == "composed"
    )
    chosen = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(fitted), encoder=WORDS, span_embedding="encoded"
    )
    assert chosen.span_embedding == "encoded"
    assert chosen.fingerprint == EmbeddingContentJudge(encoder=WORDS).fingerprint


def test_unknown_span_embedding_is_refused():
    with pytest.raises(
        ValueError, match=r"span_embedding must be one of \['encoded', 'composed'\]"
    ):
        EmbeddingContentJudge(encoder=WORDS, span_embedding="pooled")


# ---------------------------------------------------------------- embedded judges (real model)

DRAFT = (
    "Hi Maria, thanks for your message. Your blood pressure readings look a little high "
    "this week. Please take your lisinopril every morning. If you feel chest pain, call "
    "911. We will see you in two weeks."
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reference", "span"),
    [
        (
            "Your blood pressure has been somewhat elevated over the past week.",
            "Your blood pressure readings look a little high this week.",
        ),
        ("Take lisinopril each morning.", "Please take your lisinopril every morning."),
        ("Please call 911 if you have chest pain.", "If you feel chest pain, call 911."),
    ],
)
def test_close_paraphrase_matches_its_draft_sentence(splitter, real_content_judge, reference, span):
    (answer,) = real_content_judge.match([request(splitter, reference, DRAFT)])[0]
    assert answer.status == "match"
    assert answer.span.text == span
    assert DRAFT[answer.span.start : answer.span.end] == span
    assert 0.5 <= answer.score <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize(
    "reference",
    [
        "I recommend a colonoscopy next year.",
        "The parking garage is closed on Sundays.",
        "Your thyroid levels are within the normal range.",
    ],
)
def test_unrelated_sentence_does_not_match(splitter, real_content_judge, reference):
    (answer,) = real_content_judge.match([request(splitter, reference, DRAFT)])[0]
    assert answer.status == "no_match" and answer.span is None
    assert 0.0 <= answer.score < 0.5


@pytest.mark.slow
def test_embedding_content_judge_batch_and_empty_draft(splitter, real_content_judge):
    requests = [
        request(splitter, "Take lisinopril each morning. Rest.", DRAFT),
        request(splitter, "Take lisinopril each morning.", ""),
    ]
    first, empty = real_content_judge.match(requests)
    assert len(first) == 2 and first[0].status == "match"
    assert [(a.status, a.score) for a in empty] == [("no_match", 0.0)]
    alone = real_content_judge.match(requests[:1])[0]
    assert [(a.status, a.span) for a in alone] == [(a.status, a.span) for a in first]


@pytest.mark.slow
def test_threshold_extremes(splitter):
    req = request(splitter, "The parking garage is closed on Sundays.", DRAFT)
    everything = load_content_judge("embedding", {"threshold": 0.0}).match([req])[0]
    nothing = load_content_judge("embedding", {"threshold": 1.0}).match([req])[0]
    assert everything[0].status == "match"  # the best span, however poor
    assert nothing[0].status == "no_match"


CLEAR_THEMES = {
    "I'm so sorry you've been dealing with this pain, that sounds exhausting.": (
        "Empathetic communication"
    ),
    "Have you noticed any fever or chills along with the cough?": (
        "Symptom-related follow-up questions"
    ),
    "How many times a day have you been using the albuterol inhaler?": (
        "Medication-related follow-up questions"
    ),
    "Your MRI shows a small disc bulge that explains the numbness in your leg.": (
        "Medical assessment explanation"
    ),
    "Our front desk can move your appointment to Thursday afternoon.": "Logistics",
    "I'll ask our care manager to coordinate with your home health nurse.": "Care coordination",
    "If the swelling gets worse or you develop a fever, go to the emergency room.": (
        "Contingency planning"
    ),
}


def test_clear_theme_examples_are_not_training_sentences():
    training = set(load_theme_sentences()[0])
    assert not set(CLEAR_THEMES) & training


@pytest.mark.slow
def test_theme_judge_labels_clear_examples(real_theme_judge):
    sentences = list(CLEAR_THEMES)
    labels = real_theme_judge.classify(sentences)
    assert [j.theme for j in labels] == [CLEAR_THEMES[s] for s in sentences]
    assert all(j.usable and 0.5 < j.score <= 1.0 for j in labels)


@pytest.mark.slow
def test_theme_probabilities(real_theme_judge):
    probs = real_theme_judge.probabilities(["Best regards,", "Please rest."])
    assert probs.shape == (2, len(THEMES))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert real_theme_judge.classify([]) == []
    assert real_theme_judge.probabilities([]).shape == (0, len(THEMES))


def test_theme_sentence_features_by_hand():
    sentences = [
        "Is the pain worse at night? ",  # trailing space: still a question
        "- If you feel dizzy, call triage.",  # list marker before "If"
        "3) Unless it settles, come in.",
        "Call us if it gets worse.",  # "if" not first
        "Iffy weather today.",  # not the word "if"
    ]
    features = theme_sentence_features(sentences, ["question_mark", "leading_if"])
    assert features.dtype == np.float32
    assert features.tolist() == [[1, 0], [0, 1], [0, 1], [0, 0], [0, 0]]
    assert theme_sentence_features(sentences, []).shape == (5, 0)
    with pytest.raises(ValueError, match=r"unknown theme sentence features \['exclamation'\]"):
        theme_sentence_features(sentences, ["exclamation"])


def _toy_theme_params(width: int, entries: dict) -> dict:
    """9 x width zero weights but ``{(theme, column): weight}``."""
    coef = np.zeros((len(THEMES), width))
    for (theme, column), weight in entries.items():
        coef[THEMES.index(theme), column] = weight
    return {"labels": list(THEMES), "coef": coef.tolist(), "intercept": [0.0] * len(THEMES)}


def test_theme_judge_adds_sentence_and_word_features_to_the_embedding():
    texts = ["Any fever?", "If it hurts, call us.", "Book a visit.", "Thanks."]
    encoder = TableEncoder({t: [1, 0, 0] for t in texts})
    # columns: 3 embedding values, question_mark, leading_if, "call us", "visit"
    params = _toy_theme_params(
        7,
        {
            ("Symptom-related follow-up questions", 3): 4.0,
            ("Contingency planning", 4): 3.0,
            ("Care coordination", 5): 2.0,  # loses to Contingency planning's 3.0
            ("Logistics", 6): 5.0,
            ("Other", 0): 1.0,  # every sentence's embedding: Other unless a feature fires
        },
    )
    params["features"] = {
        "sentence": ["question_mark", "leading_if"],
        "words": {"ngram_range": [1, 2], "vocabulary": ["call us", "visit"]},
    }
    judge = EmbeddingThemeJudge(config=EmbeddingThemeConfig.from_json(params), encoder=encoder)
    assert judge.features(texts).tolist() == [
        [1, 0, 0, 1, 0, 0, 0],
        [1, 0, 0, 0, 1, 1, 0],
        [1, 0, 0, 0, 0, 0, 1],
        [1, 0, 0, 0, 0, 0, 0],
    ]
    assert [j.theme for j in judge.classify(texts)] == [
        "Symptom-related follow-up questions",
        "Contingency planning",
        "Logistics",
        "Other",
    ]
    # "Any fever?": logits 4 (symptom question), 1 (Other), 0 for the other 7 themes
    expected = np.exp(4) / (np.exp(4) + np.e + 7)
    assert judge.probabilities(texts)[0, 1] == pytest.approx(expected, rel=1e-5)
    # the features are part of the fingerprint
    plain = {k: params[k] for k in ("labels", "intercept")}
    plain["coef"] = np.asarray(params["coef"])[:, :3].tolist()
    assert (
        judge.fingerprint
        != EmbeddingThemeJudge(
            config=EmbeddingThemeConfig.from_json(plain), encoder=encoder
        ).fingerprint
    )


class Encoder384:
    """Stands in for the encoder where only its name and width matter (fingerprints)."""

    name, dimension = "table", 384


def test_shipped_theme_judge_fingerprint_is_pinned_change_detector():
    """Change detector: the default file's digest as it always was (the theme cache is
    keyed on it). What the fingerprint follows is checked by
    test_theme_judge_fingerprint_follows_weights_and_features_only."""
    default = EmbeddingThemeJudge(encoder=Encoder384())
    assert default.fingerprint == "embedding-theme(table,logreg:6f35fedb23)"
    shipped = EmbeddingThemeJudge(params_file="theme_judge_v2.json", encoder=Encoder384())
    assert shipped.fingerprint == default.fingerprint


def _embeddings_only(params: dict) -> dict:
    """The shipped theme judge's weights of the embedding alone: the shape of a file
    ``edit-f1 train-judge embedding-theme`` writes (no ``features``)."""
    coef = np.asarray(params["coef"])[:, :384].tolist()
    return {"labels": params["labels"], "coef": coef, "intercept": params["intercept"]}


@pytest.mark.parametrize("embeddings_only", [False, True])
def test_theme_judge_fingerprint_follows_weights_and_features_only(embeddings_only, tmp_path):
    name = "theme_judge_v2.json"
    params = load_params(name)
    if embeddings_only:
        params = _embeddings_only(params)
        name = str(tmp_path / "embeddings_only.json")
        Path(name).write_text(json.dumps(params), encoding="utf-8")
    shipped = EmbeddingThemeJudge(params_file=name, encoder=Encoder384()).fingerprint
    # the same judge: keys in another order, a re-indented copy on disk, other metadata,
    # the same numbers spelt as numpy arrays
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(_reversed_keys(params), indent=4), encoding="utf-8")
    arrays = {k: np.asarray(params[k]) for k in ("coef", "intercept")}
    same = [
        EmbeddingThemeJudge(
            config=EmbeddingThemeConfig.from_json(_reversed_keys(params)), encoder=Encoder384()
        ),
        EmbeddingThemeJudge(params_file=str(copy), encoder=Encoder384()),
        EmbeddingThemeJudge(
            config=EmbeddingThemeConfig.from_json(params | {"date": "1999-01-01", "C": 1}),
            encoder=Encoder384(),
        ),
        EmbeddingThemeJudge(
            config=EmbeddingThemeConfig.from_json(params | arrays), encoder=Encoder384()
        ),
    ]
    assert [judge.fingerprint for judge in same] == [shipped] * len(same)
    # another judge: one weight, one intercept, the label order or a feature changed
    coef = [list(row) for row in params["coef"]]
    coef[3][7] += 1e-4
    intercept = [*params["intercept"][:-1], params["intercept"][-1] + 1e-4]
    labels = [params["labels"][1], params["labels"][0], *params["labels"][2:]]
    changed = [
        params | {"coef": coef},
        params | {"intercept": intercept},
        params | {"labels": labels},
    ]
    if "features" in params:  # sentence features and the word vocabulary
        features = params["features"]
        words = features["words"] | {"vocabulary": [*features["words"]["vocabulary"][:-1], "zz"]}
        changed += [
            params | {"features": features | {"sentence": features["sentence"][::-1]}},
            params | {"features": features | {"words": words}},
        ]
    prints = [
        EmbeddingThemeJudge(
            config=EmbeddingThemeConfig.from_json(p), encoder=Encoder384()
        ).fingerprint
        for p in changed
    ]
    assert len({shipped, *prints}) == 1 + len(changed)


def test_theme_judge_rejects_weights_that_do_not_fit_its_features():
    encoder = TableEncoder({})
    params = _toy_theme_params(4, {})
    params["features"] = {"sentence": ["question_mark", "leading_if"]}
    with pytest.raises(ValueError, match=r"shape \(9, 4\), expected \(9, 5\)"):
        EmbeddingThemeJudge(config=EmbeddingThemeConfig.from_json(params), encoder=encoder)
    params["features"] = {"sentence": ["exclamation"]}
    with pytest.raises(ValueError, match="unknown theme sentence features"):
        EmbeddingThemeJudge(config=EmbeddingThemeConfig.from_json(params), encoder=encoder)
    del params["features"]
    with pytest.raises(ValueError, match="give config or params_file, not both"):
        EmbeddingThemeJudge(
            config=EmbeddingThemeConfig.from_json(params),
            params_file="theme_judge_v2.json",
            encoder=encoder,
        )
    with pytest.raises(FileNotFoundError, match=r"no_such_judge\.json"):
        EmbeddingThemeJudge(params_file="no_such_judge.json", encoder=encoder)


def test_shipped_theme_judge_v2_parameters_fit_their_features():
    params = load_params("theme_judge_v2.json")
    words = params["features"]["words"]["vocabulary"]
    assert params["features"]["sentence"] == ["question_mark", "leading_if"]
    assert words == sorted(set(words))
    assert np.asarray(params["coef"]).shape == (len(THEMES), 384 + 2 + len(words))
    assert params["vocabulary_excludes"] == ["oncqa/"]


@pytest.mark.slow
def test_theme_judge_v2_labels_clear_examples():
    judge = load_theme_judge("embedding", {"params_file": "theme_judge_v2.json"})
    assert judge.fingerprint == load_theme_judge("embedding").fingerprint
    sentences = list(CLEAR_THEMES)
    assert [j.theme for j in judge.classify(sentences)] == [CLEAR_THEMES[s] for s in sentences]


@pytest.mark.slow
def test_theme_judge_v2_recipe_on_held_out_cases(shared_data, real_theme_judge):
    """The v2 recipe on team-labelled real sentences of cases it never saw, and the
    shipped v2 file as that recipe fitted on all of them.

    Held out by rule, not by outcome: the 5 outer folds of
    ``benchmarks/theme_judge_real.py`` (StratifiedGroupKFold over cases, stratified by
    theme, shuffled with seed 0); fold k's judge is fitted on the other folds' items and
    the 450 team-written sentences with the hyperparameters that run's nested
    cross-validation chose for fold k, and labels every sentence of fold k's cases. The
    share labelled as the team did must be the results file's held-out micro-F1 (0.825:
    706 of 856) up to 2 sentences, which the encoder's floating point on another CPU
    may flip.
    """
    from dataclasses import replace

    from sklearn.model_selection import StratifiedGroupKFold

    from editf1.training.classifiers import fit_theme_classifier
    from editf1.validation.labelled import shipped_theme_items
    from research.team_labels import load_team_theme_items
    from research.theme_judge_fit import NO_VOCABULARY_SOURCES

    results = json.loads((ROOT / "benchmarks" / "results" / "theme_judge_real.json").read_text())
    items = load_team_theme_items(shared_data)
    team = [replace(t, source="editf1/data/theme_sentences.jsonl") for t in shipped_theme_items()]
    encoder = real_theme_judge.encoder
    texts = list(dict.fromkeys(item.text for item in [*items, *team]))
    vectors = dict(zip(texts, encoder.encode(texts)))

    def fitted(training, hyperparameters):
        words = [i.text for i in training if not i.source.startswith(NO_VOCABULARY_SOURCES)]
        embeddings = np.array([vectors[i.text] for i in training])
        themes = [i.theme for i in training]
        return fit_theme_classifier(
            embeddings,
            [i.text for i in training],
            themes,
            vocabulary_texts=words,
            **hyperparameters,
        )

    folds = StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=0).split(
        np.zeros(len(items)), [i.theme for i in items], groups=[i.case for i in items]
    )
    right = 0
    for k, (train, test) in enumerate(folds):
        params = fitted(
            [*(items[i] for i in train), *team], results["chosen"]["v2, real + team"][k]
        )
        held = [items[i] for i in test]
        labels = EmbeddingThemeJudge(
            config=EmbeddingThemeConfig.from_json(params), encoder=encoder
        ).classify([i.text for i in held])
        right += sum(j.theme == i.theme for j, i in zip(labels, held))
    figure = results["judges"]["v2, real + team"]["micro_f1"]["value"]
    assert abs(right - figure * len(items)) <= 2
    # the shipped file: the recipe on every item with the finally chosen hyperparameters
    shipped = load_params("theme_judge_v2.json")
    refit = fitted([*items, *team], results["chosen"]["v2 final"])
    assert refit["features"] == shipped["features"]
    assert np.abs(np.array(refit["coef"]) - shipped["coef"]).max() < 1e-3
    # the vocabulary holds no n-gram found only in OncQA text (which has no licence to ship)
    allowed = [it.text for it in items if not it.source.startswith("oncqa/")]
    allowed += [it.text for it in shipped_theme_items()]
    vocabulary = shipped["features"]["words"]
    found = theme_word_vectorizer(tuple(vocabulary["ngram_range"]), vocabulary["vocabulary"])
    assert found.transform(allowed).sum(axis=0).min() >= 2  # min_df 2 on allowed text


# ---------------------------------------------------------------- registry


def test_every_registered_name_loads_a_judge_of_its_kind():
    from editf1 import clear_caches

    assert isinstance(load_content_judge("exact"), ContentJudge)
    # the generative judges need a model; without one they say which options to give
    for load in (load_content_judge, load_theme_judge):
        with pytest.raises(ValueError, match="an llm judge needs base"):
            load("llm")
    clear_caches()


@dataclasses.dataclass(frozen=True)
class OptionConfig(JudgeConfig):
    """The settings of :class:`OptionJudge`."""

    params: dict | None = dataclasses.field(default=None, metadata={"help": "nested"})
    weights: str | None = dataclasses.field(default=None, metadata={"help": "a file"})


class OptionJudge(ContentJudge):
    """A registered judge that records the options it was built with (registry tests)."""

    def __init__(self, **options) -> None:
        config = OptionConfig(**options)
        self.params = config.params
        self.weights = None if config.weights is None else Path(config.weights).read_text()

    @property
    def fingerprint(self) -> str:
        return "option-judge"

    def match(self, requests):
        return [[ContentJudgement("no_match") for _ in r.reference_sentences] for r in requests]


@pytest.fixture
def option_judge(monkeypatch):
    from editf1 import clear_caches

    monkeypatch.setitem(
        CONTENT_JUDGES, "options", (f"{__name__}:OptionJudge", f"{__name__}:OptionConfig")
    )
    clear_caches()
    yield
    clear_caches()


def test_nested_options_reach_the_judge_as_given(option_judge):
    params = {"weights": {"cosine": 1.5, "word_recall": [0.1, 0.2]}, "bias": -1}
    judge = load_content_judge("options", {"params": params})
    assert judge.params == params and isinstance(judge.params["weights"], dict)
    # equal options in another order or another dict object: the cached judge
    same = {"bias": -1, "weights": {"word_recall": [0.1, 0.2], "cosine": 1.5}}
    assert load_content_judge("options", {"params": same}) is judge
    assert load_content_judge("options", {"params": {**params, "bias": 0}}) is not judge


def test_unknown_option_names_are_listed_not_hidden(option_judge):
    with pytest.raises(TypeError, match=r"does not take option\(s\) \['threshold'\]; it takes "
                       r"\['params', 'weights'\]"):  # fmt: skip
        load_content_judge("options", {"threshold": 0.5})


def test_a_retrained_adapter_in_the_same_folder_is_not_served_stale(option_judge, tmp_path):
    from editf1 import clear_caches

    weights = tmp_path / "adapter" / "weights.txt"
    weights.parent.mkdir()
    weights.write_text("epoch 1")
    first = load_content_judge("options", {"weights": str(weights)})
    assert load_content_judge("options", {"weights": str(weights)}) is first
    weights.write_text("epoch 2, longer")  # re-trained in place: size and time change
    second = load_content_judge("options", {"weights": str(weights)})
    assert second is not first and second.weights == "epoch 2, longer"
    clear_caches()
    assert load_content_judge("options", {"weights": str(weights)}) is not second


def test_options_that_are_not_json_are_never_cached(option_judge):
    params = {"encoder": object()}
    assert load_content_judge("options", {"params": params}) is not load_content_judge(
        "options", {"params": params}
    )


def test_nested_options_through_evaluate_load(option_judge):
    evaluate = pytest.importorskip("evaluate")
    params = {"weights": {"cosine": 2.0}, "window": [1, 2]}
    metric = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "edit_f1"))
    out = metric.compute(
        predictions=["Rest today."],
        references=["Rest today."],
        content_judge="options",
        theme_judge=None,
        content_judge_options={"params": params},
    )
    assert (out["expected_matches"], out["expected_additions"]) == (0, 1)
    assert "content:option-judge" in out["reproducibility"]
    assert load_content_judge("options", {"params": params}).params == params


@pytest.mark.parametrize("name", ["gpt-judge", "", None, 3])
def test_unknown_judge_names_list_the_known_ones(name):
    with pytest.raises(
        ValueError,
        match=r"content_judge must be one of "
        r"\['cross-encoder', 'embedding', 'exact', 'llm', 'server'\]",
    ):
        load_content_judge(name)
    with pytest.raises(
        ValueError, match=r"theme_judge must be one of \['embedding', 'llm', 'server'\]"
    ):
        load_theme_judge(name)


def test_options_for_a_judge_object_raise():
    judge = ExactMatchContentJudge()
    assert load_content_judge(judge) is judge
    with pytest.raises(ValueError, match="content_judge_options apply to a judge name"):
        load_content_judge(judge, {"threshold": 0.7})

    class Theme(ThemeJudge):
        fingerprint = "t"

        def classify(self, sentences):
            return []

    theme = Theme()
    assert load_theme_judge(theme) is theme
    with pytest.raises(ValueError, match="theme_judge_options apply to a judge name"):
        load_theme_judge(theme, {"x": 1})


def test_unknown_option_for_a_named_judge_raises():
    with pytest.raises(TypeError, match=r"'exact' does not take option\(s\) \['threshold'\]"):
        load_content_judge("exact", {"threshold": 0.7})


def test_loaded_judges_are_cached():
    first = load_content_judge("exact")
    assert load_content_judge("exact") is first
    assert load_content_judge("exact", {}) is first
    assert isinstance(first, ContentJudge)


@pytest.mark.slow
def test_embedded_judges_are_cached_and_share_one_encoder():
    # other tests clear the cache, so the session's fixtures may predate this test's cache
    content, themes = load_content_judge("embedding"), load_theme_judge("embedding")
    assert load_content_judge("embedding") is content
    assert load_theme_judge("embedding") is themes
    assert load_content_judge("embedding", None) is content
    other = load_content_judge("embedding", {"threshold": 0.7})
    assert other is not content
    assert load_content_judge("embedding", {"threshold": 0.7}) is other
    assert other.threshold == 0.7 and "threshold=0.7" in other.fingerprint
    assert other.encoder is content.encoder is themes.encoder


@pytest.mark.slow
def test_bounded_span_search_changes_no_decision_on_real_data(shared_data, real_content_judge):
    """On K-QA, both OncQA settings and ExpertQA's medicine answers (where the margin was
    chosen) and on K-QA's physician answers against their curated statements (not used
    to choose it), the default bound rules out no run that the exhaustive search would
    have answered, and no run's cosine gains the margin or more over its best sentence."""
    from editf1.builders.readers import (
        expertqa_medicine_rows,
        kqa_nli_rows,
        kqa_question_rows,
        oncqa_rows,
    )
    from editf1.segment import SentenceSplitter

    folders = [shared_data / name for name in ("kqa", "oncqa", "expertqa")]
    if not all(folder.is_dir() for folder in folders):
        pytest.skip(f"K-QA, OncQA or ExpertQA is absent from {shared_data}")
    splitter = SentenceSplitter()
    pairs = [(r["claim"], r["answer"]) for r in kqa_nli_rows(folders[0])]
    for setting in ("own_reply", "edited"):
        pairs += [(r["reference"], r["prediction"]) for r in oncqa_rows(folders[1], setting)]
    pairs += [(r["revision"], r["answer"]) for r in expertqa_medicine_rows(folders[2])]
    pairs += [
        (" ".join(r["Must_have"] + r["Nice_to_have"]), r["Free_form_answer"])
        for r in kqa_question_rows(folders[0])
    ]
    requests = [request(splitter, ref, draft) for ref, draft in pairs]
    bounded = real_content_judge.match(requests)
    exhaustive = real_content_judge.span_scores(requests, every_span=True)
    gains, matches = [], 0
    for req, answers, full in zip(requests, bounded, exhaustive):
        n = len(req.prediction_sentences)
        if n > 1 and len(req.reference_sentences):
            best = np.maximum(full.cosine[:, : n - 1], full.cosine[:, 1:n])
            gains.append((full.cosine[:, n:] - best).max())
        for answer, row in zip(answers, full.probability):
            expected = row.max() >= 0.5 if len(row) else False
            assert (answer.status == "match") == expected
            if expected:
                matches += 1
                assert answer.span == full.spans[int(row.argmax())]
    assert len(gains) > 500 and max(gains) < real_content_judge.span_margin
    assert matches > 100
