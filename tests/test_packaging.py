"""The package layout: every subpackage ships, and nothing shadows an installed library."""

from __future__ import annotations

import configparser
from pathlib import Path

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
    assert found | {"editf1.metric"} == _declared_packages()


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
