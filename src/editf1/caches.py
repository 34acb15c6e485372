"""Every in-process cache of edit-F1 registers here where it is made, so
:func:`clear_caches` reaches every one (the Hugging Face cache on disk is left).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import lru_cache

__all__ = ["cached", "clear_caches", "on_clear", "register_holder"]

_clearers: list[Callable[[], None]] = []
_holders: weakref.WeakSet = weakref.WeakSet()


def on_clear(clear: Callable[[], None]) -> Callable[[], None]:
    """Register ``clear`` for :func:`clear_caches`; returns it (usable as a decorator)."""
    _clearers.append(clear)
    return clear


def cached(maxsize: int | None = None):
    """``functools.lru_cache(maxsize)`` whose entries :func:`clear_caches` drops."""

    def wrap(function):
        wrapped = lru_cache(maxsize=maxsize)(function)
        on_clear(wrapped.cache_clear)
        return wrapped

    return wrap


def register_holder(holder) -> None:
    """Have :func:`clear_caches` call ``holder.clear_cache()`` while ``holder`` lives (weakly)."""
    _holders.add(holder)


def clear_caches() -> None:
    """Empty every in-process cache of edit-F1; results do not change."""
    for clear in _clearers:
        clear()
    for holder in list(_holders):
        holder.clear_cache()
