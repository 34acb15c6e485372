"""Two systems on OncQA, scored against the same oncologists' replies, in one report.

System "gpt4-draft": each GPT-4 draft (``Master2.csv`` ``Output``) against the reply an
oncologist wrote by hand for the same message (``stage1.csv`` ``response``), the
paper's setting. System "oncologist-edited-draft": an oncologist's edit of the same
GPT-4 draft (``stage2.csv`` ``doc_change``) against the *same* hand-written replies, so
the report can compare the two pair by pair: does editing bring a draft closer to
what an oncologist writes unaided?

OncQA does not say which oncologist wrote which reply, so for a message answered
twice the n-th edit (file order) is paired with the n-th reply; both messages' cases
are drawn together by the bootstrap (``--case-pattern``). Then the inter-annotator
predictability (§4.2, Table 11) of the same replies gives the human ceiling.

    python examples/oncqa_report.py --data-dir ../shared/data/oncqa --output-dir runs/oncqa

Writes <output-dir>/{gpt4-draft,oncologist-edited-draft}.edit_f1.jsonl (+ summaries),
<output-dir>/report/ (report.html, report.md, PNGs) and <output-dir>/iap.summary.json.
Inputs are assembled in a temporary folder that is deleted afterwards; nothing from
OncQA is copied anywhere else. Needs the ``report`` extra (matplotlib).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from editf1.builders.readers import oncqa_rows
from editf1.cli.main import main as edit_f1

OWN_REPLY_CASE = r"(.+)-\d+"


def system_rows(data_dir: Path) -> dict[str, list[dict]]:
    """Rows (id, prediction, reference) of both systems, on the same references."""
    own = oncqa_rows(data_dir, "own_reply")
    edits: dict[str, list[str]] = defaultdict(list)
    for row in oncqa_rows(data_dir, "edited"):
        edits[row["case_id"]].append(row["reference"])  # the oncologist's edited draft
    edited = []
    for row in own:
        n = int(row["id"].rsplit("-", 1)[1])
        if len(edits[row["case_id"]]) < n:
            raise ValueError(f"case {row['case_id']} has fewer stage-2 edits than replies")
        edited.append(row | {"prediction": edits[row["case_id"]][n - 1]})
    return {"gpt4-draft": own, "oncologist-edited-draft": edited}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data/oncqa"))
    parser.add_argument("--output-dir", type=Path, default=Path("runs/oncqa"))
    parser.add_argument("--content-judge", default="embedding")
    parser.add_argument("--theme-judge", default="embedding")
    args = parser.parse_args()
    judges = ["--content-judge", args.content_judge, "--theme-judge", args.theme_judge]
    out = args.output_dir
    runs, summaries = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in system_rows(args.data_dir).items():
            source = Path(tmp) / f"{name}.jsonl"
            source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            runs.append(out / f"{name}.edit_f1.jsonl")
            summaries.append(out / f"{name}.summary.json")
            outputs = ["-o", str(runs[-1]), "--summary-json", str(summaries[-1])]
            status = edit_f1(["score", str(source), *outputs, *judges, "--no-progress"])
            if status:
                raise SystemExit(status)
    report = ["report", *map(str, runs), "-o", str(out / "report")]
    report += ["--title", "OncQA: GPT-4 drafts vs oncologists' edited drafts"]
    report += ["--case-pattern", OWN_REPLY_CASE]
    for name, summary in zip(("gpt4-draft", "oncologist-edited-draft"), summaries):
        report += ["--name", name, "--summary", str(summary)]
    if edit_f1(report):
        raise SystemExit(1)
    iap = ["iap", "--dataset", "oncqa", "--data-dir", str(args.data_dir), *judges]
    raise SystemExit(edit_f1([*iap, "--summary-json", str(out / "iap.summary.json")]))


if __name__ == "__main__":
    main()
