"""Reproduction, not only consistency: the committed results files that the
documentation's figures come from are regenerated here, with the commands that wrote
them, and compared.

tests/test_docs.py checks that the documentation's tables are written from the committed
files; these slow tests check that the files are what their commands write today. The
cheap ones are here: the K-QA agreement report of the embedded content judge and the
OncQA corpus F1 of the validity benchmark, as `edit-f1 score` prints it (both about a
minute each on 2 idle cores). Regenerated elsewhere: the demo dataset
folder (tests/test_builders.py::test_committed_demo_folder_loads_and_is_up_to_date), the
team label sets' card figures at 2,000 resamples
(tests/test_team_labels.py::test_cards_figures_are_the_summarys), the OncQA report of
examples/oncqa_report.py (tests/test_report.py) and the generated model cards
(tests/test_cards.py). The long benchmarks (benchmarks/*.py, minutes to hours) are not
rerun.

Floats are compared to 1e-6: the same code, data and seeds give the same figures on
another CPU, up to the encoder's last bits.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from editf1.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
VALIDITY_PAGE = " ".join((ROOT / "docs" / "validity.md").read_text(encoding="utf-8").split())

pytestmark = pytest.mark.slow


def _same(fresh, committed, where: str = "") -> None:
    """``fresh`` equals ``committed``: the same keys, lists and strings, numbers to 1e-6."""
    if isinstance(committed, dict):
        assert isinstance(fresh, dict) and sorted(fresh) == sorted(committed), where
        for key in committed:
            _same(fresh[key], committed[key], f"{where}.{key}")
    elif isinstance(committed, list):
        assert isinstance(fresh, list) and len(fresh) == len(committed), where
        for k, (a, b) in enumerate(zip(fresh, committed)):
            _same(a, b, f"{where}[{k}]")
    elif isinstance(committed, float) or isinstance(fresh, float):
        assert fresh == pytest.approx(committed, abs=1e-6), where
    else:
        assert fresh == committed, where


def test_kqa_agreement_report_is_what_its_command_writes(shared_data, tmp_path):
    script = (ROOT / "judges" / "kqa_real_check.sh").read_text(encoding="utf-8")
    report = "cards/reports/embedding-content.kqa-test.json"
    # the script's command, word for word: SPLIT=(...) then the agreement line
    assert 'SPLIT=(--dataset kqa --data-dir "$DATA" --split test)' in script
    command = re.search(
        r'edit-f1 agreement content "\$\{SPLIT\[@\]\}" ([^\n]+)\\\n\s+-o (\S+)', script
    )
    assert command and command.groups() == ("--content-judge embedding ", report)
    fresh = tmp_path / "report.json"
    split = ["--dataset", "kqa", "--data-dir", str(shared_data / "kqa"), "--split", "test"]
    argv = ["agreement", "content", *split, "--content-judge", "embedding", "-o", str(fresh)]
    assert main(argv) == 0
    _same(json.loads(fresh.read_text()), json.loads((ROOT / report).read_text()))


@pytest.mark.parametrize("config", ["own_reply", "edited"])
def test_oncqa_corpus_f1_is_what_its_command_prints(config, shared_data, tmp_path):
    """docs/validity.md names the command; its F1 is the validity results file's."""
    oncqa = shared_data / "oncqa"
    if not (oncqa / "stage2.csv").is_file():
        pytest.skip(f"{oncqa} lacks the OncQA files")
    command = f"edit-f1 score --dataset oncqa --config {config} --data-dir ../shared/data/oncqa"
    assert command in VALIDITY_PAGE
    summary = tmp_path / "summary.json"
    argv = ["score", "--dataset", "oncqa", "--config", config, "--data-dir", str(oncqa)]
    outputs = ["-o", str(tmp_path / "rows.jsonl"), "--summary-json", str(summary)]
    assert main([*argv, *outputs, "--no-progress", "-q"]) == 0
    s = json.loads(summary.read_text())
    assert s["n_pairs"] == 100 and s["unusable_judgements"] == 0
    validity = json.loads((ROOT / "benchmarks" / "results" / "validity.json").read_text())
    committed = validity[config]["metrics"]["edit-F1"]["corpus_f1"]["value"]
    assert s["f1"] == pytest.approx(committed, abs=1e-6)
