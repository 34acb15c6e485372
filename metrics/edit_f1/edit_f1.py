"""edit-F1: how much would a clinician edit this LLM-drafted reply to a patient message?

A thin `evaluate` module over the `editf1` library (pip install edit-f1): the
descriptions, argument checks and scoring all live in `editf1.hf_metric`.
"""

import inspect

import datasets
import evaluate

from editf1 import hf_metric


@evaluate.utils.file_utils.add_start_docstrings(hf_metric.DESCRIPTION, hf_metric.KWARGS_DESCRIPTION)
class EditF1(evaluate.Metric):
    def __init__(self, **kwargs):
        evaluate_parameters = inspect.signature(evaluate.EvaluationModule.__init__).parameters
        self.edit_f1_options, rest = hf_metric.split_init_options(kwargs, evaluate_parameters)
        super().__init__(**rest)

    def _info(self):
        return evaluate.MetricInfo(
            description=hf_metric.DESCRIPTION,
            citation=hf_metric.CITATION,
            inputs_description=hf_metric.KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            reference_urls=["https://arxiv.org/abs/2601.11344"],
        )

    def _compute(self, predictions, references, **kwargs):
        return hf_metric.compute(self.edit_f1_options, predictions, references, **kwargs)
