"""The package layout: every subpackage ships, nothing shadows an installed library, and
the built wheel works outside a clone (the evaluate module, the Space's requirements)."""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _declared_packages() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return set(config["options"]["packages"].split())


def test_every_subpackage_is_declared_in_setup_cfg():
    found = {
        ".".join(init.parent.relative_to(ROOT / "src").parts)
        for init in (ROOT / "src" / "editf1").rglob("__init__.py")
    }
    assert found | {"editf1.edit_f1"} == _declared_packages()


def test_no_top_level_folder_shadows_an_installed_library():
    """Running from the repository root must import Hugging Face `datasets`, not ./datasets."""
    packages = [f.name for f in ROOT.iterdir() if (f / "__init__.py").exists()]
    assert packages == [], f"top-level folders that are importable packages: {packages}"
    import datasets

    assert Path(datasets.__file__).resolve().parent.parent != ROOT


def test_all_extra_holds_every_other_extra():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    extras = config["options.extras_require"]
    requirements = {
        name: {line.strip() for line in extras[name].splitlines() if line.strip()}
        for name in extras
    }
    union = set().union(*(reqs for name, reqs in requirements.items() if name != "all"))
    assert requirements["all"] == union


# ---------------------------------------------------------------- the built wheel

SPACE = ROOT / "metrics" / "edit_f1"
PREDICTIONS = ["Rest today. Drink water. Call us.", "Take 2.5 mg b.i.d. with food."]
REFERENCES = ["Rest today. Take ibuprofen.", "Take 2.5 mg b.i.d. with food."]
# EM 1 + 1, EA 1, ED 2: P = 2/4, R = 2/3, F1 = 4/7 (as in tests/test_metric_module.py)


def _pip(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built offline from a copy of the sources (a build in the working tree
    would leave build/ there, and a stale build/lib can leak into the wheel)."""
    tree = tmp_path_factory.mktemp("tree")
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "wheels")
    shutil.copytree(ROOT / "src", tree / "src", ignore=skip)
    shutil.copytree(SPACE, tree / "metrics" / "edit_f1", ignore=skip)
    dist = tmp_path_factory.mktemp("dist")
    built = _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(tree))
    assert built.returncode == 0, built.stderr
    (path,) = dist.glob("edit_f1-*.whl")
    return path


@pytest.mark.slow
def test_the_wheel_loads_the_evaluate_module_outside_a_clone(wheel, tmp_path):
    """pip install (not editable) into a folder, then evaluate.load(metric_path()) in a
    fresh process that sees only that folder's edit-f1, offline, from an empty folder."""
    target = tmp_path / "target"
    installed = _pip("install", "--no-deps", "--no-index", "--target", str(target), str(wheel))
    assert installed.returncode == 0, installed.stderr
    assert (target / "editf1" / "edit_f1" / "edit_f1.py").is_file()
    assert not (target / "editf1" / "metric").exists()
    code = (
        "import evaluate, editf1\n"
        "from editf1.integrations.hf_metric import metric_path\n"
        f"assert editf1.__file__.startswith({str(target)!r}), editf1.__file__\n"
        "print(metric_path())\n"
        "m = evaluate.load(str(metric_path()), content_judge='exact', theme_judge=None)\n"
        f"r = m.compute(predictions={PREDICTIONS!r}, references={REFERENCES!r})\n"
        "print(round(r['f1'], 6))\n"
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = os.environ | {
        "PYTHONPATH": str(target),
        "HF_HUB_OFFLINE": "1",
        "HF_MODULES_CACHE": str(tmp_path / "modules"),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    folder, f1 = out.stdout.split()
    assert folder == str(target / "editf1" / "edit_f1")
    assert f1 == str(round(4 / 7, 6))


def test_the_space_requirements_resolve_to_the_wheel_it_ships(wheel, tmp_path):
    """What the Space's Dockerfile has when it installs: requirements.txt and wheels/
    (the rest of the Space is copied in after). Offline, the requirements must resolve to
    the shipped wheel, with the demo extra."""
    steps = (SPACE / "Dockerfile").read_text(encoding="utf-8").splitlines()
    install = steps.index("RUN pip install --no-cache-dir --user -r requirements.txt")
    assert steps.index("COPY --chown=user requirements.txt ./") < install
    assert steps.index("COPY --chown=user wheels/ ./wheels/") < install
    assert steps.index("COPY --chown=user . .") == install + 1
    space = tmp_path / "space"
    (space / "wheels").mkdir(parents=True)
    shutil.copy(SPACE / "requirements.txt", space)
    shutil.copy(wheel, space / "wheels")
    report = tmp_path / "report.json"
    args = ["install", "--dry-run", "--no-index", "--quiet", "--report", str(report)]
    resolved = _pip(*args, "--find-links", "/opt/wheels", "-r", "requirements.txt", cwd=space)
    assert resolved.returncode == 0, resolved.stderr
    (edit_f1,) = [
        i for i in json.loads(report.read_text())["install"] if i["metadata"]["name"] == "edit-f1"
    ]
    assert edit_f1["download_info"]["url"] == (space / "wheels" / wheel.name).as_uri()
    assert edit_f1["requested_extras"] == ["demo"]
