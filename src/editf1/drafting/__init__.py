"""Drafting: a causal LM the user names answers patient messages.

:mod:`.prompts` (the strategies' and TADPOLE's prompts), :mod:`.generators`
(:class:`CausalLMGenerator`, :class:`ServerGenerator`) and :mod:`.baselines`
(:func:`draft_rows`, ``edit-f1 draft``). The rows drafted are what ``edit-f1 score``
reads and :mod:`editf1.training.preferences` ranks.
"""

from editf1.drafting.baselines import draft_rows, nearest_examples
from editf1.drafting.generators import CausalLMGenerator, ServerGenerator

__all__ = ["CausalLMGenerator", "ServerGenerator", "draft_rows", "nearest_examples"]
