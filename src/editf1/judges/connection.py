"""The one way edit-f1 talks to an OpenAI-compatible server (the server judges,
:class:`editf1.drafting.generators.ServerGenerator`), so clinical text goes only where the
user said: a loopback ``base_url`` unless ``allow_remote`` (and only then the environment's
proxies and ``.netrc``), no redirects, credentials never shown (:func:`redact_url`), a
total deadline per attempt, bounded bodies, transient failures retried; failures come
back as short reasons, never text.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import importlib
import ipaddress
import json
import os
import re
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

from editf1.inputs import read_bool

__all__ = ["Connection", "Reply", "check_local", "redact_url"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Waits before the k-th retry: 0.5 * 2**k seconds, at most this.
_MAX_BACKOFF_S = 8.0
#: Statuses worth another attempt (as the openai client's own retry policy).
_RETRIED = (408, 409, 429)


def redact_url(url: str) -> str:
    """``url`` with a ``user:password@``, query string and fragment replaced by ``***``.

    >>> redact_url("http://alice:s3cret@127.0.0.1:8000/v1?key=abc")
    'http://***@127.0.0.1:8000/v1?***'
    """
    parts = urlsplit(str(url))
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(
        netloc=f"***@{host}" if "@" in parts.netloc else host,
        query="***" if parts.query else "",
        fragment="***" if parts.fragment else "",
    ).geturl()


def check_local(base_url: str, allow_remote: bool) -> str:
    """Return ``base_url`` if it is an http(s) URL of this machine, or ``allow_remote``.

    Raises:
        ValueError: not an http(s) URL with a host, one with a query string or fragment,
            or (without ``allow_remote``) a host that is not loopback.
    """
    parts = urlsplit(str(base_url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got "
            f"{redact_url(base_url)!r}"
        )
    if parts.query or parts.fragment:
        raise ValueError(
            f"base_url {redact_url(base_url)!r} holds a query string or fragment: the client "
            "appends each request's path after it, so no server would answer; give the "
            "server's API root only, e.g. http://127.0.0.1:8000/v1"
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


def _api_key(api_key_env: str | None) -> str:
    if api_key_env is None:
        return "none"  # the openai client needs a value; local servers ignore it
    if not isinstance(api_key_env, str) or not _ENV_NAME.match(api_key_env):
        raise ValueError(
            "api_key_env is the NAME of an environment variable holding the key (e.g. "
            "VLLM_API_KEY); the value given is not a variable name (never pass the key itself)"
        )
    if not os.environ.get(api_key_env):
        # a key pasted where the name belongs is shown only if it looks like a name
        shown = api_key_env if re.fullmatch(r"[A-Z][A-Z0-9_]*", api_key_env) else "(not shown)"
        raise ValueError(
            f"api_key_env names {shown}, but that environment variable is unset or empty"
        )
    return os.environ[api_key_env]


def _environment_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (credentials removed), or ``None``."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return redact_url(proxy)


def run_sync(coroutine):
    """Run a coroutine from synchronous code, in a thread of its own under a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:  # the thread sees this context (progress listener)
        return pool.submit(contextvars.copy_context().run, asyncio.run, coroutine).result()


@dataclass(frozen=True)
class Reply:
    """One request's ``payload`` (a JSON object) or ``failure`` (``"timeout"``, ``"HTTP 500"``)."""

    payload: dict | None
    failure: str | None = None


class _Failed(Exception):
    """One attempt's failure: its reason, whether to retry, the server's Retry-After."""

    def __init__(self, reason: str, retry: bool = False, retry_after: float | None = None):
        super().__init__(reason)
        self.reason, self.retry, self.retry_after = reason, retry, retry_after


