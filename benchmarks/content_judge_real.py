"""The embedded content judge on real expert labels: today's judge, the v2 judge (token
alignment and clinical key terms, ``content_judge_v2.json``) and "always NO MATCH".

Label sets (``../shared/data``; read-only, never copied):

* ``kqa``: K-QA ``NLI_medical_annotator.csv``, physicians' majority label
  (:func:`editf1.validation.labelled.kqa_content_items`);
* ``team``: the team's OncQA content-match labels, oncologists' stage-1 sentences
  against the GPT-4 draft of the same case (LLM annotator agents following the
  project's guide; :func:`editf1.validation.team_labels.load_team_content_items`);
* ``stage2``: OncQA stage-2 edited sentences labelled by the edit (kept: match;
  critically modified: NO MATCH; :mod:`editf1.validation.stage2_labels`). Its NO
  MATCH items are defined by a change of number, unit, drug, negation or direction
  word, close to what the key-term veto checks: its figures are not independent of
  the veto's design.

Split: :func:`editf1.validation.labelled.case_split` (test share 0.4, seed 0) on each
of ``kqa`` and ``team`` (the split every judge of the project is evaluated on); a
``stage2`` item is held out when its case is held out of ``team`` (the same OncQA
cases), so no held-out case is fitted on.

Fitting (:func:`editf1.training.classifiers.fit_content_judge`, on the fitting sides
only): once on ``kqa`` + ``team`` and once with ``stage2`` too; the fit whose
out-of-fold Cohen's kappa on the fitting items of ``kqa`` + ``team`` (the items both
fits share) is higher is kept and written with ``--params-out``. Its decision
threshold maximises the kappa of out-of-fold decisions on its own fitting items.

Figures on each held-out set: AUROC of the judge's best-span probability (exhaustive
span search, ``span_margin=None``), agreement and Cohen's kappa of its decisions (the
default bounded search), each with a 95% percentile bootstrap CI over cases
(:func:`editf1.stats.bootstrap`, 2,000 resamples, seed 0); beside them "always NO
MATCH" and today's judge (``content_judge.json``). It also checks OncQA case 12's
second oncologist's dose change ("increasing your dose of omeprazole" against the
draft's "continue taking your omeprazole as prescribed").

    python benchmarks/content_judge_real.py --data-dir ../shared/data \\
        --params-out src/editf1/data/content_judge_v2.json

Writes ``benchmarks/results/content_judge_real.json`` and ``.md``.
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

SETS = ("kqa", "team", "stage2")
#: the stage-2 item of OncQA case 12 whose oncologist raised the omeprazole dose
DOSE_CHANGE = "I would recommend increasing your dose of omeprazole"


def load_sets(data_dir: Path) -> dict:
    from editf1.validation.labelled import kqa_content_items
    from editf1.validation.stage2_labels import oncqa_stage2_content_items
    from editf1.validation.team_labels import load_team_content_items

    return {
        "kqa": kqa_content_items(data_dir / "kqa"),
        "team": load_team_content_items(data_dir),
        "stage2": oncqa_stage2_content_items(data_dir),
    }


def split_sets(sets: dict) -> dict:
    """name -> (fitting indices, held-out indices)."""
    from editf1.validation.labelled import case_split

    out = {name: case_split([i.case for i in sets[name]]) for name in ("kqa", "team")}
    held_out = {sets["team"][i].case for i in out["team"][1]}
    team_cases = {item.case for item in sets["team"]}
    stage2 = sets["stage2"]
    unseen = [k for k, item in enumerate(stage2) if item.case not in team_cases]
    if unseen:  # cases without team labels: their own case split
        train, test = case_split([stage2[k].case for k in unseen])
        held_out |= {stage2[unseen[k]].case for k in test}
    test = np.array([k for k, item in enumerate(stage2) if item.case in held_out], dtype=int)
    train = np.array([k for k, item in enumerate(stage2) if item.case not in held_out], dtype=int)
    out["stage2"] = (train, test)
    return out


def auroc(labels: np.ndarray, scores: np.ndarray, groups, n_resamples: int):
    from sklearn.metrics import roc_auc_score

    from editf1.stats import bootstrap

    if len(set(labels.tolist())) < 2:
        return None

    def stat(idx):
        return roc_auc_score(labels[idx], scores[idx]) if len(set(labels[idx])) > 1 else np.nan

    return bootstrap(stat, len(labels), groups=groups, n_resamples=n_resamples).to_dict()


def evaluate(name: str, items, judge, exhaustive, n_resamples: int) -> dict:
    from editf1.validation.agreement import binary_agreement_report, judge_content_items

    labels = np.array([item.match for item in items])
    groups = np.array([item.case for item in items])
    if judge is None:  # always NO MATCH
        decisions, scores = np.zeros(len(items), dtype=bool), None
    else:
        decisions = np.array([j.status == "match" for j in judge_content_items(judge, items)])
        scores = np.array([j.score for j in judge_content_items(exhaustive, items)])
    report = binary_agreement_report(labels, decisions, groups=groups, n_resamples=n_resamples)
    return {
        "set": name,
        "n": len(items),
        "cases": len(set(groups.tolist())),
        "match_rate": round(float(labels.mean()), 4),
        "auroc": None if scores is None else auroc(labels, scores, groups, n_resamples),
        "agreement": report["agreement"].to_dict(),
        "cohen_kappa": report["cohen_kappa"].to_dict(),
        "confusion_matrix": report["confusion_matrix"],
    }


def _ci(estimate: dict | None) -> str:
    if estimate is None:
        return "–"
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"


def markdown(payload: dict) -> str:
    lines = [
        "# Embedded content judge on real labels (held-out cases)",
        "",
        f"v2 fitted on: {', '.join(payload['fit']['chosen_sets'])} (fitting sides); "
        f"threshold {payload['fit']['threshold']} (max out-of-fold kappa).",
        "",
        "| set | n (cases) | judge | AUROC | agreement | Cohen's kappa |",
        "|---|---|---|---|---|---|",
    ]
    for name in SETS:
        for judge in ("v2", "today", "always_no_match"):
            row = payload["held_out"][name][judge]
            lines.append(
                f"| {name} | {row['n']} ({row['cases']}) | {judge} | {_ci(row['auroc'])} | "
                f"{_ci(row['agreement'])} | {_ci(row['cohen_kappa'])} |"
            )
    check = payload["dose_change_case_12"]
    lines += [
        "",
        f"OncQA case 12 dose change: v2 {check['v2']}, today's judge {check['today']} "
        f"(human: NO MATCH).",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(benchlib.ROOT.parent / "shared" / "data"))
    parser.add_argument("--params-out", help="write the chosen v2 parameters here")
    parser.add_argument(
        "--params",
        help="evaluate this v2 parameter file instead of fitting (a path or a shipped name)",
    )
    parser.add_argument("--n-resamples", type=int, default=2000)
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir)
    if not (data_dir / "kqa").is_dir() or not (data_dir / "oncqa").is_dir():
        print(f"the real data folder {data_dir} (kqa/, oncqa/) is absent", file=sys.stderr)
        return 2

    from editf1.judges.embedding import EmbeddingContentJudge
    from editf1.judges.encoder import default_encoder
    from editf1.training.classifiers import fit_content_judge
    from editf1.validation.agreement import cohen_kappa

    started = time.time()
    sets = load_sets(data_dir)
    split = split_sets(sets)
    encoder = default_encoder()
    fit_info: dict = {}
    if args.params:
        v2_params = EmbeddingContentJudge(params_file=args.params, encoder=encoder)
        params = None
        fit_info = {"chosen_sets": ["(given file)"], "threshold": v2_params.threshold}
    else:
        fits = {}
        for combination in (("kqa", "team"), ("kqa", "team", "stage2")):
            items = [sets[n][i] for n in combination for i in split[n][0]]
            fit = fit_content_judge(items, encoder=encoder)
            shared = sum(len(split[n][0]) for n in ("kqa", "team"))  # listed first
            labels = np.array([item.match for item in items[:shared]])
            threshold = fit.params["threshold"]
            fits[combination] = (
                fit.params,
                cohen_kappa(labels, fit.out_of_fold[:shared] >= threshold),
            )
        chosen = max(fits, key=lambda c: fits[c][1])
        params = fits[chosen][0]
        fit_info = {
            "chosen_sets": list(chosen),
            "threshold": params["threshold"],
            "candidates": [
                {
                    "sets": list(c),
                    "out_of_fold_cohen_kappa_kqa_team": round(float(k), 4),
                    "threshold": p["threshold"],
                    "fitting": p["fitting"],
                }
                for c, (p, k) in fits.items()
            ],
        }
        if args.params_out:
            Path(args.params_out).write_text(json.dumps(params, indent=1) + "\n", "utf-8")
    judges = {}
    for name, options in (
        ("v2", {"params_file": args.params} if args.params else {"params": params}),
        ("today", {}),
    ):
        judges[name] = (
            EmbeddingContentJudge(encoder=encoder, **options),
            EmbeddingContentJudge(encoder=encoder, span_margin=None, **options),
        )
    held_out = {}
    for name in SETS:
        items = [sets[name][i] for i in split[name][1]]
        held_out[name] = {
            judge: evaluate(name, items, *judges[judge], args.n_resamples) for judge in judges
        } | {"always_no_match": evaluate(name, items, None, None, args.n_resamples)}
    from editf1.validation.agreement import judge_content_items

    (dose,) = [
        item
        for item in sets["stage2"]
        if item.case == "oncqa:12" and item.reference.startswith(DOSE_CHANGE)
    ]
    check = {judge: judge_content_items(judges[judge][0], [dose])[0].status for judge in judges}
    payload = {
        "fit": fit_info,
        "v2_fingerprint": judges["v2"][0].fingerprint,
        "today_fingerprint": judges["today"][0].fingerprint,
        "held_out": held_out,
        "dose_change_case_12": check,
        "seconds": round(time.time() - started, 1),
        "machine": benchlib.machine_state(),
    }
    benchlib.write_results("content_judge_real", payload, markdown(payload))
    return 0


if __name__ == "__main__":
    sys.exit(main())
