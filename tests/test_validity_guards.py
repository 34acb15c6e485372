"""Guards against scores the encoder cannot back (hardening, section 1): text the encoder
truncates is counted and reported, and sentences of scripts it barely reads match only
on shared words."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from editf1.judges.base import JudgeRequest
from editf1.judges.embedding import EmbeddingContentConfig, EmbeddingContentJudge, word_recall
from editf1.judges.encoder import SentenceEncoder
from editf1.scorer import EditF1Scorer
from editf1.segment import SentenceSplitter

HINDI = "कृपया अपनी दवा रोज़ सुबह लें।"  # "please take your medicine every morning"
HINDI_UNRELATED = "अगले सप्ताह आपकी बायोप्सी की रिपोर्ट आएगी।"  # "your biopsy report comes next week"


def test_word_recall_keeps_words_with_vowel_signs_whole():
    # the vowel signs of Devanagari are combining marks: split at them, "अपनी" and "आपकी"
    # shared the fragment "प" (recall 0.33 before); whole words share nothing
    assert word_recall([HINDI], [HINDI_UNRELATED]).tolist() == [[0.0]]
    # "दवा" is one of the two words of "दवा लें"
    assert word_recall(["दवा लें"], ["दवा"]).tolist() == [[0.5]]


class TableEncoder:
    """Embeddings from a table {text: vector}."""

    name = "table"
    dimension = 2

    def __init__(self, table):
        self.table = {t: np.asarray(v, dtype=np.float32) for t, v in table.items()}

    def encode(self, texts):
        return np.array([self.table[t] for t in texts], dtype=np.float32).reshape(-1, 2)


# probability = sigmoid(10 * cosine - 8): a match from cosine 0.8 up, word overlap ignored
STEEP = {"weights": {"cosine": 10.0, "word_recall": 0.0}, "bias": -8.0, "window": 1}
NEAR = [0.9, np.sqrt(1 - 0.81)]  # cosine 0.9 with [1, 0]


@pytest.mark.parametrize(
    ("reference", "draft", "status"),
    [
        (HINDI, HINDI_UNRELATED, "no_match"),  # no shared word, Hindi: ruled out
        ("Take your medicine.", "请每天吃药。", "no_match"),  # the draft span is Chinese
        (HINDI, "कृपया दवा लें।", "match"),  # shared words: the cosine counts
        ("Stay hydrated.", "Drink plenty of fluids.", "match"),  # Latin script: no guard
    ],
)
def test_no_shared_word_in_another_script_is_no_match(splitter, reference, draft, status):
    judge = EmbeddingContentJudge(
        config=EmbeddingContentConfig.from_json(STEEP),
        encoder=TableEncoder({reference: [1, 0], draft: NEAR}),
    )
    request = JudgeRequest(tuple(splitter.split(reference)), draft, tuple(splitter.split(draft)))
    (answer,) = judge.match([request])[0]
    # sigmoid(10 * 0.9 - 8) = 0.731 unless the guard rules the span out (0.0)
    assert answer.status == status
    assert answer.score == (pytest.approx(0.731, abs=1e-3) if status == "match" else 0.0)


@pytest.mark.slow
def test_real_judge_does_not_match_unrelated_hindi_sentences(real_content_judge, splitter):
    # all-MiniLM-L6-v2 puts these two unrelated sentences at cosine 0.80
    for threshold in (0.5, 0.3):
        judge = EmbeddingContentJudge(threshold=threshold, encoder=real_content_judge.encoder)
        for draft, status in ((HINDI_UNRELATED, "no_match"), (HINDI, "match")):
            request = JudgeRequest(
                tuple(splitter.split(HINDI)), draft, tuple(splitter.split(draft))
            )
            assert judge.match([request])[0][0].status == status, (threshold, draft)


class WordModel:
    """A stand-in for a SentenceTransformer: one word piece per word, plus 2 special."""

    max_seq_length = 5

    def tokenizer(self, texts, verbose=True):
        return {"input_ids": [[0] * (len(t.split()) + 2) for t in texts]}

    def encode(self, texts, **kwargs):  # as SentenceEncoder asks: output_value=None
        import torch

        vector = torch.ones(2) / np.sqrt(2)
        return [
            {
                "attention_mask": torch.ones(1),
                "token_embeddings": vector[None],
                "sentence_embedding": vector,
            }
            for _ in texts
        ]

    def get_sentence_embedding_dimension(self):
        return 2


def test_encoder_counts_and_reports_truncated_texts_without_quoting_them():
    encoder = SentenceEncoder(WordModel(), "word-model")
    # 3, 4 and 6 words: 5, 6 and 8 word pieces for a window of 5
    with pytest.warns(UserWarning) as caught:
        encoder.encode(["a b c", "secret d e f", "a b c d e f"])
    message = str(caught[0].message)
    assert message.startswith("2 of 3 text(s) encoded are longer than word-model's window of 5")
    assert "secret" not in message and encoder.truncated == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoder.encode(["a b c d e f", "a b"])  # cached, and one short text: no warning
    assert encoder.truncated == 2


@pytest.mark.slow
def test_run_on_texts_that_differ_after_the_window_no_longer_score_one():
    # 210 words alike (no two clauses the same), then 70 different: the encoder's window
    # (256 word pieces) ends inside the common part
    common = ", ".join(f"on day {day} keep the knee raised on two pillows" for day in range(21))
    # (no "if": the default vetoes a condition one text has and the other lacks, which
    # would hide what this test is about)
    draft = common + ", " + " ".join(["call us when the pain gets worse"] * 10) + "."
    reply = common + ", " + " ".join(["bring your insurance card and photo id"] * 10) + "."
    # one sentence each, as before: the texts are truncated, look alike, and match
    whole = EditF1Scorer(theme_judge=None, splitter=SentenceSplitter(max_words=10**6))
    # the scorer's own judge (the registry's: another test may have cleared the caches
    # since the fixture's judge was loaded)
    encoder = whole.content_judge.encoder
    before = encoder.truncated
    with pytest.warns(UserWarning, match="longer than .* window of 256 word pieces"):
        assert whole.score([draft], [reply]).f1 == 1.0
    assert encoder.truncated == before + 2
    # the default splitter cuts both into pieces read whole: the last pieces differ
    split = EditF1Scorer(theme_judge=None)
    assert split.content_judge.encoder is encoder  # one cached judge for both scorers
    result = split.score([draft], [reply])
    assert encoder.truncated == before + 2
    counts = (result.expected_matches, result.expected_additions, result.expected_deletions)
    assert counts == (3, 1, 1) and result.f1 == 0.75
