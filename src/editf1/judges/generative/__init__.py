"""Generative judges: a causal LM plus an optional LoRA adapter (the ``llm`` extra).

:mod:`.loading` (models, safetensors only, never remote code), :mod:`.prompts`,
:mod:`.constraints` (what an answer may be), :mod:`.decoding` (shared-prefix constrained
decoding), :mod:`.scoring` (decision mode), :mod:`.config`, :mod:`.judges`
(``"llm"`` in the registry), :mod:`.tiny` (a random tiny model for tests).
"""

from importlib import import_module

__all__ = [
    "LLMContentConfig", "LLMContentJudge", "LLMJudgeConfig", "LLMThemeJudge",
    "ModelNotAvailableError", "ModelRef", "load_judge_model",
]  # fmt: skip

#: Exports by module, imported when first used (reading the settings imports no torch).
_EXPORTS = {
    "LLMContentConfig": "editf1.judges.generative.config",
    "LLMJudgeConfig": "editf1.judges.generative.config",
    "LLMContentJudge": "editf1.judges.generative.judges",
    "LLMThemeJudge": "editf1.judges.generative.judges",
    "load_judge_model": "editf1.judges.generative.judges",
    "ModelNotAvailableError": "editf1.judges.generative.loading",
    "ModelRef": "editf1.judges.generative.loading",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
