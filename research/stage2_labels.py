"""Content labels that OncQA's oncologists gave for free by editing GPT-4 drafts (stage 2).

In OncQA stage 2 (``stage2.csv``) an oncologist edited the GPT-4 draft
(``raw_response``) into the reply they would send (``doc_change``). Two kinds of
edited sentence carry a content label without anyone labelling them
(Seegmiller et al., arXiv 2601.11344, §3.1: does the draft say what the reference
sentence says?):

* an edited sentence **identical** to a draft sentence is a **match**, its span that
  draft sentence: the oncologist kept it as it was;
* an edited sentence that **modifies** a draft sentence and changes a number or unit,
  a drug name, a negation or a direction word (continue / increase / decrease / stop /
  start / hold) is **NO MATCH** against the draft: the project's annotation guide
  makes every such change NO MATCH.

The rule, exactly (:func:`stage2_pairs`):

1. Both texts are split with the project's :class:`~editf1.segment.SentenceSplitter`.
2. An edited sentence whose text equals the text of a draft sentence (in place or
   moved) is a match with that draft sentence.
3. Any other edited sentence is aligned with the draft sentence of the highest
   word-level ``difflib.SequenceMatcher`` ratio (the first on a tie; no junk
   heuristic); it is a modification of it when that ratio, ``2 M / T`` for M words in
   common out of T in both, is at least :data:`MIN_MODIFICATION_RATIO`.
4. A modification is NO MATCH when the multisets of :func:`critical_words` of the two
   sentences differ. Every other edited sentence is left out: a rewording without a
   critical change (the guide might call it a match or not) or a sentence the
   oncologist wrote anew (the draft may say it elsewhere).

Known limitations: drug names are found by their INN stems (:data:`DRUG_STEMS`) and a
short list of names without one (:data:`DRUG_NAMES`), not by a drug dictionary, so a
changed drug outside both is missed, and a stem may end an ordinary word ("April").
A critical word need not carry the change that matters: a rewording that adds a
negation ("avoid" → "do not eat") is NO MATCH, and so is a sentence that loses a clause
holding "started" or "not". Matches are easy positives (verbatim copies).
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path
from typing import NamedTuple

from editf1.segment import SentenceSplitter
from editf1.validation.labelled import ContentItem

__all__ = [
    "DIRECTION_WORDS",
    "DRUG_NAMES",
    "DRUG_STEMS",
    "MIN_MODIFICATION_RATIO",
    "NEGATIONS",
    "NUMBER_WORDS",
    "UNITS",
    "Stage2Pair",
    "critical_words",
    "oncqa_stage2_content_items",
    "stage2_markdown",
    "stage2_pairs",
    "stage2_summary",
]

#: Word-level ``SequenceMatcher`` ratio from which an edited sentence modifies a draft one.
MIN_MODIFICATION_RATIO = 0.5

#: Number words that state a quantity or frequency ("one" is left out: mostly a pronoun).
NUMBER_WORDS = frozenset(
    {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"}
    | {"twelve", "once", "twice", "thrice", "half", "double", "triple"}
)

#: Units of dose and amount, of frequency, and of time.
UNITS = frozenset(
    {"mg", "mcg", "µg", "ug", "g", "kg", "ml", "l", "dl", "cc", "iu", "mmol", "meq", "%"}
    | {"unit", "units", "tablet", "tablets", "pill", "pills", "capsule", "capsules"}
    | {"puff", "puffs", "drop", "drops"}
    | {"daily", "weekly", "monthly", "hourly", "nightly", "bid", "tid", "qid"}
    | {"minute", "minutes", "hour", "hours", "day", "days", "week", "weeks"}
    | {"month", "months", "year", "years"}
)

#: Negations; any word ending in "n't" counts too.
NEGATIONS = frozenset(
    {"no", "not", "never", "none", "nothing", "neither", "nor", "without", "cannot"}
)

#: The direction words of the guide (continue vs increase vs stop), every inflection.
DIRECTION_WORDS = re.compile(
    r"(?:continu|increas|decreas)(?:e|es|ed|ing)|stop(?:s|ped|ping)?|start(?:s|ed|ing)?"
    r"|hold(?:s|ing)?|held"
)

#: Word endings of International Nonproprietary Names (WHO, "The use of stems in the
#: selection of INN") of drugs common in oncology and primary care.
DRUG_STEMS = (
    *("azole", "pril", "sartan", "dipine", "olol", "statin", "platin", "taxel", "mab"),
    *("nib", "rubicin", "mycin", "cillin", "floxacin", "cycline", "vir", "parin", "xaban"),
    *("gliptin", "gliflozin", "formin", "trexed", "citabine", "uracil", "oxifen"),
    *("zolomide", "phosphamide", "codone", "morphone", "caine", "sone", "olone"),
    *("profen", "setron", "tidine", "tadine", "tirizine", "perazine", "traline"),
    *("oxetine", "pram", "zepam", "zolam", "steride", "osin", "tropium", "lukast"),
    *("dronate", "racetam", "thyroxine", "semide", "thiazide"),
)

#: Drugs and regimens without one of the stems.
DRUG_NAMES = frozenset(
    {"aspirin", "acetaminophen", "paracetamol", "tylenol", "advil", "naproxen", "insulin"}
    | {"warfarin", "morphine", "fentanyl", "tramadol", "codeine", "loperamide", "imodium"}
    | {"senna", "docusate", "miralax", "ativan", "gabapentin", "pregabalin", "megestrol"}
    | {"metoclopramide", "olanzapine", "filgrastim", "pegfilgrastim", "letrozole"}
    | {"anastrozole", "exemestane", "leuprolide", "bicalutamide", "enzalutamide"}
    | {"abiraterone", "irinotecan", "etoposide", "vincristine", "albuterol", "salmeterol"}
    | {"budesonide", "flot", "folfox", "folfiri", "folfirinox", "r-chop", "abvd"}
)

_WORD = re.compile(r"[^\W_]+(?:[.,'’/-][^\W_]+)*|%")


def _is_critical(word: str) -> bool:
    return (
        any(c.isdigit() for c in word)
        or word in NUMBER_WORDS
        or word in UNITS
        or word in NEGATIONS
        or word.endswith(("n't", "n’t"))
        or DIRECTION_WORDS.fullmatch(word) is not None
        or word in DRUG_NAMES
        or word.endswith(DRUG_STEMS)
    )


def critical_words(sentence: str) -> Counter:
    """The words of ``sentence`` whose change makes a content NO MATCH, lower-cased.

    A word is a run of letters and digits, joined across ``.``, ``,``, ``'``, ``/`` or
    ``-`` ("2.5", "don't", "5-fluorouracil"), or "%". It is critical when it holds a
    digit or is in :data:`NUMBER_WORDS` or :data:`UNITS` (number or unit), is in
    :data:`NEGATIONS` or ends in "n't" (negation), matches :data:`DIRECTION_WORDS`
    (direction), or is in :data:`DRUG_NAMES` or ends with one of :data:`DRUG_STEMS`
    (drug name).

    Args:
        sentence: any string.

    Returns:
        A ``Counter`` of the critical words (word -> occurrences).

    >>> sorted(critical_words("Don't stop the 20 mg omeprazole daily, please.").elements())
    ['20', 'daily', "don't", 'mg', 'omeprazole', 'stop']
    >>> critical_words("Thank you for your message.")
    Counter()
    """
    return Counter(w for w in _WORD.findall(sentence.lower()) if _is_critical(w))


class Stage2Pair(NamedTuple):
    """One edited sentence labelled by the edit.

    Attributes:
        reference: the edited sentence (``doc_change``), the content item's reference.
        draft_sentence: the draft sentence it copies (``match``) or modifies (NO MATCH).
        match: True for an unchanged sentence, False for a critical modification.
    """

    reference: str
    draft_sentence: str
    match: bool


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, _WORD.findall(a.lower()), _WORD.findall(b.lower()), False).ratio()


def stage2_pairs(
    draft: str, edited: str, splitter: SentenceSplitter | None = None
) -> list[Stage2Pair]:
    """The labelled sentences of one edit, by the rule of this module's docstring.

    Args:
        draft: the draft the clinician saw (OncQA ``raw_response``).
        edited: the clinician's edit of it (``doc_change``).
        splitter: the sentence splitter; default :class:`~editf1.segment.SentenceSplitter`.

    Returns:
        One :class:`Stage2Pair` per labelled edited sentence, in the edit's order;
        unlabelled sentences (inserted, or modified without a critical change) are
        left out. Empty texts give ``[]``.

    >>> pairs = stage2_pairs(
    ...     "Hi Ana. Continue the 20 mg dose. Rest well.",
    ...     "Hi Ana. Increase to the 40 mg dose. Rest as much as you can. Call us.",
    ... )
    >>> [(p.reference, p.match) for p in pairs]
    [('Hi Ana.', True), ('Increase to the 40 mg dose.', False)]
    """
    splitter = splitter or SentenceSplitter()
    drafts = [s.text for s in splitter.split(draft)]
    edits = [s.text for s in splitter.split(edited)]
    pairs = []
    for sentence in edits:
        if sentence in drafts:
            pairs.append(Stage2Pair(sentence, sentence, True))
        elif drafts:
            modified = max(drafts, key=lambda d: _ratio(d, sentence))
            if _ratio(modified, sentence) >= MIN_MODIFICATION_RATIO and critical_words(
                modified
            ) != critical_words(sentence):
                pairs.append(Stage2Pair(sentence, modified, False))
    return pairs


def oncqa_stage2_content_items(
    data_root: str | Path, splitter: SentenceSplitter | None = None
) -> list[ContentItem]:
    """Content items derived from OncQA stage-2 edits by :func:`stage2_pairs`.

    Args:
        data_root: the folder holding ``oncqa/stage2.csv``.
        splitter: the sentence splitter; default :class:`~editf1.segment.SentenceSplitter`.

    Returns:
        One :class:`~editf1.validation.labelled.ContentItem` per labelled edited
        sentence, in file order: ``prediction`` is the draft, ``reference`` the edited
        sentence, ``span`` the copied draft sentence (matches) or None, ``case``
        ``"oncqa:<id>"`` (the case of the team's OncQA labels, so case splits keep them
        together), ``source`` ``"oncqa/stage2.csv"``. Where both oncologists of a case
        give the same item (both kept a sentence), it appears once.

    Raises:
        FileNotFoundError: if ``stage2.csv`` is missing.
    """
    from editf1.builders.readers import oncqa_rows

    splitter = splitter or SentenceSplitter()
    items: dict[ContentItem, None] = {}
    for row in oncqa_rows(Path(data_root) / "oncqa", setting="edited"):
        for pair in stage2_pairs(row["prediction"], row["reference"], splitter):
            item = ContentItem(
                case=f"oncqa:{row['case_id']}",
                prediction=row["prediction"],
                reference=pair.reference,
                match=pair.match,
                span=pair.draft_sentence if pair.match else None,
                source="oncqa/stage2.csv",
            )
            items.setdefault(item)
    return list(items)


def stage2_summary(data_root: str | Path, splitter: SentenceSplitter | None = None) -> dict:
    """Counts of the stage-2 derivation on the real file: the figures of the
    content-match dataset card's stage-2 section.

    Args:
        data_root: the folder holding ``oncqa/stage2.csv``.
        splitter: the sentence splitter; default :class:`~editf1.segment.SentenceSplitter`.

    Returns:
        ``{"edits", "cases", "edited_sentences", "unchanged", "critical_modifications",
        "items", "match", "no_match", "no_match_cases"}``: rows of ``stage2.csv``, their
        distinct cases, sentences of all edits, the edited sentences labelled match
        and NO MATCH by :func:`stage2_pairs` (each oncologist's separately), then the
        items :func:`oncqa_stage2_content_items` gives (both oncologists' identical
        items once), how many are matches and NO MATCH, and how many cases hold a NO
        MATCH item.

    Raises:
        FileNotFoundError: if ``stage2.csv`` is missing.
    """
    from editf1.builders.readers import oncqa_rows

    splitter = splitter or SentenceSplitter()
    rows = oncqa_rows(Path(data_root) / "oncqa", setting="edited")
    pairs = [p for r in rows for p in stage2_pairs(r["prediction"], r["reference"], splitter)]
    items = oncqa_stage2_content_items(data_root, splitter)
    return {
        "edits": len(rows),
        "cases": len({r["case_id"] for r in rows}),
        "edited_sentences": sum(len(splitter.split(r["reference"])) for r in rows),
        "unchanged": sum(p.match for p in pairs),
        "critical_modifications": sum(not p.match for p in pairs),
        "items": len(items),
        "match": sum(i.match for i in items),
        "no_match": sum(not i.match for i in items),
        "no_match_cases": len({i.case for i in items if not i.match}),
    }


def stage2_markdown(summary: dict) -> str:
    """The stage-2 figures block of the content-match dataset card.

    Args:
        summary: what :func:`stage2_summary` returned.

    Returns:
        A Markdown table, ending in a newline.
    """
    rows = [
        ("stage-2 edits (rows of `stage2.csv`)", summary["edits"]),
        ("cases", summary["cases"]),
        ("sentences of the edits", summary["edited_sentences"]),
        ("edited sentences identical to a draft sentence: match", summary["unchanged"]),
        ("edited sentences critically modified: NO MATCH", summary["critical_modifications"]),
        ("items (both oncologists' identical items once)", summary["items"]),
        ("items: match", summary["match"]),
        ("items: NO MATCH", summary["no_match"]),
        ("cases with a NO MATCH item", summary["no_match_cases"]),
    ]
    lines = ["| | count |", "|---|---|", *(f"| {name} | {n} |" for name, n in rows)]
    return "\n".join(lines) + "\n"
