"""Can the embedded content judge's recipe, refitted on more of the labels, reach issue
20's targets? A small grid of fits, chosen on fitting cases only, measured on the held-out
cases of every label set.

The grid: the logistic regression of :func:`editf1.training.classifiers.fit_content_judge`
(balanced class weights, the threshold of the best out-of-fold Cohen's kappa over 5 folds
of the fitting cases, the default's veto :data:`~editf1.training.classifiers.VETO_NC`)
with

* features: ``v1`` (cosine and word recall of the best span, the default's) or ``v2``
  (:data:`~editf1.judges.embedding.CONTENT_FEATURES`: token alignment and clinical key
  terms too);
* fitted on the fitting sides of ``kqa`` (the default's data), ``kqa+team`` (v2's),
  ``paraphrase`` (the six sets whose reference was written apart from the draft: the
  team's OncQA labels, K-QA, the other oncologist's reply, the oncologist-edited drafts,
  K-QA statements and free-form answers) or ``all`` (the nine sets, the near-copies of
  edited replies and expert revisions too).

The split is :func:`research.content_splits.split_by_case`, the one of
``content_judge_real.py``. **Selection, on fitting cases only:** the mean, over the six
paraphrase sets, of Cohen's kappa on their fitting items (out-of-fold decisions for the
sets a fit was fitted on; the fitted judge's decisions for the others, whose items it
never saw). The held-out figures of every fit are reported, with 95% CIs over cases
(``content_judge_real.evaluate``: AUROC from the exhaustive span search, agreement,
kappa, match rate beside the labelled one), beside the shipped default measured the
same way; the chosen fit would replace the default only if it beat it on every held-out
set (issue 20).

    python benchmarks/content_judge_refits.py --data-dir ../shared/data

Writes ``benchmarks/results/content_judge_refits.json`` and ``.md`` (about 15 minutes on
2 CPU cores).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import benchlib
import content_judge_real as cjr
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

PARAPHRASE = (
    "team",
    "kqa",
    "oncqa_other_reply",
    "oncqa_edited_draft",
    "kqa_statements",
    "kqa_free_form",
)


def training_sets(sets: dict) -> dict[str, tuple[str, ...]]:
    """Name -> the label sets a fit is fitted on (their fitting sides)."""
    return {
        "kqa": ("kqa",),
        "kqa+team": ("kqa", "team"),
        "paraphrase": PARAPHRASE,
        "all": tuple(sets),
    }


def feature_sets() -> dict[str, tuple[str, ...]]:
    """Name -> the classifier's features."""
    from editf1.judges.embedding import CONTENT_FEATURES, LEGACY_FEATURES

    return {"v1": tuple(LEGACY_FEATURES), "v2": tuple(CONTENT_FEATURES)}


def fitting_kappas(fit, trained: tuple[str, ...], sets: dict, split: dict, judge) -> dict:
    """Cohen's kappa on the fitting items of each paraphrase set: out-of-fold where the
    fit was fitted on the set, the fitted ``judge``'s decisions elsewhere."""
    from editf1.validation.agreement import cohen_kappa, judge_content_items

    threshold = fit.params["threshold"]
    out_of_fold, start = {}, 0
    for name in trained:
        size = len(split[name][0])
        out_of_fold[name] = fit.out_of_fold[start : start + size] >= threshold
        start += size
    kappas = {}
    for name in PARAPHRASE:
        items = [sets[name][i] for i in split[name][0]]
        labels = np.array([item.match for item in items])
        if name in out_of_fold:
            decisions = out_of_fold[name]
        else:
            decisions = np.array([j.status == "match" for j in judge_content_items(judge, items)])
        kappas[name] = round(float(cohen_kappa(labels, decisions)), 4)
    return kappas


def held_out(judge, exhaustive, sets: dict, split: dict, n_resamples: int) -> dict:
    """``content_judge_real.evaluate`` of one judge on every set's held-out items."""
    out = {}
    for name in sets:
        items = [sets[name][i] for i in split[name][1]]
        decisions, scores = cjr.judged(items, judge, exhaustive)
        out[name] = cjr.evaluate(name, items, decisions, scores, n_resamples)
    return out


def _cell(row: dict) -> str:
    return (
        f"{row['agreement']['value']:.3f} / {row['cohen_kappa']['value']:.3f} / "
        f"{'–' if row['auroc'] is None else format(row['auroc']['value'], '.3f')} / "
        f"{row['judge_match_rate']:.3f}"
    )


