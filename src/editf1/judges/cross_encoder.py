"""The cross-encoder content judge: a fine-tuned all-MiniLM-L6-v2 cross-encoder reads each
reference sentence with every candidate span of the draft in one forward pass (Nogueira
and Cho 2019, "Passage re-ranking with BERT"; Seegmiller et al., arXiv 2601.11344,
Algorithm 1). The shipped model (:func:`shipped_model`) is fine-tuned on the team's content
labels by :mod:`editf1.training.cross_encoder`; the fingerprint names its weights' digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import ClassVar

import numpy as np

from editf1.judges.base import (
    RUN_FLOOR_HELP,
    THRESHOLD_HELP,
    ContentJudge,
    ContentJudgement,
    JudgeConfig,
    JudgeRequest,
    check_finite,
    check_integer,
    check_number,
)
from editf1.judges.embedding.content import word_recall
from editf1.judges.key_terms import VETO_HELP, check_veto
from editf1.judges.spans import candidate_spans, span_ranges
from editf1.judges.veto import decide, vetoed
from editf1.segment import Sentence

__all__ = [
    "CONFIG_FILE",
    "STACK_FEATURES",
    "WEIGHTS_FILE",
    "CrossEncoderConfig",
    "CrossEncoderContentJudge",
    "CrossEncoderScorer",
    "PairScorer",
    "load_cross_encoder",
    "shipped_model",
    "window_pairs",
]

#: The settings file of a model folder (a :class:`CrossEncoderConfig` and the record).
CONFIG_FILE = "judge.json"
#: The weights file of a model folder.
WEIGHTS_FILE = "model.safetensors"
#: Features the probability may stack (step 3): the cross-encoder's logit, the
#: bi-encoder's cosine similarity, the share of the sentence's words in the span.
STACK_FEATURES = ("logit", "cosine", "word_recall")
#: The kinds the default veto names: the embedded default's.
DEFAULT_VETO = ("quantity", "frequency", "direction", "drug", "negation", "condition")


def shipped_model() -> Path:
    """The folder of the shipped cross-encoder (``editf1/data/cross_encoder``)."""
    return Path(str(resources.files("editf1.data").joinpath("cross_encoder")))


@dataclass(frozen=True)
class CrossEncoderConfig(JudgeConfig):
    """Settings of the cross-encoder content judge: the ``judge.json`` of a model folder
    (``from_json`` ignores its training record).

    Raises:
        ValueError: naming the field out of range (``max_length`` below 16, ``features``
            without ``"logit"``, not one weight per feature, ...).
    """

    OPTIONS: ClassVar[dict[str, str]] = {
        "model": "a folder with the model's files and judge.json (default: the shipped one)",
        "batch_size": "(sentence, span) pairs per forward pass",
        "device": "cpu, cuda, ...; none: sentence-transformers' choice",
    }
    SETTINGS_FROM = "model"

    window: int = field(
        default=2, metadata={"help": "longest run of adjacent draft sentences as one span"}
    )
    max_length: int = field(
        default=128,
        metadata={"help": "word pieces the cross-encoder reads per pair; longer pairs in windows"},
    )
    threshold: float = field(default=0.5, metadata={"help": THRESHOLD_HELP})
    run_floor: float = field(default=0.0, metadata={"help": RUN_FLOOR_HELP})
    features: tuple[str, ...] = field(
        default=("logit",), metadata={"help": f"what the probability stacks: {STACK_FEATURES}"}
    )
    weights: tuple[float, ...] = field(
        default=(1.0,), metadata={"help": "logistic-regression weights, one per feature"}
    )
    bias: float = field(default=0.0, metadata={"help": "logistic-regression intercept"})
    veto: tuple[str, ...] = field(default=DEFAULT_VETO, metadata={"help": VETO_HELP})

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "weights", tuple(check_finite("weights", w) for w in self.weights))
        object.__setattr__(self, "veto", check_veto(self.veto))
        check_integer("window", self.window, 1)
        check_integer("max_length", self.max_length, 16)
        check_number("threshold", self.threshold, 0.0, 1.0)
        check_number("run_floor", self.run_floor, 0.0, 1.0)
        check_finite("bias", self.bias)
        unknown = sorted(set(self.features) - set(STACK_FEATURES))
        if unknown or "logit" not in self.features or len(set(self.features)) != len(self.features):
            raise ValueError(
                f"features must be distinct names from {list(STACK_FEATURES)} including "
                f"'logit', got {list(self.features)}"
            )
        if len(self.weights) != len(self.features):
            raise ValueError(
                f"weights must give one number per feature ({len(self.features)}), "
                f"got {len(self.weights)}"
            )


#: N (sentence, span) pairs -> N logits.
PairScorer = Callable[[Sequence[tuple[str, str]]], np.ndarray]


def window_pairs(
    sentence: list[str], span: list[str], budget: int, stride: float = 0.5
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The ``(start, end)`` windows of ``sentence`` and of ``span`` (word pieces) a pair is
    read in, at most ``budget`` pieces together, overlapping by ``1 - stride``: the whole
    texts where both fit; else a side of at most half the budget whole and the other in
    windows of the rest; two long sides in windows of half each.

    >>> window_pairs(list("abcdef"), list("xy"), 8)
    ([(0, 6)], [(0, 2)])
    >>> window_pairs(list("abcdefgh"), list("wxyz"), 8)
    ([(0, 4), (2, 6), (4, 8)], [(0, 4)])
    """
    n, m = len(sentence), len(span)
    if n + m <= budget:
        return [(0, n)], [(0, m)]
    half = budget // 2
    if n <= half:  # the short side whole, the long side the rest
        a, b = n, budget - n
    elif m <= half:
        a, b = budget - m, m
    else:  # both long: equal windows, so identical texts are cut alike
        a = b = half

    def cuts(length: int, size: int) -> list[tuple[int, int]]:
        if length <= size:
            return [(0, length)]
        step = max(1, int(size * stride))
        starts = [*range(0, length - size, step), length - size]
        return [(s, s + size) for s in starts]

    return cuts(n, a), cuts(m, b)


