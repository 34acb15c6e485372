"""Sentence splitting for clinical replies, offline, with character offsets.

Step 1 of the pipeline (segment → judge → count → aggregate). The splitter is a pure
function of its configuration: it is handed to the scorer, never built inside it.

Rules, in order:

1. Every line is its own block: greetings ("Hi Maria,") and sign-offs ("Best,",
   "Dr. Okafor") are sentences like any other.
2. A list marker at the start of a line ("1.", "2)", "-", "*", "•", "a)") opens an item;
   the marker is not part of the sentence.
3. Inside a block, NLTK's Punkt algorithm splits sentences with parameters this package
   ships (``data/clinical_abbreviations.txt``), so "Dr. Lee", "e.g.", "i.e.", "p.m.",
   "vs.", "approx." and "b.i.d." stay inside a sentence and decimals ("2.5 mg") are
   never split. Nothing is downloaded (``nltk.sent_tokenize`` would need ``punkt_tab``).
4. A piece with no letter or digit (a lone "." or emoji), or only a list marker
   ("2." of an inline list), is not a sentence.

Known limitation: after an abbreviation, a capitalised word starts a new sentence only
if it is a frequent sentence starter ("...at 5 p.m. Please call" splits, "...at 5 p.m.
Lee called" does not). Text in scripts Punkt does not know (e.g. Chinese "。") stays
one sentence per line.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from importlib import resources

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

__all__ = ["Sentence", "SentenceSplitter", "has_word"]

_LINE = re.compile(r"[^\r\n]+")
_LIST_MARKER = re.compile(r"\s*(?:\d{1,3}[.)]|[a-zA-Z][.)](?=\s)|[-*•·▪‣◦–—])(?=\s|$)")
_WORD = re.compile(r"[^\W_]")

#: Lower-cased words after which an abbreviation-final period may end a sentence.
DEFAULT_SENTENCE_STARTERS = frozenset(
    {"please", "then", "if", "call", "we", "you", "your", "let", "also", "our", "thank", "thanks"}
    # imperatives that open a clinician's instruction ("...on Main St. Check your BP.")
    | {"check", "take", "stop", "start", "keep", "continue", "avoid", "try", "schedule"}
)


def has_word(text: str) -> bool:
    """Return True if ``text`` holds at least one letter or digit (any script).

    >>> has_word(" 2. "), has_word(" . "), has_word("🙂")
    (True, False, False)
    """
    return _WORD.search(text) is not None


@dataclass(frozen=True)
class Sentence:
    """A sentence (or any span) of a text.

    Attributes:
        text: ``source[start:end]``, the characters as the user wrote them.
        start: offset of the first character in the source text (0-based).
        end: offset one past the last character.
    """

    text: str
    start: int
    end: int

    def to_dict(self) -> dict:
        return {"text": self.text, "start": self.start, "end": self.end}


class SentenceSplitter:
    """Split a clinical reply into sentences with character offsets.

    Args:
        abbreviations: lower-case abbreviations without their final period
            (``"e.g"`` for "e.g."). Default: the clinical list this package ships.
        sentence_starters: lower-case words that may start a sentence right after an
            abbreviation. Default: :data:`DEFAULT_SENTENCE_STARTERS`.

    Example:
        >>> splitter = SentenceSplitter()
        >>> text = "Hi Ms. Lopez,\\nTake 2.5 mg b.i.d. with food, e.g. at 8 a.m. Dr. Lee agrees."
        >>> [s.text for s in splitter.split(text)]
        ['Hi Ms. Lopez,', 'Take 2.5 mg b.i.d. with food, e.g. at 8 a.m. Dr. Lee agrees.']
        >>> [(s.start, s.end) for s in splitter.split("1. Rest.\\n2. Fluids.")]
        [(3, 8), (12, 19)]
    """

    def __init__(
        self,
        abbreviations: frozenset[str] | None = None,
        sentence_starters: frozenset[str] | None = None,
    ) -> None:
        self.abbreviations = frozenset(
            abbreviations if abbreviations is not None else load_clinical_abbreviations()
        )
        self.sentence_starters = frozenset(
            sentence_starters if sentence_starters is not None else DEFAULT_SENTENCE_STARTERS
        )
        params = PunktParameters()
        params.abbrev_types = set(self.abbreviations)
        params.sent_starters = set(self.sentence_starters)
        self._punkt = PunktSentenceTokenizer(params)

    @cached_property
    def fingerprint(self) -> str:
        """Short, stable id of this configuration, for reproducibility strings."""
        payload = (
            "\n".join(sorted(self.abbreviations)) + "|" + "\n".join(sorted(self.sentence_starters))
        )
        return "punkt-clinical:" + hashlib.sha256(payload.encode()).hexdigest()[:10]

    def split(self, text: str) -> list[Sentence]:
        """Split ``text`` into sentences.

        Args:
            text: any string; may be empty.

        Returns:
            Sentences in reading order, each with ``text == source[start:end]``,
            non-overlapping, each holding at least one letter or digit. An empty or
            whitespace-only text gives ``[]``.
        """
        sentences: list[Sentence] = []
        for line in _LINE.finditer(text):
            block_start, block = line.start(), line.group()
            marker = _LIST_MARKER.match(block)
            if marker:
                block_start += marker.end()
                block = block[marker.end() :]
            indent = len(block) - len(block.lstrip())  # Punkt keeps leading blanks
            block_start, block = block_start + indent, block[indent:]
            for start, end in self._punkt.span_tokenize(block):
                piece = block[start:end]
                # an inline list marker ("...: 1. Rest. 2. Ice.") is not a sentence
                if has_word(piece) and not _LIST_MARKER.fullmatch(piece):
                    sentences.append(Sentence(piece, block_start + start, block_start + end))
        return sentences


def load_clinical_abbreviations() -> frozenset[str]:
    """Read the shipped abbreviation list (one per line, ``#`` starts a comment)."""
    raw = resources.files("editf1.data").joinpath("clinical_abbreviations.txt").read_text("utf-8")
    words = (line.split("#", 1)[0].strip().lower() for line in raw.splitlines())
    return frozenset(w.rstrip(".") for w in words if w)
