"""Builders of the public sets: the shipped demo, K-QA, K-QA NLI, ExpertQA medicine (OncQA:
:mod:`editf1.builders.oncqa`), parsed by :mod:`editf1.builders.readers`; a ``data_dir``
holds the upstream files under their names. Every config has one split, ``test``.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import ClassVar

from datasets import Value

from editf1.builders.base import EditF1Builder, EditF1Config, UpstreamFile
from editf1.builders.exports import ExportError
from editf1.builders.readers import (
    expertqa_medicine_rows,
    kqa_nli_rows,
    kqa_question_rows,
)
from editf1.builders.schema import (
    CASE_FEATURES,
    CONTENT_MATCH_FEATURES,
    case_pairs,
    named_values,
    new_case,
    new_response,
    pair_features,
)
from editf1.citation import PAPER_URL
from editf1.io import read_rows

__all__ = [
    "DemoBuilder",
    "DuplicateRecordsWarning",
    "ExpertQAMedicineBuilder",
    "KQABuilder",
    "KQANLIBuilder",
    "UnmatchedRecordsWarning",
]


class DuplicateRecordsWarning(UserWarning):
    """An upstream file repeats a record verbatim; the copies were left out (counted)."""


class UnmatchedRecordsWarning(UserWarning):
    """Upstream records that refer to something absent from the other file (named)."""


class DemoBuilder(EditF1Builder):
    """The shipped demo set (``editf1/data/demo.jsonl``, or a ``data_dir``'s). Configs
    ``pairs`` (default) and ``cases``."""

    DATASET_NAME = "edit_f1_demo"
    PRETTY_NAME = "edit-F1 demo: invented portal messages, replies and drafts"
    HOMEPAGE = PAPER_URL
    LICENSE = "apache-2.0"
    SOURCE_FILES = ("demo.jsonl",)
    BUILDER_CONFIGS: ClassVar[list] = [
        EditF1Config(name="pairs", kind="pairs_reply", description="draft vs clinician reply"),
        EditF1Config(name="cases", kind="cases", description="one row per message"),
    ]
    DEFAULT_CONFIG_NAME = "pairs"
    KIND_FEATURES: ClassVar[dict] = {"pairs_reply": pair_features(), "cases": CASE_FEATURES}
    PUSHABLE = True

    def _source_paths(self) -> list[Path]:
        return [Path(self.config.data_dir or self._download(None)) / "demo.jsonl"]

    def _download(self, dl_manager) -> Path:
        return Path(str(resources.files("editf1.data")))  # shipped: nothing to download

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        fields = ["id", "message", "ehr_summary", "reference", "prediction", "system"]
        rows = read_rows(source / "demo.jsonl", fields, "jsonl")
        cases = [
            new_case(
                row["id"],
                row["message"],
                row["ehr_summary"],
                responses=[new_response(row["reference"])],
                drafts=[{"system": row["system"], "text": row["prediction"]}],
            )
            for row in rows
        ]
        # one reply and one draft per case: the pair keeps the row's id, as demo_rows()
        pairs = [{**p, "id": p["case_id"]} for c in cases for p in case_pairs(c, "reply")]
        return {"test": cases if self.config.kind == "cases" else pairs}


_KQA = "https://raw.githubusercontent.com/Itaymanes/K-QA/{revision}/dataset/"
#: Commits of github.com/Itaymanes/K-QA holding each file.
KQA_NLI_REVISION = "c2435af4c984cc9e4120f6af6ef75fc85dbc39c0"
KQA_QUESTIONS_REVISION = "3434b5111e58675680fdd0ccb6170a3b442b6e7b"


class KQABuilder(EditF1Builder):
    """K-QA (Manes et al., BioNLP 2024): real patient questions with physician answers.

    Configs: ``pairs`` (default): an LLM's answer (``NLI_medical_annotator.csv``) against
    the physician's (``Free_form_answer``), for every question with both (an NLI question
    without a physician answer is named in an :class:`UnmatchedRecordsWarning`);
    ``questions``: one row per question, curated statements and ICD-10 code as ``attributes``.
    """

    DATASET_NAME = "kqa"
    PRETTY_NAME = "K-QA: patient questions with physician answers and LLM answers"
    HOMEPAGE = "https://github.com/Itaymanes/K-QA"
    LICENSE = "mit"
    PUBLISHED_ROWS: ClassVar[dict] = {"pairs": 26, "questions": 201}
    UPSTREAM: ClassVar[dict] = {
        "questions_w_answers.jsonl": UpstreamFile(
            _KQA + "questions_w_answers.jsonl", KQA_QUESTIONS_REVISION
        ),
        "NLI_medical_annotator.csv": UpstreamFile(
            _KQA + "NLI_medical_annotator.csv", KQA_NLI_REVISION
        ),
    }
    BUILDER_CONFIGS: ClassVar[list] = [
        EditF1Config(name="pairs", kind="pairs_reply", description="LLM vs physician answer"),
        EditF1Config(name="questions", kind="cases", description="one row per question"),
    ]
    DEFAULT_CONFIG_NAME = "pairs"
    KIND_FEATURES: ClassVar[dict] = {"pairs_reply": pair_features(), "cases": CASE_FEATURES}

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        drafts: dict[str, list[dict]] = defaultdict(list)
        nli = kqa_nli_rows(source)
        for row in nli:
            draft = {"system": row["system"], "text": row["answer"]}
            if draft not in drafts[row["question"]]:
                drafts[row["question"]].append(draft)
        cases = []
        for i, row in enumerate(kqa_question_rows(source)):
            kept = [(k, s) for k in ("Must_have", "Nice_to_have") for s in row[k]]
            kept += [("ICD_10_diag", row["ICD_10_diag"]), ("Sources", row["Sources"])]
            cases.append(
                new_case(
                    str(i),
                    row["Question"],
                    responses=[new_response(row["Free_form_answer"])],
                    drafts=drafts.get(row["Question"], []),
                    attributes=named_values(kept),
                )
            )
        orphans = set(drafts) - {case["message"] for case in cases}
        if orphans:
            rows = sorted(
                (r["row"] for r in nli if r["question"] in orphans), key=lambda r: (len(r), r)
            )
            warnings.warn(
                f"K-QA: {len(orphans)} NLI question(s) have no physician answer in "
                "questions_w_answers.jsonl, so their LLM answers give no pair: the "
                f"questions of NLI_medical_annotator.csv rows {rows}",
                UnmatchedRecordsWarning,
                stacklevel=2,
            )
        pairs = [pair for case in cases for pair in case_pairs(case, "reply")]
        return {"test": cases if self.config.kind == "cases" else pairs}


class KQANLIBuilder(EditF1Builder):
    """K-QA physician NLI labels as content-match annotations without spans (§3.1: "the
    answer entails the claim" is the content judge's question). One config, ``default``."""

    DATASET_NAME = "kqa_nli"
    PRETTY_NAME = "K-QA NLI: physician labels for claim vs LLM answer"
    HOMEPAGE = KQABuilder.HOMEPAGE
    LICENSE = "mit"
    PUBLISHED_ROWS: ClassVar[dict] = {"default": 208}
    UPSTREAM: ClassVar[dict] = {
        "NLI_medical_annotator.csv": KQABuilder.UPSTREAM["NLI_medical_annotator.csv"]
    }
    BUILDER_CONFIGS: ClassVar[list] = [EditF1Config(name="default", kind="content_matches")]
    KIND_FEATURES: ClassVar[dict] = {"content_matches": CONTENT_MATCH_FEATURES}

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        examples = []
        for row in kqa_nli_rows(source):
            annotations = [
                {"annotator_id": f"label_{k}", "match": label == "Entailment", "label": label}
                | dict.fromkeys(("matched_span", "span_start", "span_end"))
                for k, label in enumerate(row["labels"])
            ]
            kept = named_values((k, row[k]) for k in ("category", "majority_label"))
            examples.append(
                {
                    "id": row["row"],
                    "context": row["question"],
                    "system": row["system"],
                    "prediction": row["answer"],
                    "reference_sentence": row["claim"],
                    "annotations": annotations,
                    "majority_match": row["match"],
                    "attributes": kept,
                }
            )
        return {"test": examples}


EXPERTQA_REVISION = "4b732d60707e61e34d508680d16168f485ee5632"
#: The columns an ExpertQA pair adds.
_EXPERTQA_COLUMNS = ("usefulness", "question_type", "specific_field")


class ExpertQAMedicineBuilder(EditF1Builder):
    """ExpertQA (Malaviya et al., NAACL 2024), Healthcare / Medicine: LLM answers and the
    answering expert's revision of each. Configs: ``edited`` (default): answer against
    revision; ``cases``: one row per question. Lines that repeat an earlier one verbatim are
    left out with a :class:`DuplicateRecordsWarning`. ``data_dir``: ``medicine_val.jsonl``
    (or upstream's ``domain_val.jsonl`` under that name).

    Raises (at ``download_and_prepare``):
        ExportError: for two records of one (question, system, expert) that differ.
    """

    DATASET_NAME = "expertqa_medicine"
    PRETTY_NAME = "ExpertQA medicine: LLM answers and expert revisions"
    HOMEPAGE = "https://github.com/chaitanyamalaviya/ExpertQA"
    LICENSE = "mit"
    PUBLISHED_ROWS: ClassVar[dict] = {"edited": 57, "cases": 57}
    UPSTREAM: ClassVar[dict] = {
        "medicine_val.jsonl": UpstreamFile(
            "https://raw.githubusercontent.com/chaitanyamalaviya/ExpertQA/{revision}/"
            "data/lfqa/domain_val.jsonl",
            EXPERTQA_REVISION,
        )
    }
    BUILDER_CONFIGS: ClassVar[list] = [
        EditF1Config(name="edited", kind="pairs_edited", description="answer vs revision"),
        EditF1Config(name="cases", kind="cases", description="one row per question"),
    ]
    DEFAULT_CONFIG_NAME = "edited"
    KIND_FEATURES: ClassVar[dict] = {
        "pairs_edited": pair_features(**dict.fromkeys(_EXPERTQA_COLUMNS, Value("string"))),
        "cases": CASE_FEATURES,
    }

    def _rows(self, source: Path) -> list[dict]:
        """Medicine rows with verbatim duplicates left out (warned) and conflicts raised."""
        kept: dict[tuple, dict] = {}
        duplicates, conflicts = [], []
        for row in expertqa_medicine_rows(source / "medicine_val.jsonl"):
            key = (row["question"], row["system"], row["annotator_id"])
            first = kept.get(key)
            if first is None:
                kept[key] = row
            elif {**first, "line": 0} == {**row, "line": 0}:
                duplicates.append(f"{row['line']} (= {first['line']})")
            else:
                conflicts.append(
                    f"medicine_val.jsonl, line {row['line']}: same question, system and "
                    f"expert as line {first['line']} with different content"
                )
        if conflicts:
            raise ExportError(conflicts)
        if duplicates:
            shown = ", ".join(duplicates[:5]) + (", ..." if len(duplicates) > 5 else "")
            warnings.warn(
                f"medicine_val.jsonl: {len(duplicates)} line(s) repeat an earlier line "
                f"verbatim and are left out (line (= earlier line)): {shown}",
                DuplicateRecordsWarning,
                stacklevel=2,
            )
        return list(kept.values())

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        cases: dict[str, dict] = {}
        rows_of: dict[str, list[dict]] = defaultdict(list)  # question -> rows, as responses
        for row in self._rows(source):
            if row["question"] not in cases:
                attributes = named_values([("question_type", row["question_type"])])
                case = new_case(str(len(cases)), row["question"], attributes=attributes)
                cases[row["question"]] = case
            case = cases[row["question"]]
            draft = {"system": row["system"], "text": row["answer"]}
            if draft not in case["drafts"]:
                case["drafts"].append(draft)
            kept = named_values((k, row[k]) for k in ("usefulness", "specific_field"))
            index = case["drafts"].index(draft)
            case["responses"].append(
                new_response(row["revision"], row["annotator_id"], index, kept)
            )
            rows_of[row["question"]].append(row)
        if self.config.kind == "cases":
            return {"test": list(cases.values())}
        return {  # every response edits a draft: one pair per response, in order
            "test": [
                pair | {k: row[k] for k in _EXPERTQA_COLUMNS}
                for question, case in cases.items()
                for pair, row in zip(case_pairs(case, "edited"), rows_of[question], strict=True)
            ]
        }
