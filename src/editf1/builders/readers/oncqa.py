"""OncQA (Chen et al., Lancet Digital Health 2024; github.com/AIM-Harvard/OncQA): oncology
portal messages, GPT-4 drafts, oncologists' own replies (stage 1) and edits (stage 2)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from editf1.io import describe, read_csv

__all__ = [
    "ONCQA_CONTENT_FLAGS",
    "ONCQA_SETTINGS",
    "oncqa_content_grading_rows",
    "oncqa_rows",
    "parse_oncqa_input",
]

#: ``own_reply``: GPT-4 draft (``Master2.csv`` ``Output``) against an oncologist's own
#: reply (``stage1.csv``), the paper's setting; ``edited``: the draft the oncologist saw
#: (``stage2.csv`` ``raw_response``) against their edit of it (``doc_change``).
ONCQA_SETTINGS = ("own_reply", "edited")


def oncqa_rows(data_dir: str | Path, setting: str = "own_reply") -> list[dict]:
    """Scoreable rows of OncQA in ``setting`` (:data:`ONCQA_SETTINGS`), read from
    ``Master2.csv``, ``stage1.csv`` and ``stage2.csv``: dicts with ``id`` (``"<case>-<n>"``,
    n-th oncologist of the case), ``case_id``, ``prediction``, ``reference``; ``edited``
    rows add ``edit_distance`` (int), ``acceptability`` (``q3``) and ``harm`` (``q5``).

    Raises:
        ValueError: for an unknown setting, or a stage-1 case missing from Master2.csv.
        FileNotFoundError: if a file is missing.
    """
    if setting not in ONCQA_SETTINGS:
        raise ValueError(f"setting must be one of {ONCQA_SETTINGS}, got {setting!r}")
    data_dir = Path(data_dir)
    if setting == "edited":
        fields = ["id", "raw_response", "doc_change", "edit_distance", "q3", "q5"]
        source = read_csv(data_dir / "stage2.csv", fields)
    else:
        master = read_csv(data_dir / "Master2.csv", ["pin", "Output"])
        drafts = {r["pin"]: r["Output"] for r in master}
        source = read_csv(data_dir / "stage1.csv", ["id", "response"])
    rows, seen = [], Counter()
    for i, r in enumerate(source):
        seen[r["id"]] += 1
        row = {"id": f"{r['id']}-{seen[r['id']]}", "case_id": r["id"]}
        if setting == "edited":
            row |= {
                "prediction": r["raw_response"],
                "reference": r["doc_change"],
                "edit_distance": int(float(r["edit_distance"])),
                "acceptability": r["q3"],
                "harm": r["q5"],
            }
        elif r["id"] not in drafts:
            raise ValueError(f"stage1.csv row {i}: case id {r['id']!r} is not in Master2.csv")
        else:
            row |= {"prediction": drafts[r["id"]], "reference": r["response"]}
        rows.append(row)
    return rows


#: Physicians' content flags of ``content_grading_s44.csv`` / ``_d56.csv``, in file order
#: (defined in the upstream ``Content_Grading_Guidelines.docx``).
ONCQA_CONTENT_FLAGS = (
    "AnyEdu",
    "ExtentEdu",
    "Manage",
    "Inform",
    "UrgentVisit",
    "NonurgentVisit",
    "Clarify",
    "Delegate",
    "Act",
    "Contingency",
)

#: ``Master2.csv`` ``Input`` keys that become structured fields (the rest go to ``other``).
_EHR_KEYS = {
    "age": "age",
    "gender": "sex",
    "pmh": "problems",
    "current medication list": "medications",
}
_NONE_WORDS = {"none", "n/a", "na", ""}
_KEY_LINE = re.compile(
    r"^(?P<key>[A-Za-z][^:\n]{0,80}?)\s*(?:\((?P<when>[^)]*)\))?:\s?(?P<value>.*)$"
)


def _split_list(text: str) -> list[str]:
    """Items of a comma- or semicolon-separated list, keeping commas inside brackets.

    >>> _split_list("insulin glargine (10 units, nightly), metformin; aspirin")
    ['insulin glargine (10 units, nightly)', 'metformin', 'aspirin']
    """
    if text.strip().lower() in _NONE_WORDS:
        return []
    items, depth, current = [], 0, []
    for char in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char in ",;" and depth <= 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def parse_oncqa_input(text: str) -> dict:
    r"""Split one OncQA ``Input`` (an optional sample label line, ``"EHR Context:"``, ``"Key:
    value"`` lines, ``"Patient message:"`` and the message) into chart summary and message.

    Returns:
        ``{"sample_label", "ehr_summary", "ehr", "message"}``: ``ehr_summary`` is the EHR
        block verbatim; ``ehr`` (:data:`~editf1.builders.schema.EHR_FEATURES`) takes age,
        gender, PMH and medications (``"None"``: ``[]``), the most recent visit as an
        encounter dated as its key says, and every other key as ``other``.

    Raises:
        ValueError: if ``"EHR Context:"`` or ``"Patient message:"`` is missing, appears
            twice, or the message is empty.

    >>> case = parse_oncqa_input(
    ...     "Sample 1 (active treatment):\nEHR Context:\nAge: 55 years\nGender: Male\n"
    ...     "PMH: hypertension, hyperlipidemia\nCurrent medication list: None\n"
    ...     "Summary of most recent oncology visit (1 week ago): Tolerating treatment.\n\n"
    ...     "Patient message:\nIs this fatigue normal?\n"
    ... )
    >>> case["message"], case["ehr"]["age"], case["ehr"]["problems"], case["ehr"]["medications"]
    ('Is this fatigue normal?', '55 years', ['hypertension', 'hyperlipidemia'], [])
    >>> case["ehr"]["encounters"], case["sample_label"]
    ([{'date': '1 week ago', 'summary': 'Tolerating treatment.'}], 'Sample 1 (active treatment)')
    """
    for marker in ("EHR Context:", "Patient message:"):
        if text.count(marker) != 1:
            raise ValueError(f"expected one {marker!r}, found {text.count(marker)}")
    head, rest = text.split("EHR Context:")
    ehr_text, message = rest.split("Patient message:")
    message = message.strip()
    if not message:
        raise ValueError("the patient message after 'Patient message:' is empty")
    ehr = {"age": None, "sex": None, "problems": [], "medications": [], "encounters": []}
    other: list[dict] = []
    last: dict | None = None
    for line in ehr_text.strip().splitlines():
        if not line.strip():
            continue
        match = _KEY_LINE.match(line.strip())
        if match is None:  # a continuation of the previous value
            if last is None:
                raise ValueError(f"EHR line without a 'Key:' before it ({describe(line)})")
            last["value"] = f"{last['value']}\n{line.strip()}"
            continue
        key, value, when = match["key"].strip(), match["value"].strip(), match["when"]
        field = _EHR_KEYS.get(key.lower())
        if field in ("age", "sex"):
            ehr[field] = value
        elif field is not None:
            ehr[field] = _split_list(value)
        elif key.lower().startswith("summary of most recent"):
            ehr["encounters"].append({"date": when, "summary": value})
        else:
            last = {"name": key if when is None else f"{key} ({when})", "value": value}
            other.append(last)
            continue
        last = None
    return {
        "sample_label": head.strip().rstrip(":").strip() or None,
        "ehr_summary": ehr_text.strip(),
        "ehr": {**ehr, "other": other},
        "message": message,
    }


def oncqa_content_grading_rows(data_dir: str | Path) -> list[dict]:
    """Rows of ``content_grading_s44.csv`` then ``content_grading_d56.csv``: dicts with
    ``file`` (``"s44"`` or ``"d56"``), ``row`` (from 0), ``case_id``, ``source`` and
    ``source_index`` (``order`` ``gpt_raw_N``: the GPT-4 draft, ``doc_edit_N``: the N-th
    oncologist's edit, ``raw_md_N``: their own reply), ``response`` and ``flags``
    (:data:`ONCQA_CONTENT_FLAGS` -> bool: ``"1"`` True, empty False).

    Raises:
        FileNotFoundError: if a file is missing.
        ValueError: naming file, row and field for an unknown ``order`` or a flag cell
            that is neither empty nor ``"1"``.
    """
    rows = []
    for name in ("s44", "d56"):
        path = Path(data_dir) / f"content_grading_{name}.csv"
        for i, r in enumerate(read_csv(path, ["id", "order", "response", *ONCQA_CONTENT_FLAGS])):
            order = re.fullmatch(r"(gpt_raw|doc_edit|raw_md)_(\d+)", r["order"].strip())
            if order is None:
                raise ValueError(
                    f"{path.name} row {i}: field order is not gpt_raw_N, doc_edit_N or "
                    f"raw_md_N ({describe(r['order'])})"
                )
            flags = {}
            for flag in ONCQA_CONTENT_FLAGS:
                cell = r[flag].strip()
                if cell not in ("", "1"):
                    raise ValueError(
                        f"{path.name} row {i}: field {flag} is neither empty nor 1 "
                        f"({describe(r[flag])})"
                    )
                flags[flag] = cell == "1"
            rows.append(
                {
                    "file": name,
                    "row": i,
                    "case_id": r["id"],
                    "source": order[1],
                    "source_index": int(order[2]),
                    "response": r["response"],
                    "flags": flags,
                }
            )
    return rows
