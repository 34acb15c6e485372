"""The OncQA builder (Chen et al., Lancet Digital Health 2024), read like the other public
sets (:mod:`editf1.builders.public`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from datasets import Features, Value

from editf1.builders.base import EditF1Builder, EditF1Config, UpstreamFile
from editf1.builders.exports import ExportError
from editf1.builders.readers import oncqa_content_grading_rows, oncqa_rows, parse_oncqa_input
from editf1.builders.readers.oncqa import ONCQA_CONTENT_FLAGS
from editf1.builders.schema import (
    CASE_FEATURES,
    named_values,
    new_case,
    new_response,
    pair_features,
)
from editf1.io import read_csv

__all__ = ["OncQABuilder"]

_ONCQA = "https://raw.githubusercontent.com/AIM-Harvard/OncQA/{revision}/Data/"
#: Commits of github.com/AIM-Harvard/OncQA holding each file (Master2.csv changed later).
ONCQA_REVISION = "47b04635789e9cfd48d8eb7d116955fc65a61cec"
ONCQA_MASTER_REVISION = "2388401c7b5c7f92cc51bcec2dc21e4cd5a0c9e1"


class OncQABuilder(EditF1Builder):
    """OncQA: oncology portal messages, GPT-4 drafts, oncologists' own replies and edits.

    Configs: ``own_reply`` (default) and ``edited``: the rows of
    :func:`~editf1.builders.readers.oncqa_rows` with message and chart summary; ``cases``:
    one row per case, ``Input`` parsed by :func:`~editf1.builders.readers.parse_oncqa_input`;
    ``content_grading``: physicians' content flags.

    Raises (at ``download_and_prepare``):
        FileNotFoundError: for a missing file.
        ValueError: naming file, row and field for an ``Input`` that cannot be parsed, a
            stage-1/stage-2 case missing from ``Master2.csv``, or a bad flag cell.
    """

    DATASET_NAME = "oncqa"
    PRETTY_NAME = "OncQA: GPT-4 drafts and oncologists' replies to patient messages"
    CARD_VARIABLES: ClassVar[dict] = {"content_flags": ONCQA_CONTENT_FLAGS}
    HOMEPAGE = "https://github.com/AIM-Harvard/OncQA"
    LICENSE = "other"
    LICENSE_NAME = "no-upstream-licence-research-use"
    PUBLISHED_ROWS: ClassVar[dict] = {
        "own_reply": 100,
        "edited": 100,
        "cases": 63,
        "content_grading": 263,
    }
    UPSTREAM: ClassVar[dict] = {
        "Master2.csv": UpstreamFile(
            _ONCQA + "original_questions_gpt4_outputs/Master2.csv", ONCQA_MASTER_REVISION
        ),
        "stage1.csv": UpstreamFile(_ONCQA + "parsed_data/stage1.csv", ONCQA_REVISION),
        "stage2.csv": UpstreamFile(_ONCQA + "parsed_data/stage2.csv", ONCQA_REVISION),
        "content_grading_s44.csv": UpstreamFile(_ONCQA + "content_grading/s44.csv", ONCQA_REVISION),
        "content_grading_d56.csv": UpstreamFile(_ONCQA + "content_grading/d56.csv", ONCQA_REVISION),
    }
    BUILDER_CONFIGS: ClassVar[list] = [
        EditF1Config(name="own_reply", kind="pairs_reply", description="draft vs own reply"),
        EditF1Config(name="edited", kind="pairs_edited", description="draft vs edited draft"),
        EditF1Config(name="cases", kind="cases", description="one row per case"),
        EditF1Config(name="content_grading", kind="content_grading", description="content flags"),
    ]
    DEFAULT_CONFIG_NAME = "own_reply"
    KIND_FEATURES: ClassVar[dict] = {
        "pairs_reply": pair_features(),
        "pairs_edited": pair_features(
            edit_distance=Value("int32"), acceptability=Value("string"), harm=Value("string")
        ),
        "cases": CASE_FEATURES,
        "content_grading": Features(
            {
                **dict.fromkeys(("id", "case_id", "file", "source"), Value("string")),
                "source_index": Value("int32"),
                "response": Value("string"),
                "flags": {flag: Value("bool") for flag in ONCQA_CONTENT_FLAGS},
            }
        ),
    }
    SYSTEM = "gpt-4"

    def _parsed(self, source: Path) -> dict[str, dict]:
        """Case id -> Master2.csv row, ``Input`` parsed."""
        parsed = {}
        for i, row in enumerate(read_csv(source / "Master2.csv")):
            try:
                parsed[row["pin"]] = {**parse_oncqa_input(row["Input"]), "row": row}
            except ValueError as error:
                raise ExportError(
                    [f"Master2.csv, row {i + 1} (pin {row['pin']!r}): field Input: {error}"]
                ) from None
        return parsed

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        kind = self.config.kind
        if kind == "content_grading":
            return {"test": self._content_grading(source)}
        parsed = self._parsed(source)
        if kind == "cases":
            return {"test": self._cases(source, parsed)}
        setting = "own_reply" if kind == "pairs_reply" else "edited"
        rows = oncqa_rows(source, setting)
        name = "stage1.csv" if setting == "own_reply" else "stage2.csv"
        missing = [(i, r["case_id"]) for i, r in enumerate(rows, 1) if r["case_id"] not in parsed]
        if missing:
            raise ExportError(
                [f"{name}, row {i}: field id: case {c!r} is not in Master2.csv" for i, c in missing]
            )
        examples = []
        for row in rows:
            case = {k: parsed[row["case_id"]][k] for k in ("message", "ehr_summary")}
            example = row | case | {"system": self.SYSTEM, "annotator_id": None}
            if setting == "edited":  # empty ratings are not recorded
                example |= {k: row[k] or None for k in ("acceptability", "harm")}
            examples.append(example)
        return {"test": examples}

    def _cases(self, source: Path, parsed: dict[str, dict]) -> list[dict]:
        cases = {}
        for pin, case in parsed.items():
            row = case["row"]
            kept = [("sample_label", case["sample_label"])]
            kept += [(k, row[k]) for k in ("ActiveOrSurveill", "GenOrSpec")]
            drafts = [{"system": self.SYSTEM, "text": row["Output"]}]
            cases[pin] = new_case(
                pin,
                case["message"],
                case["ehr_summary"],
                ehr=case["ehr"],
                drafts=drafts,
                attributes=named_values(kept),
            )
        for name in ("stage1.csv", "stage2.csv"):
            for i, row in enumerate(read_csv(source / name), start=1):
                case = cases.get(row["id"])
                if case is None:
                    raise ExportError(
                        [f"{name}, row {i}: field id: case {row['id']!r} is not in Master2.csv"]
                    )
                if name == "stage1.csv":
                    text, index, kept = row["response"], None, ("label1", "label2")
                else:
                    draft = {"system": self.SYSTEM, "text": row["raw_response"]}
                    if draft not in case["drafts"]:
                        case["drafts"].append(draft)
                    text, index = row["doc_change"], case["drafts"].index(draft)
                    kept = ("label1", "label2", "q3", "q4", "q5", "q6", "q7", "edit_distance")
                attributes = named_values((key, row[key]) for key in kept)
                case["responses"].append(new_response(text, None, index, attributes))
        return list(cases.values())

    def _content_grading(self, source: Path) -> list[dict]:
        fields = list(self.KIND_FEATURES["content_grading"])[1:]  # all but the id
        return [
            {"id": f"{row['file']}-{row['row']}", **{k: row[k] for k in fields}}
            for row in oncqa_content_grading_rows(source)
        ]
