"""Every code block of the README and of ``docs/`` runs as pasted: the Python blocks that
need no ``../shared/data`` or file of the user's and the bash blocks that need no real
data, model, server or installation run here, offline, on the blocks' own inline data or
the demo set, so a snippet cannot rot (the bash blocks are marked slow: each starts the
command line and loads the judges).

The bash blocks run in an empty folder holding the input files the pages' commands name
(``pairs.jsonl``, ``drafts.jsonl``, ``system_a.jsonl`` and ``system_b.jsonl``, made from
the demo set, and ``my_labels.jsonl``, a site's own content labels: the ten cases of the
``own_content_labels`` fixture); the Python blocks run from the repository root, where
the pages say they run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose blocks run: the README and every page of docs/.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(language: str) -> list[tuple[str, str]]:
    """(page:line of the opening fence, code) of every ``language`` block of the pages."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found += [
            (f"{page.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}", m.group(1))
            for m in re.finditer(rf"^```{language}\n(.*?)^```$", text, re.S | re.M)
        ]
    return found


# What, in a bash block, this test does not run, and which test covers it instead.
NOT_RUN = {
    "pip install": "installs packages (.ci/run runs the set-up line on a clean clone)",
    "pytest": "the test suite itself",
    "../shared/data": "reads the real data sets (the tests of each set, when present)",
    "--generator": "generates with a causal LM (tests/test_preferences.py, test_drafting.py)",
    "judge server": "needs a running server (tests/test_server_judge.py)",
    "judge llm": "loads a causal LM (tests/test_llm_judge.py)",
    "torchrun": "starts several processes (tests/test_distributed.py)",
    "edit-f1 annotate": "starts the labelling app (tests/test_annotate.py)",
    "train-judge llm": "LoRA-tunes a causal LM (tests/test_llm_judge_training.py)",
    "python benchmarks/": "a benchmark script: minutes to hours (tests/test_benchmarks.py)",
    "--gold gold.jsonl": "needs a clinician's gold-label file (tests/test_gold_cli.py)",
    "/secure/": "a hospital's own export (tests/test_builders.py)",
}
#: What, in a Python block, this test does not run, and which test covers it instead.
PYTHON_NOT_RUN = {
    "../shared/data": "reads the real data sets (the tests of each set, when present)",
    "gold.jsonl": "needs a clinician's gold-label file (tests/test_gold.py)",
}

PYTHON = _blocks("python")
BASH = _blocks("bash")


def _offline_env(tmp_path: Path) -> dict:
    return os.environ | {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp_path / "datasets-cache"),
        "HF_MODULES_CACHE": str(tmp_path / "modules"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def _run(args: list[str], cwd: Path, env: dict) -> None:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def _python_to_run() -> list[tuple[str, str]]:
    return [(at, code) for at, code in PYTHON if not any(t in code for t in PYTHON_NOT_RUN)]


def test_the_pages_have_the_blocks_this_test_runs():
    """The extraction works: the pages' Python blocks and bash blocks are found, the
    README's own among them, and most Python blocks run."""
    assert len(PYTHON) >= 8 and len(BASH) >= 15
    assert sum(at.startswith("README.md:") for at, _ in PYTHON) >= 2
    assert len(_python_to_run()) >= 6


# Runs each block given on stdin in a fresh namespace, so a block that uses a name it does
# not define fails as it would pasted alone; one process, so the models load once.
_RUN_BLOCKS = """
import json, sys, traceback
failed = {}
for at, code in json.load(sys.stdin):
    try:
        exec(compile(code, at, "exec"), {"__name__": "__main__"})
    except BaseException:
        failed[at] = traceback.format_exc(limit=-3)
print(json.dumps(failed))
"""


def test_the_python_blocks_run_as_pasted(tmp_path):
    blocks = _python_to_run()
    done = subprocess.run(
        [sys.executable, "-c", _RUN_BLOCKS],
        input=json.dumps(blocks),
        cwd=ROOT,
        env=_offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    failed = json.loads(done.stdout.splitlines()[-1])
    assert failed == {}, "\n".join(f"{k}:\n{v}" for k, v in failed.items())


def _demo_inputs(folder: Path, own_labels: list[dict]) -> None:
    """pairs.jsonl (draft, reply: 50 pairs, the demo pairs over again under new ids, as
    many as the README's ``sample-for-labels -n 50`` draws), drafts.jsonl (two drafts
    per message: the demo draft and the clinician's reply itself, so every message has a
    clear best) from the first three demo pairs, system_a.jsonl and system_b.jsonl (two
    systems' drafts of the demo messages, against the same replies: the demo draft, and
    the reply's first sentence), and my_labels.jsonl (``own_labels``)."""
    from editf1.builders.readers import demo_rows

    demo = demo_rows()
    pairs = [
        {"id": f"{r['id']}-{i}", "draft": r["prediction"], "reply": r["reference"]}
        for i, r in ((i, demo[i % len(demo)]) for i in range(50))
    ]
    rows = demo[:3]
    drafts = [
        {
            "message_id": r["id"],
            "message": r["message"],
            "ehr_summary": r["ehr_summary"],
            "reference": r["reference"],
            "prediction": draft,
        }
        for r in rows
        for draft in (r["prediction"], r["reference"])
    ]
    systems = {
        name: [{"id": r["id"], "prediction": draft(r), "reference": r["reference"]} for r in demo]
        for name, draft in (
            ("system_a.jsonl", lambda r: r["prediction"]),
            ("system_b.jsonl", lambda r: r["reference"].split(". ")[0] + "."),
        )
    }
    for name, table in (
        ("pairs.jsonl", pairs),
        ("drafts.jsonl", drafts),
        ("my_labels.jsonl", own_labels),
        *systems.items(),
    ):
        text = "".join(json.dumps(row) + "\n" for row in table)
        (folder / name).write_text(text, encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(("at", "code"), BASH, ids=[at for at, _ in BASH])
def test_a_bash_block_runs_as_pasted(at, code, tmp_path, own_content_labels):
    reasons = [why for trigger, why in NOT_RUN.items() if trigger in code]
    if reasons:
        pytest.skip(f"{at}: {'; '.join(reasons)}")
    work = tmp_path / "work"
    work.mkdir()
    _demo_inputs(work, own_content_labels)
    _run(["bash", "-euo", "pipefail", "-c", code], work, _offline_env(tmp_path))
    outputs = re.findall(r"(?:-o|--output) (\S+)", code)
    assert outputs, "a block this test runs writes something"
    for output in outputs:
        assert (work / output).exists(), output


def test_the_commands_on_the_demo_data_run():
    """The rules above leave the pages' own commands on the demo data to run, the
    README's score command among them."""
    run = [(at, code) for at, code in BASH if not any(t in code for t in NOT_RUN)]
    assert len(run) >= 5
    assert any(at.startswith("README.md:") and "edit-f1 score" in code for at, code in run)
    for command in ("preference-pairs", "sample-for-labels", "train-judge", "report"):
        assert any(f"edit-f1 {command}" in code for _, code in run), command
