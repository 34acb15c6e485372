"""Build the wheel the edit-F1 Space installs: ``python metrics/build_space.py``.

The Space (``metrics/edit_f1/``, Docker SDK) installs edit-F1 from a wheel it carries in
``metrics/edit_f1/wheels/`` (edit-f1 is not on PyPI); that folder is built, not committed.
From a clone, this one command writes it:

    python metrics/build_space.py                         # then upload metrics/edit_f1/
    python metrics/build_space.py --no-build-isolation    # offline, with setuptools here

It copies the package's sources (setup.cfg, pyproject.toml, README.md, src/,
metrics/edit_f1/) into a temporary folder, so no build/ or egg-info is left in the clone
and no stale build/lib can leak into the wheel, runs ``pip wheel --no-deps`` there, and
replaces every wheel in ``metrics/edit_f1/wheels/`` with the new one. The Space's
``requirements.txt`` names that wheel by its file name (the version of setup.cfg);
``tests/test_packaging.py`` runs this script on a copy of the committed files and
resolves the requirements against its output.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "metrics" / "edit_f1"
SOURCES = ("setup.cfg", "pyproject.toml", "README.md", "src", "metrics/edit_f1")


def build(root: Path, *, isolation: bool = True) -> Path:
    """Build the wheel of the clone at ``root`` into ``root/metrics/edit_f1/wheels``.

    Returns:
        The wheel's path (the only wheel left in that folder).

    Raises:
        subprocess.CalledProcessError: pip could not build it (its output is printed).
    """
    wheels = root / "metrics" / "edit_f1" / "wheels"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "wheels", "build")
    with tempfile.TemporaryDirectory() as work:
        tree, dist = Path(work) / "tree", Path(work) / "dist"
        for name in SOURCES:
            source = root / name
            if source.is_dir():
                shutil.copytree(source, tree / name, ignore=skip)
            else:
                (tree / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, tree / name)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist)]
        command += [] if isolation else ["--no-build-isolation"]
        subprocess.run([*command, str(tree)], check=True)
        (built,) = dist.glob("edit_f1-*.whl")
        wheels.mkdir(exist_ok=True)
        for old in wheels.glob("*.whl"):
            old.unlink()
        return Path(shutil.copy(built, wheels / built.name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-build-isolation",
        action="store_true",
        help="build with the setuptools and wheel installed here (offline)",
    )
    args = parser.parse_args()
    print(f"wrote {build(ROOT, isolation=not args.no_build_isolation)}")


if __name__ == "__main__":
    main()