def markdown(payload: dict) -> str:
    shown = ("team", "kqa", "oncqa_edited_draft", "oncqa_other_reply", "kqa_statements")
    labelled = payload["default"]["held_out"]
    lines = [
        "# The embedded content judge's recipe refitted: a grid chosen on fitting cases",
        "",
        "Selection: mean Cohen's kappa on the fitting items of the six paraphrase sets "
        "(out-of-fold where fitted on). Held-out cells: agreement / kappa / AUROC / the "
        "judge's match rate; the labelled match rate in the header.",
        "",
        "| fit | threshold | selection kappa | "
        + " | ".join(f"{n} ({labelled[n]['match_rate']:.3f})" for n in shown)
        + " |",
        "|---|---|---|" + "---|" * len(shown),
        f"| shipped default | {payload['default']['threshold']} | "
        f"{payload['default']['selection']:.3f} | "
        + " | ".join(_cell(labelled[n]) for n in shown)
        + " |",
    ]
    for fit in payload["fits"]:
        mark = " **(chosen)**" if fit["name"] == payload["chosen"] else ""
        lines.append(
            f"| {fit['name']}{mark} | {fit['threshold']} | {fit['selection']:.3f} | "
            + " | ".join(_cell(fit["held_out"][n]) for n in shown)
            + " |"
        )
    verdict = payload["chosen_beats_default"]
    lines += [
        "",
        f"Chosen: {payload['chosen']}. Beats the shipped default's held-out agreement on "
        f"{sum(verdict.values())} of {len(verdict)} sets "
        f"({', '.join(n for n, v in verdict.items() if not v) or 'none'} not).",
        "",
        "Every set's figures with 95% CIs are in the JSON file.",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(benchlib.ROOT.parent / "shared" / "data"))
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir)
    if not all((data_dir / name).is_dir() for name in ("kqa", "oncqa", "expertqa")):
        print(
            f"the real data folder {data_dir} (kqa/, oncqa/, expertqa/) is absent", file=sys.stderr
        )
        return 2
    from editf1.judges.embedding import EmbeddingContentJudge
    from editf1.judges.encoder import default_encoder
    from editf1.training.classifiers import VETO_NC, fit_content_judge
    from editf1.validation.agreement import cohen_kappa, judge_content_items

    started = time.time()
    sets, questions = cjr.load_sets(data_dir)
    split = cjr.split_sets(sets, questions)
    encoder = default_encoder()

    default = EmbeddingContentJudge(encoder=encoder)
    selection = []
    for name in PARAPHRASE:
        items = [sets[name][i] for i in split[name][0]]
        decisions = [j.status == "match" for j in judge_content_items(default, items)]
        selection.append(cohen_kappa(np.array([i.match for i in items]), np.array(decisions)))
    payload = {
        "default": {
            "fingerprint": default.fingerprint,
            "threshold": default.threshold,
            "selection": round(float(np.mean(selection)), 4),
            "held_out": held_out(
                default,
                EmbeddingContentJudge(encoder=encoder, span_margin=None),
                sets,
                split,
                args.n_resamples,
            ),
        },
        "fits": [],
    }
    grid = itertools.product(training_sets(sets).items(), feature_sets().items())
    for (trained_name, trained), (features_name, features) in grid:
        items = [sets[n][i] for n in trained for i in split[n][0]]
        fit = fit_content_judge(items, features=features, veto=VETO_NC, encoder=encoder)
        judge = EmbeddingContentJudge(params=fit.params, encoder=encoder)
        kappas = fitting_kappas(fit, trained, sets, split, judge)
        exhaustive = EmbeddingContentJudge(params=fit.params, encoder=encoder, span_margin=None)
        payload["fits"].append(
            {
                "name": f"{features_name} on {trained_name}",
                "features": list(features),
                "fitted_on": list(trained),
                "threshold": fit.params["threshold"],
                "weights": fit.params["weights"],
                "fitting": fit.params["fitting"],
                "fitting_kappas": kappas,
                "selection": round(float(np.mean(list(kappas.values()))), 4),
                "held_out": held_out(judge, exhaustive, sets, split, args.n_resamples),
            }
        )
        print(payload["fits"][-1]["name"], round(time.time() - started), "s", flush=True)
    chosen = max(payload["fits"], key=lambda fit: fit["selection"])
    payload["chosen"] = chosen["name"]
    payload["chosen_beats_default"] = {
        name: chosen["held_out"][name]["agreement"]["value"]
        > payload["default"]["held_out"][name]["agreement"]["value"]
        for name in sets
    }
    payload["seconds"] = round(time.time() - started, 1)
    payload["machine"] = benchlib.machine_state()
    benchlib.write_results("content_judge_refits", payload, markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
