"""Judges behind an OpenAI-compatible server (vLLM, TGI, llama.cpp, SGLang, Ollama,
``transformers serve``; ``docs/serving.md``), registered as ``"server"``: one greedy chat
request per sentence with the in-process judges' prompts (Seegmiller et al., arXiv
2601.11344, Appendix C), answered from a closed set of choices (:func:`choose`), through
:mod:`editf1.judges.connection`.
"""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal

from editf1.inputs import check_fraction, read_bool
from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeConfig,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.connection import Connection, Reply, check_local
from editf1.judges.generative.config import DECISION_WINDOW
from editf1.judges.generative.prompts import (
    CONTENT_PROMPT,
    NO_MATCH,
    THEME_PROMPT,
    content_messages,
    reads_no_match,
    theme_messages,
)
from editf1.judges.progress import judged
from editf1.judges.spans import candidate_spans
from editf1.themes import THEMES

__all__ = [
    "Choice",
    "ServerContentJudge",
    "ServerJudgeConfig",
    "ServerJudgeError",
    "ServerJudgeWarning",
    "ServerThemeJudge",
    "check_local",
    "choose",
    "normalise",
]

_CONSTRAINTS = ("auto", "json_schema", "none")
_PROBE = "edit-f1-probe-ok"
#: The largest answer body read: 32 bytes a token and 16 KiB of JSON around it.
_BYTES_PER_TOKEN, _BODY_OVERHEAD = 32, 1 << 14
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


class ServerJudgeWarning(UserWarning):
    """A server judge normalised answers or got none for some requests (counts attached)."""


class ServerJudgeError(ConnectionError):
    """More than ``max_failed_share`` of one judging call's requests failed: no scores."""


@dataclass(frozen=True)
class Choice:
    """Which choice an answer picks: ``index`` (``None`` when unusable) and ``how``
    (``"exact"``, ``"normalised"`` or ``"unusable"``).
    """

    index: int | None
    how: Literal["exact", "normalised", "unusable"]


def _normal(text: str) -> str:
    return " ".join(text.split())


def normalise(text: str) -> str:
    """``text`` as compared when it is not exactly a choice: NFKC, case, curly quotes,
    whitespace, surrounding quotes, backticks or asterisks and one final full stop ignored;
    nothing else (no similarity: "Do not take it." never becomes "Take it.").

    >>> normalise(' "Take 2.5 mg b.i.d."  '), normalise("**No  Match**")
    ('take 2.5 mg b.i.d', 'no match')
    """
    text = _normal(unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold())
    text = text.strip("\"'`* ")
    return text[:-1].rstrip() if text.endswith(".") else text


def _answer_text(answer: str) -> str:
    """The ``answer`` field of a JSON answer, else the text itself."""
    try:
        value = json.loads(answer)
    except ValueError:
        return answer
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        return value["answer"]
    return answer


def choose(answer: str, choices: Sequence[str], *, by_first_words: bool = False) -> Choice:
    """Map a server's answer (a JSON object's ``answer`` field, else the text) onto one of
    ``choices``: ``"exact"`` up to whitespace, ``"normalised"`` once both are
    :func:`normalise` d (or, with ``by_first_words``, the first words of exactly one
    choice), else ``"unusable"``.

    >>> choose('{"answer": "Rest well."}', ["Rest well.", "NO MATCH"])
    Choice(index=0, how='exact')
    >>> choose("no match", ["Rest well.", "NO MATCH"])
    Choice(index=1, how='normalised')
    """
    text = _normal(_answer_text(answer))
    normals = [_normal(c) for c in choices]
    if text in normals:
        return Choice(normals.index(text), "exact")
    lenient = normalise(text)
    if not lenient:
        return Choice(None, "unusable")
    forms = [normalise(c) for c in choices]
    if lenient in forms:
        return Choice(forms.index(lenient), "normalised")
    if by_first_words:
        words = lenient.split()
        starts = [i for i, form in enumerate(forms) if form.split()[: len(words)] == words]
        if len(starts) == 1:
            return Choice(starts[0], "normalised")
    return Choice(None, "unusable")


