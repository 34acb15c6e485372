"""Progress as judges work: a judge reports sentences judged with :func:`judged`; whoever
shows progress listens with :func:`reporting` (a :class:`contextvars.ContextVar`, so it
follows asyncio tasks and is private per thread).
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
    """Report ``n`` more sentences judged in the current call (no listener: nothing)."""
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
    """One judge call of ``total`` sentences: the judge's own reports pass on (at most
    ``total``), the rest is reported when the block ends without an error.
    """
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
