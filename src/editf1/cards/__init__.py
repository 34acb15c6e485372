"""Model cards of the judges, generated from their training records and agreement reports.

A card is a ``README.md`` with ``huggingface_hub`` metadata (:class:`ModelCardData`,
with the agreement figures as ``model-index`` :class:`EvalResult` entries) and a
``confusion_matrix.png``. It states the base model and revision, the adapter, the
training data and settings, every agreement figure with its 95% bootstrap CI next to
the human ceiling, per-theme F1 for theme judges, intended use and limitations. The
layout and the fixed text are the Jinja template ``templates/judge_card.md``, rendered
by ``huggingface_hub``'s :meth:`ModelCard.from_template`; a :class:`CardSpec` holds
what differs between judges. Cards are never edited by hand: ``edit-f1 cards``
regenerates every shipped judge's card from ``model_cards/cards.json``, and ``edit-f1
train-judge llm-*`` writes one into each adapter folder it trains, so the folder can be
pushed to the Hub as it is.

* :mod:`.render`: :class:`CardSpec`, rendering and writing a card, the Hub ids of the
  public sets (:data:`~editf1.cards.render.HUB_DATASETS`);
* :mod:`.adapter`: the spec of a LoRA adapter's card, from its training record;
* :mod:`.specs`: the specs of the embedded content and theme judges and the
  cross-encoder content judge;
* :mod:`.build`: :func:`build_cards`, every card a manifest lists (``edit-f1 cards``).
"""

from editf1.cards.adapter import adapter_card_spec
from editf1.cards.build import build_cards
from editf1.cards.render import CardSpec, confusion_plot, render_card, write_card
from editf1.cards.specs import (
    cross_encoder_card_spec,
    embedding_content_card_spec,
    embedding_theme_card_spec,
)

__all__ = [
    "CardSpec",
    "adapter_card_spec",
    "build_cards",
    "confusion_plot",
    "cross_encoder_card_spec",
    "embedding_content_card_spec",
    "embedding_theme_card_spec",
    "render_card",
    "write_card",
]
