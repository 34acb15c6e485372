"""Progress as judges work: how many sentences a judge has judged so far in a call.

A judge's ``match`` (content) or ``classify`` (themes) call can take minutes (an LLM, a
server). A judge reports its progress with :func:`judged` as its answers arrive (the
generative judges per decoding batch, the server judges per answered request); whoever
shows progress (the scorer's progress bar) listens with :func:`reporting`. The contract
of :mod:`editf1.judges.contract` reports, at the end of each call, the sentences a
judge did not report itself, so a judge that never calls :func:`judged` (a plug-in,
the embedded judges, which judge a whole batch in one pass) still advances the bar when
its call returns. Without a listener :func:`judged` does nothing.

The listener lives in a :class:`contextvars.ContextVar`, so it follows the call into
asyncio tasks (the server judges) and is private to each thread.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

__all__ = ["judged", "reporting", "settled"]

_listener: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "editf1_judge_progress", default=None
)


def judged(n: int = 1) -> None:
    """Report that ``n`` more sentences (content: reference sentences; themes:
    sentences labelled) were judged in the current call. No listener: nothing."""
    listener = _listener.get()
    if listener is not None and n > 0:
        listener(n)


@contextlib.contextmanager
def reporting(listener: Callable[[int], None]) -> Iterator[None]:
    """Send the :func:`judged` reports made inside the block to ``listener(n)``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


@contextlib.contextmanager
def settled(total: int) -> Iterator[None]:
    """One judge call of ``total`` sentences: the judge's own reports inside the block
    pass on to the listener (at most ``total`` in all), and the rest of ``total`` is
    reported when the block ends without an error."""
    outer = _listener.get()
    if outer is None:
        yield
        return
    done = 0

    def forward(n: int) -> None:
        nonlocal done
        n = min(n, total - done)
        done += n
        if n:
            outer(n)

    with reporting(forward):
        yield
    if total > done:
        outer(total - done)
