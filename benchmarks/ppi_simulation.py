"""Does a prediction-powered corpus edit-F1 from a few labelled pairs cover the all-gold value?

On fully labelled real pairs, where every pair's gold counts are known, draw n pairs
uniformly at random as the "labelled" sample, treat the rest as unlabelled (judge only),
and compute the 95% intervals of :mod:`editf1.ppi`:

* **gold only**: the delta-method interval of the n labelled pairs' gold counts;
* **PPI++**: the judge's counts on all pairs corrected by the labelled pairs' gold
  counts, power-tuned (``lam`` estimated, clipped to [0, 1]), with the package's
  small-sample interval (t quantile, n - 1 degrees of freedom, unbiased variances);
* **PPI++, normal interval**: the same with the normal interval of ``ppi_py``;
* **PPI (lam = 1)**: the same without power tuning, for comparison;

and, once, the **judge only** figure over all pairs. Over ``--draws`` draws per n:
coverage of the all-gold corpus value (target >= 0.93 for a 95% interval), mean width
(and its ratio to the gold-only interval's), bias and RMSE of the point estimate.

The sets:

* **OncQA** (``own_reply``): the team's content-match labels
  (:func:`research.team_labels.team_gold_rows`): every sentence of the 100
  oncologists' replies against the GPT-4 draft, with spans, so every pair's gold
  (EM, EA, ED); content precision, recall and F1. The team's theme labels cover only
  part of the drafts' sentences, so there are no fully labelled pairs for themes.
* every set of the team's second round
  (:func:`research.content_labels.content_set_gold_rows`) with at least 22
  fully labelled pairs: OncQA edited replies vs their GPT-4 drafts, replies vs the
  other oncologist's, replies vs oncologist-edited drafts, K-QA statements and K-QA
  free-form answers vs LLM answers, ExpertQA revisions vs system answers; all three
  figures. A new set in that label file is picked up when the script is rerun.
* **K-QA, physicians' claim labels**: the physicians' labels (majority of three) of
  every physician claim of 27 (question, LLM answer) pairs (``NLI_medical_annotator.csv``);
  no spans, so no expected deletions: content recall only.

Sizes n that leave fewer than 2 unlabelled pairs are skipped.

The judge is the default embedded content judge, run once per pair; its counts and the
gold counts are written to the results file (numbers only, no text), and
``--from-results`` reruns the draws from them without a model.

    python benchmarks/ppi_simulation.py --data-dir ../shared/data

Writes ``benchmarks/results/ppi_simulation.json`` and ``ppi_simulation.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SIZES = (20, 40, 80)
ESTIMATORS = ("gold_only", "ppi_tuned", "ppi_tuned_normal", "ppi_lam1")
LABELS = {
    "gold_only": "gold only",
    "ppi_tuned": "PPI++ (tuned)",
    "ppi_tuned_normal": "PPI++, normal interval",
    "ppi_lam1": "PPI (lam 1)",
}
#: The example draw the README shows: the first draw at this n.
EXAMPLE_N = 40


#: The second round's sets (research.content_labels), as named in the results.
V2_NAMES = {
    "oncqa_edit_vs_draft": "OncQA: edited reply vs the GPT-4 draft",
    "oncqa_other_reply": "OncQA: reply vs the other oncologist's reply",
    "oncqa_edited_draft": "OncQA: reply vs an oncologist-edited draft",
    "kqa_statements": "K-QA: statements vs an LLM answer",
    "kqa_free_form": "K-QA: physicians' free-form answer vs an LLM answer",
    "expertqa_revision": "ExpertQA: expert's revision vs the system answer",
}


def _judged_set(scorer, pairs: list[dict], rows: list[dict], description: str) -> dict:
    """One fully labelled set, judged once: per pair the judge's and the gold counts."""
    from editf1.aggregate import pair_counts
    from editf1.gold.labels import PairText, bind_gold

    texts = [PairText(p["id"], p["prediction"], p["reference"]) for p in pairs]
    gold = bind_gold(rows, texts, scorer.splitter)
    result = scorer.score([t.prediction for t in texts], [t.reference for t in texts])
    return {
        "description": description,
        "metrics": ["precision", "recall", "f1"],
        "keys": [t.key for t in texts],
        "judge": pair_counts(result.pairs, "content").tolist(),
        "gold": [list(g.content_counts) for g in gold.pairs],
        "judge_fingerprint": scorer.content_judge.fingerprint,
    }


