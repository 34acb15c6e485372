"""The schemas every edit-F1 dataset shares (Seegmiller et al., arXiv 2601.11344, §2, §3):
one row per patient message ("case"), per (draft, clinician reply) pair (what ``edit-f1
score`` reads), per content-match item and per theme item. A value the source does not
record is ``None`` (never ``""``); a list without items ``[]``.
"""

from __future__ import annotations

from datasets import Features, List, Value

__all__ = [
    "CASE_FEATURES",
    "CONTENT_MATCH_FEATURES",
    "NO_MATCH",
    "PAIR_ATTRIBUTES",
    "PAIR_FEATURES",
    "THEME_ANNOTATION_FEATURES",
    "case_pairs",
    "ehr_text",
    "named_values",
    "new_case",
    "new_response",
    "pair_features",
]

#: How a content-match export spells "the draft holds nothing that says this".
NO_MATCH = "NO MATCH"

_TEXT = Value("string")
_INDEX = Value("int32")
_NAME_VALUE = {"name": _TEXT, "value": _TEXT}

#: Structured chart summary: values as written (a date may be relative: ``"1 week ago"``).
EHR_FEATURES = {
    "age": _TEXT,
    "sex": _TEXT,
    "problems": List(_TEXT),
    "medications": List(_TEXT),
    "encounters": List({"date": _TEXT, "summary": _TEXT}),
    "other": List(_NAME_VALUE),
}

#: One row per patient message: the chart summary as text and structured, the clinicians'
#: ``responses``, the LLM ``drafts``, and optional ``themes`` and ``matches`` annotations.
CASE_FEATURES = Features(
    {
        "id": _TEXT,
        "message": _TEXT,
        "ehr_summary": _TEXT,
        "ehr": EHR_FEATURES,
        # draft_index: the draft this response is an edit of (None: written without one)
        "responses": List(
            {
                "annotator_id": _TEXT,
                "text": _TEXT,
                "draft_index": _INDEX,
                "attributes": List(_NAME_VALUE),
            }
        ),
        "drafts": List({"system": _TEXT, "text": _TEXT}),
        # target: "response" or "draft"; index: into responses or drafts
        "themes": List(
            {
                "target": _TEXT,
                "index": _INDEX,
                "sentence": _TEXT,
                "theme": _TEXT,
                "annotator_id": _TEXT,
            }
        ),
        # matched_span None: NO MATCH
        "matches": List(
            {
                "response_index": _INDEX,
                "draft_index": _INDEX,
                "reference_sentence": _TEXT,
                "matched_span": _TEXT,
                "annotator_id": _TEXT,
            }
        ),
        "attributes": List(_NAME_VALUE),
    }
)

PAIR_FEATURES = Features(
    {
        "id": _TEXT,
        "case_id": _TEXT,
        "message": _TEXT,
        "ehr_summary": _TEXT,
        "prediction": _TEXT,
        "reference": _TEXT,
        "system": _TEXT,
        "annotator_id": _TEXT,
    }
)

CONTENT_MATCH_FEATURES = Features(
    {
        "id": _TEXT,
        "context": _TEXT,
        "system": _TEXT,
        "prediction": _TEXT,
        "reference_sentence": _TEXT,
        # match: the annotator found the sentence's content in the draft; matched_span:
        # the verbatim draft span they marked (None for NO MATCH or a label-only source);
        # label: the source's own label, e.g. K-QA's "Entailment"
        "annotations": List(
            {
                "annotator_id": _TEXT,
                "match": Value("bool"),
                "matched_span": _TEXT,
                "span_start": _INDEX,
                "span_end": _INDEX,
                "label": _TEXT,
            }
        ),
        "majority_match": Value("bool"),
        "attributes": List(_NAME_VALUE),
    }
)

THEME_ANNOTATION_FEATURES = Features(
    {
        "id": _TEXT,
        "sentence": _TEXT,
        "context": _TEXT,
        "annotations": List({"annotator_id": _TEXT, "theme": _TEXT}),
        # the theme most annotators chose; None on a tie
        "majority_theme": _TEXT,
    }
)


#: A pair's ``attributes``: the columns kept with ``keep_columns`` (hospital exports).
PAIR_ATTRIBUTES = List(_NAME_VALUE)


