"""K-QA (Manes et al. 2024; github.com/Itaymanes/K-QA), MIT licence: patient questions
with physician answers, and physicians' NLI labels of LLM answers against curated claims."""

from __future__ import annotations

from pathlib import Path

from editf1.io import describe, read_csv, read_rows

__all__ = ["KQA_LABELS", "kqa_nli_rows", "kqa_question_rows"]

#: The NLI labels of ``NLI_medical_annotator.csv``.
KQA_LABELS = ("Entailment", "Neutral", "Contradiction")


def kqa_nli_rows(data_dir: str | Path) -> list[dict]:
    """Rows of ``NLI_medical_annotator.csv``: dicts with ``question``, ``answer`` (the LLM's,
    the "draft"), ``claim`` (the "reference sentence"), ``system``, ``match`` (majority is
    Entailment), ``annotator_matches`` (one boolean per physician), ``row`` (the file's
    index column), ``category``, ``labels`` (``label_0..2``) and ``majority_label``.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: naming the row and field of a label outside :data:`KQA_LABELS`.
    """
    path = Path(data_dir) / "NLI_medical_annotator.csv"
    labels = ("majority_label", "label_0", "label_1", "label_2")
    rows = read_csv(path, ["", "Question", "answer", "claim", "llm_x", "category_x", *labels])
    for i, r in enumerate(rows):
        for field in labels:
            if r[field] not in KQA_LABELS:
                raise ValueError(
                    f"{path.name} row {i}: field {field} is not one of {KQA_LABELS} "
                    f"({describe(r[field])})"
                )
    return [
        {
            "question": r["Question"],
            "answer": r["answer"],
            "claim": r["claim"],
            "system": r["llm_x"],
            "match": r["majority_label"] == "Entailment",
            "annotator_matches": [r[f"label_{k}"] == "Entailment" for k in range(3)],
            "row": r[""],
            "category": r["category_x"],
            "labels": [r[f"label_{k}"] for k in range(3)],
            "majority_label": r["majority_label"],
        }
        for r in rows
    ]


def kqa_question_rows(data_dir: str | Path) -> list[dict]:
    """The rows of ``questions_w_answers.jsonl``: ``Question``, ``Free_form_answer`` (the
    physician's), ``Must_have``, ``Nice_to_have``, ``Sources``, ``ICD_10_diag``.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: naming a line that is not a JSON object or lacks a field.
    """
    fields = ["Question", "Free_form_answer", "Must_have", "Nice_to_have", "Sources", "ICD_10_diag"]
    return read_rows(Path(data_dir) / "questions_w_answers.jsonl", fields, "jsonl")
