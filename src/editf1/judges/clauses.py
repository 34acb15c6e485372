"""Negation and condition clauses of a sentence, and whether a draft span flips them.

Two NO MATCH rules of the team's annotation guide (``ANNOTATION_GUIDE.md``, "Content
matches") concern clauses rather than key terms (:mod:`editf1.judges.key_terms`): the
draft "negates the claim", or "turns an unconditional instruction into a conditional
one, or the reverse". :func:`clause_conflicts` checks both (pure functions of the
text, no model):

* ``negation``: the head of a negation in one text, the first content word after its
  cue (``not``, ``no``, ``never``, ``n't``, ``without``, ``avoid``, ...): "take" in "do
  not take it", "pain" in "no pain", is asserted in the other ("take it with food").
  Only the head counts, so "pain not responding to pain medication" negates
  "responding", not "pain"; "do not hesitate to call" negates nothing;
* ``condition``: one text has a conditional clause ("if you develop a fever, ...") none
  of whose content words the other text has, and the other has none (the guide's
  "unconditional into conditional, or the reverse"; two conditional texts are not
  compared, so "if you're worried" against "if you are concerned" is no conflict).

Words are compared by their first five letters ("medication" and "medications" agree;
"take" and "taking" do not), a deliberately crude stem. The content judge turns the
kinds its parameters' veto names into a veto (:mod:`editf1.judges.embedding`); the
default, ``content_judge_veto_nc.json``, vetoes both.

Known errors, left as they are (the measured figures are this code's): a quantifier
after "not" is read as negating the next word ("not all patients experience hair
loss" conflicts with "some patients experience hair loss"); a double negation
("cannot prescribe this without seeing you") conflicts with its positive paraphrase;
a negation raised onto "think" or "believe" ("I don't think this is serious") negates
that verb, so it does not conflict with "this is serious". The condition check reads
words, not meaning: a dropped condition is missed when one of its words survives
elsewhere ("call us if the swelling gets worse" against "call us about the swelling"),
and a condition changed for another ("if the fever lasts three days" against "if you
have a rash") is missed, as both texts are conditional. A verb of
:data:`_NEGATIVE_VERBS` flipped for real ("do not skip your dose" against "skip your
dose") is missed, and so are words shorter than five letters against their plurals ("no
sign" against "signs"); "until" after a negation ("do not resume exercise until next
week") conflicts with its positive paraphrase ("resume exercise next week").

>>> sorted(clause_conflicts(clauses("Take it with food."), clauses("Do not take it.")))
['negation']
>>> sorted(clause_conflicts(clauses("Go to the ER."), clauses("If feverish, go to the ER.")))
['condition']
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from itertools import islice

from editf1.caches import cached

__all__ = ["CLAUSE_CONFLICT_KINDS", "NEGATION", "Clauses", "clause_conflicts", "clauses"]

#: The kinds of contradiction :func:`clause_conflicts` reports.
CLAUSE_CONFLICT_KINDS = ("negation", "condition")

#: Negation cues.
NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|without|cannot|avoid\w*|refrain\w*)\b|n't\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z][a-z0-9-]*", re.IGNORECASE)

#: Clause boundaries: punctuation and clause-joining words (a negation or a condition
#: reaches no further).
_CLAUSE_END = re.compile(
    r"[,;:.!?()]|\b(?:but|however|because|although|though|so|and then)\b", re.I
)
#: Verbs that, negated, state the opposite of a negation ("do not hesitate to call" asks
#: to call; "don't forget to take" asks to take): their scope is not negated.
_NEGATIVE_VERBS = ("hesita", "forge", "forgo", "fail", "delay", "wait", "miss", "skip")
#: Function words, never a negation's object.
_FUNCTION_WORDS = frozenset(
    [
        "a", "an", "the", "this", "that", "these", "those", "it", "its", "you", "your",
        "we", "our", "us", "i", "me", "my", "he", "him", "his", "she", "her", "they",
        "them", "their", "there", "here", "to", "of", "in", "on", "at", "for", "with",
        "from", "by", "about", "as", "be", "is", "are", "was", "were", "been", "being",
        "am", "do", "does", "did", "done", "doing", "have", "has", "had", "having", "will",
        "would", "shall", "should", "can", "could", "may", "might", "must", "need", "needs",
        "needed", "any", "some", "all", "more", "much", "very", "really", "just", "also",
        "yet", "still", "even", "only", "or", "and", "if", "than", "then", "one", "don",
        "doesn", "didn", "won", "isn", "aren", "wasn", "weren", "shouldn", "couldn",
        "wouldn", "haven", "hasn", "hadn", "but", "however", "because", "although",
        "though", "unless", "otherwise",
    ]
)  # fmt: skip
#: A negation's scope: at most this many words after its cue, within its clause.
_SCOPE_WORDS = 5


def _is_content(word: str) -> bool:
    """A content word: three letters or more, no function word, no negation cue."""
    return len(word) > 2 and word not in _FUNCTION_WORDS and not NEGATION.fullmatch(word)


def _polarity(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(negated, asserted) content words of ``text``, each as its first five letters.

    A negation's head, the first content word within :data:`_SCOPE_WORDS` words after
    its cue in the same clause, is negated ("take" in "do not take it"; "pain" in "no
    pain"), unless it is a verb such as "hesitate" or "forget" (:data:`_NEGATIVE_VERBS`)
    that, negated, asks for what follows; the rest of the scope is neither negated nor
    asserted ("pain" in "not responding to pain medications"). Other content words are
    asserted. A word negated in one place and asserted in another counts as negated.
    """
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
    """The content words of ``text``, each as its first five letters."""
    words = (m.lower() for m in _WORD.findall(text))
    return frozenset(sys.intern(w[:5]) for w in words if _is_content(w))


