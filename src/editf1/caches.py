"""Every in-process cache of edit-F1, and :func:`clear_caches`, which empties them all.

edit-F1 keeps what is slow to make: loaded judges (the registry in
:mod:`editf1.judges`, the one cache keyed by options, which ``editf1.score`` and the
evaluate module build their scorers from), the default sentence encoder and the encodings
each encoder keeps, loaded generative models, file digests, key terms, the theme labels
each scorer keeps (:class:`~editf1.judges.contract.ThemeCache`) and the upstream files
read for the team's label sets. Each of them registers here where it is made, so
:func:`clear_caches` reaches every one, including the caches of scorers and encoders a
caller still holds; the Hugging Face cache on disk is left.

A module that never ran holds nothing, and nothing here imports one.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import lru_cache

__all__ = ["cached", "clear_caches", "on_clear", "register_holder"]

_clearers: list[Callable[[], None]] = []
_holders: weakref.WeakSet = weakref.WeakSet()


def on_clear(clear: Callable[[], None]) -> Callable[[], None]:
    """Register ``clear`` (e.g. a module-level dict's ``clear``) for :func:`clear_caches`.

    Returns:
        ``clear``, so it can be used as a decorator.
    """
    _clearers.append(clear)
    return clear


def cached(maxsize: int | None = None):
    """``functools.lru_cache(maxsize)`` whose entries :func:`clear_caches` drops: every
    module-level cache of a function result in edit-F1 is made with this.

    >>> @cached(maxsize=2)
    ... def square(x):
    ...     return x * x
    >>> square(3), square.cache_info().currsize
    (9, 1)
    >>> clear_caches(); square.cache_info().currsize
    0
    """

    def wrap(function):
        wrapped = lru_cache(maxsize=maxsize)(function)
        on_clear(wrapped.cache_clear)
        return wrapped

    return wrap


def register_holder(holder) -> None:
    """Have :func:`clear_caches` call ``holder.clear_cache()`` while ``holder`` lives
    (held weakly: registering never keeps an object alive)."""
    _holders.add(holder)


def clear_caches() -> None:
    """Empty every in-process cache of edit-F1 (see the module docstring): the next
    call loads judges and models again and recomputes encodings and labels.

    Use it to free memory, or after changing a judge's files in place on a file system
    that does not update modification times (the judge registry already notices
    changed files otherwise). Results do not change.
    """
    for clear in _clearers:
        clear()
    for holder in list(_holders):
        holder.clear_cache()
