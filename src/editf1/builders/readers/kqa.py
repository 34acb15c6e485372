"""K-QA (Manes et al. 2024; github.com/Itaymanes/K-QA), MIT licence.

``NLI_medical_annotator.csv``: for an LLM answer and one physician-written claim, three
physicians' labels (Entailment / Neutral / Contradiction) and their majority. "The
answer entails the claim" is the content judge's question "does the draft contain this
sentence?", so these labels calibrate and validate content judges.
"""

from __future__ import annotations

from pathlib import Path

from editf1.io import describe, read_csv, read_rows

__all__ = ["KQA_LABELS", "kqa_nli_rows", "kqa_question_rows"]

#: The NLI labels of ``NLI_medical_annotator.csv``.
KQA_LABELS = ("Entailment", "Neutral", "Contradiction")


def kqa_nli_rows(data_dir: str | Path) -> list[dict]:
    """Rows of ``NLI_medical_annotator.csv``.

    Returns:
        Dicts with ``question``, ``answer`` (the LLM answer, the "draft"), ``claim`` (the
        "reference sentence"), ``system``, ``match`` (True when the physicians' majority
        is Entailment), ``annotator_matches`` (three booleans, one per physician), and
        the upstream detail: ``row`` (the file's unnamed index column), ``category``
        (``Must_have`` / ``Nice_to_have``), ``labels`` (the three labels ``label_0..2``)
        and ``majority_label`` (each one of :data:`KQA_LABELS`).

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
    """Rows of ``questions_w_answers.jsonl``: real patient questions with physician answers.

    Returns:
        The upstream dicts, in file order: ``Question``, ``Free_form_answer`` (the
        physician's answer), ``Must_have`` and ``Nice_to_have`` (lists of
        physician-curated statements), ``Sources`` and ``ICD_10_diag``.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: naming the line of a line that is not a JSON object or lacks a field.
    """
    fields = ["Question", "Free_form_answer", "Must_have", "Nice_to_have", "Sources", "ICD_10_diag"]
    return read_rows(Path(data_dir) / "questions_w_answers.jsonl", fields, "jsonl")
