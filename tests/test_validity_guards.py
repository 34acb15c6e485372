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

    class tokenizer:  # an attribute, as a SentenceTransformer's
        def __call__(self, texts, verbose=True, add_special_tokens=True):
            extra = 2 if add_special_tokens else 0
            return {"input_ids": [[0] * (len(t.split()) + extra) for t in texts]}

        @staticmethod
        def decode(ids):
            return " ".join("w" for _ in ids)

    tokenizer = tokenizer()

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


def test_encoder_reads_texts_longer_than_its_window_in_windows_and_counts_them():
    """Window 5 word pieces, 2 of them special: "a b c" (5) is read whole; "secret d e f"
    (6) in windows of 3 and 1 words, "a b c d e f" (8) of 3 and 3: 2 texts windowed, 5
    texts through the model, no warning."""
    model = WordModel()
    calls = []
    encode = model.encode
    model.encode = lambda texts, **kw: calls.append(list(texts)) or encode(texts, **kw)
    encoder = SentenceEncoder(model, "word-model")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vectors = encoder.encode(["a b c", "secret d e f", "a b c d e f"])
    assert encoder.windowed == 2 and encoder.encoded == 3
    assert sorted(len(t.split()) for batch in calls for t in batch) == [1, 3, 3, 3, 3]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    encoder.encode(["a b c d e f", "a b"])  # cached, and one short text
    assert encoder.windowed == 2


@pytest.mark.slow
def test_run_on_texts_that_differ_after_the_window_no_longer_look_identical():
    """210 words alike (no two clauses the same), then 70 different, read as one sentence
    each: the encoder's window (256 word pieces) ends inside the common part, so read
    truncated both would embed identically. In windows the ending counts: the pair's
    probability is below that of the reply against itself, and nothing is truncated."""
    common = ", ".join(f"on day {day} keep the knee raised on two pillows" for day in range(21))
    draft = common + ", " + " ".join(["call us when the pain gets worse"] * 10) + "."
    reply = common + ", " + " ".join(["bring your insurance card and photo id"] * 10) + "."
    whole = EditF1Scorer(theme_judge=None, splitter=SentenceSplitter(max_words=10**6))
    encoder = whole.content_judge.encoder
    before = encoder.windowed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (different,) = whole.score([draft], [reply]).pairs
        (same,) = whole.score([reply], [reply]).pairs
    assert encoder.windowed == before + 2
    assert different.alignment[0].score < same.alignment[0].score - 0.05


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["embedding", "cross-encoder"])
def test_a_flipped_instruction_at_the_end_of_a_long_sentence_is_no_match(judge):
    """A 240-word sentence whose last words turn "keep taking the tamoxifen" into "stop
    taking the tamoxifen", read as one sentence: NO MATCH (the veto reads the whole text;
    the cross-encoder reads it in windows), so the draft scores F1 0, not 1."""
    base = ", ".join(f"on day {day} keep the knee raised on two pillows" for day in range(21))
    reply = base + ", and keep taking the tamoxifen every morning."
    draft = base + ", and stop taking the tamoxifen every morning."
    scorer = EditF1Scorer(
        content_judge=judge, theme_judge=None, splitter=SentenceSplitter(max_words=10**6)
    )
    (pair,) = scorer.score([draft], [reply]).pairs
    assert [a.status for a in pair.alignment] == ["no_match"]
    assert pair.content.f1 == 0.0
    (same,) = scorer.score([reply], [reply]).pairs
    assert same.content.f1 == 1.0
