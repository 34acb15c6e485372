"""Scaling of ``edit-f1 score`` to 100, 1,000 and 10,000 pairs, in one process and in
several: time and peak memory.

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

With ``--processes 1 2`` (the default) each size also runs under
``torchrun --nproc_per_node 2`` (the path of README "More than one process": each
process judges its contiguous share through accelerate's ``PartialState``, the main one
writes the output in input order; :mod:`editf1.integrations.distributed`), on the same
pairs file, each process with ``OMP_NUM_THREADS`` = CPU count // processes (1 on 2
cores) unless ``--threads-per-process`` says otherwise; one-process runs keep torch's
default. Peak memory per process: every process runs ``edit-f1 score`` through a small
wrapper (:data:`RANK_WRAPPER`) that writes, at exit, its own ``VmHWM`` (Linux
``/proc/self/status``: the peak resident set since its exec) with its ``ru_maxrss``
and CPU time. ``VmHWM`` is the figure reported: a ``ru_maxrss`` (the wrapper's, and
``wait4``'s of torchrun, which is the largest over the launcher and its processes)
starts at the parent's own peak at fork, since Linux carries that peak over the exec.
The same holds for the one-process runs' ``peak_rss_mb``, which is at least this
script's own peak when it starts them (``benchmark_process_peak_rss_mb`` in the JSON).
The output of N processes is compared with the one-process output of the same size
(:func:`compare_outputs`: the same rows in the same order, numbers within 1e-6), as is
the summary.

    python benchmarks/scaling.py --data-dir ../shared/data/oncqa

Writes ``benchmarks/results/scaling.json`` (the one-process runs under ``runs`` and
``fit``, null below two sizes; N processes under ``processes_N``), ``scaling.md`` and
``scaling.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_PEAK_MB = 1500.0
#: Numbers of the N-process output may differ from one process's by this much (the
#: embedded judges' probabilities: their encoder batches differ).
TOLERANCE = 1e-6
#: Where each process of a multi-process run writes its usage (the wrapper's variable).
USAGE_DIR_VARIABLE = "EDITF1_SCALING_USAGE_DIR"

#: ``edit-f1 score`` as one process of a ``torchrun`` launch (``torchrun ... wrapper.py
#: score ...`` runs ``python -u wrapper.py score ...`` where ``-m editf1.cli`` runs the same
#: ``main``); at exit the process writes ``rank-<RANK>.json`` into
#: ``$EDITF1_SCALING_USAGE_DIR``: its ``VmHWM`` and ``ru_maxrss`` (KiB), CPU time (s) and
#: torch's intra-op thread count.
RANK_WRAPPER = '''\
"""edit-f1 score as one process of a launch; writes its own usage at exit."""
import json
import os
import resource
import sys

from editf1.cli.main import main

try:
    code = main(sys.argv[1:])
finally:
    import torch

    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open("/proc/self/status", encoding="utf-8") as status:
        hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    rank = int(os.environ["RANK"])
    folder = os.environ["EDITF1_SCALING_USAGE_DIR"]
    with open(os.path.join(folder, f"rank-{rank}.json"), "w", encoding="utf-8") as out:
        json.dump(
            {
                "rank": rank,
                "vm_hwm_kib": hwm,
                "ru_maxrss_kib": usage.ru_maxrss,
                "cpu_user_s": usage.ru_utime,
                "cpu_system_s": usage.ru_stime,
                "torch_threads": torch.get_num_threads(),
            },
            out,
        )
raise SystemExit(code)
'''


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


class OutputsDiffer(ValueError):
    """Two JSON values differ other than by float rounding; the message is the path of
    the first difference (keys and list indices only, never a value)."""


def json_gap(a, b, where: str = "") -> float:
    """The largest difference between the numbers of two JSON values that are otherwise
    equal.

    Numbers compare with tolerance only where one of them is a float (probabilities,
    ratios); integers (counts, row numbers) and booleans must be equal, as must strings,
    ``None``, the keys of objects and the lengths of lists.

    Args:
        a, b: values read by ``json.loads``.
        where: the path of ``a`` and ``b`` in their document, for the error.

    Returns:
        The largest absolute difference between two paired floats (0.0 without floats).

    Raises:
        OutputsDiffer: naming the path of the first difference, e.g.
            ``".content[2].status"`` (the values are left out: they may be clinical text).
    """
    numbers = (int, float)
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            raise OutputsDiffer(f"{where or '.'}: keys {sorted(a.keys() ^ b.keys())} differ")
        return max((json_gap(a[k], b[k], f"{where}.{k}") for k in a), default=0.0)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            raise OutputsDiffer(f"{where or '.'}: {len(a)} against {len(b)} items")
        return max(
            (json_gap(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b))), default=0.0
        )
    floats = isinstance(a, float) or isinstance(b, float)
    if floats and isinstance(a, numbers) and isinstance(b, numbers):
        if isinstance(a, bool) or isinstance(b, bool):
            raise OutputsDiffer(f"{where or '.'}: a boolean against a number")
        return abs(a - b)
    if type(a) is not type(b) or a != b:
        raise OutputsDiffer(f"{where or '.'}: values differ")
    return 0.0


def compare_outputs(
    reference: Path, other: Path, summaries: tuple[Path, Path] | None = None
) -> dict:
    """Whether ``other`` (a per-pair JSONL of ``edit-f1 score``) holds the rows of
    ``reference`` in the same order, every number within :data:`TOLERANCE`.

    Args:
        reference: the one-process output.
        other: the N-process output of the same pairs.
        summaries: the two runs' ``--summary-json`` files, compared the same way.

    Returns:
        ``{"rows", "identical_bytes", "same", "max_abs_float_difference",
        "first_difference", "tolerance"}`` (and ``"summary_same"``,
        ``"summary_max_abs_float_difference"``, ``"summary_first_difference"`` with
        ``summaries``): ``same`` is true where every row (line) is equal up to floats
        apart by at most ``tolerance``; ``first_difference`` names the first line and
        field that differ (``"line 3: .content[0].status: values differ"``), or ``None``.
        ``max_abs_float_difference`` is over the rows compared before a difference.
    """
    left = reference.read_text(encoding="utf-8").splitlines()
    right = other.read_text(encoding="utf-8").splitlines()
    gap, first = 0.0, None
    if len(left) != len(right):
        first = f"{len(left)} against {len(right)} lines"
    else:
        for line, (a, b) in enumerate(zip(left, right), start=1):
            try:
                gap = max(gap, json_gap(json.loads(a), json.loads(b)))
            except OutputsDiffer as error:
                first = f"line {line}: {error}"
                break
    if first is None and gap > TOLERANCE:
        first = f"floats apart by {gap:.3g} (tolerance {TOLERANCE:g})"
    found = {
        "rows": len(left),
        "identical_bytes": reference.read_bytes() == other.read_bytes(),
        "same": first is None,
        "max_abs_float_difference": gap,
        "first_difference": first,
        "tolerance": TOLERANCE,
    }
    if summaries is not None:
        a, b = (json.loads(path.read_text(encoding="utf-8")) for path in summaries)
        try:
            summary_gap, summary_first = json_gap(a, b), None
        except OutputsDiffer as error:
            summary_gap, summary_first = None, str(error)
        if summary_first is None and summary_gap > TOLERANCE:
            summary_first = f"floats apart by {summary_gap:.3g}"
        found |= {
            "summary_same": summary_first is None,
            "summary_max_abs_float_difference": summary_gap,
            "summary_first_difference": summary_first,
        }
    return found


def _command(name: str, missing: str) -> str:
    """The console script ``name`` beside this interpreter, else on PATH; exits with
    ``missing`` when there is none."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"{name} is not installed: {missing}")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pairs_per_process(log: str) -> list[int] | None:
    """The shares of ``judged by 2 processes: 10 + 10 pairs`` in ``edit-f1 score``'s
    output, or ``None`` where the line is absent."""
    found = re.search(r"judged by \d+ processes: ([\d + ]+) pairs", log)
    return None if found is None else [int(n) for n in found.group(1).split("+")]


