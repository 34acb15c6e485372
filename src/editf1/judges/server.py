"""Judges behind an OpenAI-compatible server: vLLM, Text Generation Inference, llama.cpp's
``llama-server``, SGLang, Ollama or ``transformers serve``.

Registered as ``"server"`` for both judges. Each reference sentence (content) or
sentence (theme) is one chat request with the in-process LLM judges' prompts
(:func:`~editf1.judges.generative.prompts.content_messages`,
:func:`~editf1.judges.generative.prompts.theme_messages`; Seegmiller et al., arXiv
2601.11344, Appendix C), sent with the ``openai`` client: asynchronous, at most
``max_concurrency`` at a time, greedy (temperature 0), retried with exponential backoff
on 408/409/429/5xx, timeouts and lost connections (the client's own retry policy).

Answers are chosen from a closed set: the content judge's *choices* are the draft's
candidate spans (every sentence and every run of two adjacent sentences, as
:func:`editf1.judges.spans.candidate_spans`) plus NO MATCH; the theme judge's are
the nine labels. With ``constraint="json_schema"`` the request carries a JSON-schema
``response_format`` whose ``answer`` is an enum of the choices (vLLM, SGLang, llama.cpp,
TGI and Ollama enforce it); with ``"none"`` the text is free. Either way an answer that
is not exactly a choice (up to whitespace) is *snapped* to the most similar choice
(:func:`choose`) when their similarity is at least :data:`SNAP_MIN_SIMILARITY`, and is
unusable otherwise. ``"auto"`` (default) sends one probe request without clinical text
and uses ``json_schema`` only if the server enforced it (``transformers serve``, for
one, accepts the field and ignores it).

Every answer is counted in :attr:`counts` (``"exact"``, ``"snapped"``, ``"unusable"``,
and ``"failed: REASON"`` for requests that got no answer after the retries); failed and
unusable answers are returned as unusable judgements, which the scorer counts and
reports, and each judging call that snapped or lost answers warns
(:class:`ServerJudgeWarning`) with its counts. No request or response text is logged.

Clinical text stays on this machine unless the user says otherwise: ``base_url`` must
name a loopback host (127.0.0.0/8, ``localhost``, ``::1``) unless ``allow_remote=True``.
"""

from __future__ import annotations

import asyncio
import difflib
import ipaddress
import json
import os
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)
from editf1.judges.generative.prompts import (
    CONTENT_PROMPT,
    NO_MATCH,
    THEME_PROMPT,
    content_messages,
    theme_messages,
)
from editf1.judges.spans import candidate_spans
from editf1.themes import THEMES

__all__ = [
    "SNAP_MIN_SIMILARITY",
    "Choice",
    "ServerContentJudge",
    "ServerJudgeWarning",
    "ServerThemeJudge",
    "check_local",
    "choose",
]

#: The least similarity (:class:`difflib.SequenceMatcher` ratio, in [0, 1]) at which an
#: answer that is not exactly a choice is snapped to its most similar choice.
SNAP_MIN_SIMILARITY = 0.5

Constraint = Literal["auto", "json_schema", "none"]
_CONSTRAINTS = ("auto", "json_schema", "none")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROBE = "edit-f1-probe-ok"


class ServerJudgeWarning(UserWarning):
    """A server judge snapped answers or got none for some requests (counts attached)."""


@dataclass(frozen=True)
class Choice:
    """Which choice an answer picks.

    Attributes:
        index: into the choices; ``None`` when the answer is unusable.
        how: ``"exact"``, ``"snapped"`` or ``"unusable"``.
        similarity: to the chosen (or, when unusable, the most similar) choice, in [0, 1].
    """

    index: int | None
    how: Literal["exact", "snapped", "unusable"]
    similarity: float


def _normal(text: str) -> str:
    return " ".join(text.split())


def _answer_text(answer: str) -> str:
    """The ``answer`` field of a JSON answer, else the text itself."""
    try:
        value = json.loads(answer)
    except ValueError:
        return answer
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        return value["answer"]
    return answer


