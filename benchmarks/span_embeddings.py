"""Runs of draft sentences encoded as texts of their own, or composed from their
sentences' own forward passes: what changes on every labelled item?

The content judges score a reference sentence against every draft sentence and every
run of ``window`` (2) adjacent ones. ``span_embedding="encoded"`` runs each run through
the encoder as a new text; ``"composed"`` builds its embedding from the embeddings its
sentences already have (mean pooling is linear:
:meth:`editf1.judges.encoder.SentenceEncoder.compose`), so no run is encoded and the
only thing lost is attention across the sentence boundary. This script measures that
loss on the labelled content sets (``../shared/data``; read-only, never copied): K-QA
(physicians' majority), the team's OncQA content labels and the OncQA stage-2 edit
labels, with the default content
judge (``content_judge_veto_nc.json``). Per set:

* decisions (match or not) and matched spans that change from encoded to composed;
* agreement and Cohen's kappa with the human labels, each way, on every item and on
  the held-out cases of ``benchmarks/content_judge_real.py``'s split, with 95%
  bootstrap CIs over cases (2,000 resamples, seed 0), and the paired difference
  composed − encoded with its CI and p-value;
* how close a composed run's embedding is to the encoded one (cosine, over every run
  of two sentences of the sets' drafts);
* whether the bounded span search (``span_margin`` 0.3) decides as the exhaustive one
  in composed mode too.

``--write-decisions FILE`` saves every decision (content judges encoded, theme judges)
and ``--baseline FILE`` compares with such a file written by an earlier version of the
library (e.g. main before the encoder sorted its batches by length), to check that
the encoder's batching changes no decision beyond float rounding. The baseline run
uses only the encoded mode (``--modes encoded``), so it runs on a library without the
``span_embedding`` option:

    git -C /work/main archive main | tar -x -C /tmp/editf1-main
    PYTHONPATH=/tmp/editf1-main/src python benchmarks/span_embeddings.py \\
        --data-dir ../shared/data --modes encoded --write-decisions /tmp/baseline.json \\
        --output-dir /tmp/baseline-results
    python benchmarks/span_embeddings.py --data-dir ../shared/data --baseline /tmp/baseline.json

Writes ``benchmarks/results/span_embeddings.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: encoded runs, composed runs with the shipped weights, composed runs with the judge
#: refitted on composed features (the shipped recipe: ``calibrate_content_judge`` on
#: K-QA with the default's veto, as ``edit-f1 train-judge embedding-content`` fits it)
MODES = ("encoded", "composed", "composed_refit")
MODE_NAMES = {"composed": "composed", "composed_refit": "composed, judge refitted"}
CONTENT_PARAMS = {"default": "content_judge_veto_nc.json"}
THEME_PARAMS = {"default": "theme_judge_v2.json"}
#: the content sets: this script's name -> content_judge_real.py's name (for its split)
SPLIT_NAMES = {"kqa": "kqa", "team_content": "team", "oncqa_stage2": "stage2"}


def load_sets(data_dir: Path, limit: int | None) -> tuple[dict, dict]:
    """``(content sets, theme sets)``: name -> items, the first ``limit`` of each."""
    from editf1.validation.labelled import kqa_content_items, shipped_theme_items
    from research.stage2_labels import oncqa_stage2_content_items
    from research.team_labels import load_team_content_items, load_team_theme_items

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
    """Each item's theme and its probability."""
    from editf1.validation.agreement import judge_theme_items

    judgements = judge_theme_items(judge, items)
    return {"theme": [j.theme for j in judgements], "score": [float(j.score) for j in judgements]}


def judge(params, mode: str, encoder, **options):
    """The content judge of ``params`` (a shipped file's name, or the parameters) with
    runs embedded the ``mode`` way (the option is passed only for a composed mode: an
    older library has only ``encoded``)."""
    from editf1.judges.embedding import EmbeddingContentConfig, EmbeddingContentJudge

    if mode != "encoded":
        options["span_embedding"] = "composed"
    given = (
        {"params_file": params}
        if isinstance(params, str)
        else {"config": EmbeddingContentConfig.from_json(params)}
    )
    return EmbeddingContentJudge(encoder=encoder, **given, **options)


