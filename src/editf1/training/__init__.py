"""Fitting judges: the embedded judges' classifiers and LoRA fine-tuning of generative judges."""
