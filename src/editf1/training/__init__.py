"""Training judges (the embedded judges' classifiers, LoRA fine-tuning, the cross-encoder)
and drafting models (edit-F1 as trl's GRPO reward, DPO preference pairs)."""