def refit(data_dir: Path, encoder) -> dict:
    """The default content judge refitted on composed runs by its shipped recipe (K-QA,
    split by question, seed 0, the default's veto), and on encoded runs, to check that
    the recipe still gives the shipped weights.

    Returns:
        ``{"default": params, "default_encoded": params}``.
    """
    from editf1.training.classifiers import VETO_NC, calibrate_content_judge
    from editf1.validation.labelled import kqa_content_items

    kqa = kqa_content_items(data_dir / "kqa")
    return {
        "default": calibrate_content_judge(
            kqa, encoder=encoder, span_embedding="composed", veto=VETO_NC
        ),
        "default_encoded": calibrate_content_judge(kqa, encoder=encoder, veto=VETO_NC),
    }


def estimates(labels, decisions, groups, n_resamples: int) -> dict:
    """Agreement and Cohen's kappa with 95% bootstrap CIs over cases."""
    from editf1.validation.agreement import binary_agreement_report

    report = binary_agreement_report(labels, decisions, groups=groups, n_resamples=n_resamples)
    return {name: report[name].to_dict() for name in ("agreement", "cohen_kappa")}


def paired(labels, encoded, composed, groups, n_resamples: int) -> dict:
    """Composed − encoded agreement and kappa, paired bootstrap over cases."""
    from editf1.stats import paired_bootstrap
    from editf1.validation.agreement import agreement, cohen_kappa

    out = {}
    for name, statistic in (("agreement", agreement), ("cohen_kappa", cohen_kappa)):
        result = paired_bootstrap(
            lambda i, s=statistic: s(labels[i], encoded[i]),
            lambda i, s=statistic: s(labels[i], composed[i]),
            len(labels),
            groups=groups,
            n_resamples=n_resamples,
        )
        out[name] = result.difference.to_dict() | {"p_value": result.p_value}
    return out


def compare_modes(name: str, items, runs: dict, held_out, n_resamples: int) -> dict:
    """Changed decisions and spans, and the agreement figures of each mode."""
    labels = np.array([item.match for item in items])
    groups = np.array([item.case for item in items])
    decided = {mode: np.array(run["match"]) for mode, run in runs.items()}
    row = {"set": name, "n": len(items), "cases": len(set(groups.tolist()))}
    others = [mode for mode in runs if mode != "encoded"] if "encoded" in runs else []
    for subset, index in (("all", np.arange(len(items))), ("held_out", held_out)):
        index = np.asarray(index, dtype=int)
        if not len(index):  # a --limit run may hold no held-out case
            continue
        part = {"n": len(index), "cases": len(set(groups[index].tolist()))}
        for mode, decisions in decided.items():
            part[mode] = estimates(labels[index], decisions[index], groups[index], n_resamples)
        for mode in others:
            part[f"{mode}_minus_encoded"] = paired(
                labels[index],
                decided["encoded"][index],
                decided[mode][index],
                groups[index],
                n_resamples,
            )
        row[subset] = part
    for mode in others:
        encoded, other = runs["encoded"], runs[mode]
        row[mode] = {
            "changed_decisions": int((decided["encoded"] != decided[mode]).sum()),
            "changed_spans": sum(a != b for a, b in zip(encoded["span"], other["span"])),
            "new_matches": int((~decided["encoded"] & decided[mode]).sum()),
            "lost_matches": int((decided["encoded"] & ~decided[mode]).sum()),
            "max_score_change": round(
                float(np.max(np.abs(np.subtract(encoded["score"], other["score"])), initial=0)),
                6,
            ),
        }
    return row


def run_fidelity(encoder, drafts: list[str]) -> dict:
    """Cosine of each composed run of two sentences with the same run encoded."""
    from editf1.judges.spans import candidate_spans
    from editf1.segment import SentenceSplitter

    splitter = SentenceSplitter()
    runs, texts = [], []
    for draft in drafts:
        sentences = splitter.split(draft)
        n = len(sentences)
        spans = candidate_spans(draft, sentences, 2)
        runs += [[sentences[i].text, sentences[i + 1].text] for i in range(n - 1)]
        texts += [spans[n + i].text for i in range(n - 1)]
    cosine = (encoder.compose(runs) * encoder.encode(texts)).sum(axis=1)
    return {
        "runs": len(runs),
        "min_cosine": round(float(cosine.min()), 4),
        "p05_cosine": round(float(np.percentile(cosine, 5)), 4),
        "median_cosine": round(float(np.median(cosine)), 4),
    }


