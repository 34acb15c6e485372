"""What both embedded judges are built from: a parameter file, an encoder on a backend,
and the fingerprint parts that name them.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources

from editf1.judges.encoder import default_encoder
from editf1.judges.onnx_encoder import check_backend
from editf1.versions import installed_versions

__all__ = ["backend_suffix", "digest", "judge_encoder", "judge_params", "load_params"]


def load_params(name: str) -> dict:
    """A parameter file shipped in ``editf1/data`` by name (e.g. ``"content_judge.json"``),
    else the JSON file at that path.

    Raises:
        FileNotFoundError: if ``name`` is neither shipped in ``editf1/data`` nor a file.
        ValueError: naming the file, for a file that is not a JSON object.
    """
    shipped = resources.files("editf1.data").joinpath(name)
    if shipped.is_file():  # a name in editf1/data (an absolute path joins as itself)
        text = shipped.read_text("utf-8")
    elif os.path.isfile(name):
        with open(name, encoding="utf-8") as f:
            text = f.read()
    else:
        raise FileNotFoundError(
            f"params_file {name!r} is neither shipped in editf1/data nor a file"
        )
    try:
        params = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"params_file {name}: not a JSON parameter file ({error.msg} at line "
            f"{error.lineno}, column {error.colno})"
        ) from None
    if not isinstance(params, dict):
        raise ValueError(f"params_file {name}: expected a JSON object, got {type(params).__name__}")
    return params


def judge_params(
    params: dict | None, params_file: str | None, default_file: str, encoder_backend: str | None
) -> dict:
    """The parameters a judge is built from: ``params`` as given, else the file
    ``params_file`` (default ``default_file``) read by :func:`load_params`.
    ``encoder_backend`` is checked first, before anything is loaded.

    Raises:
        ValueError: for an unknown ``encoder_backend``, or if both ``params`` and
            ``params_file`` are given.
        FileNotFoundError: if the file is neither shipped nor a file.
    """
    if encoder_backend is not None:
        check_backend(encoder_backend)
    if params is not None and params_file is not None:
        raise ValueError("give params or params_file, not both")
    return params or load_params(params_file or default_file)


def digest(payload) -> str:
    """The first 10 hex digits of the SHA-256 of ``payload``'s canonical JSON (sorted
    keys): the part of a fingerprint that names the fitted weights."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:10]


def judge_encoder(encoder, encoder_backend: str | None) -> tuple[object, str]:
    """The judge's encoder and its backend: ``encoder`` as given, else the default
    encoder on ``encoder_backend`` (``None``: ``"torch"``).

    Raises:
        ValueError: if ``encoder_backend`` is unknown or contradicts the ``encoder`` given.
    """
    if encoder is None:
        encoder = default_encoder(encoder_backend or "torch")
    backend = getattr(encoder, "backend", "torch")
    if encoder_backend is not None and check_backend(encoder_backend) != backend:
        raise ValueError(
            f"encoder_backend={encoder_backend!r} but the encoder given runs on {backend!r}: "
            "give one of encoder and encoder_backend"
        )
    return encoder, backend


def backend_suffix(backend: str, encoder=None) -> str:
    """``",encoder_backend=<name>,onnxruntime=<version>"`` for a fingerprint, then
    ``",onnx_model=sha256:<16 hex digits>"``, the digest of the model file the encoder
    runs (:attr:`~editf1.judges.onnx_encoder.OnnxSentenceTransformer.digest`), where it
    has one; empty for torch, so the default judges keep the fingerprints they had
    before the ONNX backends (torch's version is in the scorer's reproducibility
    string)."""
    if backend == "torch":
        return ""
    runtime = installed_versions("onnxruntime")["onnxruntime"]
    digest = getattr(getattr(encoder, "model", None), "digest", None)
    model = f",onnx_model={digest}" if digest else ""
    return f",encoder_backend={backend},onnxruntime={runtime}{model}"
