"""Clinicians' gold labels of a few pairs and what they give: the gold-label file
(:mod:`~editf1.gold.labels`), prediction-powered corpus estimates and the judge's
agreement on your data (:mod:`~editf1.gold.report`), the report attached to a result
while scoring or afterwards (:mod:`~editf1.gold.apply`), and which pairs to label
(:mod:`~editf1.gold.sampling`)."""
