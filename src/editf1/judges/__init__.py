"""Judges behind one small interface, and the registry that loads them by name.

Names: ``"embedding"`` (the embedded default, offline on a CPU,
:mod:`editf1.judges.embedding`), ``"exact"`` (a model-free baseline, content only),
``"cross-encoder"`` (content only: the embedded judge proposes spans, a LoRA-tuned
all-MiniLM-L6-v2 cross-encoder decides among them, :mod:`editf1.judges.cross_encoder`;
needs the ``cross-encoder`` extra, peft), ``"llm"`` (a causal LM plus an optional LoRA
adapter, :mod:`editf1.judges.generative`; options ``{"base": ..., "adapter": ...}``,
needs the ``llm`` extra) and ``"server"`` (a model behind an OpenAI-compatible server,
:mod:`editf1.judges.server`; options ``{"base_url": ..., "model": ...}``, needs the
``server`` extra). A judge object is passed through unchanged.

Loaded judges are cached per process (the 8 most recently used), so a model is loaded
once however many times a metric is computed. The cache key is the judge's kind, name
and a canonical JSON form of its options (nested dicts and lists are fine), plus the
size and modification time of every file under any option that names a local path: an
adapter re-trained into the same folder is loaded afresh, not served stale. Options
that are not JSON (e.g. a model object) are never cached. :func:`editf1.clear_caches`
empties this cache with every other.
"""

from __future__ import annotations

import inspect
import json
import os
from collections import OrderedDict
from importlib import import_module
from pathlib import Path

from editf1.caches import on_clear
from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)

__all__ = [
    "CONTENT_JUDGES",
    "THEME_JUDGES",
    "ContentJudge",
    "ContentJudgement",
    "JudgeOptionError",
    "JudgeRequest",
    "ThemeJudge",
    "ThemeJudgement",
    "load_content_judge",
    "load_theme_judge",
    "options_key",
]

#: Content judges by name: ``(module, class)``, imported when first loaded.
CONTENT_JUDGES: dict[str, tuple[str, str]] = {
    "embedding": ("editf1.judges.embedding", "EmbeddingContentJudge"),
    "exact": ("editf1.judges.exact", "ExactMatchContentJudge"),
    "cross-encoder": ("editf1.judges.cross_encoder", "CrossEncoderContentJudge"),
    "llm": ("editf1.judges.generative", "LLMContentJudge"),
    "server": ("editf1.judges.server", "ServerContentJudge"),
}

#: Theme judges by name.
THEME_JUDGES: dict[str, tuple[str, str]] = {
    "embedding": ("editf1.judges.embedding", "EmbeddingThemeJudge"),
    "llm": ("editf1.judges.generative", "LLMThemeJudge"),
    "server": ("editf1.judges.server", "ServerThemeJudge"),
}

_CACHE_SIZE = 8
_cache: OrderedDict[str, ContentJudge | ThemeJudge] = OrderedDict()
on_clear(_cache.clear)


def _local_files(value) -> list:
    """(path, size, mtime_ns) of every file under each string in ``value`` that names a
    local file or folder: what a re-trained adapter changes."""
    found = []
    if isinstance(value, dict):
        for v in value.values():
            found += _local_files(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            found += _local_files(v)
    elif isinstance(value, (str, os.PathLike)) and str(value) and os.path.exists(value):
        root = Path(value)
        for path in sorted([root] if root.is_file() else root.rglob("*")):
            if path.is_file():
                stat = path.stat()
                found.append((str(path), stat.st_size, stat.st_mtime_ns))
    return found


def options_key(value) -> str | None:
    """A canonical string for cache keys: JSON with sorted keys, plus the state of the
    local files the value names; ``None`` if ``value`` is not JSON (then do not cache).

    >>> options_key({"b": [1, 2], "a": {"y": 1, "x": None}})
    '[{"a": {"x": null, "y": 1}, "b": [1, 2]}, []]'
    """

    def refuse(obj):
        if isinstance(obj, os.PathLike):
            return os.fspath(obj)
        raise TypeError

    try:
        return json.dumps([value, _local_files(value)], sort_keys=True, default=refuse)
    except (TypeError, ValueError):
        return None


class JudgeOptionError(TypeError, ValueError):
    """A judge given an option it does not take, or without one it needs: a
    ``TypeError`` (the constructor's arguments are wrong) that is also a
    ``ValueError``, so that the command line reports it as the user error it is (one
    line, exit status 2)."""


def _construct(kind: str, name: str, options: dict):
    registry = CONTENT_JUDGES if kind == "content" else THEME_JUDGES
    module, class_name = registry[name]
    cls = getattr(import_module(module), class_name)
    parameters = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    unknown = sorted(k for k in options if k not in parameters)
    if unknown and not takes_any:
        known = sorted(k for k, p in parameters.items() if p.kind is not p.VAR_POSITIONAL)
        raise JudgeOptionError(
            f"{kind} judge {name!r} does not take option(s) {unknown}; it takes {known}"
        )
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    missing = [
        k
        for k, p in parameters.items()
        if p.kind in named and p.default is inspect.Parameter.empty and k not in options
    ]
    if missing:
        given = ", ".join(f"{k}=..." for k in missing)
        raise JudgeOptionError(
            f"{kind} judge {name!r} needs option(s) {missing}: give {kind}_judge_options="
            f"{{{', '.join(repr(k) + ': ...' for k in missing)}}} (command line: "
            f"--{kind}-judge-option {given})"
        )
    return cls(**options)


def _resolve(kind: str, judge, options: dict | None, base: type):
    if isinstance(judge, base):
        if options:
            raise ValueError(f"{kind}_judge_options apply to a judge name, not a judge object")
        return judge
    registry = CONTENT_JUDGES if kind == "content" else THEME_JUDGES
    if not isinstance(judge, str) or judge not in registry:
        raise ValueError(
            f"{kind}_judge must be one of {sorted(registry)} or a {base.__name__} object, "
            f"got {judge!r}"
        )
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"{kind}_judge_options must be a dict, got {type(options).__name__}")
    options = dict(options or {})
    key = options_key([kind, judge, options])
    if key is None:
        return _construct(kind, judge, options)
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    loaded = _cache[key] = _construct(kind, judge, options)
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return loaded


def load_content_judge(judge: str | ContentJudge = "embedding", options: dict | None = None):
    """Return a content judge.

    Args:
        judge: a name from :data:`CONTENT_JUDGES` or a :class:`ContentJudge`.
        options: keyword arguments for the judge's constructor (e.g.
            ``{"threshold": 0.7}`` for ``"embedding"``).

    Raises:
        ValueError: for an unknown name, listing the known ones.
        TypeError: for options that are not a dict.
        JudgeOptionError: (a ``TypeError`` and a ``ValueError``) for option names the
            judge does not take (listing those it takes), or options it needs that are
            not given (the server judges' ``base_url``), naming them.
    """
    return _resolve("content", judge, options, ContentJudge)


def load_theme_judge(judge: str | ThemeJudge = "embedding", options: dict | None = None):
    """Return a theme judge; see :func:`load_content_judge`."""
    return _resolve("theme", judge, options, ThemeJudge)
