"""Judges behind one small interface (:mod:`.base`), and the registry that loads them by
name (:data:`CONTENT_JUDGES`, :data:`THEME_JUDGES`; ``"llm"`` needs the ``llm`` extra,
``"server"`` the ``server`` extra).
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

_REGISTRIES = {"content": CONTENT_JUDGES, "theme": THEME_JUDGES}
_CACHE_SIZE = 8
_cache: OrderedDict[str, ContentJudge | ThemeJudge] = OrderedDict()
on_clear(_cache.clear)


def _local_files(value) -> list:
    """(path, size, mtime_ns) of every file under each local path named in ``value``."""
    if isinstance(value, (dict, list, tuple)):
        values = value.values() if isinstance(value, dict) else value
        return [found for v in values for found in _local_files(v)]
    if not (isinstance(value, (str, os.PathLike)) and str(value) and os.path.exists(value)):
        return []
    root = Path(value)
    files = [p for p in sorted([root] if root.is_file() else root.rglob("*")) if p.is_file()]
    return [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files]


def options_key(value) -> str | None:
    """A canonical cache key: sorted-key JSON plus the size and modification time of every
    local file named (a re-trained adapter is loaded afresh); ``None`` if ``value`` is not
    JSON (never cached).
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
    """A judge given an option it does not take, or without one it needs: a ``TypeError``
    that is also a ``ValueError``, so the command line reports it as a user error.
    """


def _imported(path: str):
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


def config_class(kind: str, name: str) -> type:
    """The config class of a registered judge (``kind`` ``"content"`` or ``"theme"``),
    imported without a model library; KeyError for an unknown name.
    """
    return _imported(_REGISTRIES[kind][name][1])


def _construct(kind: str, name: str, options: dict):
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
    return _imported(_REGISTRIES[kind][name][0])(**options)


def _resolve(kind: str, judge, options: dict | None, base: type):
    if isinstance(judge, base):
        if options:
            raise ValueError(f"{kind}_judge_options apply to a judge name, not a judge object")
        return judge
    registry = _REGISTRIES[kind]
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
    """Return a content judge: a name of :data:`CONTENT_JUDGES` with ``options`` (its config's
    fields and ``OPTIONS``, e.g. ``{"threshold": 0.7}``), or a :class:`ContentJudge`. The
    process keeps the 8 judges most recently loaded by name (:func:`options_key`).

    Raises:
        ValueError: for an unknown name, listing the known ones.
        TypeError: for options that are not a dict.
        JudgeOptionError: for options the judge does not take, or needed ones not given.

    >>> load_content_judge("exact").fingerprint
    'exact-sentence-match'
    """
    return _resolve("content", judge, options, ContentJudge)


def load_theme_judge(judge: str | ThemeJudge = "embedding", options: dict | None = None):
    """Return a theme judge; see :func:`load_content_judge`."""
    return _resolve("theme", judge, options, ThemeJudge)
