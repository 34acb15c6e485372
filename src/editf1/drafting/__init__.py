"""Drafting: a causal LM the user names answers patient messages.

:mod:`.prompts` (the strategies' and TADPOLE's prompts), :mod:`.generators`
(:class:`~.generators.CausalLMGenerator`, :class:`~.generators.ServerGenerator`) and
:mod:`.baselines` (:func:`~.baselines.draft_rows`, ``edit-f1 draft``). The rows drafted
are what ``edit-f1 score`` reads and :mod:`editf1.training.preferences` ranks.
"""
