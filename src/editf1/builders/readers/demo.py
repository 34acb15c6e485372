"""The demo set shipped with the package: invented portal messages, clinician replies
and LLM drafts, written for this project (no patient data)."""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["demo_rows"]


def demo_rows() -> list[dict]:
    """Rows of ``data/demo.jsonl``: ``id``, ``message``, ``ehr_summary``, ``reference``,
    ``prediction`` and ``system`` (the drafting model's name)."""
    text = resources.files("editf1.data").joinpath("demo.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
