"""Thin shells for the Hugging Face ecosystem, each calling :class:`editf1.scorer.EditF1Scorer`;
the apps' page assets and prose live in ``static/`` (:func:`static_text`).
"""

from importlib import resources


def static_text(name: str) -> str:
    """The text of ``editf1/integrations/static/<name>``."""
    return resources.files("editf1.integrations").joinpath("static", name).read_text("utf-8")
