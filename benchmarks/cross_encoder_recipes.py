"""The cross-encoder content judge's recipe, one change at a time, on every held-out set.

Each recipe trains and calibrates a judge on the fitting cases
(:func:`editf1.training.cross_encoder.train_cross_encoder_judge` and its steps) and
judges the held-out cases of every label set
(:func:`research.content_splits.split_by_case`), beside the shipped default
embedding judge. Every row changes one variable of the shipped recipe (``shipped``):

* ``lora``: a LoRA of rank 16 on every linear layer, classifier and pooler trained in
  full, learning rate 2e-4, instead of every weight;
* ``top3``: at inference, only the default embedding judge's 3 most probable spans per
  reference sentence are candidates, instead of every one (the same model);
* ``near_copies``: the near-copy sets (``oncqa_edit_vs_draft``, ``expertqa_revision``)
  added to the training sets;
* ``no_kqa_physician``: the new K-QA labels (``kqa_physician``) left out of training;
* ``stack``: the probability stacks the bi-encoder's cosine and the word recall with
  the logit (fitted on the calibration side).

Figures per held-out set: AUROC of the judgement's score, agreement and Cohen's kappa
with 95% bootstrap CIs over cases (2,000 resamples, seed 0), the judge's and the
labelled match rate; and OncQA stage 2's mean content F1 of the draft against the
oncologist's edit per acceptability class. The models are written under ``--work-dir``
(outside the repository); the shipped judge is ``--work-dir``/shipped, copied into
``src/editf1/data/cross_encoder`` by hand after review.

    python benchmarks/cross_encoder_recipes.py --data-dir ../shared/data \\
        --work-dir /tmp/recipes [--recipes shipped lora ...]

Writes ``benchmarks/results/cross_encoder_recipes.json`` and ``.md`` (recipes already
in the JSON file and not asked for again are kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import benchlib
import content_judge_real as real
import numpy as np

from research.train_cross_encoder import NEAR_COPY_SETS, PARAPHRASE_SETS, fitting_items

os.environ.setdefault("HF_HUB_OFFLINE", "1")

RECIPES = {
    "shipped": "the shipped recipe: every weight, every candidate, paraphrase sets + kqa_physician",
    "lora": "LoRA (rank 16, every linear layer; lr 2e-4) instead of every weight",
    "top3": "only the embedding judge's top 3 spans as candidates at inference",
    "near_copies": "near-copy sets (oncqa_edit_vs_draft, expertqa_revision) trained on too",
    "no_kqa_physician": "without the new K-QA labels (kqa_physician)",
    "stack": "probability stacks cosine and word recall with the logit",
}


def train_lora(items, output: Path, settings) -> dict:
    """The shipped steps with a LoRA (peft) instead of every weight, merged after."""
    from peft import LoraConfig, get_peft_model

    from editf1.training import cross_encoder as training

    model = training.base_cross_encoder(settings.max_length)
    lora = LoraConfig(
        r=16,
        lora_alpha=32,
        lora_dropout=0.1,
        target_modules=["query", "key", "value", "dense"],
        modules_to_save=["classifier", "pooler"],
    )
    model[0].model = get_peft_model(model[0].model, lora)
    log = training.fit_cross_encoder(model, training.pairs_of(items, settings), settings)
    model[0].model = model[0].model.merge_and_unload()
    config, figures = training.calibrate_model(model, items, settings)
    record = {"training": log, "calibration": figures, "lora": lora.to_dict()}
    output.mkdir(parents=True, exist_ok=True)
    training.save_model(model, config, json.loads(json.dumps(record, default=str)), output)
    return record


def top_k_judge(judge, proposer, k: int):
    """``judge`` reading only ``proposer``'s ``k`` most probable spans per sentence."""
    from editf1.judges.cross_encoder import CrossEncoderContentJudge

    class TopK(CrossEncoderContentJudge):
        def span_probabilities(self, requests):
            out = []
            scored = proposer.span_scores(requests)
            for (spans, probability, vetoed), proposed in zip(
                super().span_probabilities(requests), scored
            ):
                assert [s.text for s in spans] == [s.text for s in proposed.spans]
                keep = np.zeros_like(probability, dtype=bool)
                for r, row in enumerate(proposed.probability):
                    keep[r, np.argsort(-row, kind="stable")[:k]] = True
                out.append((spans, np.where(keep, probability, 0.0), vetoed))
            return out

    wrapped = TopK.__new__(TopK)
    wrapped.__dict__.update(judge.__dict__)
    return wrapped


