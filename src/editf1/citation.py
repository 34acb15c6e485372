"""The paper edit-F1 implements, cited the same way everywhere (the metric card's BibTeX
must equal it: ``tests/test_metric_module.py``).
"""

from __future__ import annotations

__all__ = ["PAPER_CITATION", "PAPER_URL"]

PAPER_URL = "https://arxiv.org/abs/2601.11344"

PAPER_CITATION = """\
@article{seegmiller2026editf1,
  title   = {How Much Would a Clinician Edit This Draft? Evaluating LLM Alignment for
             Patient Message Response Drafting},
  author  = {Seegmiller, Parker and others},
  journal = {arXiv preprint arXiv:2601.11344},
  year    = {2026}
}
"""
