"""Readers of the demo set and the public sets' upstream files, as plain dicts."""

from importlib import resources

from editf1.builders.readers.expertqa import expertqa_medicine_rows
from editf1.builders.readers.kqa import kqa_nli_rows, kqa_question_rows
from editf1.builders.readers.oncqa import (
    ONCQA_SETTINGS,
    oncqa_content_grading_rows,
    oncqa_rows,
    parse_oncqa_input,
)
from editf1.io import read_jsonl

__all__ = [
    "ONCQA_SETTINGS",
    "demo_rows",
    "expertqa_medicine_rows",
    "kqa_nli_rows",
    "kqa_question_rows",
    "oncqa_content_grading_rows",
    "oncqa_rows",
    "parse_oncqa_input",
]


def demo_rows() -> list[dict]:
    """Rows of the shipped demo set (``editf1/data/demo.jsonl``: invented, no patient data):
    ``id``, ``message``, ``ehr_summary``, ``reference``, ``prediction`` and ``system``."""
    return [row for _, row in read_jsonl(resources.files("editf1.data") / "demo.jsonl")]
