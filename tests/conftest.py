"""Shared fixtures: scripted judges whose answers are known, the real judges (loaded once
per session through the registry's cache) and the path of the shared real data."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from editf1.judges import ContentJudge, ContentJudgement, ThemeJudge, ThemeJudgement
from editf1.segment import Sentence, SentenceSplitter

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: The repository root, last on ``sys.path``: the tests of ``research/`` (never installed)
#: import it from there, and nothing there hides an installed package.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

#: ``../shared/data`` relative to the repository root.
SHARED_DATA = ROOT.parent / "shared" / "data"

#: A scripted content answer meaning "the judge's output could not be used".
UNUSABLE = object()


def find_span(text: str, part: str, occurrence: int = 0) -> Sentence:
    """The ``occurrence``-th (0-based) verbatim occurrence of ``part`` in ``text``."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(part, start + 1)
    return Sentence(part, start, start + len(part))


class ScriptedContentJudge(ContentJudge):
    """Answers from a dict ``{reference sentence: draft substring | None | UNUSABLE}``.

    A substring is matched at its first occurrence in the draft, and is NO MATCH when
    the draft does not hold it; a ``Sentence`` is returned as is, even if it is not
    verbatim; a sentence missing from the dict is NO MATCH.
    ``calls`` counts calls of :meth:`match`.
    """

    def __init__(self, answers: dict | None = None) -> None:
        self.answers = dict(answers or {})
        self.calls = 0

    @property
    def fingerprint(self) -> str:
        return "scripted-content"

    def _judge(self, request, sentence) -> ContentJudgement:
        answer = self.answers.get(sentence.text)
        if answer is None:
            return ContentJudgement("no_match", None, 0.0)
        if answer is UNUSABLE:
            return ContentJudgement("unusable", raw="<garbled output>")
        if isinstance(answer, Sentence):
            return ContentJudgement("match", answer, 1.0)
        if answer not in request.prediction:
            return ContentJudgement("no_match", None, 0.0)
        return ContentJudgement("match", find_span(request.prediction, answer), 1.0)

    def match(self, requests):
        self.calls += 1
        return [[self._judge(r, s) for s in r.reference_sentences] for r in requests]


class ScriptedThemeJudge(ThemeJudge):
    """Labels from a dict ``{sentence: theme | None}``; unknown sentences get ``default``.

    ``classified`` lists every sentence it was asked about, in order; ``calls`` counts
    calls of :meth:`classify`.
    """

    def __init__(self, labels: dict | None = None, default: str | None = "Other") -> None:
        self.labels = dict(labels or {})
        self.default = default
        self.classified: list[str] = []
        self.calls = 0

    @property
    def fingerprint(self) -> str:
        return "scripted-theme"

    def classify(self, sentences):
        self.calls += 1
        self.classified.extend(sentences)
        return [ThemeJudgement(self.labels.get(s, self.default), 1.0) for s in sentences]


@pytest.fixture(scope="session")
def splitter() -> SentenceSplitter:
    return SentenceSplitter()


def exact_sentence_counts(draft: str, reference: str) -> tuple[int, int, int]:
    """(EM, EA, ED) of the exact-sentence judge, worked out without the library's judge
    or counter: a reference sentence matches the first draft sentence with the same
    case-folded words that no earlier one claimed (or, with none left, the last one);
    draft sentences with a word that no reference sentence claimed are deletions."""
    split = SentenceSplitter().split
    words = [tuple(re.findall(r"[^\W_]+", s.text.casefold())) for s in split(draft)]
    claimed = set()
    matches = 0
    for sentence in split(reference):
        key = tuple(re.findall(r"[^\W_]+", sentence.text.casefold()))
        same = [k for k, other in enumerate(words) if other == key]
        if same:
            matches += 1
            claimed.add(next((k for k in same if k not in claimed), same[-1]))
    additions = len(split(reference)) - matches
    deletions = sum(1 for k, key in enumerate(words) if key and k not in claimed)
    return matches, additions, deletions


