"""The paper edit-F1 implements, cited the same way everywhere (evaluate module, dataset
and model cards, README)."""

from __future__ import annotations

__all__ = ["PAPER", "PAPER_CITATION"]

#: Short form for docstrings and cards.
PAPER = (
    'Seegmiller et al., "How Much Would a Clinician Edit This Draft? Evaluating LLM '
    'Alignment for Patient Message Response Drafting", arXiv 2601.11344 (2026)'
)

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
