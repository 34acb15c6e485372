"""Negation and condition clauses of a sentence, and whether a draft span flips them: two NO
MATCH rules of the team's annotation guide ("negates the claim"; "turns an unconditional
instruction into a conditional one, or the reverse"), read without a model. Words are
compared by their first five letters.

Known errors: a quantifier after "not" negates the next word; a double negation conflicts
with its positive paraphrase; a negation raised onto "think" negates that verb; a dropped
condition is missed when one of its words survives elsewhere, a changed condition always;
a flipped verb of :data:`_NEGATIVE_VERBS` is missed, and so are short words against their
plurals; "until" after a negation conflicts with its positive paraphrase.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from itertools import islice

from editf1.caches import cached
from editf1.data import read_text

__all__ = ["CLAUSE_CONFLICT_KINDS", "NEGATION", "Clauses", "clause_conflicts", "clauses"]

#: The kinds of contradiction :func:`clause_conflicts` reports.
CLAUSE_CONFLICT_KINDS = ("negation", "condition")

#: Negation cues.
NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|without|cannot|avoid\w*|refrain\w*)\b|n't\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z][a-z0-9-]*", re.IGNORECASE)

#: Clause boundaries: punctuation and clause-joining words.
_CLAUSE_END = re.compile(
    r"[,;:.!?()]|\b(?:but|however|because|although|though|so|and then)\b", re.I
)
#: Verbs that, negated, ask for what follows ("do not hesitate to call").
_NEGATIVE_VERBS = ("hesita", "forge", "forgo", "fail", "delay", "wait", "miss", "skip")
#: Function words, never a negation's object (``editf1/data/function_words.txt``).
_FUNCTION_WORDS = frozenset(read_text("function_words.txt").split())
#: A negation's scope: at most this many words after its cue, within its clause.
_SCOPE_WORDS = 5


def _is_content(word: str) -> bool:
    """A content word: three letters or more, no function word, no negation cue."""
    return len(word) > 2 and word not in _FUNCTION_WORDS and not NEGATION.fullmatch(word)


def _polarity(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(negated, asserted) content words: a negation's head within its scope is negated
    (unless one of :data:`_NEGATIVE_VERBS`), the rest of the scope neither."""
    negated, asserted = set(), set()
    for clause in _CLAUSE_END.split(text):
        scoped: dict[int, str] = {}  # start of a word in a negation's scope -> its role
        for cue in NEGATION.finditer(clause):
            words = list(islice(_WORD.finditer(clause, cue.end()), _SCOPE_WORDS))
            content = [m for m in words if _is_content(m[0].lower())]
            if content and content[0][0].lower().startswith(_NEGATIVE_VERBS):
                continue  # "do not hesitate to call": what follows is asked for
            for m in words:
                scoped.setdefault(m.start(), "scope")
            if content:
                scoped[content[0].start()] = "head"
        for m in _WORD.finditer(clause):
            word = m[0].lower()
            if not _is_content(word):
                continue
            role = scoped.get(m.start())
            if role == "head":
                negated.add(sys.intern(word[:5]))
            elif role is None:
                asserted.add(sys.intern(word[:5]))
    return frozenset(negated), frozenset(asserted - negated)


#: The start of a conditional clause, which runs to the end of its clause (:func:`_conditions`).
_CONDITION_CUE = re.compile(r"\b(?:if|unless|in case)\b", re.IGNORECASE)


def _content_words(text: str) -> frozenset[str]:
    words = (m.lower() for m in _WORD.findall(text))
    return frozenset(sys.intern(w[:5]) for w in words if _is_content(w))


def _conditions(text: str) -> frozenset[str]:
    """Content words of the conditional clauses (a cue to its clause's end)."""
    # a clause's first cue reaches its end, so later cues of the clause add no word
    cues = ((clause, _CONDITION_CUE.search(clause)) for clause in _CLAUSE_END.split(text))
    return frozenset().union(*(_content_words(c[cue.end() :]) for c, cue in cues if cue))


@dataclass(frozen=True)
class Clauses:
    """The ``negated``, ``asserted``, all (``words``) and conditional (``condition``) content
    words of one text, each as its first five letters.
    """

    negated: frozenset[str] = frozenset()
    asserted: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    condition: frozenset[str] = frozenset()


#: Texts whose :class:`Clauses` are kept (a few thousand cover a batch; each is ~2 KB).
CACHE_SIZE = 10_000


@cached(maxsize=CACHE_SIZE)
def clauses(text: str) -> Clauses:
    """The :class:`Clauses` of ``text`` (the last :data:`CACHE_SIZE` texts cached).

    >>> c = clauses("If you still feel dizzy, do not drive, but rest at home.")
    >>> sorted(c.negated), sorted(c.condition)
    (['drive'], ['dizzy', 'feel'])
    """
    negated, asserted = _polarity(text)
    return Clauses(negated, asserted, _content_words(text), _conditions(text))


def clause_conflicts(reference: Clauses, span: Clauses) -> frozenset[str]:
    """The kinds on which ``span`` contradicts ``reference``: ``"negation"`` (a negation's
    head, the first content word after its cue, asserted in the other; "do not hesitate to
    call" negates nothing), ``"condition"`` (only one is conditional, and none of its
    condition's words is in the other).

    >>> sorted(clause_conflicts(clauses("Take it with food."), clauses("Do not take it.")))
    ['negation']
    >>> clause_conflicts(clauses("Please call us."), clauses("Don't hesitate to call us."))
    frozenset()
    """
    conflicts = set()
    if reference.negated & span.asserted or span.negated & reference.asserted:
        conflicts.add("negation")
    if bool(reference.condition) != bool(span.condition):
        conditional, other = (reference, span) if reference.condition else (span, reference)
        if not conditional.condition & other.words:
            conflicts.add("condition")
    return frozenset(conflicts)
