"""Thin shells for the Hugging Face ecosystem, each calling :class:`editf1.scorer.EditF1Scorer`.

* :mod:`.hf_metric`: what the evaluate module ``metrics/edit_f1/edit_f1.py`` delegates to;
* :mod:`.callback`: the ``transformers`` Trainer callback and a ``compute_metrics`` helper;
* :mod:`.demo`: the single-pair Gradio demo (the Hugging Face Space);
* :mod:`.distributed`: scoring across processes (``torchrun``, ``accelerate launch``).

The apps' page assets and prose live in ``static/`` (:func:`static_text`).
"""

from importlib import resources


def static_text(name: str) -> str:
    """The text of ``editf1/integrations/static/<name>``."""
    return resources.files("editf1.integrations").joinpath("static", name).read_text("utf-8")
