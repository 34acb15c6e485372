"""What both embedded judges are built from: a parameter file, and the digest that
names its fitted weights in a fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources

__all__ = ["digest", "judge_params", "load_params"]


def load_params(name: str) -> dict:
    """A parameter file shipped in ``editf1/data`` by name (e.g. ``"theme_judge_v2.json"``),
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


def judge_params(params: dict | None, params_file: str | None, default_file: str) -> dict:
    """The parameters a judge is built from: ``params`` as given, else the file
    ``params_file`` (default ``default_file``) read by :func:`load_params`.

    Raises:
        ValueError: if both ``params`` and ``params_file`` are given.
        FileNotFoundError: if the file is neither shipped nor a file.
    """
    if params is not None and params_file is not None:
        raise ValueError("give params or params_file, not both")
    return params or load_params(params_file or default_file)


def digest(payload) -> str:
    """The first 10 hex digits of the SHA-256 of ``payload``'s canonical JSON (sorted
    keys): the part of a fingerprint that names the fitted weights."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:10]
