"""Clinicians' gold labels of a few pairs: the file (:mod:`.labels`), what they say about a
corpus score (:mod:`.report`, :mod:`.apply`), and which pairs to label (:mod:`.sampling`)."""
