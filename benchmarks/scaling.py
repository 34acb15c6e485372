"""Scaling of ``edit-f1 score`` to 100, 1,000 and 10,000 pairs: time and peak memory.

Each size runs ``edit-f1 score <pairs.jsonl> -o <results.jsonl>`` (the embedded judges,
per-pair results streamed to disk) in a process of its own; this script records the
process's wall time and its peak resident memory (``ru_maxrss`` from ``wait4``).

The pairs are OncQA's 100 real (GPT-4 draft, oncologist's own reply) pairs, repeated.
Repeating them verbatim would measure the caches, not the scorer: every sentence after
the first 100 pairs would be an embedding-cache hit. So repeat ``k`` of a pair is
:func:`benchlib.whitespace_variant` ``(text, k)``: the first space of every sentence is
widened to ``k + 1`` spaces. The encoder's tokenizer drops whitespace, so the model does
exactly the work of the original pair, while every sentence is a new string to the
embedding and theme caches, as in a corpus of 10,000 distinct pairs; the caches fill up
to their bounds as they would. The script checks that every variant splits into the
same sentences and tokenizes to the same ids (so the work is the same), and the scores
show it: the corpus F1 is the same at every size.

    python benchmarks/scaling.py --data-dir ../shared/data/oncqa

Writes ``benchmarks/results/scaling.json``, ``scaling.md`` and ``scaling.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_PEAK_MB = 1500.0


def variant_rows(rows: list[dict], n: int, splitter) -> list[dict]:
    """``n`` rows: row ``i`` is repeat ``i // len(rows)`` of ``rows[i % len(rows)]``."""
    out = []
    for i in range(n):
        k, base = divmod(i, len(rows))
        row = rows[base]
        out.append(
            {
                "id": f"{row['id']}#{k}",
                "prediction": benchlib.whitespace_variant(row["prediction"], k, splitter),
                "reference": benchlib.whitespace_variant(row["reference"], k, splitter),
            }
        )
    return out


def check_variants(rows: list[dict], repeats: list[int], splitter, tokenizer) -> dict:
    """Every variant splits into as many sentences, with the same words and the same
    token ids, as the original text.

    Raises:
        SystemExit: naming the first text whose variant differs.
    """
    checked = unchanged = 0
    for row in rows:
        for field in ("prediction", "reference"):
            original = [s.text for s in splitter.split(row[field])]
            ids = tokenizer(original)["input_ids"]
            for k in repeats:
                sentences = [
                    s.text
                    for s in splitter.split(benchlib.whitespace_variant(row[field], k, splitter))
                ]
                if [s.split() for s in sentences] != [s.split() for s in original]:
                    sys.exit(f"repeat {k} of {row['id']} {field} splits differently")
                if tokenizer(sentences)["input_ids"] != ids:
                    sys.exit(f"repeat {k} of {row['id']} {field} tokenizes differently")
                checked += len(sentences)
                unchanged += sum(a == b for a, b in zip(sentences, original))
    return {
        "repeats_checked": repeats,
        "sentences_checked": checked,
        "sentences_unchanged": unchanged,
    }


def _edit_f1_command() -> str:
    beside = Path(sys.executable).parent / "edit-f1"
    found = str(beside) if beside.exists() else shutil.which("edit-f1")
    if found is None:
        sys.exit("edit-f1 is not installed: pip install -e '.[bench]' first")
    return found


