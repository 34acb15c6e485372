"""Judges measured against clinicians: expert-labelled items and case splits
(:mod:`.labelled`), agreement statistics with bootstrap CIs beside the human ceiling
(:mod:`.agreement`). The team's own label sets are loaded outside the package
(``research/team_labels.py``).
"""
