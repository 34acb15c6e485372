"""Judges behind one small interface, and the registry that loads them by name.

Names: ``"embedding"`` (the embedded default, offline on a CPU,
:mod:`editf1.judges.embedding`), ``"exact"`` (a model-free baseline, content only),
``"cross-encoder"`` (content only: a fine-tuned all-MiniLM-L6-v2 cross-encoder reads
every candidate span, :mod:`editf1.judges.cross_encoder`), ``"llm"`` (a causal LM plus
an optional LoRA adapter, :mod:`editf1.judges.generative`; options ``{"base": ...,
"adapter": ...}``, needs the ``llm`` extra) and ``"server"`` (a model behind an
OpenAI-compatible server, :mod:`editf1.judges.server`; options ``{"base_url": ...,
"model": ...}``, needs the ``server`` extra). A judge object is passed through unchanged.

Each name maps to the judge's class and its settings' dataclass (its config,
:class:`~editf1.judges.base.JudgeConfig`): a judge's options by name are the config's
fields and the few its ``OPTIONS`` names (where to read the settings from, a device); a
field without a default is one the judge needs.

Loaded judges are cached per process (the 8 most recently used), so a model is loaded
once however many times a metric is computed. The cache key is the judge's kind, name
and a canonical JSON form of its options (nested dicts and lists are fine), plus the
size and modification time of every file under any option that names a local path: an
adapter re-trained into the same folder is loaded afresh, not served stale. Options
that are not JSON (e.g. a model object) are never cached. :func:`editf1.clear_caches`
empties this cache with every other.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import OrderedDict
from importlib import import_module
from pathlib import Path

from editf1.caches import on_clear
from editf1.judges.base import (
    ContentJudge,
    ContentJudgement,
    JudgeConfig,
    JudgeRequest,
    ThemeJudge,
    ThemeJudgement,
)

__all__ = [
    "CONTENT_JUDGES",
    "THEME_JUDGES",
    "ContentJudge",
    "ContentJudgement",
    "JudgeConfig",
    "JudgeOptionError",
    "JudgeRequest",
    "ThemeJudge",
    "ThemeJudgement",
    "config_class",
    "judge_classes",
    "load_content_judge",
    "load_theme_judge",
    "options_key",
]

#: Content judges by name: ``(judge class, config class)``, each ``"module:Class"``,
#: imported when first used.
CONTENT_JUDGES: dict[str, tuple[str, str]] = {
    "embedding": (
        "editf1.judges.embedding.content:EmbeddingContentJudge",
        "editf1.judges.embedding.config:EmbeddingContentConfig",
    ),
    "exact": ("editf1.judges.exact:ExactMatchContentJudge", "editf1.judges.exact:ExactMatchConfig"),
    "cross-encoder": (
        "editf1.judges.cross_encoder:CrossEncoderContentJudge",
        "editf1.judges.cross_encoder:CrossEncoderConfig",
    ),
    "llm": (
        "editf1.judges.generative.judges:LLMContentJudge",
        "editf1.judges.generative.config:LLMContentConfig",
    ),
    "server": ("editf1.judges.server:ServerContentJudge", "editf1.judges.server:ServerJudgeConfig"),
}

#: Theme judges by name, as :data:`CONTENT_JUDGES`.
THEME_JUDGES: dict[str, tuple[str, str]] = {
    "embedding": (
        "editf1.judges.embedding.theme:EmbeddingThemeJudge",
        "editf1.judges.embedding.config:EmbeddingThemeConfig",
    ),
    "llm": (
        "editf1.judges.generative.judges:LLMThemeJudge",
        "editf1.judges.generative.config:LLMJudgeConfig",
    ),
    "server": ("editf1.judges.server:ServerThemeJudge", "editf1.judges.server:ServerJudgeConfig"),
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


def _imported(path: str):
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


def config_class(kind: str, name: str) -> type:
    """The config class of a registered judge, imported (no model library: its module
    is light).

    Args:
        kind: ``"content"`` or ``"theme"``.
        name: a name of :data:`CONTENT_JUDGES` or :data:`THEME_JUDGES`.

    Raises:
        KeyError: for a name that is not registered.
    """
    return _imported((CONTENT_JUDGES if kind == "content" else THEME_JUDGES)[name][1])


def judge_classes(kind: str, name: str) -> tuple[type, type]:
    """``(judge class, config class)`` of a registered judge, imported (the judge's
    module may import its model library).

    Raises:
        KeyError: for a name that is not registered.
    """
    judge, config = (CONTENT_JUDGES if kind == "content" else THEME_JUDGES)[name]
    return _imported(judge), _imported(config)


def _construct(kind: str, name: str, options: dict):
    """The judge ``name`` built from ``options``: its config's fields and ``OPTIONS``."""
    config = config_class(kind, name)
    fields = dataclasses.fields(config)
    takes = sorted({f.name for f in fields} | set(config.OPTIONS))
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise JudgeOptionError(
            f"{kind} judge {name!r} does not take option(s) {unknown}; it takes {takes}"
        )
    no_default = dataclasses.MISSING
    missing = [  # a judge that reads its settings from a file has them all
        f.name
        for f in (() if config.SETTINGS_FROM else fields)
        if f.default is f.default_factory is no_default and f.name not in options
    ]
    if missing:
        given = ", ".join(f"{k}=..." for k in missing)
        raise JudgeOptionError(
            f"{kind} judge {name!r} needs option(s) {missing}: give {kind}_judge_options="
            f"{{{', '.join(repr(k) + ': ...' for k in missing)}}} (command line: "
            f"--{kind}-judge-option {given})"
        )
    judge, _ = judge_classes(kind, name)
    return judge(**options)


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
        options: the judge's options by name: fields of its config and the names of
            its config's ``OPTIONS`` (e.g. ``{"threshold": 0.7}`` for ``"embedding"``,
            a field of :class:`~editf1.judges.embedding.EmbeddingContentConfig`).

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