def _plot(sizes, walls, peaks, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=90)
    left.plot(sizes, walls, "o-")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("pairs")
    left.set_ylabel("wall time of edit-f1 score (s)")
    right.plot(sizes, peaks, "o-")
    right.axhline(TARGET_PEAK_MB, color="tab:red", linestyle="--", label="target 1,500 MB")
    right.set_xscale("log")
    right.set_ylim(0, max(TARGET_PEAK_MB, max(peaks)) * 1.1)
    right.set_xlabel("pairs")
    right.set_ylabel("peak RSS (MB)")
    right.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _markdown(payload: dict) -> str:
    runs, fit = payload["runs"], payload["fit"]
    lines = [
        "### Scaling of `edit-f1 score` (one process per size, results streamed to JSONL)",
        "",
        "| pairs | wall time (s) | CPU time (s) | pairs/s | marginal s/pair | peak RSS (MB) | "
        "corpus F1 | load average before -> after | another process busy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        marginal = "" if run["marginal_s_per_pair"] is None else f"{run['marginal_s_per_pair']:.4f}"
        cpu = run["cpu_user_s"] + run["cpu_system_s"]
        lines.append(
            f"| {run['pairs']:,} | {run['wall_s']:.1f} | {cpu:.0f} | {run['pairs_per_s']:.2f} | "
            f"{marginal} | {run['peak_rss_mb']:.0f} | {run['f1']:.4f} | "
            f"{run['load_before'][0]} -> {run['load_after'][0]} | "
            f"{run['contention']['busy_share']:.0%} of the run |"
        )
    lines += [
        "",
        f"Least-squares fit: wall = {fit['intercept_s']:.1f} s + {fit['slope_s_per_pair']:.4f} s "
        f"x pairs (R^2 = {fit['r2']:.5f}); the largest residual is "
        f"{fit['max_abs_residual_share']:.1%} of its run's time. Peak memory at "
        f"{runs[-1]['pairs']:,} pairs: {runs[-1]['peak_rss_mb']:.0f} MB (target < 1,500 MB).",
        f"Cache-defeating variants checked: {payload['variants']['sentences_checked']:,} "
        f"sentences split and tokenized as their originals; "
        f"{payload['variants']['sentences_unchanged']:,} of them had no space to widen "
        "(cache hits possible there).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.DEFAULT_ONCQA)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--batch-size", type=int, default=128, help="edit-f1 score --batch-size")
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)

    from editf1.judges.encoder import default_encoder
    from editf1.segment import SentenceSplitter

    rows = benchlib.oncqa_rows_or_exit(args.data_dir, "own_reply")
    splitter = SentenceSplitter()
    repeats = sorted({k for k in (1, 2, max(args.sizes) // len(rows) - 1) if k >= 1})
    variants = check_variants(rows, repeats, splitter, default_encoder().model.tokenizer)
    command = _edit_f1_command()
    machine_before = benchlib.machine_state()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(args.sizes):
            pairs = Path(tmp) / f"pairs_{n}.jsonl"
            with open(pairs, "w", encoding="utf-8") as handle:
                for row in variant_rows(rows, n, splitter):
                    handle.write(json.dumps(row) + "\n")
            out, summary = Path(tmp) / f"scores_{n}.jsonl", Path(tmp) / f"summary_{n}.json"
            load_before = [round(x, 2) for x in os.getloadavg()]
            measured = benchlib.run_measured(
                [
                    command,
                    "score",
                    str(pairs),
                    "-o",
                    str(out),
                    "--summary-json",
                    str(summary),
                    "--no-progress",
                    "--batch-size",
                    str(args.batch_size),
                ],
                Path(tmp) / f"log_{n}.txt",
            )
            if measured["returncode"] != 0:
                log = (Path(tmp) / f"log_{n}.txt").read_text()
                sys.exit(f"edit-f1 score failed on {n} pairs:\n{log}")
            with open(out, encoding="utf-8") as handle:
                written = sum(1 for _ in handle)
            result = json.loads(summary.read_text())
            runs.append(
                {
                    "pairs": n,
                    **measured,
                    "pairs_per_s": n / measured["wall_s"],
                    "lines_written": written,
                    "output_mb": out.stat().st_size / benchlib.MB,
                    "f1": result["f1"],
                    "theme_f1": result.get("theme_f1"),
                    "load_before": load_before,
                    "load_after": [round(x, 2) for x in os.getloadavg()],
                }
            )
            print(
                f"{n} pairs: {measured['wall_s']:.1f} s, peak {measured['peak_rss_mb']:.0f} MB",
                flush=True,
            )
    for previous, run in zip([None, *runs], runs):
        run["marginal_s_per_pair"] = (
            None
            if previous is None
            else (run["wall_s"] - previous["wall_s"]) / (run["pairs"] - previous["pairs"])
        )
    sizes = np.array([r["pairs"] for r in runs], dtype=float)
    walls = np.array([r["wall_s"] for r in runs])
    slope, intercept = np.polyfit(sizes, walls, 1)
    fitted = intercept + slope * sizes
    r2 = (
        1 - ((walls - fitted) ** 2).sum() / ((walls - walls.mean()) ** 2).sum()
        if len(runs) > 2
        else 1.0
    )
    payload = {
        "command": "python benchmarks/scaling.py " + " ".join(argv or sys.argv[1:]),
        "edit_f1_command": "edit-f1 score pairs.jsonl -o scores.jsonl --summary-json s.json "
        f"--no-progress --batch-size {args.batch_size}",
        "variants": variants,
        "machine_before": machine_before,
        "runs": runs,
        "fit": {
            "intercept_s": float(intercept),
            "slope_s_per_pair": float(slope),
            "r2": float(r2),
            "max_abs_residual_share": float(np.max(np.abs(walls - fitted) / walls)),
        },
        "target_peak_mb": TARGET_PEAK_MB,
        "machine_after": benchlib.machine_state(),
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    _plot(
        sizes.tolist(),
        walls.tolist(),
        [r["peak_rss_mb"] for r in runs],
        args.output_dir / "scaling.png",
    )
    benchlib.write_results("scaling", payload, _markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
