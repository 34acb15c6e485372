"""Drafting: a causal LM the user names answers patient messages.

* :mod:`.prompts`: the drafting strategies' chat prompts (zero-shot, thematic, few-shot;
  Seegmiller et al., arXiv 2601.11344, §4.1.2) and TADPOLE's rewrites of a draft
  (Appendix D), versioned by :data:`~editf1.drafting.prompts.DRAFT_PROMPT`.
* :mod:`.generators`: :class:`CausalLMGenerator` (a local or cached model) and
  :class:`ServerGenerator` (an OpenAI-compatible server) turn conversations into replies.
* :mod:`.baselines`: :func:`draft_rows` drafts every row of a table with one strategy
  (``edit-f1 draft``), :func:`nearest_examples` picks the few-shot examples.

The rows drafted are what ``edit-f1 score`` reads and what
:mod:`editf1.training.preferences` ranks into preference pairs.
"""

from editf1.drafting.baselines import draft_rows, nearest_examples
from editf1.drafting.generators import CausalLMGenerator, ServerGenerator

__all__ = ["CausalLMGenerator", "ServerGenerator", "draft_rows", "nearest_examples"]
