"""Clinically decisive corruptions: hard NO MATCH examples made from matched pairs, to
train judges that read both texts (never part of an evaluation split). The annotation
guide makes a span whose number, unit, frequency, drug, negation, direction (continue /
increase / stop / start / hold), time frame or condition changed a NO MATCH."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from editf1.data import read_json
from editf1.judges.key_terms import DRUG_NAMES, DRUG_STEMS
from editf1.segment import SentenceSplitter

__all__ = [
    "CORRUPTION_KINDS",
    "REPLACEMENT_DRUGS",
    "Corruption",
    "corrupt",
    "corrupt_pairs",
]

#: The word tables the rewrites read (``data/corruptions.json``).
_TABLES = read_json("corruptions.json")

#: Drugs of different classes that a named drug may be replaced with.
REPLACEMENT_DRUGS = tuple(_TABLES["replacement_drugs"])


@dataclass(frozen=True)
class Corruption:
    """A matched (``reference``, ``span``) pair whose span, changed by ``kind``, became
    ``corrupted``, a NO MATCH; ``case`` keeps it with its source pair in splits."""

    kind: str
    reference: str
    span: str
    corrupted: str
    case: str = ""


def _word(phrase: str) -> re.Pattern:
    """``phrase`` as whole words, case-insensitive (spaces match any whitespace)."""
    body = r"\s+".join(re.escape(part) for part in phrase.split())
    return re.compile(rf"(?<![\w-]){body}(?![\w-])", re.IGNORECASE)


def _cased(found: str, replacement: str) -> str:
    """``replacement`` with the capital of ``found``'s first letter."""
    if found[:1].isupper() and not found.isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _in(text: str, phrase: str) -> bool:
    return _word(phrase).search(text) is not None


def _swap(span: str, phrase: str, replacement: str) -> str:
    """Every whole-word occurrence of ``phrase`` in ``span`` replaced."""
    return _word(phrase).sub(lambda m: _cased(m[0], replacement), span)


def _table(
    table: dict[str, str], reference: str, span: str, rng: random.Random, *, shared: bool = True
) -> str | None:
    """One phrase of ``table`` found in the span (and, with ``shared``, in the reference)
    replaced by its value; ``None`` if none applies. Longer phrases are tried first, so
    "twice a day" wins over "a day"; one is drawn when several apply."""
    found = [p for p in sorted(table, key=len, reverse=True) if _in(span, p)]
    found = [p for p in found if not any(p != q and _in(q, p) for q in found)]
    found = [p for p in found if not shared or _in(reference, p)]
    if not found:
        return None
    phrase = rng.choice(found)
    return _swap(span, phrase, table[phrase])


_NUMBER_WORDS = _TABLES["number_words"]
_DIGITS = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?![\w]|[.,]\d)")