def pair_features(**extra: Value | List) -> Features:
    """:data:`PAIR_FEATURES` followed by a builder's own typed columns."""
    return Features({**PAIR_FEATURES, **extra})


def named_values(pairs) -> list[dict]:
    """``[{"name", "value"}]`` from ``(name, value)`` pairs; empty text becomes None."""
    return [{"name": n, "value": v if v is None or str(v).strip() else None} for n, v in pairs]


def new_case(case_id: str, message: str, ehr_summary: str | None = None, **fields) -> dict:
    """A :data:`CASE_FEATURES` row; what ``fields`` does not give is not recorded."""
    ehr = {key: [] if isinstance(value, List) else None for key, value in EHR_FEATURES.items()}
    empty = {"ehr": ehr, "responses": [], "drafts": [], "themes": [], "matches": []}
    row = {"id": case_id, "message": message, "ehr_summary": ehr_summary, **empty}
    return row | {"attributes": []} | fields


def new_response(text: str, annotator_id=None, draft_index=None, attributes=()) -> dict:
    """One of a case's ``responses``; ``draft_index`` None: written without a draft."""
    return {
        "annotator_id": annotator_id,
        "text": text,
        "draft_index": draft_index,
        "attributes": list(attributes),
    }


def ehr_text(ehr: dict) -> str | None:
    """A structured chart summary as text, one line per recorded value (§2's order).

    >>> print(ehr_text({"age": "58", "problems": ["HTN", "T2DM"], "medications": [],
    ...                 "encounters": [{"date": "2024-03-01", "summary": "HTN f/u"}]}))
    Age: 58
    Active problems: HTN; T2DM
    Encounter (2024-03-01): HTN f/u
    """
    lines = []
    if ehr.get("age"):
        lines.append(f"Age: {ehr['age']}")
    if ehr.get("sex"):
        lines.append(f"Sex: {ehr['sex']}")
    if ehr.get("problems"):
        lines.append("Active problems: " + "; ".join(ehr["problems"]))
    if ehr.get("medications"):
        lines.append("Medications: " + "; ".join(ehr["medications"]))
    for encounter in ehr.get("encounters") or []:
        when = f" ({encounter['date']})" if encounter.get("date") else ""
        lines.append(f"Encounter{when}: {encounter['summary']}")
    for item in ehr.get("other") or []:
        lines.append(f"{item['name']}: {item['value']}")
    return "\n".join(lines) or None


def case_pairs(case: dict, kind: str, *, with_attributes: bool = False) -> list[dict]:
    """The (draft, clinician reply) pairs of one case, as :data:`PAIR_FEATURES` rows.

    Args:
        kind: ``"reply"``: every draft against every response written without one (the
            paper's setting); ``"edited"``: every response that edits a draft against it.
        with_attributes: carry each response's ``attributes`` into its pairs.

    Returns:
        Rows in response order, ``id`` ``"<case id>-<n>"`` (n: the response, from 1),
        plus ``"-d<k>"`` (k: the draft, from 1) when a reply meets several drafts.

    Raises:
        ValueError: for an unknown kind or a ``draft_index`` outside ``drafts``.
    """
    if kind not in ("reply", "edited"):
        raise ValueError(f"kind must be 'reply' or 'edited', got {kind!r}")
    drafts = case["drafts"]
    pairs = []
    for n, response in enumerate(case["responses"], start=1):
        index = response["draft_index"]
        if index is not None and not 0 <= index < len(drafts):
            raise ValueError(
                f"case {case['id']}: response {n} edits draft {index}, "
                f"but the case has {len(drafts)} draft(s)"
            )
        if kind == "reply" and index is None:
            chosen = list(enumerate(drafts))
        elif kind == "edited" and index is not None:
            chosen = [(index, drafts[index])]
        else:
            continue
        for k, draft in chosen:
            suffix = f"-d{k + 1}" if len(chosen) > 1 else ""
            pairs.append(
                {
                    "id": f"{case['id']}-{n}{suffix}",
                    "case_id": case["id"],
                    "message": case["message"],
                    "ehr_summary": case["ehr_summary"],
                    "prediction": draft["text"],
                    "reference": response["text"],
                    "system": draft["system"],
                    "annotator_id": response["annotator_id"],
                    **({"attributes": response["attributes"]} if with_attributes else {}),
                }
            )
    return pairs
