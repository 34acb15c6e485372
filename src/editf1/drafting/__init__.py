"""Drafting: a causal LM the user names answers patient messages (the strategies' and
TADPOLE's prompts, local and server generators, ``edit-f1 draft``)."""
