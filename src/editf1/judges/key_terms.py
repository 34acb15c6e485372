"""Clinical key terms of a sentence, and whether a draft span contradicts them (no model):
sentences on one topic look alike to an encoder whether or not they say the same thing
("continue taking your omeprazole" against "increase your dose of omeprazole"). Drugs are
words ending in a WHO INN stem (:data:`DRUG_STEMS`) or in :data:`DRUG_NAMES`, a
deliberately small heuristic (no offline drug list fits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from editf1.caches import cached
from editf1.data import read_json
from editf1.judges.clauses import CLAUSE_CONFLICT_KINDS

__all__ = [
    "CONFLICT_KINDS",
    "DIRECTIONS",
    "DRUG_NAMES",
    "DRUG_STEMS",
    "RULES_VERSION",
    "TERM_CONFLICT_KINDS",
    "VETO_HELP",
    "KeyTerms",
    "check_veto",
    "compare",
    "extract",
]

#: The version of the rules here and in :mod:`editf1.judges.clauses`, named in the
#: fingerprint of a judge with a veto: bump it whenever a rule's answer changes
#: (``tests/test_key_terms.py`` pins the answers to it).
RULES_VERSION = 2

#: The kinds of contradiction :func:`compare` reports.
TERM_CONFLICT_KINDS = ("quantity", "frequency", "direction", "drug", "test")
#: Every kind a judge's veto can name (with the clause conflicts).
CONFLICT_KINDS = (*TERM_CONFLICT_KINDS, *CLAUSE_CONFLICT_KINDS)
#: The help text of a judge's ``veto`` setting.
VETO_HELP = f"conflict kinds that rule a span out, from {list(CONFLICT_KINDS)}"


def check_veto(kinds) -> tuple[str, ...]:
    """``kinds`` as a tuple; ValueError naming every kind not in :data:`CONFLICT_KINDS`."""
    kinds = tuple(kinds)
    unknown = sorted(set(kinds) - set(CONFLICT_KINDS))
    if unknown:
        raise ValueError(f"unknown veto kind(s) {unknown}; known: {list(CONFLICT_KINDS)}")
    return kinds


#: The rules' tables (``editf1/data/key_terms.json``): directions, drugs, tests, numbers, units.
_TABLES = read_json("key_terms.json")
#: Directions of a treatment, and the verbs (regular expressions) that express them.
DIRECTIONS: dict[str, str] = _TABLES["directions"]
#: Pairs of directions that contradict each other (either order): "continue as
#: prescribed" means no change, so it contradicts every change.
_OPPOSED = {frozenset(pair) for pair in _TABLES["opposed_directions"]}
#: WHO INN stems that mark a word of six letters or more as a drug.
DRUG_STEMS = tuple(_TABLES["drug_stems"])
#: Common drug names that carry no INN stem (brand and over-the-counter names).
DRUG_NAMES = frozenset(_TABLES["drug_names"])
#: Investigations (regular expressions), each mapped to one canonical name.
_TESTS: dict[str, str] = _TABLES["tests"]
#: number words -> (low, high): vague ones are ranges
_NUMBER_WORDS = {word: tuple(pair) for word, pair in _TABLES["number_words"].items()}
#: unit spellings (regular expression) -> (dimension, factor to its base unit), in order
_UNITS = {unit: tuple(pair) for unit, pair in _TABLES["units"].items()}
_UNIT_PATTERNS = [(re.compile(u, re.IGNORECASE), dimension) for u, dimension in _UNITS.items()]

_NUMBER = r"\d+(?:[.,]\d+)?|" + "|".join(
    sorted((re.escape(w) for w in _NUMBER_WORDS), key=len, reverse=True)
)
_QUANTITY = re.compile(
    rf"(?<![\w.])(?P<low>{_NUMBER})(?:\s*(?:-|–|to|or)\s*(?P<high>{_NUMBER}))?\s*"
    rf"(?P<unit>{'|'.join(f'(?:{u})' for u in _UNITS)})(?!\w)",
    re.IGNORECASE,
)
_CLOCK = re.compile(
    r"(?<![\w.:])(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>[ap])\.?m\b\.?",
    re.IGNORECASE,
)

#: (pattern, events per day or "as needed"), in order; each match is removed before the next
_FREQUENCIES = [
    (r"as needed|prn|when(?:ever)? needed", lambda m: "as needed"),
    (r"every other day", lambda m: 0.5),
    (
        rf"every\s+(?P<n>{_NUMBER})\s*(?P<unit>hours?|hrs?|h|days?|weeks?)",
        lambda m: 24.0 / (_value(m["n"])[0] * {"h": 1, "d": 24, "w": 168}[m["unit"][0].lower()]),
    ),
    (
        rf"(?P<n>{_NUMBER})(?:\s+times)?\s+(?:a|per|each|every)\s+(?P<unit>day|night|week|month)",
        lambda m: (
            _value(m["n"])[0] / {"day": 1, "night": 1, "week": 7, "month": 30}[m["unit"].lower()]
        ),
    ),
    (rf"(?P<n>{_NUMBER})(?:\s+times)?\s+(?:daily|nightly)", lambda m: _value(m["n"])[0]),
    (r"b\.?i\.?d", lambda m: 2.0),
    (r"t\.?i\.?d", lambda m: 3.0),
    (r"q\.?i\.?d", lambda m: 4.0),
    (r"q(?P<n>\d+)h", lambda m: 24.0 / float(m["n"])),
    (r"daily|every (?:day|morning|evening|night)|nightly|qd|at bedtime", lambda m: 1.0),
    (r"weekly|every week", lambda m: 1 / 7),
    (r"monthly|every month", lambda m: 1 / 30),
]
_FREQUENCY_PATTERNS = [
    (re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE), value) for pattern, value in _FREQUENCIES
]

_DIRECTION_PATTERNS = {
    name: re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE) for name, pattern in DIRECTIONS.items()
}
_NEGATED = re.compile(r"(?:\b(?:not|never|no)\b|n't\b)(?:\W+\w+){0,2}?\W+$", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z0-9-]*", re.IGNORECASE)
_TEST_PATTERNS = [(re.compile(rf"\b(?:{p})\b", re.IGNORECASE), name) for p, name in _TESTS.items()]


def _value(text: str) -> tuple[float, float]:
    """A number (digits or words) as (low, high)."""
    low, high = _NUMBER_WORDS.get(text.lower()) or (float(text.replace(",", ".")),) * 2
    return float(low), float(high)


@dataclass(frozen=True)
class KeyTerms:
    """The key terms of one text: ``quantities`` as ``(dimension, low, high)`` in the base
    unit (``"2 weeks"`` and ``"14 days"`` agree), ``frequencies`` (events per day, or ``"as
    needed"``), ``directions`` (not within three words after a negation), ``drugs`` and
    ``tests`` (canonical names).
    """

    quantities: frozenset[tuple[str, float, float]] = frozenset()
    frequencies: frozenset[float | str] = frozenset()
    directions: frozenset[str] = frozenset()
    drugs: frozenset[str] = frozenset()
    tests: frozenset[str] = frozenset()


@cached(maxsize=100_000)
def extract(text: str) -> KeyTerms:
    """The clinical key terms of ``text`` (cached per text). Frequencies are read first and
    removed, so ``"every 8 hours"`` is no quantity.

    >>> terms = extract("Take 20 mg twice a day for 2 weeks, unless you have no pain.")
    >>> sorted(terms.quantities), sorted(terms.frequencies)
    ([('mass', 20.0, 20.0), ('time', 336.0, 336.0)], [2.0])
    """
    frequencies, rest = set(), text
    for pattern, value in _FREQUENCY_PATTERNS:
        frequencies.update(value(match) for match in pattern.finditer(rest))
        rest = pattern.sub(" ", rest)
    quantities = set()
    for match in _CLOCK.finditer(rest):
        hour = int(match["hour"]) % 12 + (12 if match["half"].lower() == "p" else 0)
        minute = hour * 60 + int(match["minute"] or 0)
        quantities.add(("clock", float(minute), float(minute)))
    for match in _QUANTITY.finditer(_CLOCK.sub(" ", rest)):
        dimension, factor = next(d for p, d in _UNIT_PATTERNS if p.fullmatch(match["unit"]))
        low = _value(match["low"])[0] * factor
        high = _value(match["high"] or match["low"])[1] * factor
        quantities.add((dimension, round(low, 6), round(max(low, high), 6)))
    words = {w.lower() for w in _WORD.findall(text)}
    drugs = {w for w in words if w in DRUG_NAMES or (len(w) > 5 and w.endswith(DRUG_STEMS))}
    return KeyTerms(
        quantities=frozenset(quantities),
        frequencies=frozenset(frequencies),
        directions=frozenset(
            name
            for name, pattern in _DIRECTION_PATTERNS.items()
            if any(not _NEGATED.search(text[: m.start()]) for m in pattern.finditer(text))
        ),
        drugs=frozenset(drugs),
        tests=frozenset(name for pattern, name in _TEST_PATTERNS if pattern.search(text)),
    )


@cached(maxsize=100_000)
def compare(reference: KeyTerms, span: KeyTerms) -> frozenset[str]:
    """Which kinds of the reference's key terms the span contradicts: the span omits a term
    of that kind and has another instead (a quantity of the same dimension that does not
    overlap; another frequency, drug or test; an opposed direction).

    >>> sorted(compare(extract("Take 20 mg daily."), extract("Take 40 mg daily.")))
    ['quantity']
    """
    conflicts = set()
    for dimension, low, high in reference.quantities:
        theirs = [(lo, hi) for d, lo, hi in span.quantities if d == dimension]
        if theirs and not any(lo <= high and low <= hi for lo, hi in theirs):
            conflicts.add("quantity")
    for kind in ("frequencies", "drugs", "tests"):
        ours, theirs = getattr(reference, kind), getattr(span, kind)
        if ours - theirs and theirs - ours and not ours & theirs:
            conflicts.add({"frequencies": "frequency", "drugs": "drug", "tests": "test"}[kind])
    if any(
        frozenset((d, e)) in _OPPOSED
        for d in reference.directions - span.directions
        for e in span.directions - reference.directions
    ):
        conflicts.add("direction")
    return frozenset(conflicts)
