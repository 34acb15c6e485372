"""The package layout: every subpackage ships, nothing shadows an installed library, the
metadata pins no exact version (an environment keeps its torch), and the built wheel works
outside a clone (the evaluate module, the Space's requirements)."""

from __future__ import annotations

import configparser
import importlib.metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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
    """Running from the repository root must import Hugging Face `datasets`, not ./datasets.
    The one importable folder, research/, is no installed distribution's module and is
    not installed itself."""
    packages = [f.name for f in ROOT.iterdir() if (f / "__init__.py").exists()]
    assert packages == ["research"], f"top-level folders that are importable packages: {packages}"
    assert "research" not in importlib.metadata.packages_distributions()
    assert [p for p in _declared_packages() if not p.startswith("editf1")] == []
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
    # crosscheck (ppi-python) stays out: it installs a top-level `tests` package that hides
    # this repository's tests/ from spawned test processes (setup.cfg says so)
    union = set().union(
        *(reqs for name, reqs in requirements.items() if name not in ("all", "crosscheck"))
    )
    assert requirements["all"] == union


# ---------------------------------------------------------------- the built wheel

SPACE = ROOT / "metrics" / "edit_f1"
PREDICTIONS = ["Rest today. Drink water. Call us.", "Take 2.5 mg b.i.d. with food."]
REFERENCES = ["Rest today. Take ibuprofen.", "Take 2.5 mg b.i.d. with food."]
# EM 1 + 1, EA 1, ED 2: P = 2/4, R = 2/3, F1 = 4/7 (as in tests/test_metric_module.py)


def _pip(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: int = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=(env or os.environ) | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )


def _no_pip_config() -> dict:
    """The environment without this machine's pip settings (its local wheel folders and
    constraints): what pip does from the command line of a plain machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return env | {"PIP_CONFIG_FILE": os.devnull}


#: The one command that builds what the Space installs (metrics/build_space.py), as the
#: Space's requirements.txt documents it; run here offline (no build isolation).
BUILD_SPACE = "python metrics/build_space.py"


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clean clone: the repository's files that git tracks or would track (no ignored
    file: no wheels/, build/, egg-info, venv), copied to a new folder."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    folder = tmp_path_factory.mktemp("clone")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, folder / name)
    assert not (folder / "metrics" / "edit_f1" / "wheels").exists()
    return folder


@pytest.fixture(scope="module")
def wheel(clone) -> Path:
    """The wheel, built in the clean clone by the documented command (offline)."""
    command = [sys.executable, *BUILD_SPACE.split()[1:], "--no-build-isolation"]
    built = subprocess.run(command, cwd=clone, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    (path,) = (clone / "metrics" / "edit_f1" / "wheels").glob("edit_f1-*.whl")
    assert not (clone / "build").exists() and not list(clone.glob("src/*.egg-info"))
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
        "m = evaluate.load(str(metric_path()), 'exact+none')\n"
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


def test_the_wheel_holds_the_package_alone(wheel):
    """What the wheel installs: editf1 and its metadata, none of the repository's research
    code (research/) or the team's label files (datasets/team_*/data/): what a judge reads
    when scoring ships, its training labels do not."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert {name.split("/")[0] for name in names if not name.startswith("edit_f1-")} == {"editf1"}
    labels = ("theme_labels.jsonl", "content_match_labels.jsonl", "content_labels_v2.jsonl")
    assert [name for name in names if name.endswith(labels)] == []
    assert "editf1/data/theme_sentences.jsonl" in names  # shipped_theme_items, train-judge


def test_the_space_installs_from_a_clean_clone_by_the_documented_command(clone, wheel, tmp_path):
    """What the Space's Dockerfile has when it installs: requirements.txt and wheels/
    (the rest of the Space is copied in after), from a clean clone after the one command
    requirements.txt documents. Offline, the requirements resolve to that wheel, with the
    demo extra; without the command there is no wheel to install."""
    space = clone / "metrics" / "edit_f1"
    assert BUILD_SPACE in (space / "requirements.txt").read_text(encoding="utf-8")
    assert BUILD_SPACE in (space / "Dockerfile").read_text(encoding="utf-8")
    steps = (space / "Dockerfile").read_text(encoding="utf-8").splitlines()
    install = steps.index("RUN pip install --no-cache-dir --user -r requirements.txt")
    assert steps.index("COPY --chown=user requirements.txt ./") < install
    assert steps.index("COPY --chown=user wheels/ ./wheels/") < install
    assert steps.index("COPY --chown=user . .") == install + 1
    report = tmp_path / "report.json"
    args = ["install", "--dry-run", "--no-index", "--quiet", "--report", str(report)]
    resolved = _pip(*args, "--find-links", "/opt/wheels", "-r", "requirements.txt", cwd=space)
    assert resolved.returncode == 0, resolved.stderr
    (edit_f1,) = [
        i for i in json.loads(report.read_text())["install"] if i["metadata"]["name"] == "edit-f1"
    ]
    assert edit_f1["download_info"]["url"] == wheel.as_uri()
    assert edit_f1["requested_extras"] == ["demo"]
    # the command replaces the wheel it built before, so the Space holds one
    assert [p.name for p in wheel.parent.iterdir()] == [wheel.name]


