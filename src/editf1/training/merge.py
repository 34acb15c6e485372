"""A trained LoRA judge merged into its base with peft's ``merge_and_unload`` (GGUF
dequantised): the one model folder a server (``transformers serve``, vLLM, TGI, SGLang)
loads, ``edit-f1 merge-judge``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

__all__ = ["MERGED_RECORD", "merge_judge"]

#: The file in a merged folder naming the adapter and base it was merged from.
MERGED_RECORD = "editf1_merged.json"

_DTYPES = ("float32", "bfloat16", "float16")


def merge_judge(
    adapter: str | Path,
    output: str | Path,
    *,
    base: str | None = None,
    dtype: str = "float32",
    local_files_only: bool = False,
) -> dict:
    """Merge a judge adapter (a folder or ``owner/adapter@revision``) into its base (default:
    the one its record names) and save the servable folder ``output`` (new or empty; it
    appears only once complete) with the tokenizer; return the record written there as
    :data:`MERGED_RECORD` (what was merged, with weights digests).

    Raises:
        ValueError: an unknown ``dtype``; ``output`` not empty; an adapter trained on
            plain prompts or a tokenizer without a chat template.
        ModelNotAvailableError: the adapter or base is not here and cannot be fetched.
    """
    import torch

    from editf1.io import staged_folder
    from editf1.judges.generative import loading
    from editf1.judges.generative.judges import load_judge_model
    from editf1.judges.generative.loading import files_digest

    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {list(_DTYPES)}, got {dtype!r}")
    output = Path(output)
    if output.is_dir() and any(output.iterdir()):
        raise ValueError(f"{output} is not empty; give a new or empty folder")
    found = loading.resolve(
        str(adapter), allow_patterns=loading.ADAPTER_FILES, local_files_only=local_files_only
    )
    judge = load_judge_model(
        loading.read_judge_config(found.folder)["task"],
        base,
        str(adapter),
        device="cpu",
        dtype=None,
        chat_template=None,
        cache_dir=None,
        local_files_only=local_files_only,
    )
    record = judge.record
    if record["prompt_format"] != "chat-template" or not judge.tokenizer.chat_template:
        raise ValueError(
            f"{adapter} was trained on plain prompts (prompt_format "
            f"{record['prompt_format']!r}) or its tokenizer has no chat template: a chat "
            "server would prompt it otherwise than it was trained; use it in process "
            "(--content-judge llm) instead"
        )
    with staged_folder(output, protect=[adapter]) as stage:
        model = judge.model  # shared with in-process judges: cast a copy
        if dtype != "float32":
            model = copy.deepcopy(model).to(getattr(torch, dtype))
        model.save_pretrained(stage, safe_serialization=True)
        judge.tokenizer.save_pretrained(stage)
        merged = {
            "format": 1,
            **{key: record[key] for key in ("task", "prompt", "prompt_format")},
            "adapter": {"spec": str(judge.adapter.ref), "weights": files_digest(judge.adapter)},
            "base": record["base"] | {"weights": files_digest(judge.base)},
            "dtype": dtype,
            "weights": files_digest(loading.resolve(str(stage), allow_patterns=[])),
        }
        (stage / MERGED_RECORD).write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
    return merged
