"""The schemas every edit-F1 dataset shares (Seegmiller et al., arXiv 2601.11344, §2).

An example of the paper's datasets is a patient message m, a summary c of the patient's
EHR chart (demographics, full active problem list, up to 10 recent encounters,
outpatient medications) and one or more clinician responses r; evaluation adds LLM
drafts. Four schemas cover every builder:

- :data:`CASE_FEATURES` — one row per patient message ("case"): ``message``, the chart
  summary as text (``ehr_summary``) and structured (``ehr``), every clinician
  ``responses`` with its annotator, the ``drafts`` with the system that wrote each, and
  optional sentence-level ``themes`` and content ``matches`` annotations.
- :data:`PAIR_FEATURES` — one row per (draft, clinician reply) pair: what
  ``edit-f1 score`` and :class:`editf1.scorer.EditF1Scorer` consume (``prediction`` is
  the draft, ``reference`` the reply). Builders add typed columns of their own.
- :data:`CONTENT_MATCH_FEATURES` — content-match annotations (§3.1): a reference
  sentence, a draft, and per annotator the verbatim matching draft span or NO MATCH.
- :data:`THEME_ANNOTATION_FEATURES` — theme annotations (§3.2, Table 3): a sentence
  and per annotator one of :data:`editf1.themes.THEMES`.

Missing values are ``None`` (never ``""``): a string field is ``None`` when the source
does not record it, a list is ``[]`` when the source has no item.
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
    "empty_ehr",
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

#: Structured chart summary: ``age`` and ``sex`` as written (``"55 years"``), the active
#: ``problems`` and outpatient ``medications`` (lists of strings), recent
#: ``encounters`` (``date`` as written, possibly relative: ``"1 week ago"``), and
#: ``other`` named values (e.g. OncQA's cancer diagnosis and treatments).
EHR_FEATURES = {
    "age": _TEXT,
    "sex": _TEXT,
    "problems": List(_TEXT),
    "medications": List(_TEXT),
    "encounters": List({"date": _TEXT, "summary": _TEXT}),
    "other": List(_NAME_VALUE),
}

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


#: A pair's ``attributes`` column: the export columns kept with ``keep_columns`` for the
#: reply of the pair, as ``[{"name", "value"}]`` (hospital exports).
PAIR_ATTRIBUTES = List(_NAME_VALUE)


def pair_features(**extra: Value | List) -> Features:
    """:data:`PAIR_FEATURES` followed by a builder's own typed columns.

    >>> list(pair_features(edit_distance=Value("int32")))[-2:]
    ['annotator_id', 'edit_distance']
    """
    return Features({**PAIR_FEATURES, **extra})


def named_values(pairs) -> list[dict]:
    """``[{"name", "value"}]`` from ``(name, value)`` pairs; empty text becomes None."""
    return [{"name": n, "value": v if v is None or str(v).strip() else None} for n, v in pairs]


def empty_ehr() -> dict:
    """A structured chart summary with nothing recorded."""
    return {
        "age": None,
        "sex": None,
        "problems": [],
        "medications": [],
        "encounters": [],
        "other": [],
    }


def new_case(case_id: str, message: str, ehr_summary: str | None = None, **fields) -> dict:
    """A :data:`CASE_FEATURES` row; what ``fields`` does not give is not recorded."""
    empty = {"ehr": empty_ehr(), "responses": [], "drafts": [], "themes": [], "matches": []}
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
    """Render a structured chart summary as text, in the paper's order (§2).

    Returns:
        Lines ``Age:``, ``Sex:``, ``Active problems:``, ``Medications:``, one
        ``Encounter (date):`` per encounter and ``name: value`` per other value, each
        only when recorded; ``None`` when nothing is recorded.

    >>> print(ehr_text({**empty_ehr(), "age": "58", "problems": ["HTN", "T2DM"],
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
        case: a :data:`CASE_FEATURES` row.
        kind: ``"reply"``: every draft against every response written without a draft
            (``draft_index`` None), the paper's setting; ``"edited"``: every response
            that edits a draft against that draft.
        with_attributes: also carry each response's ``attributes`` (the export columns
            kept with ``keep_columns``) into its pairs, for :data:`PAIR_ATTRIBUTES`.

    Returns:
        Rows in response order. ``id`` is ``"<case id>-<n>"`` (n: 1-based position of
        the response in ``responses``), with ``"-d<k>"`` added (k: 1-based draft) when
        a reply is paired with several drafts (``"reply"`` on a case with several).

    Raises:
        ValueError: for an unknown kind or a ``draft_index`` outside ``drafts``.

    >>> case = {"id": "c7", "message": "m", "ehr_summary": None, "drafts": [
    ...     {"system": "gpt-4", "text": "Draft."}], "responses": [
    ...     {"annotator_id": "dr-a", "text": "Reply.", "draft_index": None},
    ...     {"annotator_id": "dr-b", "text": "Draft, edited.", "draft_index": 0}]}
    >>> [(p["id"], p["prediction"], p["reference"]) for p in case_pairs(case, "reply")]
    [('c7-1', 'Draft.', 'Reply.')]
    >>> [(p["id"], p["annotator_id"]) for p in case_pairs(case, "edited")]
    [('c7-2', 'dr-b')]
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
