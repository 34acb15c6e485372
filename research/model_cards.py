"""The model cards of the judges edit-F1 ships, regenerated from a manifest
(``cards/cards.json``): never edited by hand.

    python -m research.model_cards            # from the repository root
    python -m research.model_cards --manifest cards/cards.json -o cards

A user's own adapter gets its card from ``edit-f1 train-judge llm-*`` (or
:func:`editf1.cards.adapter_card_spec` and :func:`editf1.cards.write_card`); this script
only renders the shipped judges' cards, some from the team's label sets
(:mod:`research.team_labels`). What the embedded judges' cards say is in their Jinja
templates, ``cards/templates/<source>.md`` (each extends the package's
``judge_card.md``); here is only what they are computed from.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from editf1.cards.adapter import adapter_card_spec
from editf1.cards.render import HUB_DATASETS, CardSpec, write_card
from editf1.cards.specs import cross_encoder_card_spec

__all__ = [
    "build_cards",
    "embedding_content_card_spec",
    "embedding_theme_card_spec",
    "main",
    "theme_labels_ceiling",
]

#: The repository root: the default manifest and output are relative to it.
ROOT = Path(__file__).resolve().parents[1]
#: The templates of the embedded judges' cards, ``<source>.md``.
TEMPLATES = ROOT / "cards" / "templates"
#: The base model of the embedded judges, as the cards' metadata names it.
ENCODER = "sentence-transformers/all-MiniLM-L6-v2"


def embedding_content_card_spec(
    report: dict, *, name: str = "edit-f1-embedding-content"
) -> CardSpec:
    """The card of the embedded default content judge (its parameter file
    ``editf1/data/<DEFAULT_CONTENT_PARAMS>``; text: ``cards/templates/embedding-content.md``).

    Args:
        report: its ``edit-f1 agreement content`` report on the held-out K-QA questions
            (JSON).
        name: the card's name (its folder).
    """
    from editf1.judges.embedding import DEFAULT_CONTENT_PARAMS, DEFAULT_SPAN_MARGIN, load_params

    return CardSpec(
        name=name,
        task="content",
        report=report,
        evaluated_on=(
            "K-QA NLI_medical_annotator.csv (physician majority label), held-out questions"
        ),
        evaluated_on_id=HUB_DATASETS["K-QA"],
        datasets=[HUB_DATASETS["K-QA"]],
        pipeline_tag="text-classification",
        base_model=ENCODER,
        library_name="edit-f1",
        template=TEMPLATES / "embedding-content.md",
        context={
            "params": load_params(DEFAULT_CONTENT_PARAMS),
            "params_file": DEFAULT_CONTENT_PARAMS,
            "span_margin": DEFAULT_SPAN_MARGIN,
        },
    )


def embedding_theme_card_spec(
    report: dict, *, human_ceiling: dict, name: str = "edit-f1-embedding-theme"
) -> CardSpec:
    """The card of the embedded default theme judge (its parameter file
    ``editf1/data/<DEFAULT_THEME_PARAMS>``; text: ``cards/templates/embedding-theme.md``).

    Args:
        report: its agreement with the team's labels of real sentences, in
            :func:`editf1.validation.agreement.theme_label_report`'s form: the nested
            cross-validation split by case of ``benchmarks/theme_judge_real.py``
            (``benchmarks/results/theme_judge_real.json``, ``judges["v2, real + team"]``),
            with ``clinical_micro_f1`` (micro-F1 over the 8 clinical themes, Table 8).
        human_ceiling: ``{"agreement", "cohen_kappa"}`` Estimates of the two annotators
            on the sentences both labelled (:func:`theme_labels_ceiling`).
        name: the card's name (its folder).

    Returns:
        The :class:`~editf1.cards.CardSpec`; its ``report`` gains ``human_ceiling``.
    """
    from editf1.judges.embedding import DEFAULT_THEME_PARAMS, load_params

    params = load_params(DEFAULT_THEME_PARAMS)
    report = {**report, "human_ceiling": human_ceiling, "split": "nested cross-validation by case"}
    clinical = {t: e["f1"] for t, e in report["per_theme"].items() if t != "Other" and e["f1"]}
    weakest = min(clinical, key=lambda t: clinical[t]["value"])
    real = {k: v for k, v in params["n_sentences"].items() if not k.startswith("editf1/")}
    return CardSpec(
        name=name,
        task="theme",
        report=report,
        evaluated_on=(
            "the team's theme labels of real sentences (OncQA oncologists' replies and "
            "GPT-4 drafts, K-QA and ExpertQA answers; datasets/team_theme_labels)"
        ),
        evaluated_on_id="team_theme_labels",
        datasets=[HUB_DATASETS["K-QA"], HUB_DATASETS["ExpertQA"]],
        pipeline_tag="text-classification",
        base_model=ENCODER,
        library_name="edit-f1",
        template=TEMPLATES / "embedding-theme.md",
        context={
            "params": params,
            "params_file": DEFAULT_THEME_PARAMS,
            "real": real,
            "weakest": weakest,
            "weakest_f1": clinical[weakest],
        },
    )


def _read_report(root: Path, ref: str) -> dict:
    """A report from ``"path"`` or ``"path#key"`` (a key of the JSON file, e.g. an
    adapter record's ``agreement``; ``"path#a/b"`` for ``data["a"]["b"]``), relative
    to ``root``."""
    path, _, keys = ref.partition("#")
    data = json.loads((root / path).read_text("utf-8"))
    for key in keys.split("/") if keys else ():
        data = data[key]
    return data


#: The fields each manifest entry must have, by source.
_REQUIRED = {
    "embedding-content": ("report",),
    "embedding-theme": ("report",),
    "cross-encoder": ("report", "adapter"),
    "adapter": ("adapter",),
}


def _check_entry(manifest: Path, index: int, entry: object) -> None:
    """Raise ValueError naming the manifest entry and field that is missing or bad: a
    ``name`` must be one plain folder name (the card is written to ``output/<name>/``,
    so ``..`` or a path would write outside it)."""
    where = f"{manifest}: card {index}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object, got {type(entry).__name__}")
    source = entry.get("source")
    if source not in _REQUIRED:
        raise ValueError(f"{where}: unknown card source {source!r}; one of {list(_REQUIRED)}")
    for field in ("name", *_REQUIRED[source]):
        if not isinstance(entry.get(field), str) or not entry[field].strip():
            raise ValueError(f"{where}: field {field!r} must be non-empty text")
    name = entry["name"]
    if name in (".", "..") or Path(name).name != name or "\\" in name:
        raise ValueError(
            f"{where}: field 'name' must be one folder name (no '/', '\\' or '..'), got {name!r}"
        )


def build_cards(
    manifest: str | Path, output: str | Path, *, into_adapter_folders: bool = True
) -> list[Path]:
    """Regenerate the card of every shipped judge listed in ``manifest``.

    The manifest (``cards/cards.json``) is ``{"cards": [...]}`` with entries
    ``{"name", "source": "embedding-content" | "embedding-theme" | "adapter" |
    "cross-encoder", "report": path (embedding-content, embedding-theme,
    cross-encoder: ``content_judge_real.json``), "adapter": folder (adapter,
    cross-encoder)}``,
    paths relative to the manifest's folder; an adapter entry may add ``"location"``, how users name
    the adapter, and ``"datasets"`` (Hub ids of its training data) and
    ``"evaluated_on_id"`` (its report's ``model-index`` dataset type) where its record
    does not name them (:func:`~editf1.cards.adapter.adapter_card_spec`); any entry may
    add ``"compare": {label: report}``, other judges
    measured on the same items (a report is ``"path"`` or ``"path#key"``). Each card
    goes to ``output/<name>/``; with ``into_adapter_folders``, an adapter's card is
    also written into the adapter folder, so it can be pushed as it is.

    Returns:
        The files written.

    Raises:
        ValueError: naming the entry, for an unknown source, a missing field, or a
            ``name`` that is not one folder name; FileNotFoundError for a missing file.
    """
    manifest = Path(manifest)
    root = manifest.parent
    written = []
    entries = json.loads(manifest.read_text("utf-8")).get("cards")
    if not isinstance(entries, list):
        raise ValueError(f"{manifest}: needs a 'cards' list")
    for index, entry in enumerate(entries):
        _check_entry(manifest, index, entry)
    for entry in entries:
        source = entry["source"]
        comparison = [
            (label, _read_report(root, ref)) for label, ref in entry.get("compare", {}).items()
        ]
        if source == "embedding-content":
            spec = embedding_content_card_spec(
                _read_report(root, entry["report"]), name=entry["name"]
            )
        elif source == "cross-encoder":
            folder = root / entry["adapter"]
            spec = cross_encoder_card_spec(
                _read_report(root, entry["report"]), folder, name=entry["name"]
            )
        elif source == "adapter":
            folder = root / entry["adapter"]
            record = json.loads((folder / "editf1_judge.json").read_text("utf-8"))
            spec = adapter_card_spec(
                folder,
                record,
                name=entry["name"],
                location=entry.get("location", str(folder)),
                datasets=entry.get("datasets"),
                evaluated_on_id=entry.get("evaluated_on_id"),
            )
        else:  # embedding-theme; _check_entry admits no other source
            spec = embedding_theme_card_spec(
                _read_report(root, entry["report"]),
                name=entry["name"],
                human_ceiling=theme_labels_ceiling(),
            )
        spec = replace(spec, comparison=comparison)
        if source == "adapter" and into_adapter_folders:
            written += write_card(spec, folder)
        written += write_card(spec, Path(output) / entry["name"])
    return written


def theme_labels_ceiling() -> dict:
    """``{"agreement", "cohen_kappa"}`` of the two annotators on the sentences both
    labelled in the team's theme label set (:func:`research.team_labels.label_set_summary`,
    as JSON), the human ceiling of the embedded theme judge's card."""
    from editf1.validation.agreement import to_jsonable
    from research.team_labels import label_set_summary

    double = label_set_summary("theme_labels")["double_labelled"]
    return to_jsonable({k: double[k] for k in ("agreement", "cohen_kappa")})


def main(argv: list[str] | None = None) -> int:
    """Write every card of the manifest (``--manifest``, default
    ``cards/cards.json``) into ``--output`` (default ``cards/``) and each
    adapter's card into its folder; print the files written."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--manifest",
        type=Path,
        default=ROOT / "cards" / "cards.json",
        help="the cards to write and their sources (default cards/cards.json)",
    )
    parser.add_argument(
        "--output", "-o", type=Path, default=ROOT / "cards", help="folder of the cards"
    )
    args = parser.parse_args(argv)
    for path in build_cards(args.manifest, args.output):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
