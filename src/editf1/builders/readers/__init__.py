"""Readers of the demo set and the public sets' upstream files, as plain dicts (the
dataset builders wrap them)."""

from editf1.builders.readers.demo import demo_rows
from editf1.builders.readers.expertqa import expertqa_medicine_rows
from editf1.builders.readers.kqa import kqa_nli_rows, kqa_question_rows
from editf1.builders.readers.oncqa import (
    ONCQA_SETTINGS,
    oncqa_content_grading_rows,
    oncqa_rows,
    parse_oncqa_input,
)

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
