"""Convert the team's second round of content-match labels (issue 20 §1) into the
label file beside its card, and refresh the figures of its dataset card.

Reads the annotators' working files (outside the repository; they quote the text):
``<items>/<set>.jsonl`` and ``<labels>/<set>.<annotator>.jsonl``, through
:func:`research.content_labels.convert_annotations`; writes
``datasets/team_content_labels_v2/data/content_labels_v2.jsonl`` (no text: coordinates and hashes)
and replaces the figures block of ``datasets/team_content_labels_v2/README.md`` with
:func:`~research.content_labels.content_sets_markdown`. Rerun it whenever an
annotator has labelled more; ``tests/test_content_labels.py`` checks the card against
the label rows.

    python benchmarks/content_labels_v2.py --items /work/labels/items \\
        --labels /work/labels/out
"""

from __future__ import annotations

import argparse
import json
import re
import sys

import benchlib

LABELS = benchlib.ROOT / "datasets" / "team_content_labels_v2" / "data" / "content_labels_v2.jsonl"
CARD = benchlib.ROOT / "datasets" / "team_content_labels_v2" / "README.md"
BLOCK = re.compile(r"(<!-- figures:[^>]*-->\n\n)(.*?)(\n<!-- end figures -->)", re.S)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", required=True, help="folder of <set>.jsonl items")
    parser.add_argument("--labels", required=True, help="folder of <set>.<annotator>.jsonl")
    parser.add_argument(
        "--sets",
        nargs="+",
        metavar="SET",
        help="convert only these sets and keep the rows of the others (default: every set)",
    )
    args = parser.parse_args(argv)

    from research.content_labels import (
        CONTENT_SETS,
        content_sets_markdown,
        content_sets_summary,
        convert_annotations,
        read_content_rows,
    )

    names = args.sets or list(CONTENT_SETS)
    unknown = sorted(set(names) - set(CONTENT_SETS))
    if unknown:
        parser.error(f"unknown set(s) {unknown}; known: {list(CONTENT_SETS)}")
    converted = convert_annotations(
        args.items, args.labels, sets={name: CONTENT_SETS[name] for name in names}
    )
    kept = [row for row in read_content_rows() if row["set"] not in names]
    order = {name: k for k, name in enumerate(CONTENT_SETS)}
    rows = sorted(kept + converted, key=lambda row: order[row["set"]])  # stable: file order
    LABELS.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    summary = content_sets_summary(rows)
    card = CARD.read_text("utf-8")
    if not BLOCK.search(card):
        print(f"{CARD} has no figures block", file=sys.stderr)
        return 2
    figures = content_sets_markdown(summary)
    CARD.write_text(BLOCK.sub(lambda m: m[1] + figures + m[3], card), "utf-8")
    for name, s in summary["sets"].items():
        d = s["double_labelled"]
        print(f"{name}: {s['items']} items, {s['matches']} matches; second {d['items']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
