"""Clinicians' gold labels of a few pairs and what they give: the gold-label file
(:mod:`~editf1.gold.labels`), prediction-powered corpus estimates and the judge's
agreement on your data (:mod:`~editf1.gold.report`), and which pairs to label
(:mod:`~editf1.gold.sampling`)."""
