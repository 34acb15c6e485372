"""ExpertQA (Malaviya et al., NAACL 2024; github.com/chaitanyamalaviya/ExpertQA), MIT
licence: experts revised LLM answers to their own questions, as a clinician edits a draft."""

from __future__ import annotations

from pathlib import Path

from editf1.io import read_jsonl

__all__ = ["EXPERTQA_MEDICINE_FIELD", "expertqa_medicine_rows"]

#: The ``metadata.field`` value of the medicine rows.
EXPERTQA_MEDICINE_FIELD = "Healthcare / Medicine"


def expertqa_medicine_rows(path: str | Path) -> list[dict]:
    """Healthcare / Medicine rows of an ExpertQA JSONL file (``medicine_val.jsonl``, or
    upstream ``data/lfqa/domain_val.jsonl``; a folder: its ``medicine_val.jsonl``), one per
    (question, system), in file order: dicts with ``line`` (from 1), ``question``,
    ``system``, ``answer`` (``answer_string``), ``revision`` (``revised_answer_string``),
    ``annotator_id`` (the expert), ``usefulness``, ``question_type`` and ``specific_field``.

    Raises:
        FileNotFoundError: if the file is missing.
        ValueError: naming the line and field of a record that is not a JSON object,
            lacks a field, holds other than one system, or a non-string answer.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "medicine_val.jsonl"
    records = read_jsonl(path, ["question", "annotator_id", "answers", "metadata"])
    rows = []
    for line, record in records:
        metadata = record["metadata"] if isinstance(record["metadata"], dict) else {}
        if metadata.get("field") != EXPERTQA_MEDICINE_FIELD:
            continue
        answers = record["answers"]
        if not isinstance(answers, dict) or len(answers) != 1:
            raise ValueError(f"{path.name}, line {line}: field answers must hold one system")
        ((system, answer),) = answers.items()
        for field in ("answer_string", "revised_answer_string"):
            if not isinstance(answer.get(field), str):
                raise ValueError(
                    f"{path.name}, line {line}: field answers.{system}.{field} must be a "
                    f"string, got {type(answer.get(field)).__name__}"
                )
        rows.append(
            {
                "line": line,
                "question": record["question"],
                "system": system,
                "answer": answer["answer_string"],
                "revision": answer["revised_answer_string"],
                "annotator_id": answer.get("annotator_id") or record["annotator_id"],
                "usefulness": answer.get("usefulness"),
                "question_type": metadata.get("question_type"),
                "specific_field": metadata.get("specific_field"),
            }
        )
    return rows
