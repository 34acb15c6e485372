"""The paper edit-F1 implements, cited the same way everywhere: the evaluate module and
its card (``metrics/edit_f1``), the dataset builders and their cards
(``tests/test_metric_module.py`` keeps the metric card's BibTeX equal to this one)."""

from __future__ import annotations

__all__ = ["PAPER_CITATION", "PAPER_URL"]

#: The paper's page, for the evaluate module's ``reference_urls`` and dataset cards'
#: homepage.
PAPER_URL = "https://arxiv.org/abs/2601.11344"

#: BibTeX entry.
PAPER_CITATION = """\
@article{seegmiller2026editf1,
  title   = {How Much Would a Clinician Edit This Draft? Evaluating LLM Alignment for
             Patient Message Response Drafting},
  author  = {Seegmiller, Parker and others},
  journal = {arXiv preprint arXiv:2601.11344},
  year    = {2026}
}
"""