class BagModel:
    """A stand-in for a SentenceTransformer without attention: one token per word, each
    word a fixed 2-d vector, mean pooling then normalisation. Encoding a run of texts
    as one text therefore gives exactly what composing it from its texts gives. Records
    the texts of every ``encode`` call (one call per batch)."""

    max_seq_length = 4
    VECTORS: ClassVar = {"rest": [1.0, 0.0], "drink": [0.0, 1.0], "call": [0.6, 0.8]}

    def __init__(self):
        self.batches: list[list[str]] = []

    class tokenizer:  # an attribute, as a SentenceTransformer's
        """Words as word pieces, no special tokens."""

        def __call__(self, texts, verbose=True, add_special_tokens=True):
            return {"input_ids": [BagModel.words(t) for t in texts]}

        @staticmethod
        def decode(ids):
            return " ".join(ids)

    tokenizer = tokenizer()

    @staticmethod
    def words(text):
        return text.lower().replace(".", "").split()

    def get_sentence_embedding_dimension(self):
        return 2

    def encode(self, texts, output_value="sentence_embedding", **kwargs):
        import torch

        assert output_value is None  # SentenceEncoder reads the token embeddings
        self.batches.append(list(texts))
        out = []
        for text in texts:
            words = self.words(text)[: self.max_seq_length]
            hidden = torch.tensor([self.VECTORS[w] for w in words])
            mean = hidden.mean(0)
            out.append(
                {
                    "attention_mask": torch.ones(len(words)),
                    "token_embeddings": hidden,
                    "sentence_embedding": mean / mean.norm(),
                }
            )
        return out


@pytest.fixture
def exact_counts():
    """:func:`exact_sentence_counts`: ``exact_counts(draft, reference) -> (EM, EA, ED)``."""
    return exact_sentence_counts


@pytest.fixture
def content_judge_cls():
    """The :class:`ScriptedContentJudge` class (tests import nothing from conftest)."""
    return ScriptedContentJudge


@pytest.fixture
def theme_judge_cls():
    """The :class:`ScriptedThemeJudge` class."""
    return ScriptedThemeJudge


@pytest.fixture
def unusable():
    """The scripted content answer for an unusable judgement."""
    return UNUSABLE


@pytest.fixture
def bag_model():
    """The :class:`BagModel` class: a sentence-transformers stand-in without attention."""
    return BagModel


@pytest.fixture
def span():
    """:func:`find_span`: ``span(text, part, occurrence=0) -> Sentence``."""
    return find_span


#: Ten cases of a site's own labels: each draft says the first reference sentence
#: (a paraphrase: match) and not the second (no match); one label per item.
_OWN_CONTENT_LABELS = [
    (
        f"site-{k}",
        draft,
        said,
        unsaid,
    )
    for k, (draft, said, unsaid) in enumerate(
        [
            (
                "Keep taking your lisinopril every day. Check your blood pressure at home.",
                "Please continue your lisinopril daily.",
                "We will order an MRI of your knee.",
            ),
            (
                "Your potassium was a little low. Eat bananas and leafy greens.",
                "Your potassium level came back slightly low.",
                "Stop the metformin for now.",
            ),
            (
                "The rash is likely an allergic reaction. Use the cream twice a day.",
                "This looks like an allergic rash.",
                "Your next chemotherapy is on Monday.",
            ),
            (
                "Drink plenty of fluids. Rest for the next few days.",
                "Make sure you stay well hydrated.",
                "Your biopsy showed no cancer.",
            ),
            (
                "We moved your appointment to Friday. Bring your medication list.",
                "Your visit is now on Friday.",
                "Take ibuprofen for the pain.",
            ),
            (
                "Your A1c improved to 6.8. Keep up the diet changes.",
                "Your diabetes control has improved.",
                "Call 911 if you have chest pain.",
            ),
            (
                "I have sent a referral to cardiology. They will call you this week.",
                "I referred you to a heart specialist.",
                "Your thyroid levels are normal.",
            ),
            (
                "Ice the ankle for 20 minutes at a time. Keep it raised.",
                "Put ice on your ankle.",
                "We are increasing your insulin dose.",
            ),
            (
                "The nausea should ease in a day or two. Eat small, bland meals.",
                "The nausea will likely pass soon.",
                "Schedule a colonoscopy next year.",
            ),
            (
                "Your chest X-ray was clear. There is no sign of pneumonia.",
                "Your X-ray showed no pneumonia.",
                "Please fast before the blood draw.",
            ),
        ]
    )
]