@dataclass(frozen=True)
class ServerJudgeConfig(JudgeConfig):
    """Settings of a server judge, content or theme (the fields' help says what each does).

    Raises:
        ValueError: a bad ``constraint``, ``max_failed_share`` or ``allow_remote``.
    """

    base_url: str = field(
        metadata={"help": "the server's OpenAI API root, e.g. http://127.0.0.1:8000/v1"}
    )
    model: str | None = field(
        default=None,
        metadata={"help": "the served model's name; none: the one model /v1/models lists"},
    )
    _: KW_ONLY
    adapter: str | None = field(
        default=None,
        metadata={"help": "a LoRA adapter the server serves by name; requests name it"},
    )
    api_key_env: str | None = field(
        default=None,
        metadata={"help": "the NAME of an environment variable holding the server's key"},
    )
    max_concurrency: int = field(default=4, metadata={"help": "requests in flight at once"})
    timeout_s: float = field(
        default=60.0,
        metadata={"help": "total seconds per request attempt, queue and answer included"},
    )
    retries: int = field(
        default=2,
        metadata={"help": "further attempts after a timeout, lost connection, 408/409/429, 5xx"},
    )
    allow_remote: bool = field(
        default=False,
        metadata={"help": "true: a host other than this machine; clinical text leaves it"},
    )
    constraint: str = field(
        default="auto",
        metadata={
            "help": f"one of {list(_CONSTRAINTS)}: a JSON-schema enum of the answers, free "
            "text, or auto (the schema if one probe shows the server enforces it)"
        },
    )
    max_failed_share: float = field(
        default=0.1,
        metadata={
            "help": "largest share of a judging call's requests that may fail; past it the "
            "run stops"
        },
    )

    def __post_init__(self) -> None:
        if self.constraint not in _CONSTRAINTS:
            raise ValueError(
                f"constraint must be one of {list(_CONSTRAINTS)}, got {self.constraint!r}"
            )
        share = check_fraction("max_failed_share", self.max_failed_share)
        object.__setattr__(self, "max_failed_share", share)
        object.__setattr__(self, "allow_remote", read_bool("allow_remote", self.allow_remote))


class _ServerJudge:
    """Options shared by both server judges (see :class:`ServerContentJudge`)."""

    task: Literal["content", "theme"]
    _prompt: str

    def __init__(self, *args, config: ServerJudgeConfig | None = None, **options) -> None:
        if config is None:
            config = ServerJudgeConfig(*args, **options)
        elif args or options:
            raise ValueError("give config or options, not both")
        self.config = c = config
        names = ("api_key_env", "max_concurrency", "timeout_s", "retries", "allow_remote")
        self.connection = Connection(c.base_url, **{n: getattr(c, n) for n in names})
        self.max_failed_share = c.max_failed_share
        self.base_url = self.connection.shown
        self.counts: Counter[str] = Counter()
        self.model = self.connection.served_model(c.model, c.adapter)
        self.adapter = c.adapter
        self.constraint = self._constraint_note = c.constraint
        if c.constraint == "auto":
            self.constraint = self._probe()
            self._constraint_note = f"{self.constraint}(detected)"

    @property
    def fingerprint(self) -> str:
        return (
            f"server-{self.task}(model={self.model},adapter={self.adapter or 'none'},"
            f"base_url={self.base_url},prompt={self._prompt}/server-chat-template,"
            f"temperature=0,constraint={self._constraint_note},"
            f"answers=exact-or-normalised{self.connection.note})"
        )

    def _body(self, messages: list[dict], choices: Sequence[str]) -> dict:
        body = {
            "model": self.adapter or self.model,
            "messages": messages,
            "temperature": 0.0,
            # A token is at least one character; 32 more for JSON and stray whitespace.
            "max_tokens": max(len(c) for c in choices) + 32,
        }
        if self.constraint == "json_schema":
            body["response_format"] = _json_schema(choices)
        return body

    def _ask_all(self, bodies: list[dict]) -> list[Reply]:
        """Every request, each answer reported to the caller's progress as it arrives."""
        longest = max((b["max_tokens"] for b in bodies), default=0)
        return self.connection.chat(
            bodies, _BODY_OVERHEAD + _BYTES_PER_TOKEN * longest, on_reply=judged
        )

    def _probe(self) -> str:
        """``"json_schema"`` if a request without clinical text shows the server enforces it."""
        body = self._body([{"role": "user", "content": "Reply with one word."}], [_PROBE])
        body["response_format"] = _json_schema([_PROBE])
        [reply] = self._ask_all([body])
        if reply.failure is not None and re.fullmatch(r"HTTP 4\d\d", reply.failure):
            return "none"  # the server refuses the field
        if reply.failure is not None:
            raise ConnectionError(
                f"{self.base_url} failed a probe request (no clinical text): {reply.failure}"
            )
        text, _ = _answer(reply)
        return "json_schema" if choose(text or "", [_PROBE]).how == "exact" else "none"

    def _pick(self, reply: Reply, choices: Sequence[str], calls: Counter, no_match=None):
        """``(index or None, raw)`` of one reply, counted; NO MATCH is choice ``no_match``."""
        text, failure = _answer(reply)
        if text is None:
            key, index, raw = f"failed: {failure}", None, f"[no answer: {failure}]"
        else:
            picked = choose(text, choices, by_first_words=no_match is None)
            if no_match is not None and reads_no_match(_answer_text(text)):
                how = picked.how if picked.index == no_match else "normalised"
                picked = Choice(no_match, how)
            key, index, raw = picked.how, picked.index, text
            if picked.how == "normalised":
                raw = f"[normalised to a choice] {text}"
        calls[key] += 1
        self.counts[key] += 1
        return index, raw

    def _report(self, calls: Counter) -> None:
        """Refuse a call with too many failed requests; warn of lost or normalised answers."""
        lost = {k: n for k, n in calls.items() if k != "exact"}
        if not lost:
            return
        total = sum(calls.values())
        detail = ", ".join(f"{k}: {n}" for k, n in sorted(lost.items()))
        failed = sum(n for k, n in calls.items() if k.startswith("failed: "))
        if failed > self.max_failed_share * total:
            raise ServerJudgeError(
                f"server {self.task} judge at {self.base_url}: {failed} of {total} requests "
                f"failed ({detail}), more than max_failed_share={self.max_failed_share:g} "
                "allows; no scores are computed from a failing server"
            )
        warnings.warn(
            f"server {self.task} judge at {self.base_url}: of {total} answers, {detail} "
            "(normalised answers are used, failed and unusable ones count as unusable)",
            ServerJudgeWarning,
            stacklevel=3,
        )