def _team_sets(data_root: Path) -> dict[str, dict]:
    """The team's fully labelled pairs (every reference sentence labelled, with spans):
    the first content label set (OncQA replies vs GPT-4 drafts) and each set of the
    second round; judged once per pair."""
    from editf1.scorer import EditF1Scorer
    from research.content_labels import CONTENT_SETS, content_set_gold_rows
    from research.team_labels import team_gold_rows

    scorer = EditF1Scorer(theme_judge=None, zero_division=0.0)
    pairs, rows = team_gold_rows(data_root)
    sets = {
        "OncQA": _judged_set(
            scorer, pairs, rows, "oncqa/stage1.csv: every sentence of the 100 oncologists' "
            "replies against the GPT-4 draft (team content labels, first set)",
        )
    }  # fmt: skip
    for name, spec in CONTENT_SETS.items():
        pairs, rows, incomplete = content_set_gold_rows(data_root, name)
        if len(pairs) < 22:  # n = 20 needs 2 pairs left unlabelled
            continue
        description = (
            f"{spec['reference']} against {spec['draft']} (team content labels v2, set "
            f"{name}; {len(pairs)} fully labelled pairs, {len(incomplete)} left out)"
        )
        sets[V2_NAMES.get(name, name)] = _judged_set(scorer, pairs, rows, description)
    return sets


def _kqa_set(kqa_dir: Path) -> dict:
    """K-QA's physician-labelled claims, one pair per (question, answer): recall only."""
    from editf1.judges import load_content_judge
    from editf1.validation.agreement import judge_content_items
    from editf1.validation.labelled import kqa_content_items

    items = kqa_content_items(kqa_dir)
    judge = load_content_judge("embedding")
    judgements = judge_content_items(judge, items)
    pairs: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for item, j in zip(items, judgements):
        counts = pairs[(item.case, item.prediction)]
        counts[0] += item.match  # gold EM
        counts[1] += not item.match  # gold EA
        counts[2] += j.status == "match"  # judge EM
        counts[3] += j.status != "match"  # judge EA
    values = list(pairs.values())
    return {
        "description": "K-QA NLI_medical_annotator.csv: every physician claim of each "
        "(question, LLM answer) pair, physicians' majority; no spans, so ED is unknown "
        "(0 here) and only recall is estimated",
        "metrics": ["recall"],
        "keys": [f"kqa:{k}" for k in range(len(values))],
        "judge": [[v[2], 0, v[3]] for v in values],
        "gold": [[v[0], 0, v[1]] for v in values],
        "judge_fingerprint": judge.fingerprint,
    }


def _corpus(counts: np.ndarray, metric: str) -> float:
    from editf1.ppi import ratio_columns

    columns = ratio_columns(counts, metric).sum(0)
    return float(columns[0] / columns[1])


def simulate(data: dict, sizes, draws: int, seed: int) -> dict:
    """The draws of one set: per metric and n, coverage, width, bias of each estimator."""
    from editf1.ppi import classical_ratio, ppi_ratio, ratio_columns

    judge, gold = np.asarray(data["judge"]), np.asarray(data["gold"])
    n_pairs = len(judge)
    out = {"n_pairs": n_pairs, "metrics": {}}
    for metric in data["metrics"]:
        truth = _corpus(gold, metric)
        judge_only = classical_ratio(ratio_columns(judge, metric))
        entry = {
            "all_gold": truth,
            "judge_only": judge_only.to_dict(),
            "judge_only_bias": judge_only.value - truth,
            "sizes": {},
        }
        y_all, f_all = ratio_columns(gold, metric), ratio_columns(judge, metric)
        for n in (s for s in sizes if s <= n_pairs - 2):
            rng = np.random.default_rng([seed, n])
            found = {name: [] for name in ESTIMATORS}
            lams = []
            for draw in range(draws):
                chosen = np.zeros(n_pairs, dtype=bool)
                chosen[rng.choice(n_pairs, size=n, replace=False)] = True
                y, f, u = y_all[chosen], f_all[chosen], f_all[~chosen]
                estimates = {
                    "gold_only": classical_ratio(y),
                    "ppi_tuned": ppi_ratio(y, f, u),
                    "ppi_tuned_normal": ppi_ratio(y, f, u, small_sample=False),
                    "ppi_lam1": ppi_ratio(y, f, u, lam=1.0),
                }
                lams.append(estimates["ppi_tuned"].lam)
                for name, e in estimates.items():
                    found[name].append((e.value, e.low, e.high))
                if draw == 0 and n == EXAMPLE_N:
                    entry["example_draw"] = {k: e.to_dict() for k, e in estimates.items()}
            gold_width = float(np.mean([h - lo for _, lo, h in found["gold_only"]]))
            summary = {}
            for name, rows in found.items():
                values, lows, highs = (np.array(c) for c in zip(*rows))
                width = float(np.mean(highs - lows))
                summary[name] = {
                    "coverage": float(np.mean((lows <= truth) & (truth <= highs))),
                    "mean_width": width,
                    "width_vs_gold_only": width / gold_width,
                    "bias": float(values.mean() - truth),
                    "rmse": float(np.sqrt(np.mean((values - truth) ** 2))),
                }
            summary["mean_lam"] = float(np.mean(lams))
            entry["sizes"][str(n)] = summary
        out["metrics"][metric] = entry
    return out