@pytest.fixture
def own_content_labels() -> list[dict]:
    """The ten cases above as content-label rows (``case``, ``prediction``, ``reference``,
    ``match``), 20 items, the format ``train-judge embedding-content --data`` reads."""
    return [
        {"case": case, "prediction": draft, "reference": sentence, "match": match}
        for case, draft, said, unsaid in _OWN_CONTENT_LABELS
        for sentence, match in ((said, True), (unsaid, False))
    ]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; tests using it skip with a reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (outside this workplace)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def real_content_judge():
    """The embedded content judge, loaded once (the registry caches it)."""
    from editf1.judges import load_content_judge

    return load_content_judge("embedding")


@pytest.fixture(scope="session")
def real_theme_judge():
    """The embedded theme judge, loaded once (the registry caches it)."""
    from editf1.judges import load_theme_judge

    return load_theme_judge("embedding")


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module's tests: on tiny matrices, several threads'
    synchronisation costs 100x the maths. Restores the thread count after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---------------------------------------------------------------- browser tests

#: Debian's chromium, which the browser tests drive through Playwright (never downloaded).
CHROMIUM = os.environ.get("EDITF1_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags chromium's own connections are refused here.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    """Headless chromium under Playwright, one per test module; skips with the reason
    without the ``browser`` extra or ``/usr/bin/chromium`` (``.ci/run`` installs it)."""
    import shutil

    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install '.[browser]')"
    )
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium; or set EDITF1_CHROMIUM)")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def serve_app():
    """``serve(app) -> url``: launch a Gradio app on 127.0.0.1 at a free port; every app
    served is closed when the module's tests end."""
    import socket

    served = []

    def serve(app) -> str:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True,
                   quiet=True, ssr_mode=False)  # fmt: skip
        served.append(app)
        return f"http://127.0.0.1:{port}/"

    yield serve
    for app in served:
        app.close()


# ---------------------------------------------------------------- gold labels on the demo set


@pytest.fixture(scope="session")
def exact_demo():
    """The shipped demo set and its :class:`CorpusResult` under the exact judge (no themes).

    The exact judge's counts (EM, ED, EA) of demo-02, -08, -09: (5, 1, 0), (6, 0, 0),
    (0, 13, 6)."""
    from editf1.builders.readers import demo_rows
    from editf1.scorer import EditF1Scorer

    rows = demo_rows()
    scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
    result = scorer.score(
        [r["prediction"] for r in rows], [r["reference"] for r in rows], ids=[r["id"] for r in rows]
    )
    return rows, result


def _demo_gold_rows(result, matched_first=("demo-09",)) -> list[dict]:
    out = []
    for pair in result.pairs:
        if pair.id not in ("demo-02", "demo-08", "demo-09"):
            continue
        sentences = []
        for k, a in enumerate(pair.alignment):
            match = None if a.match is None else {"start": a.match.start, "end": a.match.end}
            if pair.id in matched_first and k == 0:
                first = pair.prediction_sentences[0]
                match = {"start": first.start, "end": first.end}
            sentences.append({"start": a.reference.start, "end": a.reference.end, "match": match})
        out.append({"id": pair.id, "reference_sentences": sentences})
    return out


@pytest.fixture
def demo_gold_rows():
    """``gold_rows(result, matched_first=("demo-09",))``: gold rows of demo-02, -08 and -09
    that copy the judge's decisions in ``result``, except that the first reply sentence of
    each pair in ``matched_first`` is matched to the draft's first sentence (under the exact
    judge the gold counts are then (5, 1, 0), (6, 0, 0), (1, 12, 5))."""
    return _demo_gold_rows