def load_cross_encoder(folder: str | Path, max_length: int, device: str | None = None):
    """The sentence-transformers ``CrossEncoder`` of a model folder (one logit per
    pair, no activation), loaded offline in float32 (the shipped weights are float16).

    Raises:
        FileNotFoundError: if the folder has no weights.
    """
    import torch
    from sentence_transformers import CrossEncoder

    if not (Path(folder) / WEIGHTS_FILE).is_file():
        raise FileNotFoundError(f"no {WEIGHTS_FILE} in the cross-encoder folder {folder}")
    model = CrossEncoder(
        str(folder),
        num_labels=1,
        max_length=max_length,
        activation_fn=torch.nn.Identity(),
        local_files_only=True,
        device=device,
        model_kwargs={"dtype": torch.float32},
    )
    model.eval()
    return model


class CrossEncoderScorer:
    """A loaded ``CrossEncoder`` (one logit per pair) as a :data:`PairScorer`: pairs sorted
    by length into batches, pairs over ``max_length`` pieces read in :func:`window_pairs`.
    """

    def __init__(self, model, max_length: int, batch_size: int = 64) -> None:
        self.model = model
        self.tokenizer = model.tokenizer
        self.budget = max_length - 3  # [CLS] sentence [SEP] span [SEP]
        self.batch_size = batch_size

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """(N,) float logits of N (sentence, span) pairs."""
        if not pairs:
            return np.zeros(0)
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        encoded = self.tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
        pieces = dict(zip(texts, encoded))
        flat: list[tuple[str, str]] = []
        plans = []  # per pair: (sentence windows, span windows, first index in flat)
        for sentence, span in pairs:
            a, b = pieces[sentence], pieces[span]
            rows, cols = window_pairs(a, b, self.budget)
            plans.append((len(rows), len(cols), len(flat)))
            if len(rows) == len(cols) == 1:
                flat.append((sentence, span))
                continue
            decode = self.tokenizer.decode
            flat += [(decode(a[r0:r1]), decode(b[c0:c1])) for r0, r1 in rows for c0, c1 in cols]
        order = sorted(range(len(flat)), key=lambda i: len(flat[i][0]) + len(flat[i][1]))
        scores = self.model.predict(
            [list(flat[i]) for i in order],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        logits = np.zeros(len(flat))
        logits[order] = np.asarray(scores, dtype=float).reshape(len(flat))
        out = np.empty(len(pairs))
        for k, (rows, cols, at) in enumerate(plans):
            out[k] = logits[at : at + rows * cols].reshape(rows, cols).max(axis=1).min()
        return out


class CrossEncoderContentJudge(ContentJudge):
    """Content judge: for each reference sentence, (1) the candidate spans
    (:func:`~editf1.judges.spans.candidate_spans`); (2) the logit of each (sentence, span),
    a long pair read in :func:`window_pairs` (the lowest, over the sentence's windows, of
    the best against the span's, so a changed ending counts); (3) Platt scaling,
    ``sigmoid(weights . features + bias)``, the logit stacked with the bi-encoder's cosine
    and word recall where ``features`` names them; (4) a run is a candidate only if each of
    its sentences alone reaches ``run_floor``, and a span the ``veto`` rules out never
    matches; (5) :func:`editf1.judges.veto.decide`.

    Args:
        model: a folder written by ``edit-f1 train-judge cross-encoder`` (the model's files
            and ``judge.json``); default :func:`shipped_model`.
        config: the settings; default the folder's ``judge.json``.
        batch_size: (sentence, span) pairs per forward pass.
        device: default sentence-transformers' choice.
        encoder: the bi-encoder of the ``"cosine"`` feature; default the embedded judges'.
        pair_scorer: a :data:`PairScorer` instead of the folder's model (named in the
            fingerprint by its ``name`` attribute); ``config`` is then required.
        **overrides: fields of :class:`CrossEncoderConfig` to replace (``threshold=0.6``).

    Raises:
        FileNotFoundError: if the folder, its ``judge.json`` or its weights are missing.
        ValueError: for an override that is not a field, or a bad value.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        config: CrossEncoderConfig | None = None,
        *,
        batch_size: int = 64,
        device: str | None = None,
        encoder=None,
        pair_scorer: PairScorer | None = None,
        **overrides,
    ) -> None:
        folder = None
        if pair_scorer is None or model is not None:
            folder = Path(model) if model is not None else shipped_model()
            settings = folder / CONFIG_FILE
            if not settings.is_file():
                raise FileNotFoundError(f"no {CONFIG_FILE} in the cross-encoder folder {folder}")
            if config is None:
                config = CrossEncoderConfig.from_json(json.loads(settings.read_text("utf-8")))
        if config is None:
            raise ValueError("a CrossEncoderContentJudge with a pair_scorer needs config")
        known = sorted(f.name for f in fields(CrossEncoderConfig))
        unknown = sorted(set(overrides) - set(known))
        if unknown:
            raise ValueError(f"unknown cross-encoder option(s) {unknown}; known: {known}")
        self.config = CrossEncoderConfig.from_json(config.to_json() | overrides)
        if pair_scorer is None:
            model = load_cross_encoder(folder, self.config.max_length, device)
            record = json.dumps(self.config.to_json(), sort_keys=True).encode()
            digest = hashlib.sha256((folder / WEIGHTS_FILE).read_bytes() + record)
            self._weights, self._scorer_name = digest.hexdigest()[:12], ""
            pair_scorer = CrossEncoderScorer(model, self.config.max_length, batch_size)
        else:
            self._weights = "none"
            self._scorer_name = f",scorer={getattr(pair_scorer, 'name', 'custom')}"
        self.pair_scorer: PairScorer = pair_scorer
        self.folder = folder
        self._encoder = encoder
        self._weights_vector = np.asarray(self.config.weights, float)

    @property
    def encoder(self):
        """The bi-encoder (loaded when first needed)."""
        if self._encoder is None:
            from editf1.judges.encoder import default_encoder

            self._encoder = default_encoder()
        return self._encoder

    @property
    def fingerprint(self) -> str:
        c = self.config
        stack = ",".join(f"{f}:{w:g}" for f, w in zip(c.features, c.weights))
        encoder = f",encoder={self.encoder.name}" if "cosine" in c.features else ""
        return (
            f"cross-encoder-content(all-MiniLM-L6-v2-ce:{self._weights},window={c.window},"
            f"max_length={c.max_length},threshold={c.threshold},run_floor={c.run_floor},"
            f"stack=[{stack}]+{c.bias:g},veto=[{','.join(c.veto)}]{encoder}{self._scorer_name})"
        )

    def _features(self, request: JudgeRequest, spans: list[Sentence], logits) -> dict:
        refs = [s.text for s in request.reference_sentences]
        out = {"logit": logits}
        if "word_recall" in self.config.features:
            out["word_recall"] = word_recall(refs, [s.text for s in spans])
        if "cosine" in self.config.features:
            vectors = self.encoder.encode(refs + [s.text for s in spans])
            out["cosine"] = vectors[: len(refs)] @ vectors[len(refs) :].T
        return out

    def probability(self, features: dict[str, np.ndarray]) -> np.ndarray:
        """Step 3, from arrays of one shape per feature of ``config.features``; same shape."""
        logit = sum(w * features[f] for f, w in zip(self.config.features, self._weights_vector))
        return 1.0 / (1.0 + np.exp(-(logit + self.config.bias)))

    def span_probabilities(
        self, requests: Sequence[JudgeRequest]
    ) -> list[tuple[list[Sentence], np.ndarray, np.ndarray]]:
        """Steps 1 to 4 for every request (one model call): its spans, the (R, C)
        probabilities after the run rule but without the veto, and the (R, C) veto flags.
        """
        windows = self.config.window
        plans, pairs = [], []
        for request in requests:
            spans = candidate_spans(request.prediction, request.prediction_sentences, windows)
            plans.append(spans)
            pairs += [(r.text, s.text) for r in request.reference_sentences for s in spans]
        logits = np.asarray(self.pair_scorer(pairs), dtype=float) if pairs else np.zeros(0)
        sizes = [len(r.reference_sentences) * len(spans) for r, spans in zip(requests, plans)]
        out = []
        for request, spans, grid in zip(requests, plans, np.split(logits, np.cumsum(sizes)[:-1])):
            refs, texts = [r.text for r in request.reference_sentences], [s.text for s in spans]
            grid = grid.reshape(len(refs), len(texts))
            probability = self.probability(self._features(request, spans, grid))
            ranges = span_ranges(len(request.prediction_sentences), windows)
            for j, (first, last) in enumerate(ranges):
                if last > first:  # a run: each of its sentences must reach the floor
                    members = probability[:, first : last + 1].min(axis=1)
                    probability[:, j] = np.where(
                        members >= self.config.run_floor, probability[:, j], 0.0
                    )
            out.append((spans, probability, vetoed(refs, texts, self.config.veto)))
        return out

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        """Step 5 (:func:`editf1.judges.veto.decide`) for each reference sentence."""
        c = self.config
        return [
            [
                decide(sentence.text, spans, np.where(ruled, 0.0, row), row, c.threshold, c.veto)
                for sentence, row, ruled in zip(request.reference_sentences, probability, vetoes)
            ]
            for request, (spans, probability, vetoes) in zip(
                requests, self.span_probabilities(requests)
            )
        ]
