"""The paper is cited from one constant: the metric card's BibTeX, the evaluate module's
citation and reference URL, and the dataset builders' homepage all come from (or are
checked against) :mod:`editf1.citation`."""

from __future__ import annotations

import re
from pathlib import Path

import evaluate

from editf1.builders.annotations import ContentMatchBuilder
from editf1.citation import PAPER_CITATION, PAPER_URL

ROOT = Path(__file__).resolve().parents[1]
METRIC_DIR = ROOT / "metrics" / "edit_f1"


def test_the_metric_card_cites_the_paper_with_the_one_bibtex_entry():
    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bibtex\n(.*?)```", card, flags=re.DOTALL)
    assert blocks == [PAPER_CITATION]


def test_the_url_names_the_paper_the_bibtex_names():
    arxiv_id = PAPER_URL.removeprefix("https://arxiv.org/abs/")
    assert re.fullmatch(r"\d{4}\.\d{5}", arxiv_id)
    assert f"arXiv:{arxiv_id}" in PAPER_CITATION


def test_the_evaluate_module_and_the_builders_use_the_constant():
    metric = evaluate.load(str(METRIC_DIR), "exact+none")
    assert metric.reference_urls == [PAPER_URL]
    assert metric.citation == PAPER_CITATION
    assert ContentMatchBuilder.HOMEPAGE == PAPER_URL