def _retry_after(headers) -> float | None:
    """Seconds the server asks to wait (``Retry-After``: seconds or an HTTP date)."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            return float(value) * scale
        except (TypeError, ValueError):  # absent, or not seconds
            parsed = None if value is None else email.utils.parsedate_tz(value)
            if scale == 1.0 and parsed is not None:
                return email.utils.mktime_tz(parsed) - time.time()
    return None


class Connection:
    """The connection to one OpenAI-compatible server, under the module's rules; the
    options are :class:`editf1.judges.server.ServerJudgeConfig`'s. A transient failure
    (timeout, lost connection, 408, 409, 429, 5xx) is retried ``retries`` times after
    ``Retry-After`` or a capped exponential backoff.

    Attributes:
        shown: ``base_url`` as it may be shown.
        note: ``""``, or ``",allow_remote=True"`` and the proxy used, for fingerprints.

    Raises:
        ValueError: bad options, or a non-loopback host without ``allow_remote``.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key_env: str | None = None,
        max_concurrency: int = 4,
        timeout_s: float = 60.0,
        retries: int = 2,
        allow_remote: bool = False,
    ) -> None:
        self.allow_remote = read_bool("allow_remote", allow_remote)
        self._url = check_local(base_url, self.allow_remote)
        self.shown = redact_url(self._url)
        if int(max_concurrency) < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if not float(timeout_s) > 0:
            raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s}")
        if int(retries) < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.max_concurrency = int(max_concurrency)
        self.timeout_s, self.retries = float(timeout_s), int(retries)
        self._key = _api_key(api_key_env)
        self.note = ""
        if self.allow_remote:
            proxy = _environment_proxy(self._url)
            self.note = ",allow_remote=True" + (f",proxy={proxy}" if proxy else "")

    def _client(self):
        import openai

        http = openai.DefaultAsyncHttpxClient(
            trust_env=self.allow_remote, follow_redirects=False, timeout=self.timeout_s
        )
        client = openai.AsyncOpenAI(
            base_url=self._url,
            api_key=self._key,
            timeout=self.timeout_s,
            max_retries=0,  # retried here, within the deadline
            http_client=http,
        )
        # no organisation or project read from the environment by the openai package
        client.organization = client.project = None
        return client

    async def _attempt(self, start, max_bytes: int) -> dict:
        """One attempt: the body read up to ``max_bytes`` and parsed, within ``timeout_s``."""
        import openai

        # the body's errors are the HTTP library's under the openai client
        base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__[1:] if c is not object)
        http = importlib.import_module(base.__module__.split(".")[0])

        async def read() -> bytes:
            async with start() as response:
                data = bytearray()
                try:
                    async for chunk in response.iter_bytes():
                        data += chunk
                        if len(data) > max_bytes:
                            raise _Failed("oversized response")
                except http.DecodingError:  # a Content-Encoding the body does not have
                    raise _Failed("malformed response") from None
                except http.TransportError:  # the server closed or broke off mid-body
                    raise _Failed("connection lost", retry=True) from None
                return bytes(data)

        try:
            data = await asyncio.wait_for(read(), self.timeout_s)
        except (asyncio.TimeoutError, openai.APITimeoutError):
            raise _Failed("timeout", retry=True) from None
        except openai.APIConnectionError:
            raise _Failed("connection lost", retry=True) from None
        except openai.APIStatusError as error:
            status = error.status_code
            if 300 <= status < 400:
                raise _Failed(f"redirect not followed (HTTP {status})") from None
            retry = status in _RETRIED or status >= 500
            raise _Failed(f"HTTP {status}", retry, _retry_after(error.response.headers)) from None
        except openai.OpenAIError:
            raise _Failed("malformed response") from None
        try:
            payload = json.loads(data)
        except ValueError:  # UnicodeDecodeError included
            raise _Failed("malformed response") from None
        if not isinstance(payload, dict):
            raise _Failed("malformed response")
        return payload

    async def _request(self, start, max_bytes: int) -> Reply:
        """An attempt and its retries; a failure as a :class:`Reply` reason."""
        for attempt in range(self.retries + 1):
            try:
                return Reply(await self._attempt(start, max_bytes))
            except _Failed as failed:
                if not failed.retry or attempt == self.retries:
                    return Reply(None, failed.reason)
                wait = min(0.5 * 2**attempt, _MAX_BACKOFF_S)
                if failed.retry_after is not None and failed.retry_after >= 0:
                    wait = failed.retry_after
                await asyncio.sleep(min(wait, self.timeout_s))

    def chat(
        self,
        bodies: Sequence[dict],
        max_bytes: int,
        on_reply: Callable[[], None] | None = None,
    ) -> list[Reply]:
        """N :class:`Reply` of N chat-completions bodies, in order; ``on_reply()`` at each."""

        async def ask_all():
            semaphore = asyncio.Semaphore(self.max_concurrency)
            async with self._client() as client:

                async def ask(body):
                    async with semaphore:
                        start = client.chat.completions.with_streaming_response.create
                        reply = await self._request(lambda: start(**body), max_bytes)
                    if on_reply is not None:
                        on_reply()
                    return reply

                return await asyncio.gather(*(ask(b) for b in bodies))

        return run_sync(ask_all()) if bodies else []

    def models(self) -> dict[str, str | None]:
        """The models ``/models`` lists: id -> parent model (vLLM: an adapter's base), or ``None``.

        Raises:
            ConnectionError: the server does not answer, or not with a model list.
        """

        async def listed():
            async with self._client() as client:
                return await self._request(client.models.with_streaming_response.list, 1 << 22)

        reply = run_sync(listed())
        if reply.failure in ("connection lost", "timeout"):
            raise ConnectionError(
                f"no server answers at {self.shown} ({reply.failure}); start one (e.g. "
                "`transformers serve MODEL --host 127.0.0.1 --port 8000`, `vllm serve MODEL`) "
                "or check base_url"
            )
        data = None if reply.payload is None else reply.payload.get("data")
        if not isinstance(data, list) or not all(
            isinstance(m, dict) and isinstance(m.get("id"), str) for m in data
        ):
            reason = reply.failure or "no list of models"
            raise ConnectionError(
                f"{self.shown}/models answered {reason}: is this the /v1 address of an "
                "OpenAI-compatible server?"
            )
        return {m["id"]: m.get("parent") for m in data}

    def served_model(self, model: str | None, adapter: str | None = None) -> str:
        """The model to name in requests, checked against :meth:`models`.

        Raises:
            ValueError: a ``model`` or ``adapter`` not listed, or several models and no ``model``.
            ConnectionError: see :meth:`models`.
        """
        listed = self.models()
        served = list(listed)
        for name, what in ((model, "model"), (adapter, "adapter")):
            if name is not None and name not in listed:
                raise ValueError(
                    f"{what} {name!r} is not served at {self.shown}; it serves {served}"
                )
        if model is not None:
            return model
        if adapter is not None:  # vLLM lists an adapter with its base model as parent
            return str(listed[adapter] or "unknown")
        if len(served) != 1:
            raise ValueError(
                f"{self.shown} serves {len(served)} models {served}: name one with the model option"
            )
        return served[0]
