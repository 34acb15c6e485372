"""Training judges and drafting models.

* :mod:`.classifiers`: fitting the embedded judges' classifiers on labelled data;
* :mod:`.lora` and :mod:`.lora_config`: LoRA fine-tuning of the generative judges and
  its settings;
* :mod:`.rewards`: edit-F1 as a reward for trl's ``GRPOTrainer``;
* :mod:`.preferences`: preference pairs for trl's ``DPOTrainer`` (ranked drafts, TADPOLE).
"""
