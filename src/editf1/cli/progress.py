"""Hiding the model libraries' progress bars (``--no-progress``, ``--quiet``)."""

from __future__ import annotations

import sys

__all__ = ["silence_progress_bars"]


def silence_progress_bars() -> None:
    """Hide the bars of huggingface_hub, transformers and datasets for the rest of the process
    (bars drawn with tqdm directly stay)."""
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging

        logging.disable_progress_bar()
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
