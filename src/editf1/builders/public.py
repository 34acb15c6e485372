"""Builders of the public sets: the shipped demo, K-QA, K-QA NLI, ExpertQA medicine (OncQA:
:mod:`editf1.builders.oncqa`).

Each reads a local ``data_dir`` laid out like ``../shared/data/<set>/`` (the upstream
files under their upstream names, except where noted), or downloads the upstream files
at the pinned revision when ``data_dir`` is None. The readers in :mod:`editf1.builders.readers`
do the parsing; these classes turn their rows into the shared schemas of
:mod:`editf1.builders.schema`. Upstream sets carry no splits: every config has one
split, ``test`` (evaluation data).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from pathlib import Path
from typing import ClassVar

from datasets import Value

from editf1.builders.base import EditF1Builder, EditF1Config, UpstreamFile
from editf1.builders.exports import ExportError
from editf1.builders.readers import (
    demo_rows,
    expertqa_medicine_rows,
    kqa_nli_rows,
    kqa_question_rows,
)
from editf1.builders.schema import (
    CASE_FEATURES,
    CONTENT_MATCH_FEATURES,
    case_pairs,
    empty_ehr,
    named_values,
    pair_features,
)
from editf1.citation import PAPER_CITATION, PAPER_URL
from editf1.io import read_rows

__all__ = [
    "DemoBuilder",
    "DuplicateRecordsWarning",
    "ExpertQAMedicineBuilder",
    "KQABuilder",
    "KQANLIBuilder",
    "UnmatchedRecordsWarning",
]

TEST = "test"


class DuplicateRecordsWarning(UserWarning):
    """An upstream file repeats a record verbatim; the copies were left out (counted)."""


class UnmatchedRecordsWarning(UserWarning):
    """Upstream records that refer to something absent from the other file (named)."""


# ---------------------------------------------------------------------------------
class DemoBuilder(EditF1Builder):
    """The demo set shipped with the package (``editf1/data/demo.jsonl``).

    Twelve invented primary-care portal messages with a text chart summary, one
    clinician reply and one LLM draft each, written by the edit-F1 team (no patient
    data). Configs: ``pairs`` (default; draft vs reply) and ``cases``.

    ``data_dir``: optional folder with a ``demo.jsonl`` of the same format
    (``id``, ``message``, ``ehr_summary``, ``reference``, ``prediction``, ``system``).
    """

    DATASET_NAME = "edit_f1_demo"
    PRETTY_NAME = "edit-F1 demo: invented portal messages, replies and drafts"
    DESCRIPTION = (
        "Twelve invented primary-care patient portal messages, each with a short text "
        "summary of the patient's chart, the reply a clinician would send, and an LLM "
        "draft of that reply. Written by the edit-F1 team for demonstrations and tests; "
        "no patient data."
    )
    HOMEPAGE = PAPER_URL
    SOURCE_NOTE = (
        "`editf1/data/demo.jsonl`, shipped with the edit-F1 package and written by its team."
    )
    LICENSE = "apache-2.0"
    LICENSE_NOTE = "Apache-2.0, as the edit-F1 library."
    CITATION = PAPER_CITATION
    SOURCE_FILES = ("demo.jsonl",)
    CAVEATS = (
        "Invented text: the messages, charts, replies and drafts are realistic but "
        "fictional, and too few (12 pairs) for any conclusion about a drafting model.",
        "Chart summaries are text only: the structured `ehr` fields are empty.",
        "No annotator ids: `annotator_id` is null.",
    )
    BUILDER_CONFIGS: ClassVar[list] = [
        EditF1Config(name="pairs", kind="pairs_reply", description="draft vs clinician reply"),
        EditF1Config(name="cases", kind="cases", description="one row per message"),
    ]
    DEFAULT_CONFIG_NAME = "pairs"
    KIND_FEATURES: ClassVar[dict] = {"pairs_reply": pair_features(), "cases": CASE_FEATURES}
    PUSHABLE = True

    def _source_paths(self) -> list[Path]:
        if self.config.data_dir is None:
            from importlib import resources

            return [Path(str(resources.files("editf1.data").joinpath("demo.jsonl")))]
        return super()._source_paths()

    def _download(self, dl_manager) -> None:
        return None  # shipped with the package: nothing to download

    def _examples_by_split(self, source: Path | None) -> dict[str, list[dict]]:
        if source is None:
            rows = demo_rows()
        else:
            fields = ["id", "message", "ehr_summary", "reference", "prediction", "system"]
            rows = read_rows(source / "demo.jsonl", fields, "jsonl")
        cases = [
            {
                "id": row["id"],
                "message": row["message"],
                "ehr_summary": row["ehr_summary"],
                "ehr": empty_ehr(),
                "responses": [
                    {
                        "annotator_id": None,
                        "text": row["reference"],
                        "draft_index": None,
                        "attributes": [],
                    }
                ],
                "drafts": [{"system": row["system"], "text": row["prediction"]}],
                "themes": [],
                "matches": [],
                "attributes": [],
            }
            for row in rows
        ]
        if self.config.kind == "cases":
            return {TEST: cases}
        # one reply and one draft per case: the pair keeps the row's id, as demo_rows()
        return {
            TEST: [
                {**pair, "id": pair["case_id"]} for c in cases for pair in case_pairs(c, "reply")
            ]
        }


# ---------------------------------------------------------------------------------
_KQA = "https://raw.githubusercontent.com/Itaymanes/K-QA/{revision}/dataset/"
#: Commits of github.com/Itaymanes/K-QA holding each file.
KQA_NLI_REVISION = "c2435af4c984cc9e4120f6af6ef75fc85dbc39c0"
KQA_QUESTIONS_REVISION = "3434b5111e58675680fdd0ccb6170a3b442b6e7b"
KQA_CITATION = """@inproceedings{manes2024kqa,
  title     = {K-QA: A Real-World Medical Q\\&A Benchmark},
  author    = {Manes, Itay and others},
  booktitle = {Proceedings of the 23rd Workshop on Biomedical Natural Language Processing},
  year      = {2024},
  note      = {arXiv:2401.14493}
}
"""


class KQABuilder(EditF1Builder):
    """K-QA (Manes et al., BioNLP 2024): real patient questions with physician answers.

    Configs:
        ``pairs`` (default): an LLM's answer (from ``NLI_medical_annotator.csv``)
        against the physician's answer (``Free_form_answer``), for every question that
        has both: 26 pairs in ``../shared/data/kqa`` (one NLI question has no physician
        answer there; it is named in a warning).
        ``questions``: one row per question (:data:`CASE_FEATURES`): the question is
        the message, the physician's answer the response, the LLM answers the drafts;
        the curated statements and ICD-10 diagnosis are ``attributes``; 201 rows.

    ``data_dir``: a folder with ``questions_w_answers.jsonl`` and
    ``NLI_medical_annotator.csv`` (upstream ``dataset/``).
    """

    DATASET_NAME = "kqa"
    PRETTY_NAME = "K-QA: patient questions with physician answers and LLM answers"
    DESCRIPTION = (
        "Real patient questions from an online medical platform with answers written by "
        "physicians, physician-curated must-have and nice-to-have statements, and, for "
        "the questions physicians labelled for NLI, an LLM's answer."
    )
    HOMEPAGE = "https://github.com/Itaymanes/K-QA"
    LICENSE = "mit"
    LICENSE_NOTE = "MIT (upstream licence)."
    CITATION = KQA_CITATION + PAPER_CITATION
    SOURCE_FILES = ("questions_w_answers.jsonl", "NLI_medical_annotator.csv")
    PUBLISHED_ROWS: ClassVar[dict] = {"pairs": 26, "questions": 201}
    UPSTREAM: ClassVar[dict] = {
        "questions_w_answers.jsonl": UpstreamFile(
            _KQA + "questions_w_answers.jsonl", KQA_QUESTIONS_REVISION
        ),
        "NLI_medical_annotator.csv": UpstreamFile(
            _KQA + "NLI_medical_annotator.csv", KQA_NLI_REVISION
        ),
    }
    CAVEATS = (
        "Questions, not portal messages: no chart summary (`ehr_summary` is null) and "
        "answers are written for a general audience, not to the patient's own clinician.",
        "Question ids are 0-based row numbers of questions_w_answers.jsonl; the upstream "
        "file has no ids.",
        "LLM answers are attached to questions by exact question text; an NLI question "
        "with no physician answer in the file gives no pair and is named in a warning.",
        "No physician ids: `annotator_id` is null.",
    )
    BUILDER_CONFIGS: ClassVar[list] = [
        EditF1Config(name="pairs", kind="pairs_reply", description="LLM vs physician answer"),
        EditF1Config(name="questions", kind="cases", description="one row per question"),
    ]
    DEFAULT_CONFIG_NAME = "pairs"
    KIND_FEATURES: ClassVar[dict] = {"pairs_reply": pair_features(), "cases": CASE_FEATURES}

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        drafts: dict[str, list[dict]] = defaultdict(list)
        nli_rows: dict[str, list[str]] = defaultdict(list)  # question -> the file's row ids
        for row in kqa_nli_rows(source):
            nli_rows[row["question"]].append(row["row"])
            draft = {"system": row["system"], "text": row["answer"]}
            if draft not in drafts[row["question"]]:
                drafts[row["question"]].append(draft)
        cases = []
        for i, row in enumerate(kqa_question_rows(source)):
            statements = [("Must_have", s) for s in row["Must_have"]]
            statements += [("Nice_to_have", s) for s in row["Nice_to_have"]]
            cases.append(
                {
                    "id": str(i),
                    "message": row["Question"],
                    "ehr_summary": None,
                    "ehr": empty_ehr(),
                    "responses": [
                        {
                            "annotator_id": None,
                            "text": row["Free_form_answer"],
                            "draft_index": None,
                            "attributes": [],
                        }
                    ],
                    "drafts": drafts.get(row["Question"], []),
                    "themes": [],
                    "matches": [],
                    "attributes": named_values(
                        [
                            *statements,
                            ("ICD_10_diag", row["ICD_10_diag"]),
                            ("Sources", row["Sources"]),
                        ]
                    ),
                }
            )
        orphans = set(drafts) - {case["message"] for case in cases}
        if orphans:
            rows = sorted((r for q in orphans for r in nli_rows[q]), key=lambda r: (len(r), r))
            warnings.warn(
                f"K-QA: {len(orphans)} NLI question(s) have no physician answer in "
                "questions_w_answers.jsonl, so their LLM answers give no pair: the "
                f"questions of NLI_medical_annotator.csv rows {rows}",
                UnmatchedRecordsWarning,
                stacklevel=2,
            )
        if self.config.kind == "cases":
            return {TEST: cases}
        return {TEST: [pair for case in cases for pair in case_pairs(case, "reply")]}


class KQANLIBuilder(EditF1Builder):
    """K-QA physician NLI labels: does an LLM answer contain a physician's statement?

    Three physicians labelled each (LLM answer, claim) Entailment / Neutral /
    Contradiction; "the answer entails the claim" is the content judge's question
    (§3.1), so these are content-match annotations (:data:`CONTENT_MATCH_FEATURES`)
    without spans: 208 rows over 27 questions in ``../shared/data/kqa``. One config,
    ``default``; ``data_dir`` holds ``NLI_medical_annotator.csv``.
    """

    DATASET_NAME = "kqa_nli"
    PRETTY_NAME = "K-QA NLI: physician labels for claim vs LLM answer"
    DESCRIPTION = (
        "For an LLM's answer to a real patient question and one physician-curated "
        "statement (claim), three physicians' labels of whether the answer entails, is "
        "neutral to, or contradicts the claim, and their majority: human-labelled data "
        "for calibrating and validating content judges."
    )
    HOMEPAGE = KQABuilder.HOMEPAGE
    LICENSE = "mit"
    LICENSE_NOTE = "MIT (upstream licence)."
    CITATION = KQA_CITATION + PAPER_CITATION
    SOURCE_FILES = ("NLI_medical_annotator.csv",)
    PUBLISHED_ROWS: ClassVar[dict] = {"default": 208}
    UPSTREAM: ClassVar[dict] = {
        "NLI_medical_annotator.csv": KQABuilder.UPSTREAM["NLI_medical_annotator.csv"]
    }
    CAVEATS = (
        "Labels, not spans: `matched_span`, `span_start` and `span_end` are null; `match` "
        "is true for Entailment (Neutral and Contradiction are NO MATCH).",
        "Annotator ids are the upstream column names `label_0`, `label_1`, `label_2`; "
        "that each column is one physician throughout is the upstream's description, "
        "not checked here.",
        "Claims are curated statements, not sentences of a clinician's reply.",
        "Split by question when fitting a judge: the 27 questions repeat across rows.",
    )
    FIELD_DOCS: ClassVar[dict] = {
        "context": "the patient's question",
        "system": "the LLM that wrote the answer (`llm_x`: gpt35, gpt4, bard, askk)",
        "prediction": 'the LLM\'s answer (the "draft")',
        "reference_sentence": "the physician-curated claim",
    }
    BUILDER_CONFIGS: ClassVar[list] = [EditF1Config(name="default", kind="content_matches")]
    KIND_FEATURES: ClassVar[dict] = {"content_matches": CONTENT_MATCH_FEATURES}

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        examples = []
        for row in kqa_nli_rows(source):
            examples.append(
                {
                    "id": row["row"],
                    "context": row["question"],
                    "system": row["system"],
                    "prediction": row["answer"],
                    "reference_sentence": row["claim"],
                    "annotations": [
                        {
                            "annotator_id": f"label_{k}",
                            "match": label == "Entailment",
                            "matched_span": None,
                            "span_start": None,
                            "span_end": None,
                            "label": label,
                        }
                        for k, label in enumerate(row["labels"])
                    ],
                    "majority_match": row["match"],
                    "attributes": named_values(
                        [("category", row["category"]), ("majority_label", row["majority_label"])]
                    ),
                }
            )
        return {TEST: examples}


# ---------------------------------------------------------------------------------
EXPERTQA_REVISION = "4b732d60707e61e34d508680d16168f485ee5632"


class ExpertQAMedicineBuilder(EditF1Builder):
    """ExpertQA (Malaviya et al., NAACL 2024), Healthcare / Medicine: LLM answers and
    the answering expert's revision of each.

    Configs:
        ``edited`` (default): the LLM answer against the expert's revision, with
        ``usefulness``, ``question_type`` and ``specific_field``; 57 pairs from the 100
        lines of ``../shared/data/expertqa/medicine_val.jsonl`` (43 lines repeat an
        earlier line verbatim and are left out with a :class:`DuplicateRecordsWarning`).
        ``cases``: one row per question (:data:`CASE_FEATURES`).

    ``data_dir``: a folder with ``medicine_val.jsonl``. The download fetches upstream
    ``data/lfqa/domain_val.jsonl`` (all fields) and keeps the medicine rows.

    Raises (at ``download_and_prepare``):
        ExportError: for two records with the same (question, system, expert) but
            different content, naming both lines.
    """

    DATASET_NAME = "expertqa_medicine"
    PRETTY_NAME = "ExpertQA medicine: LLM answers and expert revisions"
    DESCRIPTION = (
        "Questions written by healthcare and medicine experts, an LLM system's answer to "
        "each, and the same expert's revision of that answer into one they would stand "
        "behind: (draft, edited draft) pairs."
    )
    HOMEPAGE = "https://github.com/chaitanyamalaviya/ExpertQA"
    LICENSE = "mit"
    LICENSE_NOTE = "MIT (upstream licence)."
    CITATION = (
        """@inproceedings{malaviya2024expertqa,
  title     = {ExpertQA: Expert-Curated Questions and Attributed Answers},
  author    = {Malaviya, Chaitanya and others},
  booktitle = {Proceedings of NAACL 2024},
  year      = {2024},
  note      = {arXiv:2309.07852}
}
"""
        + PAPER_CITATION
    )
    SOURCE_FILES = ("medicine_val.jsonl",)
    PUBLISHED_ROWS: ClassVar[dict] = {"edited": 57, "cases": 57}
    UPSTREAM: ClassVar[dict] = {
        "medicine_val.jsonl": UpstreamFile(
            "https://raw.githubusercontent.com/chaitanyamalaviya/ExpertQA/{revision}/"
            "data/lfqa/domain_val.jsonl",
            EXPERTQA_REVISION,
        )
    }
    CAVEATS = (
        "Exact duplicate records are left out with a warning: in the team's copy 43 of "
        "100 lines repeat an earlier line verbatim, leaving 57 (question, system, "
        "expert) examples.",
        "Citation markers such as `[1]` are kept in both answer and revision, and the "
        "revision puts each claim on its own line; both count in sentence splitting.",
        "Questions are experts' questions, not patient portal messages: there is no "
        "chart summary (`ehr_summary` is null).",
        "Claim-level judgements (support, evidence, reliability, revised claims) are not "
        "carried; see the upstream files.",
    )
    FIELD_DOCS: ClassVar[dict] = {
        "usefulness": "the expert's rating of the answer: Useful / Partially useful / "
        "Not useful at all",
        "question_type": "upstream `metadata.question_type`",
        "specific_field": "upstream `metadata.specific_field` (e.g. Pharmacist)",
    }
    BUILDER_CONFIGS: ClassVar[list] = [
        EditF1Config(name="edited", kind="pairs_edited", description="answer vs revision"),
        EditF1Config(name="cases", kind="cases", description="one row per question"),
    ]
    DEFAULT_CONFIG_NAME = "edited"
    KIND_FEATURES: ClassVar[dict] = {
        "pairs_edited": pair_features(
            usefulness=Value("string"),
            question_type=Value("string"),
            specific_field=Value("string"),
        ),
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
        extra: dict[tuple[str, int], dict] = {}
        for row in self._rows(source):
            case = cases.get(row["question"])
            if case is None:
                case = cases[row["question"]] = {
                    "id": str(len(cases)),
                    "message": row["question"],
                    "ehr_summary": None,
                    "ehr": empty_ehr(),
                    "responses": [],
                    "drafts": [],
                    "themes": [],
                    "matches": [],
                    "attributes": named_values([("question_type", row["question_type"])]),
                }
            draft = {"system": row["system"], "text": row["answer"]}
            if draft not in case["drafts"]:
                case["drafts"].append(draft)
            case["responses"].append(
                {
                    "annotator_id": row["annotator_id"],
                    "text": row["revision"],
                    "draft_index": case["drafts"].index(draft),
                    "attributes": named_values(
                        [
                            ("usefulness", row["usefulness"]),
                            ("specific_field", row["specific_field"]),
                        ]
                    ),
                }
            )
            extra[(case["id"], len(case["responses"]))] = row
        if self.config.kind == "cases":
            return {TEST: list(cases.values())}
        pairs = []
        for case in cases.values():
            for pair in case_pairs(case, "edited"):
                n = int(pair["id"].split("-")[1])
                row = extra[(case["id"], n)]
                pairs.append(
                    {
                        **pair,
                        "usefulness": row["usefulness"],
                        "question_type": row["question_type"],
                        "specific_field": row["specific_field"],
                    }
                )
        return {TEST: pairs}