def _ci(e: dict) -> str:
    return f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def _difference(e: dict) -> str:
    return f"{e['value']:+.3f} [{e['low']:+.3f}, {e['high']:+.3f}] (p = {e['p_value']:.2f})"


def markdown(payload: dict) -> str:
    state = payload["machine_before"]
    fidelity = payload.get("run_fidelity")
    lines = [
        "### Runs of draft sentences: encoded as texts, or composed from their sentences",
        "",
        f"Machine: {benchlib.load_line(state)}; torch threads {state['torch_threads']}; "
        f"{payload['seconds']:.0f} s in all. {payload['limit_note'].capitalize()} of each "
        f"labelled content set; CIs: 95% bootstrap over cases, {payload['n_resamples']:,} "
        "resamples, seed 0; the held-out cases are those of content_judge_real.py's split.",
        "",
    ]
    if fidelity:
        lines += [
            f"Composed against encoded embeddings of the {fidelity['runs']} runs of two "
            f"sentences of the sets' drafts: cosine min {fidelity['min_cosine']}, 5th "
            f"percentile {fidelity['p05_cosine']}, median {fidelity['median_cosine']}.",
            "",
        ]
    lines += [
        "| set | items (cases) | judge | runs | changed decisions | changed spans | subset | "
        "agreement, encoded | agreement | difference | kappa, encoded | kappa | difference |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in payload["content"]:
        for mode in (m for m in MODES[1:] if m in row):
            for subset in (s for s in ("all", "held_out") if s in row):
                part, changed = row[subset], row[mode]
                diff = part[f"{mode}_minus_encoded"]
                lines.append(
                    f"| {row['set']} | {part['n']} ({part['cases']}) | {row['judge']} | "
                    f"{MODE_NAMES[mode]} | {changed['changed_decisions']} | "
                    f"{changed['changed_spans']} | {subset} | "
                    f"{_ci(part['encoded']['agreement'])} | {_ci(part[mode]['agreement'])} | "
                    f"{_difference(diff['agreement'])} | "
                    f"{_ci(part['encoded']['cohen_kappa'])} | {_ci(part[mode]['cohen_kappa'])} | "
                    f"{_difference(diff['cohen_kappa'])} |"
                )
    refitted = payload.get("refit")
    if refitted:
        lines += [
            "",
            "Refitted on composed runs: weights "
            f"{refitted['default']['weights']}, bias {refitted['default']['bias']} (the same "
            f"recipe on encoded runs: {refitted['default_encoded']['weights']}, bias "
            f"{refitted['default_encoded']['bias']}; shipped: "
            f"{refitted['default_shipped']['weights']}, bias "
            f"{refitted['default_shipped']['bias']}).",
        ]
    bounded = payload.get("composed_bounded_vs_exhaustive")
    if bounded:
        lines += [
            "",
            "Composed mode, bounded span search (span_margin 0.3) against every run scored: "
            + ", ".join(
                f"{r['set']} {r['judge']} {r['changed_decisions']} decisions / "
                f"{r['changed_spans']} spans changed"
                for r in bounded
            )
            + ".",
        ]
    baseline = payload.get("baseline")
    if baseline:
        lines += [
            "",
            f"Against the baseline decisions ({baseline['file']}, library "
            f"{baseline['library']}): "
            + ", ".join(
                f"{r['set']} {r['judge']} {r['changed']} of {r['n']} changed "
                f"(max score change {r['max_score_change']:.1g})"
                for r in baseline["rows"]
            )
            + f". In all: {baseline['changed_total']} of {baseline['decisions_total']}.",
        ]
    return "\n".join(lines)


def compare_baseline(decisions: dict, path: Path) -> dict:
    """Decisions changed against a ``--write-decisions`` file of another version."""
    baseline = json.loads(path.read_text("utf-8"))
    rows = []
    for key, run in decisions.items():
        if key not in baseline["decisions"]:
            continue
        old = baseline["decisions"][key]
        field = "match" if "match" in run else "theme"
        changed = sum(a != b for a, b in zip(run[field], old[field]))
        if "span" in run:  # JSON gives lists where this run has tuples
            spans = [None if x is None else list(x) for x in run["span"]]
            changed += sum(a != b and m for a, b, m in zip(spans, old["span"], run["match"]))
        set_name, judge_name = key.split("|")
        rows.append(
            {
                "set": set_name,
                "judge": judge_name,
                "n": len(run[field]),
                "changed": changed,
                "max_score_change": float(
                    np.max(np.abs(np.subtract(run["score"], old["score"])), initial=0)
                ),
            }
        )
    return {
        "file": path.name,
        "library": baseline["library"],
        "rows": rows,
        "changed_total": sum(r["changed"] for r in rows),
        "decisions_total": sum(r["n"] for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.ROOT.parent / "shared" / "data")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--limit", type=int, help="keep the first N items of each set")
    parser.add_argument("--write-decisions", type=Path, help="save every decision as JSON")
    parser.add_argument("--baseline", type=Path, help="compare with a --write-decisions file")
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)
    if not (args.data_dir / "kqa").is_dir() or not (args.data_dir / "oncqa").is_dir():
        sys.exit(
            f"the real data folder {args.data_dir} (kqa/, oncqa/) is absent: pass --data-dir "
            "with the folder holding them (in this workplace ../shared/data)."
        )
    import content_judge_real

    import editf1
    from editf1.judges.embedding import EmbeddingThemeJudge, load_params
    from editf1.judges.encoder import default_encoder
    from editf1.versions import installed_versions

    started = time.time()
    state = benchlib.machine_state()
    content_sets, theme_sets = load_sets(args.data_dir, args.limit)
    split = content_judge_real.split_sets(*content_judge_real.load_sets(args.data_dir))
    encoder = default_encoder()
    refitted = refit(args.data_dir, encoder) if "composed_refit" in args.modes else None
    decisions, rows, bounded = {}, [], []
    for name, items in content_sets.items():
        held_out = [i for i in split[SPLIT_NAMES[name]][1] if i < len(items)]
        for judge_name, params_file in CONTENT_PARAMS.items():
            runs = {
                mode: content_decisions(
                    judge(
                        refitted[judge_name] if mode == "composed_refit" else params_file,
                        mode,
                        encoder,
                    ),
                    items,
                )
                for mode in args.modes
            }
            decisions[f"{name}|content {judge_name}"] = runs[args.modes[0]]
            row = compare_modes(name, items, runs, held_out, args.n_resamples)
            rows.append({"judge": f"content {judge_name}", **row})
            if "composed" in runs:
                every = content_decisions(
                    judge(params_file, "composed", encoder, span_margin=None), items
                )
                bounded.append(
                    {
                        "set": name,
                        "judge": f"content {judge_name}",
                        "changed_decisions": sum(
                            a != b for a, b in zip(every["match"], runs["composed"]["match"])
                        ),
                        "changed_spans": sum(
                            a != b for a, b in zip(every["span"], runs["composed"]["span"])
                        ),
                    }
                )
            changed = {m: row[m]["changed_decisions"] for m in MODES if m in row}
            print(f"{name} content {judge_name}: changed decisions {changed}", flush=True)
    for name, items in theme_sets.items():
        for judge_name, params_file in THEME_PARAMS.items():
            theme_judge = EmbeddingThemeJudge(encoder=encoder, params_file=params_file)
            decisions[f"{name}|theme {judge_name}"] = theme_decisions(theme_judge, items)
    drafts = sorted({item.prediction for items in content_sets.values() for item in items})
    payload = {
        "command": "python benchmarks/span_embeddings.py " + " ".join(argv or sys.argv[1:]),
        "library": f"edit-f1 {installed_versions('edit-f1')['edit-f1']} from "
        f"{Path(editf1.__file__).parent}",
        "limit_note": f"first {args.limit} items" if args.limit else "every item",
        "n_resamples": args.n_resamples,
        "machine_before": state,
        "run_fidelity": run_fidelity(encoder, drafts) if "composed" in args.modes else None,
        "content": rows,
        "composed_bounded_vs_exhaustive": bounded,
        "refit": refitted
        and refitted | {"default_shipped": load_params(CONTENT_PARAMS["default"])},
        "encoder": {"texts_encoded": encoder.encoded},
    }
    if args.baseline:
        payload["baseline"] = compare_baseline(decisions, args.baseline)
    payload["seconds"] = time.time() - started
    payload["machine_after"] = benchlib.machine_state()
    if args.write_decisions:
        args.write_decisions.write_text(
            json.dumps({"library": payload["library"], "decisions": decisions}) + "\n", "utf-8"
        )
    benchlib.write_results("span_embeddings", payload, markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
