"""Judges measured against clinicians: labelled items, agreement statistics, model cards."""
