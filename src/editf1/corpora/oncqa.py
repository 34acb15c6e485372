"""OncQA (Chen et al., Lancet Digital Health 2024; github.com/AIM-Harvard/OncQA).

Oncology portal messages with an EHR context, GPT-4 drafts, oncologists' own replies
(stage 1) and oncologists' edits of the drafts (stage 2). Research use; cite the paper.
"""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["ONCQA_SETTINGS", "oncqa_rows", "read_csv"]

#: ``own_reply``: GPT-4 draft (``Master2.csv`` ``Output``) against the reply an
#: oncologist wrote without seeing it (``stage1.csv`` ``response``), the paper's setting;
#: cases answered by two oncologists give two rows.
#: ``edited``: the draft the oncologist saw (``stage2.csv`` ``raw_response``) against
#: their edit of it (``doc_change``), with the upstream ``edit_distance`` and the
#: acceptability rating ``q3``.
ONCQA_SETTINGS = ("own_reply", "edited")


def read_csv(path: Path) -> list[dict]:
    """All rows of a CSV file as dicts (UTF-8, quoted multi-line fields)."""
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def oncqa_rows(data_dir: str | Path, setting: str = "own_reply") -> list[dict]:
    """Scoreable rows of OncQA.

    Args:
        data_dir: folder with ``Master2.csv``, ``stage1.csv`` and ``stage2.csv``.
        setting: one of :data:`ONCQA_SETTINGS`.

    Returns:
        Dicts with ``id`` (``"<case>-<n>"``, n-th oncologist of the case), ``case_id``,
        ``prediction``, ``reference``; ``edited`` rows add ``edit_distance`` (int) and
        ``acceptability``.

    Raises:
        ValueError: for an unknown setting, or a stage-1 case missing from Master2.csv.
        FileNotFoundError: if a file is missing.
    """
    if setting not in ONCQA_SETTINGS:
        raise ValueError(f"setting must be one of {ONCQA_SETTINGS}, got {setting!r}")
    data_dir = Path(data_dir)
    seen: dict[str, int] = {}

    def row_id(case: str) -> str:
        seen[case] = seen.get(case, 0) + 1
        return f"{case}-{seen[case]}"

    if setting == "edited":
        return [
            {
                "id": row_id(r["id"]),
                "case_id": r["id"],
                "prediction": r["raw_response"],
                "reference": r["doc_change"],
                "edit_distance": int(float(r["edit_distance"])),
                "acceptability": r["q3"],
            }
            for r in read_csv(data_dir / "stage2.csv")
        ]
    drafts = {r["pin"]: r["Output"] for r in read_csv(data_dir / "Master2.csv")}
    rows = []
    for i, r in enumerate(read_csv(data_dir / "stage1.csv")):
        if r["id"] not in drafts:
            raise ValueError(f"stage1.csv row {i}: case id {r['id']!r} is not in Master2.csv")
        rows.append(
            {
                "id": row_id(r["id"]),
                "case_id": r["id"],
                "prediction": drafts[r["id"]],
                "reference": r["response"],
            }
        )
    return rows
