"""Sentence splitting for clinical replies, offline, with character offsets (step 1).

Rules, in order: (1) HTML markup is not text: block tags end a line, entities are decoded, comments
and script, style and title content dropped ("<patient name>" stays text); (2) each line is a block;
(3) a list marker opening a line ("1.", "2)", "-", "•", "a)") or an inline list of consecutive
numbers is cut off; (4) other scripts' sentence ends ("。", "！", "؟", "।", ...) split; (5) so do
sentences joined without a blank, before an upper-case letter, except after an abbreviation or
initial (then only before a sentence starter) or in an address or file name; (6) inside a block,
NLTK Punkt with the shipped abbreviations; (7) a sentence over ``max_words`` words is cut into the
fewest, most even pieces, after a clause mark where one is in reach; (8) a number marker left at a
sentence start is cut off, a piece without a letter or digit dropped.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from html.entities import html5

from editf1.data import read_json, read_text

__all__ = [
    "DEFAULT_MAX_WORDS",
    "NON_LATIN_LIMIT",
    "WEB_AND_FILE_SUFFIXES",
    "Sentence",
    "SentenceSplitter",
    "has_word",
    "non_latin_share",
    "plain_text",
]

_LINE = re.compile(r"[^\r\n]+")
_LIST_MARKER = re.compile(r"\s*(?:\d{1,3}[.)]|[a-zA-Z][.)](?=\s)|[-*•·▪‣◦–—])(?=\s|$)")
_NUMBER_MARKER = re.compile(r"\d{1,3}[.)](?:\s+|$)")
_INLINE_NUMBER = re.compile(r"(?<!\S)(\d{1,3})[.)](?=\s+\S)")
_WORD = re.compile(r"[^\W_]")
_NON_BLANK = re.compile(r"\S(?:.*\S)?", re.DOTALL)
_SCRIPT_END = re.compile(r"[。｡！？؟۔।॥]+[\"'”’」』）)\]]*")
_JOINED = re.compile(r"(?<![\s.!?])[.!?]+(?=[^\W\d_])")
_WORD_BEFORE = re.compile(r"\w(?:[\w.]*\w)?$")
_TOKEN_EDGE = "()[]{}<>\"'“”‘’,;:!?."
# scripts written without blanks: Thai and Lao, Myanmar, Khmer, kana, CJK ideographs
_SPACELESS = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
_LENGTH_UNIT = re.compile(f"[{_SPACELESS}]|[^\\s{_SPACELESS}]+")
_CLAUSE_END = tuple(",;:，、；：")

#: Above this share of letters outside Latin script (:func:`non_latin_share`) the scorer
#: warns about a row, and the embedded content judge matches it on shared words only.
NON_LATIN_LIMIT = 0.2

_WORDS = {name: frozenset(words) for name, words in read_json("splitter_words.json").items()}

#: Lower-cased words after which an abbreviation-final period may end a sentence
#: (``data/splitter_words.json``, as the lists below).
DEFAULT_SENTENCE_STARTERS = _WORDS["sentence_starters"]

#: Longest sentence, in words, handed on whole (rule 7; a word is a run of non-blanks,
#: or one character of a script without blanks).
DEFAULT_MAX_WORDS = 80

#: Lower-case web and file-name suffixes (rule 5); those that are also common words
#: (.in, .it, .me, .us, .care, .health) are left out.
WEB_AND_FILE_SUFFIXES = _WORDS["web_and_file_suffixes"]

# HTML elements (rule 1): block-level ones end a line, the others are dropped
_BLOCK_TAGS, _INLINE_TAGS = _WORDS["block_tags"], _WORDS["inline_tags"]
_ATTRIBUTES = r"""(?:\s(?:[^<>"']|"[^"]*"|'[^']*')*)?"""
_MARKUP = re.compile(
    r"<!--.*?-->"  # comment
    rf"|<(?P<dropped>script|style|title)\b{_ATTRIBUTES}>.*?</(?P=dropped)\s*>"  # and content
    rf"|</?(?P<tag>[a-zA-Z][a-zA-Z0-9:]*){_ATTRIBUTES}/?>"
    r"|<[!?][^<>]*>"  # declaration, processing instruction
    r"|&(?P<entity>#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);?",
    re.DOTALL | re.IGNORECASE,
)


def has_word(text: str) -> bool:
    """Whether ``text`` holds at least one letter or digit (any script)."""
    return _WORD.search(text) is not None


def non_latin_share(text: str) -> float:
    """Share of the letters of ``text`` (``str.isalpha``) not in Latin script, in [0, 1];
    0.0 without a letter.
    """
    letters = [c for c in text if c.isalpha()]
    other = sum("LATIN" not in unicodedata.name(c, "") for c in letters)
    return other / len(letters) if letters else 0.0


@dataclass(frozen=True)
class Sentence:
    """A span of a text: ``text`` (``plain_text(source[start:end])``), ``start`` and ``end``
    (0-based character offsets, end exclusive).
    """

    text: str
    start: int
    end: int

    def to_dict(self) -> dict:
        return {"text": self.text, "start": self.start, "end": self.end}


class _Source:
    """A text and its plain text (rule 1): character ``i`` from ``original[starts[i]:ends[i]]``."""

    def __init__(self, original: str) -> None:
        self.original = self.plain = original
        self.starts = self.ends = None
        if "<" not in original and "&" not in original:
            return
        parts, starts, ends, position = [], [], [], 0
        replaced = ((m, _replacement(m)) for m in _MARKUP.finditer(original))
        for m, replacement in [*((m, r) for m, r in replaced if r is not None), (None, None)]:
            end = len(original) if m is None else m.start()
            parts.append(original[position:end])  # text kept as written, then the replacement
            starts.extend(range(position, end))
            ends.extend(range(position + 1, end + 1))
            if m is not None:
                parts.append(replacement)
                starts.extend([m.start()] * len(replacement))
                ends.extend([m.end()] * len(replacement))
                position = m.end()
        if len(parts) > 1:
            self.plain, self.starts, self.ends = "".join(parts), starts, ends

    def sentence(self, start: int, end: int) -> Sentence:
        if self.starts is None:
            return Sentence(self.original[start:end], start, end)
        return Sentence(self.plain[start:end], self.starts[start], self.ends[end - 1])


def _replacement(markup: re.Match) -> str | None:
    """What markup becomes ("\n", an entity decoded, ""), or ``None`` to keep it as written."""
    tag, entity = markup.group("tag"), markup.group("entity")
    if tag is not None:
        tag = tag.lower()
        return "\n" if tag in _BLOCK_TAGS else "" if tag in _INLINE_TAGS else None
    if entity is not None:
        known = entity.startswith("#") or (
            f"{entity};" in html5 if markup.group().endswith(";") else entity in html5
        )
        decoded = html.unescape(markup.group())
        return "".join(" " if c.isspace() else c for c in decoded) if known else None
    return ""


def plain_text(text: str) -> str:
    """``text`` as the splitter reads it (rule 1)."""
    return _Source(text).plain


class SentenceSplitter:
    """Split a clinical reply into sentences with character offsets (the module's rules),
    given lower-case ``abbreviations`` without their final period (default: the shipped
    list), the ``sentence_starters`` that may follow one, and ``max_words``, an int >= 1
    (ValueError otherwise).

    >>> html = "<p>Rest&nbsp;today.</p><p>Call us.Your CT is clear.</p>"
    >>> [(s.text, s.start, s.end) for s in SentenceSplitter().split(html)]
    [('Rest today.', 3, 19), ('Call us.', 26, 34), ('Your CT is clear.', 34, 51)]
    """

    def __init__(
        self,
        abbreviations: frozenset[str] | None = None,
        sentence_starters: frozenset[str] | None = None,
        max_words: int = DEFAULT_MAX_WORDS,
    ) -> None:
        self.abbreviations = frozenset(
            abbreviations if abbreviations is not None else load_clinical_abbreviations()
        )
        self.sentence_starters = frozenset(
            sentence_starters if sentence_starters is not None else DEFAULT_SENTENCE_STARTERS
        )
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
            raise ValueError(f"max_words must be an int >= 1, got {max_words!r}")
        self.max_words = max_words
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

        params = PunktParameters()
        params.abbrev_types = set(self.abbreviations)
        params.sent_starters = set(self.sentence_starters)
        self._punkt = PunktSentenceTokenizer(params)

    @cached_property
    def fingerprint(self) -> str:
        """Short, stable id of this configuration, for reproducibility strings."""
        rules = f"markup,inline-lists,scripts,joined,max_words={self.max_words}"  # this version's
        words = ("\n".join(sorted(words)) for words in (self.abbreviations, self.sentence_starters))
        payload = "|".join([*words, rules])
        return "punkt-clinical:" + hashlib.sha256(payload.encode()).hexdigest()[:10]

    def split(self, text: str) -> list[Sentence]:
        """Sentences of ``text`` in reading order, non-overlapping, each with a letter or digit
        and at most ``max_words`` words; ``[]`` for a blank text.
        """
        source = _Source(text)
        sentences: list[Sentence] = []
        for line in _LINE.finditer(source.plain):
            for block_start, block_end in self._blocks(line.group()):
                block = line.group()[block_start:block_end]
                offset = line.start() + block_start
                for first, end in self._punkt.span_tokenize(block):
                    marker = _NUMBER_MARKER.match(block, first, end)
                    first = marker.end() if marker else first  # rule 8
                    if not has_word(block[first:end]):
                        continue
                    for a, b in self._pieces(block[first:end]):
                        sentences.append(source.sentence(offset + first + a, offset + first + b))
        return sentences

    def _blocks(self, line: str) -> list[tuple[int, int]]:
        """``(start, end)`` of the parts of a line Punkt splits (rules 3 to 5)."""
        cuts: list[tuple[int, int]] = []  # removed spans; (i, i) is a cut at i
        marker = _LIST_MARKER.match(line)
        expected = None
        if marker:
            cuts.append((0, marker.end()))
            number = marker.group().strip()[:-1]
            expected = int(number) + 1 if number.isdigit() else None
        cuts += self._inline_list(line, marker.end() if marker else 0, expected)
        cuts += [(m.end(), m.end()) for m in _SCRIPT_END.finditer(line)]
        cuts += [(m.end(), m.end()) for m in _JOINED.finditer(line) if self._joined(line, m)]
        blocks, position = [], 0
        for start, end in [*sorted(cuts), (len(line), len(line))]:
            if start >= position and (text := _NON_BLANK.search(line, position, start)):
                blocks.append(text.span())
            position = max(position, end)
        return blocks

    @staticmethod
    def _inline_list(line: str, start: int, expected: int | None) -> list[tuple[int, int]]:
        """Spans of the markers of inline numbered lists after ``start`` (rule 3)."""
        chains: list[list[re.Match]] = []
        chain: list[re.Match] = []
        opened = expected is not None  # the line's own marker counts in the first run
        for m in _INLINE_NUMBER.finditer(line, start):
            number = int(m.group(1))
            if expected is not None and number == expected:
                chain.append(m)
                expected += 1
            elif number == 1:
                if len(chain) + opened >= 2:
                    chains.append(chain)
                chain, expected, opened = [m], 2, False
        if len(chain) + opened >= 2:
            chains.append(chain)
        return [m.span() for c in chains for m in c]

    def _joined(self, line: str, mark: re.Match) -> bool:
        """Whether the ".", "!" or "?" run ``mark`` ends a sentence (rule 5)."""
        before, after = line[: mark.start()], line[mark.end() :]
        if not (
            before and after[0].isupper() and (before[-1].isalpha() or before[-1] in ")]\"'”’")
        ):
            return False
        token_start = len(before) - len(before.split()[-1]) if before.split() else 0
        token = line[token_start:].split(maxsplit=1)[0].strip(_TOKEN_EDGE)
        if "@" in token or "://" in token or token.lower().startswith("www."):
            return False
        next_word = after.split(maxsplit=1)[0]
        if mark.group() != ".":
            return True
        rest = next_word.rstrip(_TOKEN_EDGE)
        if re.fullmatch(r"[\w-]+(?:\.[\w-]+)*", rest) and (
            rest.rsplit(".", 1)[-1].lower() in WEB_AND_FILE_SUFFIXES
        ):
            return False
        word = _WORD_BEFORE.search(before)
        if word is not None:
            # "b.i.d" is one abbreviation; in "today.Dr" the word is "dr"
            word, last = word.group().lower(), word.group().lower().rsplit(".", 1)[-1]
            if word in self.abbreviations or last in self.abbreviations or len(last) == 1:
                starter = re.match(r"[^\W\d_]+", next_word)
                return starter is not None and starter.group().lower() in self.sentence_starters
        return True

    def _pieces(self, sentence: str) -> list[tuple[int, int]]:
        """``(start, end)`` of the pieces of a sentence of at most ``max_words`` words (rule 7)."""
        units = list(_LENGTH_UNIT.finditer(sentence))
        if len(units) <= self.max_words:
            return [(0, len(sentence))]
        pieces, first = [], 0
        left = math.ceil(len(units) / self.max_words)  # pieces still to cut
        while left > 1:
            remaining = len(units) - first
            target = round(remaining / left)
            # a piece of `size` words leaves at most max_words for each later piece
            low = max(1, remaining - (left - 1) * self.max_words)
            sizes = [
                size
                for size in range(low, self.max_words + 1)
                if units[first + size - 1].group().endswith(_CLAUSE_END)
            ]
            size = min(sizes, key=lambda s: (abs(s - target), s)) if sizes else target
            size = min(max(size, low), self.max_words)
            pieces.append((units[first].start(), units[first + size - 1].end()))
            first += size
            left -= 1
        pieces.append((units[first].start(), len(sentence)))
        return pieces


def load_clinical_abbreviations() -> frozenset[str]:
    """Read the shipped abbreviation list (one per line, ``#`` starts a comment)."""
    raw = read_text("clinical_abbreviations.txt")
    words = (line.split("#", 1)[0].strip().lower() for line in raw.splitlines())
    return frozenset(w.rstrip(".") for w in words if w)
