"""Judges measured against clinicians.

* :mod:`.labelled`: expert-labelled items (content and theme: a site's own labels, K-QA's
  physicians' labels) and case splits;
* :mod:`.agreement`: agreement statistics with bootstrap CIs, next to the human ceiling.

Model cards, written from these reports, are :mod:`editf1.cards`. The team's own label
sets on real text, stored by reference, are loaded outside the package
(``research/team_labels.py`` and beside it, in the repository).
"""