def recipe_settings(name: str):
    """The training settings of recipe ``name``."""
    from editf1.training.cross_encoder import CrossEncoderTraining

    shipped = CrossEncoderTraining()
    return {
        "lora": dataclasses.replace(shipped, learning_rate=2e-4),
        "stack": dataclasses.replace(shipped, stack=("logit", "cosine", "word_recall")),
    }.get(name, shipped)


def recipe_items(name: str, sets: dict, split: dict) -> list:
    """The fitting items recipe ``name`` trains and calibrates on."""
    names = {
        "near_copies": (*PARAPHRASE_SETS, *NEAR_COPY_SETS),
        "no_kqa_physician": tuple(s for s in PARAPHRASE_SETS if s != "kqa_physician"),
    }.get(name, PARAPHRASE_SETS)
    return fitting_items(sets, split, names)


def train(name: str, sets: dict, split: dict, work_dir: Path) -> Path:
    """The folder of recipe ``name``'s judge, trained unless it is already there."""
    from editf1.training.cross_encoder import train_cross_encoder_judge

    folder = work_dir / ("shipped" if name == "top3" else name)
    if (folder / "judge.json").is_file():
        return folder
    items, settings = recipe_items(name, sets, split), recipe_settings(name)
    if name == "lora":
        train_lora(items, folder, settings)
    elif name == "stack":  # the shipped model, calibrated again with the stack
        restack(train("shipped", sets, split, work_dir), folder, items, settings)
    else:
        train_cross_encoder_judge(items, folder, settings)
    return folder


def recalibrate(folder: Path, items, settings) -> None:
    """Calibrate the model of ``folder`` again (``settings.stack``, the same calibration
    side: the same split of the same items) and rewrite its ``judge.json``, keeping the
    training record."""
    from editf1.judges.cross_encoder import CrossEncoderConfig, load_cross_encoder
    from editf1.training import cross_encoder as training

    saved = json.loads((folder / "judge.json").read_text("utf-8"))
    model = load_cross_encoder(folder, CrossEncoderConfig.from_json(saved).max_length)
    fitted, figures = training.calibrate_model(model, items, settings)
    record = saved["record"] | {"calibration": figures}
    record["settings"] = record.get("settings", {}) | {"stack": list(settings.stack)}
    (folder / "judge.json").write_text(
        json.dumps(fitted.to_json() | {"record": record}, indent=1) + "\n", "utf-8"
    )


