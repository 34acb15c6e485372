"""The files the package reads: the judges' parameters and tables, prompts, the demo set."""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["read_json", "read_text"]


def read_text(name: str) -> str:
    """The packaged file ``editf1/data/<name>`` as UTF-8 text."""
    return resources.files(__name__).joinpath(name).read_text("utf-8")


def read_json(name: str):
    """The packaged JSON file ``editf1/data/<name>``, parsed."""
    return json.loads(read_text(name))