# ---------------------------------------------------------------- dependency ranges


def _setup_requirements() -> list[Requirement]:
    """install_requires and every extra of setup.cfg."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config["options"]["install_requires"].splitlines()
    for name in config["options.extras_require"]:
        lines += config["options.extras_require"][name].splitlines()
    return [Requirement(line) for line in lines if line.strip()]


def _wheel_requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode("utf-8")
    return [Requirement(line) for line in re.findall(r"(?m)^Requires-Dist: (.+)$", metadata)]


def test_the_package_metadata_pins_no_exact_version(wheel):
    """A library must not replace the user's torch (or anything else): every requirement
    the wheel declares, extras included, is a range. The developed-on versions live in
    constraints.txt instead."""
    requirements = _wheel_requirements(wheel)
    assert {r.name for r in requirements} >= {"torch", "transformers", "numpy"}
    pinned = [str(r) for r in requirements if any(s.operator in ("==", "===") for s in r.specifier)]
    assert pinned == []
    (torch,) = [r for r in requirements if r.name == "torch"]
    assert torch.specifier.contains("2.6.0") and torch.specifier.contains("2.13.0")
    assert not torch.specifier.contains("2.5.1")


def test_constraints_pin_a_version_inside_every_range_of_setup_cfg():
    """constraints.txt, which the README's set-up line and .ci/run install with, pins each
    requirement of setup.cfg exactly, to a version its range admits; nothing else."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    requirements = _setup_requirements()
    assert set(pins) == {canonicalize_name(r.name) for r in requirements}
    for requirement in requirements:
        assert requirement.specifier.contains(pins[canonicalize_name(requirement.name)]), str(
            requirement
        )
    assert pins["torch"] == "2.13.0"
    assert "-c constraints.txt" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _environment_with_torch(folder: Path, torch_version: str) -> Path:
    """A virtual environment whose installed packages are this one's (their real metadata,
    dependencies included) but whose torch reports ``torch_version``: what pip sees in a
    training environment with another torch build, without installing one."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = folder.glob("lib/python*/site-packages")
    seen = {"edit-f1"}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name in seen:
            continue
        seen.add(name)
        metadata, version = dist.read_text("METADATA"), dist.version
        if name == "torch":
            version = torch_version
            metadata = re.sub(r"(?m)^Version: .*$", f"Version: {version}", metadata)
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(metadata, encoding="utf-8")
    assert "torch" in seen
    return folder / "bin" / "python"


def _dry_run_install(python: Path, wheel: Path, report: Path) -> subprocess.CompletedProcess:
    """pip install the wheel into ``python``'s environment, resolving against what is
    installed there only (no index: anything to install beyond edit-f1 fails)."""
    args = ["--python", str(python), "install", "--dry-run", "--no-index", "--quiet"]
    return _pip(*args, "--report", str(report), str(wheel), env=_no_pip_config())


def test_an_environment_with_another_torch_keeps_it(wheel, tmp_path):
    """pip install edit-f1 into an environment with torch 2.9.1 installs edit-f1 alone: the
    resolver keeps that torch. With torch 2.5.1 (below the supported 2.6) it must change
    torch, which offline it cannot: the range is enforced, not just absent."""
    python = _environment_with_torch(tmp_path / "torch-2.9.1", "2.9.1")
    report = tmp_path / "report.json"
    resolved = _dry_run_install(python, wheel, report)
    assert resolved.returncode == 0, resolved.stderr
    install = json.loads(report.read_text())["install"]
    assert [item["metadata"]["name"] for item in install] == ["edit-f1"]

    old = _environment_with_torch(tmp_path / "torch-2.5.1", "2.5.1")
    refused = _dry_run_install(old, wheel, tmp_path / "old.json")
    assert refused.returncode != 0
    assert "No matching distribution found for torch>=2.6" in refused.stderr


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("EDITF1_NETWORK_TESTS") != "1",
    reason="resolves from pypi.org (4 to 25 minutes): set EDITF1_NETWORK_TESTS=1 to run it; "
    "test_an_environment_with_another_torch_keeps_it checks the same offline",
)
def test_pypi_resolves_the_wheel_with_another_torch(wheel, tmp_path):
    """The same from PyPI's own metadata, as a fresh environment would: with torch held at
    2.9.1 by a constraint (a version PyPI has), the wheel and its dependencies resolve and
    torch stays 2.9.1 (with an exact pin of 2.13.0 this fails to resolve). Minutes (4 to 10 here):
    pip reads the metadata of about 80 distributions."""
    if not _pypi_reachable():  # asked only when the test is asked for
        pytest.skip("needs pypi.org (resolves from PyPI)")
    constraint = tmp_path / "torch.txt"
    constraint.write_text("torch==2.9.1\n", encoding="utf-8")
    report = tmp_path / "report.json"
    args = ["install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report)]
    resolved = _pip(*args, "-c", str(constraint), str(wheel), env=_no_pip_config(), timeout=1800)
    assert resolved.returncode == 0, resolved.stderr
    versions = {
        canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    assert versions["torch"] == "2.9.1" and "edit-f1" in versions
