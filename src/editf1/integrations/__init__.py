"""Thin shells for the Hugging Face ecosystem.

The evaluate module's support (``hf_metric``), the Trainer callback (``callback``) and
the Gradio demo (``demo``); each calls :class:`editf1.scorer.EditF1Scorer`.
"""