def restack(shipped: Path, folder: Path, items, settings) -> None:
    """The shipped model's weights in ``folder``, calibrated again with
    ``settings.stack`` (:func:`recalibrate`)."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    for path in shipped.iterdir():
        shutil.copy(path, folder / path.name)
    recalibrate(folder, items, settings)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.ROOT.parent / "shared" / "data")
    parser.add_argument("--work-dir", type=Path, required=True, help="where models are written")
    parser.add_argument("--recipes", nargs="+", choices=list(RECIPES), default=list(RECIPES))
    parser.add_argument(
        "--recalibrate",
        action="store_true",
        help="calibrate the recipes' trained models again (after a change of calibration)",
    )
    parser.add_argument(
        "--default", action="store_true", help="judge the held-out sets with the default again"
    )
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)
    if not all((args.data_dir / n).is_dir() for n in ("kqa", "oncqa", "expertqa")):
        print(f"the real data folder {args.data_dir} is absent", file=sys.stderr)
        return 2

    from editf1.judges.cross_encoder import CrossEncoderContentJudge
    from editf1.judges.embedding import EmbeddingContentJudge

    sets, questions = real.load_sets(args.data_dir)
    split = real.split_sets(sets, questions)
    path = args.output_dir / "cross_encoder_recipes.json"
    payload = json.loads(path.read_text("utf-8")) if path.is_file() else {"recipes": {}}
    default = EmbeddingContentJudge()
    held_out_cases = {sets["team"][i].case for i in split["team"][1]}
    for name in args.recipes:
        started = time.time()
        folder = train(name, sets, split, args.work_dir)
        if args.recalibrate and name != "top3":
            recalibrate(folder, recipe_items(name, sets, split), recipe_settings(name))
        judge = CrossEncoderContentJudge(folder)
        if name == "top3":
            judge = top_k_judge(judge, EmbeddingContentJudge(span_margin=None), 3)
        trained = time.time() - started
        rows = {}
        for set_name in sets:
            items = [sets[set_name][i] for i in split[set_name][1]]
            decisions, scores = real.judged(items, judge, None)
            rows[set_name] = real.evaluate(set_name, items, decisions, scores, args.n_resamples)
        stage2 = real.stage2_acceptability(
            args.data_dir, held_out_cases, {name: (judge, None)}, args.n_resamples
        )
        record = json.loads((folder / "judge.json").read_text("utf-8"))
        payload["recipes"][name] = {
            "description": RECIPES[name],
            "fingerprint": judge.fingerprint,
            "config": {k: v for k, v in record.items() if k != "record"},
            "calibration": record["record"].get("calibration"),
            "held_out": rows,
            "stage2_acceptability": stage2["judges"][name],
            "seconds": {"training": round(trained, 1), "total": round(time.time() - started, 1)},
        }
        print(f"{name}: {time.time() - started:.0f} s", file=sys.stderr)
    if "default" not in payload or args.default:
        rows = {}
        for set_name in sets:
            items = [sets[set_name][i] for i in split[set_name][1]]
            decisions, scores = real.judged(items, default, EmbeddingContentJudge(span_margin=None))
            rows[set_name] = real.evaluate(set_name, items, decisions, scores, args.n_resamples)
        stage2 = real.stage2_acceptability(
            args.data_dir, held_out_cases, {"default": (default, None)}, args.n_resamples
        )
        payload["default"] = {
            "fingerprint": default.fingerprint,
            "held_out": rows,
            "stage2_acceptability": stage2["judges"]["default"],
        }
    payload["machine"] = benchlib.machine_state()
    benchlib.write_results("cross_encoder_recipes", payload, markdown(payload), args.output_dir)
    return 0


def _cell(row: dict) -> str:
    auroc = "–" if row["auroc"] is None else f"{row['auroc']['value']:.2f}"
    return (
        f"{auroc} / {row['agreement']['value']:.2f} / {row['cohen_kappa']['value']:.2f} / "
        f"{row['judge_match_rate']:.2f}"
    )


def markdown(payload: dict) -> str:
    """The recipes table: one row per recipe, one cell per held-out set."""
    recipes = payload["recipes"]
    rows = {"default embedding judge": payload.get("default")} | {
        f"`{name}`: {r['description']}": r for name, r in recipes.items()
    }
    any_row = next(r for r in rows.values() if r)
    sets = list(any_row["held_out"])
    header = [
        f"{s} ({any_row['held_out'][s]['n']}, {any_row['held_out'][s]['match_rate']:.2f})"
        for s in sets
    ]
    lines = [
        "# The cross-encoder judge's recipe, one change at a time (held-out cases)",
        "",
        "Cells: AUROC / agreement / Cohen's kappa / the judge's match rate; the header "
        "gives each set's held-out items and labelled match rate. 95% CIs in the JSON.",
        "",
        "| recipe | " + " | ".join(header) + " | stage 2 F1: as is / unacceptable |",
        "|---|" + "---|" * (len(sets) + 1),
    ]
    for label, r in rows.items():
        if not r:
            continue
        accept = r["stage2_acceptability"]
        stage2 = f"{accept['as is']['value']:.3f} / {accept['unacceptable']['value']:.3f}"
        cells = [_cell(r["held_out"][s]) for s in sets]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {stage2} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
