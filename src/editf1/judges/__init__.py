"""Judges behind one small interface, and the registry that loads them by name.

Names: ``"embedding"`` (the embedded default, offline on a CPU), ``"exact"`` (a
model-free baseline, content only) and ``"llm"`` (a causal LM plus an optional LoRA
adapter, :mod:`editf1.judges.generative`; options ``{"base": ..., "adapter": ...}``,
needs the ``llm`` extra). A judge object is passed through unchanged. Loaded
judges are cached per process, keyed by their name and options, so a model is loaded
once however many times a metric is computed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

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
    "JudgeRequest",
    "ThemeJudge",
    "ThemeJudgement",
    "load_content_judge",
    "load_theme_judge",
]


def _embedding_content(**options) -> ContentJudge:
    from editf1.judges.embedding import EmbeddingContentJudge

    return EmbeddingContentJudge(**options)


def _exact_content(**options) -> ContentJudge:
    from editf1.judges.exact import ExactMatchContentJudge

    return ExactMatchContentJudge(**options)


def _llm_content(**options) -> ContentJudge:
    from editf1.judges.generative import LLMContentJudge

    return LLMContentJudge(**options)


def _llm_theme(**options) -> ThemeJudge:
    from editf1.judges.generative import LLMThemeJudge

    return LLMThemeJudge(**options)


def _embedding_theme(**options) -> ThemeJudge:
    from editf1.judges.embedding import EmbeddingThemeJudge

    return EmbeddingThemeJudge(**options)


#: Content judges by name: a factory taking the judge's options as keyword arguments.
CONTENT_JUDGES: dict[str, Callable[..., ContentJudge]] = {
    "embedding": _embedding_content,
    "exact": _exact_content,
    "llm": _llm_content,
}

#: Theme judges by name.
THEME_JUDGES: dict[str, Callable[..., ThemeJudge]] = {
    "embedding": _embedding_theme,
    "llm": _llm_theme,
}


@lru_cache(maxsize=8)
def _load(kind: str, name: str, options: tuple):
    registry = CONTENT_JUDGES if kind == "content" else THEME_JUDGES
    try:
        return registry[name](**dict(options))
    except TypeError as error:
        raise TypeError(
            f"{kind} judge {name!r} does not take options {sorted(k for k, _ in options)}: {error}"
        ) from None


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
    # dict() also accepts the (key, value) pairs hf_metric hashes options into
    return _load(kind, judge, tuple(sorted(dict(options or {}).items())))


def load_content_judge(judge: str | ContentJudge = "embedding", options: dict | None = None):
    """Return a content judge.

    Args:
        judge: a name from :data:`CONTENT_JUDGES` or a :class:`ContentJudge`.
        options: keyword arguments for the judge's constructor (e.g.
            ``{"threshold": 0.7}`` for ``"embedding"``).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    return _resolve("content", judge, options, ContentJudge)


def load_theme_judge(judge: str | ThemeJudge = "embedding", options: dict | None = None):
    """Return a theme judge; see :func:`load_content_judge`."""
    return _resolve("theme", judge, options, ThemeJudge)
