"""``edit-f1 preference-pairs``: DPO pairs ranked by edit-F1 (training toward fewer edits).

edit-f1 preference-pairs drafts.jsonl -o pairs/            # several drafts per message
edit-f1 preference-pairs drafts.jsonl -o pairs/ --level mix --min-margin 0.2

The output folder is a ``datasets.Dataset`` (``datasets.load_from_disk``) in trl's
prompt / chosen / rejected format (:mod:`editf1.training.preferences`).
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["add_training_commands"]


def _add_scoring_options(p) -> None:
    """The reward's options: level, judges, columns (shared by the training commands)."""
    p.add_argument("--level", default="content", choices=["content", "theme", "mix"])
    p.add_argument(
        "--theme-weight",
        type=float,
        default=0.5,
        help="mix: reward = (1 - w) * content F1 + w * theme F1 (default 0.5)",
    )
    p.add_argument("--content-judge", default="embedding", help="embedding (default) or exact")
    p.add_argument(
        "--theme-judge",
        help="embedding (default for --level theme and mix) or none (content only)",
    )
    from editf1.cli.judges import add_judge_option_arguments

    add_judge_option_arguments(p)
    p.add_argument("--reference-field", default="reference", help="column of the clinician reply")
    p.add_argument("--message-field", default="message", help="column of the patient message")
    p.add_argument("--ehr-field", default="ehr_summary", help="column of the EHR summary")


def _reward(args):
    """The :class:`~editf1.training.rewards.EditF1Reward` the options describe."""
    from editf1.cli.judges import judge_options
    from editf1.scorer import EditF1Scorer
    from editf1.training.rewards import EditF1Reward

    theme_judge = args.theme_judge or ("embedding" if args.level != "content" else "none")
    scorer = EditF1Scorer(
        content_judge=args.content_judge,
        theme_judge=None if theme_judge == "none" else theme_judge,
        content_judge_options=judge_options(args.content_judge_option),
        theme_judge_options=judge_options(args.theme_judge_option),
        zero_division=0.0,
    )
    return EditF1Reward(
        scorer,
        level=args.level,
        theme_weight=args.theme_weight,
        reference_column=args.reference_field,
        message_column=args.message_field,
    )


def add_training_commands(commands) -> None:
    """Register this module's commands on the ``edit-f1`` subparsers."""
    _add_preference_pairs(commands)


def _add_preference_pairs(commands) -> None:
    p = commands.add_parser(
        "preference-pairs",
        help="DPO preference pairs (prompt/chosen/rejected) ranked by edit-F1",
        description="Reads several drafts per message (one row per draft: message id, "
        "patient message, EHR summary, clinician reply, draft), scores every draft with "
        "the edit-F1 reward (its gaming guards included) and writes, per message, the best "
        "draft as chosen and the worst as rejected when they differ by --min-margin or "
        "more; ties, smaller margins and single drafts are dropped and counted. The "
        "output folder is a datasets.Dataset for trl's DPOTrainer (datasets.load_from_disk).",
    )
    p.add_argument("input", type=Path, help="JSONL or CSV, one row per draft")
    p.add_argument(
        "--output", "-o", type=Path, required=True, help="folder to write (new or empty)"
    )
    p.add_argument("--input-format", default="auto", choices=["auto", "jsonl", "csv"])
    p.add_argument("--group-field", default="message_id", help="column naming the message")
    p.add_argument("--prediction-field", default="prediction", help="column of the draft")
    p.add_argument(
        "--prompt-field",
        help="column of a ready prompt (string or chat messages), used as it is; default: "
        "the 0-shot prompt built from the message and EHR summary",
    )
    p.add_argument("--min-margin", type=float, default=0.1, help="least best-minus-worst reward")
    _add_scoring_options(p)
    p.add_argument("--summary-json", type=Path, help="also write the counts as JSON")
    p.set_defaults(run=_preference_pairs)


def _check_new_folder(path: Path, label: str) -> None:
    from editf1.io import check_output_path

    check_output_path(path, label, folder=True)
    if path.is_dir() and any(path.iterdir()):
        raise ValueError(f"{label} {path} is not empty; give a new or empty folder")


def _save_dataset(dataset, output: Path, protect) -> None:
    """``dataset.save_to_disk`` into ``output``, which appears only once complete."""
    import datasets

    from editf1.io import staged_folder

    datasets.disable_progress_bars()
    with staged_folder(output, protect=protect) as stage:
        dataset.save_to_disk(str(stage))


def _preference_pairs(args) -> int:
    from editf1.io import read_rows
    from editf1.training.preferences import scored_draft_pairs

    _check_new_folder(args.output, "-o")
    if args.summary_json is not None:
        from editf1.io import check_output_path

        check_output_path(args.summary_json, "--summary-json")
    fields = [args.group_field, args.prediction_field, args.reference_field, args.message_field]
    rows = read_rows(args.input, fields, args.input_format)
    dataset, counts = scored_draft_pairs(
        rows,
        _reward(args),
        group_field=args.group_field,
        prediction_field=args.prediction_field,
        message_field=args.message_field,
        ehr_field=args.ehr_field,
        prompt_field=args.prompt_field,
        min_margin=args.min_margin,
    )
    _save_dataset(dataset, args.output, [args.input])
    print(
        f"{counts.pairs} pair(s) from {counts.messages} message(s); dropped: {counts.ties} "
        f"tie(s), {counts.below_margin} below the margin {args.min_margin}, "
        f"{counts.single_draft} with one draft"
    )
    print(f"wrote {args.output} (datasets.load_from_disk)")
    if args.summary_json is not None:
        from editf1.io import atomic_output

        with atomic_output(args.summary_json) as handle:
            handle.write(json.dumps(counts.to_dict(), indent=2) + "\n")
    return 0
