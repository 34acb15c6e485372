"""The ``--content-judge`` / ``--theme-judge`` flags and their ``--*-judge-option
KEY=VALUE``, whose help is built from the judges' configs (:mod:`editf1.judges`)."""

from __future__ import annotations

import argparse
import json

from editf1.options import option_help

__all__ = [
    "add_judge_arguments",
    "add_judge_option_arguments",
    "judge_options",
    "scorer_judges",
]


def _shown(value) -> str:
    """A default as ``KEY=VALUE`` takes it: JSON, but text bare."""
    return value if isinstance(value, str) else json.dumps(value)


def _option_help(kind: str) -> str:
    """Every ``kind`` judge's options with their help and default."""
    import dataclasses

    from editf1.judges import CONTENT_JUDGES, THEME_JUDGES, config_class

    lines = [
        f"an option of the {kind} judge, repeatable; VALUE is JSON (numbers, true/false, "
        "null, lists) or text. The options of each judge:"
    ]
    for name in CONTENT_JUDGES if kind == "content" else THEME_JUDGES:
        config = config_class(kind, name)
        items = [f"{key} ({text})" for key, text in config.OPTIONS.items()]
        for spec in dataclasses.fields(config):
            if config.SETTINGS_FROM is not None:
                default = ""  # the file's
            elif spec.default is not dataclasses.MISSING:
                default = f"={_shown(spec.default)}"
            elif spec.default_factory is not dataclasses.MISSING:
                default = f"={_shown(spec.default_factory())}"
            else:
                default = " (needed)"
            items.append(f"{spec.name}{default} ({spec.metadata['help']})")
        where = f" (defaults: its {config.SETTINGS_FROM}'s)" if config.SETTINGS_FROM else ""
        lines.append(f"{name}{where}: {'; '.join(items) or 'none'}")
    return "\n".join(lines)


class _JudgeOptions(argparse.Action):
    """``--*-judge-option KEY=VALUE``, repeatable; its help is built only when shown."""

    def __init__(self, option_strings, dest, kind: str, **kwargs) -> None:
        self.kind = kind
        super().__init__(option_strings, dest, default=[], metavar="KEY=VALUE", **kwargs)

    @property
    def help(self) -> str:
        return _option_help(self.kind)

    @help.setter
    def help(self, value) -> None:  # argparse sets it; the text is built when shown
        pass

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, [*getattr(namespace, self.dest), values])


def add_judge_arguments(p, kinds=("content", "theme"), *, theme_none: bool = False) -> None:
    """``--{kind}-judge NAME`` and its options flag; ``theme_none``: ``--theme-judge none``."""
    from editf1.judges import CONTENT_JUDGES, THEME_JUDGES

    for kind in kinds:
        names = ", ".join(CONTENT_JUDGES if kind == "content" else THEME_JUDGES)
        none = ", or none for no theme-level scores" if kind == "theme" and theme_none else ""
        p.add_argument(
            f"--{kind}-judge",
            default=option_help(f"{kind}_judge")[0],
            help=f"the {kind} judge: {names}{none} (default %(default)s)",
        )
    add_judge_option_arguments(p, kinds)


def add_judge_option_arguments(p, kinds=("content", "theme")) -> None:
    """``--{kind}-judge-option KEY=VALUE`` (repeatable)."""
    for kind in kinds:
        p.add_argument(f"--{kind}-judge-option", action=_JudgeOptions, kind=kind)


def scorer_judges(args) -> dict:
    """The judges as :class:`~editf1.scorer.EditF1Scorer` takes them; ValueError for options of
    no judge."""
    judges = {
        "content_judge": args.content_judge,
        "theme_judge": None if args.theme_judge == "none" else args.theme_judge,
        "content_judge_options": judge_options(args.content_judge_option),
        "theme_judge_options": judge_options(args.theme_judge_option),
    }
    if judges["theme_judge"] is None and judges["theme_judge_options"]:
        raise ValueError("--theme-judge-option given with --theme-judge none")
    return judges


def judge_options(values: list[str]) -> dict | None:
    """The options of repeated ``KEY=VALUE`` flags (``None``: none), a value read as JSON
    where it is JSON; ValueError for a flag without ``=`` or a key, or a key given twice.

    >>> judge_options(["adapter=judges/x", "batch_size=8"])
    {'adapter': 'judges/x', 'batch_size': 8}
    """
    options: dict = {}
    for text in values:
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"a judge option is KEY=VALUE, got {text!r}")
        if key in options:
            raise ValueError(f"judge option {key!r} given twice")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options or None
