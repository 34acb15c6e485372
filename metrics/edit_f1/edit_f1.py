"""edit-F1: how much would a clinician edit this LLM-drafted reply to a patient message?

A thin `evaluate` module over the `editf1` library (pip install edit-f1): the
descriptions, argument checks and scoring all live in `editf1.integrations.hf_metric`.
The judges are chosen by the config name, evaluate.load("edit_f1", "exact+none"), or by
compute's keywords.
"""

import evaluate

from editf1.citation import PAPER_URL
from editf1.integrations import hf_metric


@evaluate.utils.file_utils.add_start_docstrings(hf_metric.DESCRIPTION, hf_metric.KWARGS_DESCRIPTION)
class EditF1(evaluate.Metric):
    def __init__(self, *args, **kwargs):
        # evaluate.load passes its unknown keywords here and evaluate drops them: refuse
        # them instead (content_judge="exact" would otherwise score with the defaults)
        hf_metric.check_init_options(kwargs)
        super().__init__(*args, **kwargs)

    def _info(self):
        hf_metric.judges_of(self.config_name)  # an unknown judge is refused at load
        return evaluate.MetricInfo(
            description=hf_metric.DESCRIPTION,
            citation=hf_metric.CITATION,
            inputs_description=hf_metric.KWARGS_DESCRIPTION,
            features=hf_metric.features(),
            reference_urls=[PAPER_URL],
        )

    def _download_and_prepare(self, dl_manager):
        hf_metric.keep_in_memory(self)  # one process: no draft or reply reaches the disk

    # Each batch is checked before evaluate stores it: evaluate's own errors quote the
    # drafts, and it would store a number or a list of replies as text.

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add drafts and their clinician replies (one, or a list per draft)."""
        predictions, references = hf_metric.check_added(self, predictions, references)
        if predictions:
            super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one draft and its clinician reply (or list of replies)."""
        hf_metric.check_added(self, [prediction], [reference])
        super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score the pairs given here and those added before; a failed computation
        ends, and leaves none of its pairs in evaluate's cache."""
        with hf_metric.computation(self, predictions, references, kwargs):
            return super().compute(**kwargs)

    def _compute(self, predictions, references, **kwargs):
        return hf_metric.compute(self.config_name, predictions, references, **kwargs)
