"""Readers that turn the demo set and real public data into scoreable rows.

Each reader returns plain dicts with at least ``id``, ``prediction`` (the draft) and
``reference`` (the clinician reply), so the CLI, tests and benchmarks share them, and
the dataset builders wrap them.
"""

from editf1.corpora.demo import demo_rows
from editf1.corpora.kqa import kqa_nli_rows
from editf1.corpora.oncqa import ONCQA_SETTINGS, oncqa_rows

__all__ = ["ONCQA_SETTINGS", "demo_rows", "kqa_nli_rows", "oncqa_rows"]