def _markdown(results: dict) -> str:
    lines = [
        "# Prediction-powered edit-F1: simulation on fully labelled pairs",
        "",
        f"{results['draws']} draws per n (seed {results['seed']}); 95% intervals; coverage "
        "of the all-gold corpus value (target >= 0.93). Width: mean interval width, and "
        "its ratio to the gold-only interval's. Bias and RMSE of the point estimate "
        "against the all-gold value.",
    ]
    for name, s in results["sets"].items():
        sim = s["simulation"]
        lines += ["", f"## {name} ({sim['n_pairs']} pairs)", "", s["description"], ""]
        lines += [
            "| figure | n | estimator | coverage | mean width | width / gold-only | bias | RMSE |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for metric, entry in sim["metrics"].items():
            j = entry["judge_only"]
            lines.append(
                f"| {metric}: all-gold {entry['all_gold']:.3f}, judge only "
                f"{j['value']:.3f} [{j['low']:.3f}, {j['high']:.3f}] | | | | | | "
                f"{entry['judge_only_bias']:+.3f} | |"
            )
            for n, summary in entry["sizes"].items():
                for estimator in ESTIMATORS:
                    e = summary[estimator]
                    label = LABELS[estimator]
                    if estimator == "ppi_tuned":
                        label += f", mean lam {summary['mean_lam']:.2f}"
                    lines.append(
                        f"| {metric} | {n} | {label} | {e['coverage']:.3f} | "
                        f"{e['mean_width']:.3f} | {e['width_vs_gold_only']:.2f} | "
                        f"{e['bias']:+.4f} | {e['rmse']:.4f} |"
                    )
    lines += [
        "",
        f"Run: {benchlib.load_line(results['machine'])}; judging "
        f"{results['seconds_judging']} s (once per pair), the draws "
        f"{results['seconds_simulating']} s.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.ROOT.parent / "shared" / "data")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--from-results",
        action="store_true",
        help="reuse the judge and gold counts of the results file (no model, no data)",
    )
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)
    out_json = args.output_dir / "ppi_simulation.json"
    started = time.perf_counter()
    judged = None
    if args.from_results:
        previous = json.loads(out_json.read_text())
        judged = previous["seconds_judging"]  # the counts were judged by that run
        sets = {
            name: {k: v for k, v in s.items() if k != "simulation"}
            for name, s in previous["sets"].items()
        }
    else:
        if not (args.data_dir / "oncqa" / "stage1.csv").is_file():
            sys.exit(f"no OncQA data under {args.data_dir} (pass --data-dir ../shared/data)")
        sets = _team_sets(args.data_dir)
        if (args.data_dir / "kqa" / "NLI_medical_annotator.csv").is_file():
            sets["K-QA: physicians' claim labels"] = _kqa_set(args.data_dir / "kqa")
    judged = time.perf_counter() - started if judged is None else judged
    started = time.perf_counter()
    for data in sets.values():
        data["simulation"] = simulate(data, args.sizes, args.draws, args.seed)
    results = {
        "draws": args.draws,
        "seed": args.seed,
        "sizes": args.sizes,
        "seconds_judging": round(judged, 1),
        "seconds_simulating": round(time.perf_counter() - started, 1),
        "machine": benchlib.machine_state(),
        "sets": sets,
    }
    benchlib.write_results("ppi_simulation", results, _markdown(results), args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