def choose(answer: str, choices: Sequence[str]) -> Choice:
    """Map a server's answer onto one of ``choices``.

    A JSON object's ``answer`` field is read, else the whole text. Equal to a choice up
    to whitespace: ``"exact"``; else the most similar choice (case-insensitive
    :class:`difflib.SequenceMatcher` ratio; ties go to the earlier choice) if the ratio
    is at least :data:`SNAP_MIN_SIMILARITY`: ``"snapped"``; else ``"unusable"``.

    Args:
        answer: the answer's text.
        choices: C >= 1 allowed answers.

    >>> choose('{"answer": "Rest well."}', ["Rest well.", "NO MATCH"])
    Choice(index=0, how='exact', similarity=1.0)
    >>> choose("no match", ["Rest well.", "NO MATCH"])
    Choice(index=1, how='snapped', similarity=1.0)
    >>> choose("Call 911.", ["Rest well.", "NO MATCH"]).how
    'unusable'
    """
    text = _normal(_answer_text(answer))
    normals = [_normal(c) for c in choices]
    if text in normals:
        return Choice(normals.index(text), "exact", 1.0)
    ratios = [
        difflib.SequenceMatcher(None, text.lower(), c.lower(), autojunk=False).ratio()
        for c in normals
    ]
    best = max(range(len(ratios)), key=lambda i: (ratios[i], -i))
    if text and ratios[best] >= SNAP_MIN_SIMILARITY:
        return Choice(best, "snapped", ratios[best])
    return Choice(None, "unusable", ratios[best])


def check_local(base_url: str, allow_remote: bool) -> str:
    """Return ``base_url`` if it is an http(s) URL of this machine, or ``allow_remote``.

    Raises:
        ValueError: not an http(s) URL with a host, or (without ``allow_remote``) a host
            that is not loopback (127.0.0.0/8, ``localhost``, ``::1``).

    >>> check_local("http://127.0.0.1:8000/v1", False)
    'http://127.0.0.1:8000/v1'
    """
    parts = urlsplit(str(base_url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}"
        )
    host = parts.hostname
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not (loopback or allow_remote):
        raise ValueError(
            f"base_url host {host!r} is not this machine (loopback: 127.0.0.0/8, localhost, "
            "::1). A server judge sends every reference and draft sentence to its server, so "
            "with another host clinical text leaves this machine; pass allow_remote=True "
            "only if that server may receive it (your data agreement, de-identified text)"
        )
    return str(base_url)


@dataclass(frozen=True)
class _Reply:
    text: str | None
    failure: str | None = None