def _plot(series: dict[str, tuple[list, list, list]], path: Path) -> None:
    """Wall time and peak RSS (per process) against pairs, one line per label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=90)
    for label, (sizes, walls, peaks) in series.items():
        left.plot(sizes, walls, "o-", label=label)
        right.plot(sizes, peaks, "o-", label=label)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("pairs")
    left.set_ylabel("wall time of edit-f1 score (s)")
    left.legend()
    highest = max(p for _, _, peaks in series.values() for p in peaks)
    right.axhline(TARGET_PEAK_MB, color="tab:red", linestyle="--", label="target 1,500 MB")
    right.set_xscale("log")
    right.set_ylim(0, max(TARGET_PEAK_MB, highest) * 1.1)
    right.set_xlabel("pairs")
    right.set_ylabel("peak RSS per process (MB)")
    right.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _linear_fit(sizes: np.ndarray, walls: np.ndarray) -> dict | None:
    """Least-squares ``wall = intercept + slope * pairs`` over the sizes run.

    Args:
        sizes: pairs of each run, shape ``(k,)``.
        walls: wall time of each run in seconds, shape ``(k,)``.

    Returns:
        ``intercept_s`` (s), ``slope_s_per_pair`` (s per pair), ``r2`` (1.0 with two sizes,
        where a line passes through both) and ``max_abs_residual_share`` (fraction of a run's
        time), or None with fewer than two distinct sizes (no line is determined).
    """
    if len(np.unique(sizes)) < 2:
        return None
    slope, intercept = np.polyfit(sizes, walls, 1)
    fitted = intercept + slope * sizes
    r2 = (
        1 - ((walls - fitted) ** 2).sum() / ((walls - walls.mean()) ** 2).sum()
        if len(sizes) > 2
        else 1.0
    )
    return {
        "intercept_s": float(intercept),
        "slope_s_per_pair": float(slope),
        "r2": float(r2),
        "max_abs_residual_share": float(np.max(np.abs(walls - fitted) / walls)),
    }


def _same_cell(same: dict | None) -> str:
    if same is None:
        return "not compared"
    if not same["same"]:
        return f"**no**: {same['first_difference']}"
    if same["identical_bytes"]:
        return "yes, identical bytes"
    return f"yes, floats within {same['max_abs_float_difference']:.1g}"


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
    fit_line = (
        "No least-squares fit: it needs at least two sizes."
        if fit is None
        else f"Least-squares fit: wall = {fit['intercept_s']:.1f} s + "
        f"{fit['slope_s_per_pair']:.4f} s x pairs (R^2 = {fit['r2']:.5f}); the largest residual "
        f"is {fit['max_abs_residual_share']:.1%} of its run's time."
    )
    lines += [
        "",
        f"{fit_line} Peak memory at {runs[-1]['pairs']:,} pairs: "
        f"{runs[-1]['peak_rss_mb']:.0f} MB (target < 1,500 MB).",
        f"Cache-defeating variants checked: {payload['variants']['sentences_checked']:,} "
        f"sentences split and tokenized as their originals; "
        f"{payload['variants']['sentences_unchanged']:,} of them had no space to widen "
        "(cache hits possible there).",
    ]
    for n in payload["processes"][1:]:
        several = payload[f"processes_{n}"]
        lines += [
            "",
            f"### `edit-f1 score` under `torchrun --nproc_per_node {n}` "
            f"({several['torch_threads_per_process']} torch thread(s) per process, "
            "each process judging its share)",
            "",
            "| pairs | wall time (s) | CPU time (s) | pairs/s | speed-up over 1 process | "
            "pairs per process | peak RSS per process (MB) | output same as 1 process | "
            "corpus F1 | load average before -> after | another process busy |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for run in several["runs"]:
            cpu = run["cpu_user_s"] + run["cpu_system_s"]
            shares = " + ".join(map(str, run["pairs_per_process"] or ["?"]))
            peaks = " / ".join(f"{p['peak_rss_mb']:.0f}" for p in run["per_process"])
            speedup = "" if run["speedup"] is None else f"{run['speedup']:.2f}x"
            lines.append(
                f"| {run['pairs']:,} | {run['wall_s']:.1f} | {cpu:.0f} | "
                f"{run['pairs_per_s']:.2f} | {speedup} | {shares} | {peaks} | "
                f"{_same_cell(run['same_as_one_process'])} | {run['f1']:.4f} | "
                f"{run['load_before'][0]} -> {run['load_after'][0]} | "
                f"{run['contention']['busy_share']:.0%} of the run |"
            )
        lines += [
            "",
            f"Peak RSS per process: each process's own `VmHWM` at exit (the torchrun "
            f"launcher and its processes together peaked at "
            f"{several['runs'][-1]['launcher_and_processes_max_rss_mb']:.0f} MB by `wait4` at "
            f"{several['runs'][-1]['pairs']:,} pairs). CPU time: the launcher and all its "
            "processes.",
        ]
    return "\n".join(lines)


def _measure(launch: list[str], n: int, folder: Path, tag: str, batch_size: int, env=None):
    """``<launch> score pairs_<n>.jsonl -o scores_<tag>.jsonl ...`` in ``folder``:
    :func:`benchlib.run_measured`'s figures, the output read back and the load average
    before and after. Exits naming the run where it fails."""
    pairs = folder / f"pairs_{n}.jsonl"
    out, summary = folder / f"scores_{tag}.jsonl", folder / f"summary_{tag}.json"
    log = folder / f"log_{tag}.txt"
    load_before = [round(x, 2) for x in os.getloadavg()]
    measured = benchlib.run_measured(
        [*launch, "score", str(pairs), "-o", str(out), "--summary-json", str(summary),
         "--no-progress", "--batch-size", str(batch_size)],
        log,
        env=env,
    )  # fmt: skip
    if measured["returncode"] != 0:
        sys.exit(f"edit-f1 score failed on {n} pairs ({tag}):\n{log.read_text()}")
    with open(out, encoding="utf-8") as handle:
        written = sum(1 for _ in handle)
    result = json.loads(summary.read_text())
    return {
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


def _measure_several(
    processes: int, n: int, folder: Path, batch_size: int, threads: int, one: dict | None
) -> dict:
    """``edit-f1 score`` of ``n`` pairs under ``torchrun --nproc_per_node processes``
    (each process through :data:`RANK_WRAPPER`, ``OMP_NUM_THREADS=threads``): the
    run's figures, each process's usage, and its output compared with the one-process
    run ``one`` of the same pairs (``None``: not compared)."""
    tag = f"{n}_p{processes}"
    usage_dir = folder / f"usage_{tag}"
    usage_dir.mkdir()
    wrapper = folder / "edit_f1_rank.py"
    wrapper.write_text(RANK_WRAPPER, encoding="utf-8")
    launch = [
        _command("torchrun", "it comes with torch"),
        "--nnodes",
        "1",
        "--nproc_per_node",
        str(processes),
    ]
    launch += ["--master_port", str(_free_port()), str(wrapper)]
    env = os.environ | {"OMP_NUM_THREADS": str(threads), USAGE_DIR_VARIABLE: str(usage_dir)}
    run = _measure(launch, n, folder, tag, batch_size, env)
    per_process = []
    for rank in range(processes):
        path = usage_dir / f"rank-{rank}.json"
        if not path.is_file():
            sys.exit(f"process {rank} of {processes} wrote no usage on {n} pairs ({path})")
        usage = json.loads(path.read_text(encoding="utf-8"))
        per_process.append(
            {
                "rank": rank,
                "peak_rss_mb": usage["vm_hwm_kib"] * 1024 / benchlib.MB,
                "ru_maxrss_mb": usage["ru_maxrss_kib"] * 1024 / benchlib.MB,
                "cpu_user_s": usage["cpu_user_s"],
                "cpu_system_s": usage["cpu_system_s"],
                "torch_threads": usage["torch_threads"],
            }
        )
    run["launcher_and_processes_max_rss_mb"] = run.pop("peak_rss_mb")  # wait4 of torchrun
    run["per_process"] = per_process
    run["peak_rss_mb_per_process_max"] = max(p["peak_rss_mb"] for p in per_process)
    run["pairs_per_process"] = _pairs_per_process((folder / f"log_{tag}.txt").read_text())
    run["speedup"] = None if one is None else one["wall_s"] / run["wall_s"]
    run["same_as_one_process"] = (
        None
        if one is None
        else compare_outputs(
            folder / f"scores_{n}.jsonl",
            folder / f"scores_{tag}.jsonl",
            (folder / f"summary_{n}.json", folder / f"summary_{tag}.json"),
        )
    )
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.DEFAULT_ONCQA)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--batch-size", type=int, default=128, help="edit-f1 score --batch-size")
    parser.add_argument(
        "--processes",
        type=int,
        nargs="+",
        default=[1, 2],
        help="process counts to run each size with (1 must be one of them: the reference "
        "of the fit and of the output check); more than 1 runs under torchrun",
    )
    parser.add_argument(
        "--threads-per-process",
        type=int,
        default=None,
        help="OMP_NUM_THREADS of each process under several processes (default: CPU "
        "count // processes, at least 1); one-process runs keep torch's default",
    )
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)
    processes = sorted(set(args.processes))
    if processes[0] != 1:
        parser.error("--processes must include 1 and be positive")
    if args.threads_per_process is not None and args.threads_per_process < 1:
        parser.error("--threads-per-process must be at least 1")

    from editf1.judges.encoder import default_encoder
    from editf1.segment import SentenceSplitter

    rows = benchlib.oncqa_rows_or_exit(args.data_dir, "own_reply")
    splitter = SentenceSplitter()
    repeats = sorted({k for k in (1, 2, max(args.sizes) // len(rows) - 1) if k >= 1})
    variants = check_variants(rows, repeats, splitter, default_encoder().model.tokenizer)
    command = _command("edit-f1", "pip install -e '.[bench]' first")
    threads = {
        p: args.threads_per_process or max(1, (os.cpu_count() or 1) // p) for p in processes[1:]
    }
    machine_before = benchlib.machine_state()
    runs: list[dict] = []
    several: dict[int, list[dict]] = {p: [] for p in processes[1:]}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in sorted(args.sizes):
            with open(folder / f"pairs_{n}.jsonl", "w", encoding="utf-8") as handle:
                for row in variant_rows(rows, n, splitter):
                    handle.write(json.dumps(row) + "\n")
            run = _measure([command], n, folder, str(n), args.batch_size)
            runs.append(run)
            print(f"{n} pairs: {run['wall_s']:.1f} s, peak {run['peak_rss_mb']:.0f} MB", flush=True)
            for p in processes[1:]:
                run = _measure_several(p, n, folder, args.batch_size, threads[p], runs[-1])
                several[p].append(run)
                peaks = " / ".join(f"{q['peak_rss_mb']:.0f}" for q in run["per_process"])
                same = run["same_as_one_process"]["same"]
                print(
                    f"{n} pairs, {p} processes: {run['wall_s']:.1f} s, peak per process "
                    f"{peaks} MB, same output as 1 process: {same}",
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
    fit = _linear_fit(sizes, walls)
    edit_f1 = "score pairs.jsonl -o scores.jsonl --summary-json s.json --no-progress "
    edit_f1 += f"--batch-size {args.batch_size}"
    payload = {
        "command": "python benchmarks/scaling.py " + " ".join(argv or sys.argv[1:]),
        "edit_f1_command": f"edit-f1 {edit_f1}",
        "processes": processes,
        "torch_threads_one_process": machine_before["torch_threads"],
        "benchmark_process_peak_rss_mb": benchlib.rss_mb()["peak_rss_mb"],
        "variants": variants,
        "machine_before": machine_before,
        "runs": runs,
        "fit": fit,
        "target_peak_mb": TARGET_PEAK_MB,
    }
    for p, p_runs in several.items():
        payload[f"processes_{p}"] = {
            "launcher": f"torchrun --nnodes 1 --nproc_per_node {p} --master_port <free port> "
            f"edit_f1_rank.py {edit_f1}",
            "torch_threads_per_process": threads[p],
            "environment": {"OMP_NUM_THREADS": str(threads[p])},
            "peak_rss": "peak_rss_mb of each process: its own VmHWM (/proc/self/status) at "
            "exit; ru_maxrss_mb: its getrusage(RUSAGE_SELF), which starts at the launcher's "
            "peak at fork; launcher_and_processes_max_rss_mb: ru_maxrss of torchrun's wait4, "
            "the largest over the launcher and its processes",
            "cpu_time": "cpu_user_s / cpu_system_s: the launcher and its processes (wait4); "
            "per_process: each process's own",
            "runs": p_runs,
        }
    payload["machine_after"] = benchlib.machine_state()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    series = {"1 process": (sizes.tolist(), walls.tolist(), [r["peak_rss_mb"] for r in runs])}
    for p, p_runs in several.items():
        series[f"{p} processes (largest)"] = (
            [r["pairs"] for r in p_runs],
            [r["wall_s"] for r in p_runs],
            [r["peak_rss_mb_per_process_max"] for r in p_runs],
        )
    _plot(series, args.output_dir / "scaling.png")
    benchlib.write_results("scaling", payload, _markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
