"""The README's set-up commands are the ones CI runs, and the results files the
documentation's tables are written from (``python -m research.docs_tables``;
``tests/test_docs.py``) describe the judges the package ships."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW_README = (ROOT / "README.md").read_text(encoding="utf-8")
DATA = ROOT / "src" / "editf1" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_readme_opens_with_the_two_commands_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    blocks = RAW_README.split("```bash\n")
    setup, tests = blocks[1].split("\n```")[0], blocks[2].split("\n```")[0]
    assert "edit-f1 score" in setup and "pytest" in tests
    assert "\n" not in setup and "-c constraints.txt" in setup
    assert f"\n{setup}\n" in ci and f"\n{tests}" in ci


def test_the_shipped_content_judge_is_the_one_the_results_file_measured():
    """The shipped parameters record their K-QA held-out agreement; the results file's
    K-QA row of the embedding judge is the same figure, and its fingerprint names them."""
    params = _json(DATA / "content_judge_veto_nc.json")
    results = _json(RESULTS / "content_judge_real.json")
    row = results["held_out"]["kqa"]["default"]
    for key in ("agreement", "cohen_kappa"):
        assert row[key]["value"] == params["agreement"][key]["value"], key
    assert row["n"] == params["split"]["test_items"]
    assert results["ceiling"]["kqa"]["agreement"] == params["human_ceiling"]["agreement"]


def test_the_shipped_theme_judge_is_the_one_the_results_file_measured():
    results = _json(RESULTS / "theme_judge_real.json")
    params = _json(DATA / "theme_judge_v2.json")
    default = results["judges"]["v2, real + team"]
    assert params["cross_validation"]["clinical_micro_f1"] == default["clinical_micro_f1"]


def test_speed_scaling_and_validity_ran_the_same_default_judges():
    """The speed and scaling runs scored OncQA's paper setting with the judges that gave
    the validity run's corpus F1 (the README's typical value), and their timed runs
    record whether another process was busy."""
    speed = _json(RESULTS / "speed.json")
    scaling = _json(RESULTS / "scaling.json")
    validity = _json(RESULTS / "validity.json")
    f1 = validity["own_reply"]["metrics"]["edit-F1"]["corpus_f1"]["value"]
    throughput = speed["throughput"]
    for name in ("editf1", "editf1_every_span"):
        assert abs(throughput[name]["f1"] - f1) < 1e-12, name
        assert len(throughput[name]["busy_share"]) == throughput["repeats"], name
    runs = scaling["runs"] + scaling["processes_2"]["runs"]
    assert [run["pairs"] for run in runs] == [100, 1000, 10000] * 2
    for run in runs:
        assert abs(run["f1"] - f1) < 1e-12 and "busy_share" in run["contention"], run["pairs"]


def test_the_estimators_docstring_quotes_the_simulation():
    from editf1 import ppi

    sets = _json(RESULTS / "ppi_simulation.json")["sets"]
    docstring = " ".join(ppi.__doc__.split())
    own = sets["OncQA"]["simulation"]["metrics"]["f1"]["sizes"]["20"]
    expert = sets["ExpertQA: expert's revision vs the system answer"]["simulation"]["metrics"]
    lowest = min(
        sizes["ppi_tuned"]["coverage"]
        for entry in sets.values()
        for figure in entry["simulation"]["metrics"].values()
        for sizes in figure["sizes"].values()
    )
    assert f"F1 in {100 * own['ppi_tuned_normal']['coverage']:.1f}% of draws" in docstring
    normal = expert["recall"]["sizes"]["20"]["ppi_tuned_normal"]["coverage"]
    assert f"errors) in {100 * normal:.1f}%" in docstring
    assert f"in {100 * lowest:.1f}% of draws or more" in docstring