def _run(coroutine):
    """Run a coroutine to completion from synchronous code, also where an event loop
    is already running in this thread (a notebook): then in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class _ServerJudge:
    """Options shared by both server judges (see :class:`ServerContentJudge`)."""

    task: Literal["content", "theme"]
    _prompt: str

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        adapter: str | None = None,
        api_key_env: str | None = None,
        max_concurrency: int = 4,
        timeout_s: float = 60.0,
        retries: int = 2,
        allow_remote: bool = False,
        constraint: Constraint = "auto",
    ) -> None:
        import openai

        self.base_url = check_local(base_url, bool(allow_remote))
        if int(max_concurrency) < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if not float(timeout_s) > 0:
            raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s}")
        if int(retries) < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        if constraint not in _CONSTRAINTS:
            raise ValueError(f"constraint must be one of {list(_CONSTRAINTS)}, got {constraint!r}")
        self.max_concurrency = int(max_concurrency)
        self._client_options = {
            "base_url": self.base_url,
            "api_key": _api_key(api_key_env),
            "timeout": float(timeout_s),
            "max_retries": int(retries),
        }
        self.timeout_s, self.retries = float(timeout_s), int(retries)
        self.counts: Counter[str] = Counter()
        with self._client(openai.OpenAI) as client:
            self.model = _served_model(client, model, adapter, self.base_url)
            self.adapter = adapter
            if constraint == "auto":
                self.constraint = _probe(client, adapter or self.model)
                self._constraint_note = f"{self.constraint}(detected)"
            else:
                self.constraint = constraint
                self._constraint_note = constraint

    def _client(self, cls):
        client = cls(**self._client_options)
        # Only what the user named is sent: no organisation or project read from the
        # environment by the openai package.
        client.organization = client.project = None
        return client

    @property
    def fingerprint(self) -> str:
        return (
            f"server-{self.task}(model={self.model},adapter={self.adapter or 'none'},"
            f"base_url={self.base_url},prompt={self._prompt}/server-chat-template,"
            f"temperature=0,constraint={self._constraint_note},"
            f"snap_min_similarity={SNAP_MIN_SIMILARITY})"
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

    def _ask_all(self, bodies: list[dict]) -> list[_Reply]:
        import openai

        async def ask_all():
            semaphore = asyncio.Semaphore(self.max_concurrency)
            async with self._client(openai.AsyncOpenAI) as client:
                return await asyncio.gather(*(_ask(client, semaphore, b) for b in bodies))

        return _run(ask_all()) if bodies else []

    def _pick(self, reply: _Reply, choices: Sequence[str], calls: Counter) -> tuple:
        """``(index or None, raw)`` for one reply, counted in ``calls`` and :attr:`counts`."""
        if reply.text is None:
            key, index, raw = f"failed: {reply.failure}", None, f"[no answer: {reply.failure}]"
        else:
            picked = choose(reply.text, choices)
            key, index, raw = picked.how, picked.index, reply.text
            if picked.how == "snapped":
                raw = f"[snapped to a choice, similarity {picked.similarity:.2f}] {reply.text}"
        calls[key] += 1
        self.counts[key] += 1
        return index, raw

    def _warn(self, calls: Counter) -> None:
        lost = {k: n for k, n in calls.items() if k != "exact"}
        if lost:
            total = sum(calls.values())
            detail = ", ".join(f"{k}: {n}" for k, n in sorted(lost.items()))
            warnings.warn(
                f"server {self.task} judge at {self.base_url}: of {total} answers, {detail} "
                "(snapped answers are used, failed and unusable ones count as unusable)",
                ServerJudgeWarning,
                stacklevel=3,
            )


def _api_key(api_key_env: str | None) -> str:
    if api_key_env is None:
        return "none"  # the openai client needs a value; local servers ignore it
    if not isinstance(api_key_env, str) or not _ENV_NAME.match(api_key_env):
        raise ValueError(
            "api_key_env is the NAME of an environment variable holding the key (e.g. "
            "VLLM_API_KEY); the value given is not a variable name (never pass the key itself)"
        )
    if not os.environ.get(api_key_env):
        raise ValueError(f"api_key_env names {api_key_env}, but that environment variable is unset")
    return os.environ[api_key_env]


def _served_model(client, model: str | None, adapter: str | None, base_url: str) -> str:
    """The model to name in requests, checked against ``/v1/models``."""
    import openai

    try:
        listed = {m.id: m for m in client.models.list()}
    except openai.APIStatusError as error:
        raise ConnectionError(
            f"{base_url}/models answered HTTP {error.status_code}: is this the /v1 address of an "
            "OpenAI-compatible server?"
        ) from None
    except openai.APIConnectionError:
        raise ConnectionError(
            f"no server answers at {base_url}; start one (e.g. `transformers serve MODEL "
            "--host 127.0.0.1 --port 8000`, `vllm serve MODEL`) or check base_url"
        ) from None
    served = list(listed)
    for name, what in ((model, "model"), (adapter, "adapter")):
        if name is not None and name not in listed:
            raise ValueError(f"{what} {name!r} is not served at {base_url}; it serves {served}")
    if model is not None:
        return model
    if adapter is not None:  # vLLM lists an adapter with its base model as parent
        return str(getattr(listed[adapter], "parent", None) or "unknown")
    if len(served) != 1:
        raise ValueError(
            f"{base_url} serves {len(served)} models {served}: name one with the model option"
        )
    return served[0]


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


def _probe(client, model: str) -> str:
    """``"json_schema"`` if the server makes an answer follow a JSON schema, else
    ``"none"``: one request, no clinical text, whose only schema-valid answer no model
    would write unasked."""
    import openai

    try:
        completion = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Reply with one word."}],
            temperature=0.0,
            max_tokens=32,
            response_format=_json_schema([_PROBE]),
        )
    except openai.APIStatusError as error:
        if 400 <= error.status_code < 500:
            return "none"  # the server refuses the field
        raise ConnectionError(
            f"the server failed a probe request: HTTP {error.status_code}"
        ) from None
    except openai.APIConnectionError:
        raise ConnectionError("the server did not answer a probe request") from None
    choices = getattr(completion, "choices", None) or [None]
    text = getattr(getattr(choices[0], "message", None), "content", None) or ""
    return "json_schema" if choose(text, [_PROBE]).how == "exact" else "none"


async def _ask(client, semaphore: asyncio.Semaphore, body: dict) -> _Reply:
    """One chat request; what went wrong, if anything, as a short reason (no text)."""
    import openai

    async with semaphore:
        try:
            completion = await client.chat.completions.create(**body)
        except openai.APITimeoutError:
            return _Reply(None, "timeout")
        except openai.APIConnectionError:
            return _Reply(None, "connection lost")
        except openai.APIStatusError as error:
            return _Reply(None, f"HTTP {error.status_code}")
        except openai.OpenAIError:
            return _Reply(None, "malformed response")
    try:
        choice = completion.choices[0]
        text, finish = choice.message.content, choice.finish_reason
    except (AttributeError, IndexError, TypeError):
        return _Reply(None, "malformed response")
    if not isinstance(text, str) or not text.strip():
        return _Reply(None, "empty answer")
    if finish == "length":
        return _Reply(None, "cut off at max_tokens")
    return _Reply(text)


class ServerContentJudge(_ServerJudge, ContentJudge):
    """Content judge behind an OpenAI-compatible server: for each reference sentence, the
    draft span that says the same thing, or NO MATCH (Seegmiller et al., Appendix C).

    Args:
        base_url: the server's OpenAI API root, e.g. ``"http://127.0.0.1:8000/v1"``.
        model: the served model's name; default: the one model ``/v1/models`` lists.
        adapter: a LoRA adapter the server serves by name (e.g. vLLM's
            ``--lora-modules judge=FOLDER``); requests name it instead of ``model``.
        api_key_env: the NAME of an environment variable holding the server's key
            (never the key itself); default: no key.
        max_concurrency: requests in flight at once (>= 1). A server that answers one
            at a time keeps the others waiting, within their ``timeout_s``.
        timeout_s: seconds per request attempt, waiting in the server's queue included
            (> 0).
        retries: further attempts after a timeout, lost connection, 408/409/429 or 5xx
            (>= 0), with the openai client's exponential backoff.
        allow_remote: accept a ``base_url`` that is not this machine (clinical text
            then leaves it).
        constraint: ``"auto"``, ``"json_schema"`` or ``"none"`` (see the module).

    A draft without sentences is NO MATCH without a request. ``score`` is ``None``.

    Raises:
        ValueError: bad options, a non-loopback host without ``allow_remote``, a
            ``model`` or ``adapter`` the server does not serve (the message lists those
            it does), or several served models and no ``model``.
        ConnectionError: no server answers at ``base_url``.
    """

    task = "content"
    _prompt = CONTENT_PROMPT

    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        plans, bodies = [], []
        for request in requests:
            spans = {}
            for span in candidate_spans(request.prediction, request.prediction_sentences, 2):
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
                if not spans:
                    judgements.append(ContentJudgement("no_match"))
                    continue
                index, raw = self._pick(next(replies), choices, calls)
                if index is None:
                    judgements.append(ContentJudgement("unusable", raw=raw))
                elif index == len(spans):
                    judgements.append(ContentJudgement("no_match", raw=raw))
                else:
                    judgements.append(ContentJudgement("match", spans[index], raw=raw))
            results.append(judgements)
        self._warn(calls)
        return results


class ServerThemeJudge(_ServerJudge, ThemeJudge):
    """Theme judge behind an OpenAI-compatible server: one of the nine labels per
    sentence. Options and errors as :class:`ServerContentJudge`; ``score`` is ``None``."""

    task = "theme"
    _prompt = THEME_PROMPT

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        replies = self._ask_all([self._body(theme_messages(s), THEMES) for s in sentences])
        calls: Counter[str] = Counter()
        out = []
        for reply in replies:
            index, raw = self._pick(reply, THEMES, calls)
            out.append(ThemeJudgement(None if index is None else THEMES[index], raw=raw))
        self._warn(calls)
        return out
