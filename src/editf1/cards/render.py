"""A judge's model card from a :class:`CardSpec` (see :mod:`editf1.cards`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "HUB_DATASETS",
    "CardSpec",
    "confusion_plot",
    "hub_datasets",
    "render_card",
    "write_card",
]

#: The card's template in ``editf1/cards/templates/``; a judge's own template extends it.
_TEMPLATE = "judge_card.md"
#: The Hub dataset id of each public set the judges use, by the name their data
#: descriptions use (OncQA and the team's labels are not on the Hub).
HUB_DATASETS = {"K-QA": "Itaymanes/K-QA", "ExpertQA": "chaitanyamalaviya/ExpertQA"}


def hub_datasets(*descriptions: str) -> list[str]:
    """The Hub ids (:data:`HUB_DATASETS`) of the public sets ``descriptions`` name.

    >>> hub_datasets("K-QA NLI_medical_annotator.csv (kqa/)")
    ['Itaymanes/K-QA']
    >>> hub_datasets("the team's OncQA content labels")
    []
    """
    return [hub for name, hub in HUB_DATASETS.items() if any(name in d for d in descriptions)]


@dataclass(frozen=True)
class CardSpec:
    """What a judge's card says that differs between judges (the template holds the rest).

    Attributes:
        name: the card's (and Hub repo's) name; ``task``: ``"content"`` or ``"theme"``.
        report: ``to_jsonable`` of a :mod:`editf1.validation.agreement` report, or ``None``.
        evaluated_on: what the report was computed on; ``evaluated_on_id``: its
            ``model-index`` dataset type (a Hub dataset id, else a dataset card's name).
        datasets: Hub dataset ids of the training data.
        pipeline_tag: ``text-classification`` or ``text-generation``.
        base_model, library_name: the metadata's base model (Hub id) and loading
            library (``"peft"``, ``"edit-f1"``), or ``None``.
        summary: what the judge is, one paragraph.
        judge_rows, training: (field, value) rows of the "Judge" and "Training" tables.
        usage: the Python and command-line code that loads this judge.
        notes: extra limitations specific to this judge.
        comparison: (label, report) of other judges on the same items, shown beside it.
        template: a Jinja file that extends ``judge_card.md`` (blocks ``summary``,
            ``judge``, ``usage``, ``training``, ``notes``), or ``None``.
        context: the variables ``template`` reads besides ``spec``.
    """

    name: str
    task: str
    report: dict | None
    evaluated_on: str
    evaluated_on_id: str
    datasets: list[str]
    pipeline_tag: str
    base_model: str | None = None
    library_name: str | None = None
    summary: str = ""
    judge_rows: list[tuple[str, str]] = field(default_factory=list)
    usage: str = ""
    training: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    comparison: list[tuple[str, dict]] = field(default_factory=list)
    template: Path | None = None
    context: dict = field(default_factory=dict)


_CONTENT_ROWS = [
    ("agreement", "Agreement (share of match / no-match decisions equal to the humans')"),
    ("non_match_agreement", "Non-match agreement (human NO MATCH judged NO MATCH)"),
    ("match_agreement", "Match agreement (human match judged a match)"),
    ("exact_span_agreement", "Match agreement with the exact span"),
    ("span_overlap", "Span overlap (character Jaccard, both matched)"),
    ("cohen_kappa", "Cohen's kappa"),
]
_THEME_ROWS = [
    ("clinical_micro_f1", "Micro F1 over the 8 clinical themes (Table 8)"),
    ("micro_f1", "Micro F1 (share of sentences labelled as the humans did)"),
    ("macro_f1", "Macro F1 (mean over themes)"),
    ("cohen_kappa", "Cohen's kappa"),
]


#: The ``model-index`` metric type of a report's figure, where it is not the figure's name.
_METRIC_TYPES = {"agreement": "accuracy", "micro_f1": "f1", "macro_f1": "f1"}
_METRIC_TYPES["clinical_micro_f1"] = "f1"


def _eval_results(spec: CardSpec):
    from huggingface_hub import EvalResult

    report = spec.report
    if report is None:
        return None
    rows = _CONTENT_ROWS if spec.task == "content" else _THEME_ROWS
    results = [
        EvalResult(
            task_type="text-classification",
            task_name=f"{spec.task} judgement (edit-F1)",
            dataset_type=spec.evaluated_on_id,
            dataset_name=spec.evaluated_on,
            dataset_split=report.get("split", "test"),
            metric_type=_METRIC_TYPES.get(key, key),
            metric_name=f"{label.split(' (')[0]} (95% CI {e['low']:.3f}-{e['high']:.3f})",
            metric_value=round(e["value"], 4),
            verified=False,
        )
        for key, label in rows
        if (e := report.get(key))
    ]
    return results or None


def render_card(spec: CardSpec):
    """The card as a :class:`huggingface_hub.ModelCard`: ``spec``'s metadata rendered with
    ``templates/judge_card.md`` or ``spec.template`` (variables as
    :meth:`ModelCard.from_template`'s, plus ``spec``, ``rows`` and ``spec.context``).

    Raises:
        jinja2.TemplateNotFound: if ``spec.template`` does not exist.
    """
    import jinja2
    from huggingface_hub import ModelCard, ModelCardData

    data = ModelCardData(
        model_name=spec.name,
        base_model=spec.base_model,
        library_name=spec.library_name,
        pipeline_tag=spec.pipeline_tag,
        datasets=spec.datasets or None,
        license="apache-2.0",
        language="en",
        tags=["edit-f1", "clinical", "judge", f"{spec.task}-judge"],
        metrics=["accuracy", "cohen_kappa", "f1"],
        eval_results=_eval_results(spec),
    )
    rows = _CONTENT_ROWS if spec.task == "content" else _THEME_ROWS
    loaders = [jinja2.PackageLoader("editf1.cards", "templates")]
    if spec.template is not None:
        loaders.insert(0, jinja2.FileSystemLoader(Path(spec.template).parent))
    environment = jinja2.Environment(loader=jinja2.ChoiceLoader(loaders))
    name = _TEMPLATE if spec.template is None else Path(spec.template).name
    variables = {**data.to_dict(), **spec.context, "spec": spec, "rows": rows}
    content = environment.get_template(name).render(card_data=data.to_yaml(), **variables)
    return ModelCard(content)


def confusion_plot(report: dict, path: Path, title: str) -> Path:
    """Draw an agreement report's ``confusion_matrix`` (rows: humans, columns: judge;
    ``labels`` default ``["no match", "match"]``) as a PNG at ``path``; returns ``path``."""
    import numpy as np
    from matplotlib.figure import Figure

    matrix = np.asarray(report["confusion_matrix"])
    columns = report.get("labels") or ["no match", "match"]
    rows = columns[: len(matrix)]
    size = 2.5 + 0.55 * len(columns)
    fig = Figure(figsize=(size + 1.5, size))
    ax = fig.subplots()
    ax.imshow(matrix, cmap="Blues")
    for (i, j), count in np.ndenumerate(matrix):
        color = "white" if count > matrix.max() / 2 else "black"
        ax.text(j, i, str(count), ha="center", va="center", color=color, fontsize=9)
    ax.set_xticks(range(len(columns)), [c[:40] for c in columns], rotation=45, ha="right")
    ax.set_yticks(range(len(rows)), [r[:40] for r in rows])
    ax.set_xlabel("judge")
    ax.set_ylabel("humans")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    return path


def write_card(spec: CardSpec, folder: str | Path) -> list[Path]:
    """Write ``README.md`` (and ``confusion_matrix.png`` with a report); return the files."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    readme = folder / "README.md"
    readme.write_text(str(render_card(spec)) + "\n", encoding="utf-8")
    if spec.report is None:
        return [readme]
    title = f"{spec.name}\n{spec.evaluated_on}"
    return [readme, confusion_plot(spec.report, folder / "confusion_matrix.png", title)]
