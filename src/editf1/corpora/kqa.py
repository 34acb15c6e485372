"""K-QA (Manes et al. 2024; github.com/Itaymanes/K-QA), MIT licence.

``NLI_medical_annotator.csv``: for an LLM answer and one physician-written claim, three
physicians' labels (Entailment / Neutral / Contradiction) and their majority. "The
answer entails the claim" is the content judge's question "does the draft contain this
sentence?", so these labels calibrate and validate content judges.
"""

from __future__ import annotations

from pathlib import Path

from editf1.corpora.oncqa import read_csv

__all__ = ["kqa_nli_rows"]


def kqa_nli_rows(data_dir: str | Path) -> list[dict]:
    """Rows of ``NLI_medical_annotator.csv``.

    Returns:
        Dicts with ``question``, ``answer`` (the LLM answer, the "draft"), ``claim`` (the
        "reference sentence"), ``system``, ``match`` (True when the physicians' majority
        is Entailment) and ``annotator_matches`` (three booleans, one per physician).
    """
    rows = read_csv(Path(data_dir) / "NLI_medical_annotator.csv")
    return [
        {
            "question": r["Question"],
            "answer": r["answer"],
            "claim": r["claim"],
            "system": r["llm_x"],
            "match": r["majority_label"] == "Entailment",
            "annotator_matches": [r[f"label_{k}"] == "Entailment" for k in range(3)],
        }
        for r in rows
    ]
