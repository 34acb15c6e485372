"""Thin shells for the Hugging Face ecosystem, each calling :class:`editf1.scorer.EditF1Scorer`.

* :mod:`.hf_metric`: what the evaluate module ``metrics/edit_f1/edit_f1.py`` delegates to;
* :mod:`.callback`: the ``transformers`` Trainer callback and a ``compute_metrics`` helper;
* :mod:`.demo`: the single-pair Gradio demo (the Hugging Face Space);
* :mod:`.distributed`: scoring across processes (``torchrun``, ``accelerate launch``).
"""
