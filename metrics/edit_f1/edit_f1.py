"""edit-F1: how much would a clinician edit this LLM-drafted reply to a patient message?

A thin `evaluate` module over the `editf1` library (pip install edit-f1): the
descriptions, argument checks and scoring all live in `editf1.integrations.hf_metric`.
"""

import inspect

import evaluate

from editf1.citation import PAPER_URL
from editf1.integrations import hf_metric


@evaluate.utils.file_utils.add_start_docstrings(hf_metric.DESCRIPTION, hf_metric.KWARGS_DESCRIPTION)
class EditF1(evaluate.Metric):
    def __init__(self, **kwargs):
        evaluate_parameters = inspect.signature(evaluate.EvaluationModule.__init__).parameters
        self.edit_f1_options, rest = hf_metric.split_init_options(kwargs, evaluate_parameters)
        if rest.get("num_process", 1) == 1:  # drafts and replies never reach evaluate's cache
            rest["keep_in_memory"] = True
        super().__init__(**rest)

    def _info(self):
        return evaluate.MetricInfo(
            description=hf_metric.DESCRIPTION,
            citation=hf_metric.CITATION,
            inputs_description=hf_metric.KWARGS_DESCRIPTION,
            features=hf_metric.features(),
            reference_urls=[PAPER_URL],
        )

    # len(self) is the number of pairs this process added to the computation under way
    # (0 once compute ends it): the row number of the next pair, and 0 when one starts.

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add drafts and their clinician replies (one, or a list per draft)."""
        predictions, references = hf_metric.check_batch(predictions, references, len(self))
        if not predictions:
            return  # nothing to add
        kind = self._reference_kind if len(self) else None
        self._reference_kind = hf_metric.reference_kind(references, kind)
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one draft and its clinician reply (or list of replies)."""
        hf_metric.check_batch([prediction], [reference], len(self))
        kind = self._reference_kind if len(self) else None
        self._reference_kind = hf_metric.reference_kind([reference], kind)
        super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score the pairs given here and those added before; a failed computation
        ends, and leaves none of its pairs in evaluate's cache."""
        import pyarrow

        try:
            hf_metric.check_compute_options(kwargs, self.process_id)
            if predictions is not None or references is not None:
                self.add_batch(predictions=predictions, references=references)
            if not len(self):
                raise ValueError(
                    "no pairs to score: predictions and references are empty, or were not "
                    "given and nothing was added with add or add_batch"
                )
            try:
                return super().compute(**kwargs)
            except pyarrow.ArrowException as error:  # gathering the processes' files
                raise hf_metric.gather_error(error) from None
        except BaseException:
            hf_metric.discard_cache(self)
            raise

    def _compute(self, predictions, references, **kwargs):
        return hf_metric.compute(self.edit_f1_options, predictions, references, **kwargs)