def _conditions(text: str) -> frozenset[str]:
    """The content words of ``text``'s conditional clauses ("fever" in "if you have a
    fever, call us"), each clause from ``if`` / ``unless`` / ``in case`` to the end of
    its clause, as their first five letters."""
    # a clause's first cue reaches its end, so later cues of the clause add no word
    cues = ((clause, _CONDITION_CUE.search(clause)) for clause in _CLAUSE_END.split(text))
    return frozenset().union(*(_content_words(c[cue.end() :]) for c, cue in cues if cue))


@dataclass(frozen=True)
class Clauses:
    """The negated, asserted and conditional content words of one text (:func:`clauses`),
    each as its first five letters.

    Attributes:
        negated: the heads of its negations ("take" in "do not take it").
        asserted: content words outside any negation's scope.
        words: every content word.
        condition: the content words of its conditional clauses ("fever" in "if you
            have a fever, call us").
    """

    negated: frozenset[str] = frozenset()
    asserted: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    condition: frozenset[str] = frozenset()


#: Texts whose :class:`Clauses` are kept. A judge reads a text's clauses against every
#: other text of its pair, so a few thousand cover a batch; a Clauses holds four sets
#: (about 2 KB), so the 100,000 of the key-term caches would add about 200 MB to a
#: long run's peak memory (docs/benchmarks.md, "Scaling to 10,000 pairs").
CACHE_SIZE = 10_000


@cached(maxsize=CACHE_SIZE)
def clauses(text: str) -> Clauses:
    """The :class:`Clauses` of ``text`` (any string; cached per text, the last
    :data:`CACHE_SIZE` texts).

    >>> c = clauses("If you still feel dizzy, do not drive, but rest at home.")
    >>> sorted(c.negated), sorted(c.condition)
    (['drive'], ['dizzy', 'feel'])
    """
    negated, asserted = _polarity(text)
    return Clauses(negated, asserted, _content_words(text), _conditions(text))


def clause_conflicts(reference: Clauses, span: Clauses) -> frozenset[str]:
    """The kinds (:data:`CLAUSE_CONFLICT_KINDS`) on which ``span`` contradicts
    ``reference`` (a few set operations, not cached: a cache keyed by both would keep
    their Clauses alive): ``"negation"`` when a negated head of one is asserted in the other,
    ``"condition"`` when exactly one of them has conditional clauses and none of their
    words is in the other.

    >>> clause_conflicts(clauses("Please call us."), clauses("Don't hesitate to call us."))
    frozenset()
    """
    conflicts = set()
    if reference.negated & span.asserted or span.negated & reference.asserted:
        conflicts.add("negation")
    # the guide's rule: an unconditional text made conditional, or the reverse; when
    # both are conditional, their conditions are not compared
    if bool(reference.condition) != bool(span.condition):
        conditional, other = (reference, span) if reference.condition else (span, reference)
        if not conditional.condition & other.words:
            conflicts.add("condition")
    return frozenset(conflicts)