def _format(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _number(reference: str, span: str, rng: random.Random) -> str | None:
    digits = sorted({m[0] for m in _DIGITS.finditer(span)} & set(_DIGITS.findall(reference)))
    words = [w for w in _NUMBER_WORDS if _in(span, w) and _in(reference, w)]
    options = [("digits", d) for d in digits] + [("word", w) for w in words]
    if not options:
        return None
    form, old = rng.choice(options)
    if form == "word":
        new = rng.choice([w for w in _NUMBER_WORDS if w != old and not _in(reference, w)])
        return _swap(span, old, new)
    value = float(old)
    stated = set(_DIGITS.findall(reference))
    candidates = [_format(v) for v in (value * 2, value / 2, value + 1, value * 10) if v > 0]
    candidates = [c for c in dict.fromkeys(candidates) if c != old and c not in stated]
    if not candidates:
        return None
    pattern = re.compile(rf"(?<![\w.,]){re.escape(old)}(?![\w]|[.,]\d)")
    return pattern.sub(rng.choice(candidates), span)


_UNIT_SWAPS = {k.lower(): v for k, v in _TABLES["unit_swaps"].items()}
_UNIT = re.compile(r"\d(?:[\d.,]*\d)?\s?(?P<unit>mcg|mg|kg|ml|units|g|l|°F|°C|%)(?!\w)", re.I)


def _sub_unit(pattern: re.Pattern, span: str, chosen: str, new: str) -> str:
    """``span`` with each ``unit`` group of ``pattern`` equal to ``chosen`` made ``new``."""

    def replace(m: re.Match) -> str:
        if m["unit"].lower() != chosen:
            return m[0]
        cut = m.start("unit") - m.start()
        return m[0][:cut] + _cased(m["unit"], new)

    return pattern.sub(replace, span)


def _shared_units(pattern: re.Pattern, reference: str, span: str) -> list[str]:
    """The ``unit`` groups (lower-cased) of ``pattern`` found in both texts, sorted."""
    stated = {m["unit"].lower() for m in pattern.finditer(reference)}
    return sorted({m["unit"].lower() for m in pattern.finditer(span)} & stated)


def _unit(reference: str, span: str, rng: random.Random) -> str | None:
    units = _shared_units(_UNIT, reference, span)
    if not units:
        return None
    chosen = rng.choice(units)
    return _sub_unit(_UNIT, span, chosen, _UNIT_SWAPS[chosen])


_DIRECTIONS = _TABLES["directions"]


def _direction(reference: str, span: str, rng: random.Random) -> str | None:
    """A direction word of the span whose first five letters a reference word shares."""
    stems = {w[:5] for w in re.findall(r"[a-z]+", reference.lower())}
    found = [p for p in _DIRECTIONS if _in(span, p) and p.split()[0][:5] in stems]
    found = [p for p in found if not any(p != q and _in(q, p) for q in found)]
    if not found:
        return None
    phrase = rng.choice(sorted(found))
    return _swap(span, phrase, _DIRECTIONS[phrase])


#: A time unit after an amount: "for 2 weeks", "in a few days", "within 24 hours", not
#: the unit of a frequency ("twice a day").
_TIME_SPAN = re.compile(
    r"(?<![\w-])(?:\d+(?:\.\d+)?|a few|few|several|a couple of|one|two|three|four|five|six|"
    r"seven|eight|ten|twelve)[\s-]*(?P<unit>minutes?|hours?|days?|weeks?|months?)(?![\w-])",
    re.IGNORECASE,
)
_TIME_WORDS = _TABLES["time_words"]


def _time_frame(reference: str, span: str, rng: random.Random) -> str | None:
    """A unit of a time span, or a time word, that both texts state."""
    units = _shared_units(_TIME_SPAN, reference, span)
    words = [w for w in _TIME_WORDS if _in(span, w) and _in(reference, w)]
    options = [("unit", u) for u in units] + [("word", w) for w in words]
    if not options:
        return None
    form, chosen = rng.choice(options)
    if form == "word":
        return _swap(span, chosen, _TIME_WORDS[chosen])
    return _sub_unit(_TIME_SPAN, span, chosen, _TABLES["time_units"][chosen])


_AUXILIARY = re.compile(
    r"(?<![\w-])(is|are|was|were|can|could|should|will|would|may|might|must|does|do)(?![\w-])",
    re.IGNORECASE,
)
_SPLITTER = SentenceSplitter()


def _negation(reference: str, span: str, rng: random.Random) -> str | None:
    removed = _table(_TABLES["negation_removals"], reference, span, rng, shared=False)
    if removed is not None:
        return re.sub(r"[ \t]{2,}", " ", removed)
    auxiliary = _AUXILIARY.search(span)
    if auxiliary:
        return span[: auxiliary.end()] + " not" + span[auxiliary.end() :]
    please = re.match(r"(\s*please,?\s+)(\w)", span, re.IGNORECASE)
    if please:
        return please[1] + "do not " + please[2].lower() + span[please.end() :]
    first = re.match(r"\s*([A-Za-z]+) [a-z]", span)
    if first and first[1].lower() not in _TABLES["not_imperative"]:  # not an imperative
        said = re.match(r"\s*([A-Za-z]+)\b", reference)
        if said and said[1].lower() == first[1].lower():  # the same imperative verb
            return span[: first.start(1)] + "Do not " + first[1].lower() + span[first.end(1) :]
    return None


_CONDITION = re.compile(r"(?<![\w-])(?:if|unless|in case)(?![\w-])", re.IGNORECASE)
#: Words that make a span an instruction or advice, to which a condition can be added.
_INSTRUCTION = re.compile(
    r"(?<![\w-])(?:please|should|recommend\w*|advis\w*|need to|call|contact|take|go|come|"
    r"schedule|make sure|try|avoid|use|stop|continue|start|keep|let us|let's)(?![\w-])",
    re.IGNORECASE,
)


def _condition(reference: str, span: str, rng: random.Random) -> str | None:
    if _CONDITION.search(span) and _CONDITION.search(reference):
        leading = re.match(r"(\s*)(?:if|unless|in case)\b[^,.;:]*,\s*(\w)", span, re.I)
        if leading:
            return leading[1] + leading[2].upper() + span[leading.end() :]
        trailing = re.search(r",?\s+(?:if|unless|in case)\b[^.;:!?]*", span, re.I)
        before = span[: trailing.start()] if trailing else ""
        if trailing is None or re.search(r"\b(?:and|or|whether|to|that)$", before):
            return None  # the condition is not the sentence's last clause
        return span[: trailing.start()] + span[trailing.end() :]
    if _CONDITION.search(span) or _CONDITION.search(reference) or not _INSTRUCTION.search(span):
        return None
    if len(span.split()) < 4:  # a header or a fragment
        return None
    start = len(span) - len(span.lstrip())
    body = span[start:]
    first = body.split(" ", 1)[0]
    if not (first.isupper() or first == "I" or first.startswith("I'")):
        body = body[:1].lower() + body[1:]
    return span[:start] + rng.choice(_TABLES["conditions"]) + body


def _drug(reference: str, span: str, rng: random.Random) -> str | None:
    def drugs(text: str) -> set[str]:
        words = set(re.findall(r"[a-z]+", text.lower()))
        return {w for w in words if w in DRUG_NAMES or (len(w) >= 6 and w.endswith(DRUG_STEMS))}

    named = sorted(drugs(span) & drugs(reference))
    if not named:
        return None
    drug = rng.choice(named)
    mentioned = drugs(reference) | drugs(span)
    options = [d for d in REPLACEMENT_DRUGS if d not in mentioned]
    return _swap(span, drug, rng.choice(options))


_REWRITES: dict[str, Callable[[str, str, random.Random], str | None]] = {
    "number": _number,
    "unit": _unit,
    "frequency": lambda r, s, rng: _table(_TABLES["frequencies"], r, s, rng),
    "drug": _drug,
    "negation": _negation,
    "direction": _direction,
    "time_frame": _time_frame,
    "condition": _condition,
}

#: The kinds of corruption.
CORRUPTION_KINDS = tuple(_REWRITES)

#: The kinds that apply to almost any sentence (of a one-sentence span only): drawn after
#: the specific ones.
_GENERIC = ("negation", "condition")


def corrupt(reference: str, span: str, kind: str, rng: random.Random | None = None) -> str | None:
    """``span`` changed by one corruption of ``kind``, or ``None`` where it does not apply.

    A kind rewrites an element the ``reference`` states too, by whole words,
    case-insensitive, keeping the replaced word's capital; ``negation`` and ``condition``
    (added or removed) apply to one-sentence spans only.

    Args:
        rng: where choices come from (which of several numbers, the new value, the
            replacement drug, the condition added); default ``random.Random(0)``.

    Raises:
        ValueError: for an unknown ``kind``, listing the known ones.

    >>> corrupt("Take 20 mg of omeprazole daily.", "Take omeprazole 20 mg each day.", "unit")
    'Take omeprazole 20 mcg each day.'
    """
    if kind not in _REWRITES:
        raise ValueError(f"unknown corruption kind {kind!r}; known: {list(CORRUPTION_KINDS)}")
    if kind in _GENERIC and len(_SPLITTER.split(span)) != 1:
        return None
    changed = _REWRITES[kind](reference, span, rng or random.Random(0))
    return None if changed is None or changed == span else changed


def corrupt_pairs(
    pairs: Sequence[tuple[str, str, str]],
    *,
    seed: int = 0,
    per_pair: int = 1,
    kinds: Sequence[str] = CORRUPTION_KINDS,
) -> list[Corruption]:
    """Hard NO MATCH examples from ``(case, reference sentence, matching draft span)``
    triples, in pair order (a pair no kind applies to gives none); a pair's kinds are
    tried in a seeded shuffled order, ``negation`` and ``condition`` last.

    Args:
        per_pair: most corruptions per pair (each of another kind), >= 1.

    Raises:
        ValueError: for ``per_pair < 1`` or an unknown kind.
    """
    if per_pair < 1:
        raise ValueError(f"per_pair must be >= 1, got {per_pair}")
    unknown = sorted(set(kinds) - set(CORRUPTION_KINDS))
    if unknown:
        raise ValueError(f"unknown corruption kind(s) {unknown}; known: {list(CORRUPTION_KINDS)}")
    rng = random.Random(seed)
    out = []
    for case, reference, span in pairs:
        specific = [k for k in kinds if k not in _GENERIC]
        generic = [k for k in kinds if k in _GENERIC]
        rng.shuffle(specific)
        rng.shuffle(generic)
        made = []
        for kind in specific + generic:
            changed = corrupt(reference, span, kind, rng) if len(made) < per_pair else None
            if changed is not None:
                made.append(Corruption(kind, reference, span, changed, case))
        out += made
    return out
