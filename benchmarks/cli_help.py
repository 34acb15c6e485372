"""How long ``edit-f1 --help`` and ``edit-f1 score --help`` take, and what they import.

The parser imports no model or data library (each command imports what it needs when it
runs), so help should come back in well under a second. This script runs each help
command ``--repeats`` times in a fresh interpreter (``python -m editf1.cli``, as the
installed ``edit-f1`` runs it) and reports the median and range of the wall time, and
lists the heavy libraries (:data:`HEAVY`) that building the parser imports (there
should be none).

    python benchmarks/cli_help.py [--repeats 5]

Writes ``benchmarks/results/cli_help.json`` and ``.md``. The target (under 1 s) is
checked here, not in a unit test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from benchlib import load_line, machine_state, write_results

#: Libraries whose import alone takes seconds; building the parser must import none.
HEAVY = ("datasets", "torch", "transformers", "sentence_transformers", "nltk", "scipy", "pandas")
COMMANDS = (["--help"], ["score", "--help"])
TARGET_S = 1.0


def heavy_imports() -> list[str]:
    """The :data:`HEAVY` libraries in ``sys.modules`` after building the parser."""
    code = (
        "import sys; from editf1.cli.main import build_parser; build_parser(); "
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


def wall_times(arguments: list[str], repeats: int) -> list[float]:
    """Seconds of ``python -m editf1.cli ARGUMENTS``, each in a fresh interpreter."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "editf1.cli", *arguments],
            capture_output=True,
            check=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each command (5)")
    args = parser.parse_args()
    state = machine_state()
    rows = {}
    for arguments in COMMANDS:
        times = wall_times(arguments, args.repeats)
        rows[" ".join(["edit-f1", *arguments])] = {
            "median_s": round(statistics.median(times), 3),
            "min_s": round(min(times), 3),
            "max_s": round(max(times), 3),
            "times_s": [round(t, 3) for t in times],
        }
    heavy = heavy_imports()
    lines = [
        f"# edit-f1 help: wall time ({args.repeats} runs each, fresh interpreter)",
        "",
        "| command | median s | min-max s | under 1 s? |",
        "|---|---|---|---|",
        *(
            f"| `{name}` | {r['median_s']:.2f} | {r['min_s']:.2f}-{r['max_s']:.2f} | "
            f"{'yes' if r['median_s'] < TARGET_S else '**no**'} |"
            for name, r in rows.items()
        ),
        "",
        f"Heavy libraries imported by building the parser: {', '.join(heavy) or 'none'}.",
        "",
        f"Machine: {load_line(state)}.",
    ]
    payload = {"commands": rows, "heavy_imports": heavy, "target_s": TARGET_S, "machine": state}
    write_results("cli_help", payload, "\n".join(lines))


if __name__ == "__main__":
    main()
