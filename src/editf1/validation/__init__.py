"""Judges measured against clinicians.

* :mod:`.labelled`: expert-labelled items (content and theme) and case splits;
* :mod:`.team_labels`, :mod:`.stage2_labels`: the team's label sets on real text and the
  labels OncQA's stage-2 edits give, stored by reference;
* :mod:`.agreement`: agreement statistics with bootstrap CIs, next to the human ceiling.

Model cards, written from these reports, are :mod:`editf1.cards`.
"""
