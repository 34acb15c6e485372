"""Generative judges: a causal LM plus an optional LoRA adapter (the ``llm`` extra; ``"llm"``
in the registry). The exports load when first used, so reading the settings imports no torch.
"""

from importlib import import_module

_EXPORTS = {
    "LLMContentConfig": "editf1.judges.generative.config",
    "LLMJudgeConfig": "editf1.judges.generative.config",
    "LLMContentJudge": "editf1.judges.generative.judges",
    "LLMThemeJudge": "editf1.judges.generative.judges",
    "load_judge_model": "editf1.judges.generative.judges",
    "ModelNotAvailableError": "editf1.judges.generative.loading",
    "ModelRef": "editf1.judges.generative.loading",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
