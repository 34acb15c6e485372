"""Model cards of the judges, generated (never edited by hand) from their training records
and agreement reports: a ``README.md`` with ``huggingface_hub`` metadata (the agreement
figures as ``model-index`` entries) rendered from the Jinja template
``templates/judge_card.md``, and a ``confusion_matrix.png``.
"""

from editf1.cards.adapter import adapter_card_spec
from editf1.cards.render import CardSpec, confusion_plot, render_card, write_card
from editf1.cards.specs import cross_encoder_card_spec

__all__ = [
    "CardSpec",
    "adapter_card_spec",
    "confusion_plot",
    "cross_encoder_card_spec",
    "render_card",
    "write_card",
]