def _answer(reply: Reply) -> tuple[str | None, str | None]:
    """``(text, None)`` of a chat completion's first answer, or ``(None, reason)``."""
    if reply.payload is None:
        return None, reply.failure
    try:
        choice = reply.payload["choices"][0]
        text, finish = choice["message"]["content"], choice.get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None, "malformed response"
    if not isinstance(text, str) or not text.strip():
        return None, "empty answer"
    if finish == "length":
        return None, "cut off at max_tokens"
    return text, None


def _json_schema(choices: Sequence[str]) -> dict:
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "edit_f1_answer",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"answer": {"type": "string", "enum": list(choices)}},
                "required": ["answer"],
                "additionalProperties": False,
            },
        },
    }


class ServerContentJudge(_ServerJudge, ContentJudge):
    """Content judge behind an OpenAI-compatible server: for each reference sentence, a
    draft span or NO MATCH (``score`` ``None``), chosen from the candidate spans.

    Options: the fields of :class:`ServerJudgeConfig` (``base_url`` and ``model`` also by
    position), or ``config=``.

    Raises:
        ValueError: bad options, a remote host without ``allow_remote``, a ``model`` or
            ``adapter`` not served, or several served models and no ``model``.
        ConnectionError: no server answers at ``base_url``.
        ServerJudgeError: more than ``max_failed_share`` of a call's requests failed.
    """

    task = "content"
    _prompt = CONTENT_PROMPT

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        plans, bodies = [], []
        for request in requests:
            spans = {}
            sentences = request.prediction_sentences
            for span in candidate_spans(request.prediction, sentences, DECISION_WINDOW):
                if not reads_no_match(span.text):  # NO MATCH is never a draft span
                    spans.setdefault(span.text, span)
            choices = [*spans, NO_MATCH]
            plans.append((list(spans.values()), choices))
            if spans:
                bodies += [
                    self._body(content_messages(request.prediction, s.text), choices)
                    for s in request.reference_sentences
                ]
        replies = iter(self._ask_all(bodies))
        calls: Counter[str] = Counter()
        results = []
        for request, (spans, choices) in zip(requests, plans):
            judgements = []
            for _ in request.reference_sentences:
                index, raw = len(spans), None  # no span: NO MATCH without a request
                if spans:
                    index, raw = self._pick(next(replies), choices, calls, no_match=len(spans))
                if index is None:
                    judgements.append(ContentJudgement("unusable", raw=raw))
                elif index == len(spans):
                    judgements.append(ContentJudgement("no_match", raw=raw))
                else:
                    judgements.append(ContentJudgement("match", spans[index], raw=raw))
            results.append(judgements)
        self._report(calls)
        return results


class ServerThemeJudge(_ServerJudge, ThemeJudge):
    """Theme judge behind an OpenAI-compatible server: one of the nine labels per sentence.
    Options and errors as :class:`ServerContentJudge`; ``score`` is ``None``.
    """

    task = "theme"
    _prompt = THEME_PROMPT

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        replies = self._ask_all([self._body(theme_messages(s), THEMES) for s in sentences])
        calls: Counter[str] = Counter()
        out = []
        for reply in replies:
            index, raw = self._pick(reply, THEMES, calls)
            out.append(ThemeJudgement(None if index is None else THEMES[index], raw=raw))
        self._report(calls)
        return out
