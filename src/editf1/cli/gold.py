"""``edit-f1 sample-for-labels``, ``edit-f1 annotate`` and ``score --gold`` (:mod:`editf1.gold`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from editf1.cli.conventions import (
    add_fields,
    add_input,
    add_output,
    add_seed,
    check_outputs,
    human_stream,
    is_stdio,
    read_input,
)

__all__ = ["ScoreGold", "add_commands", "add_gold_options", "check_gold"]


def add_gold_options(p: argparse.ArgumentParser) -> None:
    """``--gold`` and ``--second-gold`` of ``edit-f1 score``."""
    g = p.add_argument_group("gold labels (prediction-powered figures; one reply per draft)")
    g.add_argument(
        "--gold",
        type=Path,
        metavar="FILE",
        help="clinicians' gold labels of a uniform sample of the rows (edit-f1 "
        "sample-for-labels, annotate): adds judge-only, gold-only and prediction-powered "
        "(PPI++) precision, recall and F1 with 95%% CIs, and the judge's agreement",
    )
    g.add_argument(
        "--second-gold",
        type=Path,
        metavar="FILE",
        help="a second annotator's gold labels of the same sample: their agreement and "
        "Cohen's kappa with the first (the human ceiling)",
    )


class ScoreGold:
    """The gold labels of a ``score --gold`` run (``second``: the second annotator's); pairs
    are keyed by id (``by_id``) or row number (:func:`editf1.gold.labels.pair_keys`)."""

    def __init__(self, labels, second, themes_scored, by_id: bool) -> None:
        self.labels, self.second = labels, second
        self.themes_scored = themes_scored
        self.by_id = by_id
        self._labelled = {g.key: g for g in labels.pairs}

    def entry(self, pair) -> dict:
        """The ``gold`` field of a scored pair's output line (empty: unlabelled)."""
        labelled = self._labelled.get(str(pair.id) if self.by_id else str(pair.row))
        if labelled is None:
            return {}
        entry = labelled.to_dict(self.themes_scored)
        if self.labels.sampling is not None:
            entry["sampling"] = self.labels.sampling
        return {"gold": entry}

    def attach(self, result):
        """``result`` with its :class:`~editf1.gold.report.GoldReport`."""
        from dataclasses import replace

        from editf1.gold.report import gold_report

        return replace(result, gold=gold_report(result, self.labels, second=self.second))


def check_gold(args, checked, scorer):
    """The run's :class:`ScoreGold` for the ``checked`` rows, or ``None`` without ``--gold``.

    Raises:
        ValueError: for ``--second-gold`` without ``--gold`` or the same file as it,
            fewer than :data:`editf1.ppi.MIN_LABELLED` labelled pairs, and the errors of
            :func:`editf1.gold.labels.load_gold`.
    """
    if args.gold is None:
        if args.second_gold is not None:
            raise ValueError("--second-gold needs --gold")
        return None
    from editf1.gold.apply import pair_texts
    from editf1.gold.labels import load_gold
    from editf1.ppi import MIN_LABELLED

    pairs = pair_texts(checked)
    labels = load_gold(args.gold, pairs, scorer.splitter)
    if len(labels.pairs) < MIN_LABELLED:
        raise ValueError(
            f"{args.gold}: prediction-powered inference needs at least {MIN_LABELLED} "
            f"labelled pairs, got {len(labels.pairs)}"
        )
    second = None
    if args.second_gold is not None:
        from editf1.io import same_file

        if same_file(args.gold, args.second_gold):
            raise ValueError(
                f"--gold and --second-gold are the same file ({args.gold}): a second "
                "annotator's labels are another file"
            )
        second = load_gold(args.second_gold, pairs, scorer.splitter)
    by_id = bool(checked) and all(row_id is not None for row_id, _, _ in checked)
    return ScoreGold(labels, second, scorer.themes_scored, by_id)


def add_commands(commands) -> None:
    """``sample-for-labels`` and ``annotate``."""
    p = commands.add_parser(
        "sample-for-labels",
        example="edit-f1 sample-for-labels pairs.jsonl -n 50 -o annotation.jsonl",
        help="draw pairs uniformly at random for clinicians to label; writes an annotation file",
        description="Draws -n of the file's pairs uniformly at random without replacement "
        "(numpy default_rng(seed).permutation, in the order drawn) and writes them with their "
        "sentences and the record of the draw, for edit-f1 annotate. Score the same file "
        "with --gold: the estimates need the labelled pairs to be a uniform sample of the "
        "scored ones, and the record is checked.",
    )
    add_input(p, "pairs (the file you will score)")
    p.add_argument("-n", type=int, required=True, help="pairs to draw")
    add_seed(p, "seed of the draw, recorded in every row")
    add_output(p, "annotation file (JSONL)", required=True)
    p.add_argument("--no-themes", action="store_true", help="ask for matches only, not themes")
    add_fields(
        p,
        {"id": "row numbers without one"},
        prediction="prediction",
        reference="reference",
        id="id",
    )
    p.set_defaults(run=_sample_for_labels)

    p = commands.add_parser(
        "annotate",
        example="edit-f1 annotate annotation.jsonl -o gold.jsonl --annotator dr-a",
        help="the local labelling app for an annotation file (needs the demo extra)",
        description="Serves a Gradio app on 127.0.0.1 (no share link, no analytics): each "
        "sentence of the reply beside the draft, its matching draft span or NO MATCH, its "
        "theme; keyboard first. Every answer is saved at once to -o; reopening resumes.",
    )
    p.add_argument("annotation", type=Path, help="the file of edit-f1 sample-for-labels")
    add_output(p, "gold-label file (JSONL)", required=True)
    p.add_argument("--annotator", help="name recorded in every gold row")
    p.add_argument("--port", type=int, default=7861, help="port on 127.0.0.1 (default %(default)s)")
    p.set_defaults(run=_annotate)


def _sample_for_labels(args) -> int:
    from editf1.gold.apply import pair_texts
    from editf1.gold.sampling import sample_for_labels
    from editf1.inputs import check_rows
    from editf1.io import JsonlWriter

    check_outputs([("-o", args.output)], [args.input])
    pred, ref, key = args.prediction_field, args.reference_field, args.id_field
    rows = read_input(args, "--prediction-field", "--reference-field")
    checked = check_rows(
        ((None if row.get(key) is None else str(row[key]), row[pred], row[ref]) for row in rows),
        prediction_field=pred,
        reference_field=ref,
        id_field=key,
        locations=rows.locations(),
    )
    pairs = pair_texts(checked)
    drawn = sample_for_labels(
        pairs,
        args.n,
        seed=args.seed,
        themes=not args.no_themes,
        score_arguments=_score_arguments(args),
    )
    with JsonlWriter(args.output) as write:
        for row in drawn:
            write(row)
    human = human_stream(args.output)
    print(f"drew {len(drawn)} of {len(pairs)} pairs (uniform, seed {args.seed})", file=human)
    print(f"  annotation file: {args.output}", file=human)
    print(f"  next: edit-f1 annotate {args.output} -o gold.jsonl", file=human)
    return 0


def _score_arguments(args) -> list[str] | None:
    if is_stdio(args.input):
        return None
    defaults = {  # score's
        "--input-format": "auto",
        "--prediction-field": "prediction",
        "--reference-field": "reference",
        "--id-field": "id",
    }
    given = {flag: getattr(args, flag[2:].replace("-", "_")) for flag in defaults}
    return [str(args.input)] + [x for f, v in given.items() if v != defaults[f] for x in (f, v)]


def _annotate(args) -> int:
    import os

    from editf1.integrations.annotate import AnnotationSession, build_annotate_app

    check_outputs([("-o", args.output)], [args.annotation])
    session = AnnotationSession(args.annotation, args.output, annotator=args.annotator)
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    answered, total, complete = session.progress()
    print(
        f"{answered} of {total} answers already saved in {args.output}; pairs complete {complete}"
    )
    build_annotate_app(session).launch(server_name="127.0.0.1", server_port=args.port, share=False)
    return 0
