"""The card of a LoRA judge adapter, from its training record (``editf1_judge.json``,
:mod:`editf1.training.lora`); its text: ``templates/adapter_card.md``."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from editf1.cards.render import CardSpec, hub_datasets

__all__ = ["adapter_card_spec"]


def _evaluated_on_id(description: str) -> str:
    """The Hub id of the one public set ``description`` names, else a slug of it."""
    hub = hub_datasets(description)
    if len(hub) == 1:
        return hub[0]
    return re.sub(r"[^\w.]+", "-", description).strip("-").lower()[:64] or "labels"


def adapter_card_spec(
    folder: str | Path,
    record: dict,
    *,
    name: str | None = None,
    location: str | None = None,
    datasets: list[str] | None = None,
    evaluated_on_id: str | None = None,
) -> CardSpec:
    """The card of a LoRA judge adapter trained by :mod:`editf1.training.lora`.

    Args:
        folder: the adapter folder; ``record``: its ``editf1_judge.json``.
        name: default: the folder's name.
        location: how users refer to the adapter (default: the folder path).
        datasets: Hub ids of its training data (default: :func:`hub_datasets` of its
            data description).
        evaluated_on_id: the report's ``model-index`` dataset type (default: the Hub id
            of the one public set its evaluation data names, else a slug of it).
    """
    folder = Path(folder)
    evaluated_on = record.get("agreement", {}).get("data", record["data"]["name"])
    notes = []
    if (record["data"].get("target_spans") or {}).get("silver"):
        notes.append(
            "Its training spans for matches are silver spans chosen by the embedded judge, "
            "because the labels say whether, not where; the match *decisions* are the "
            "physicians'."
        )
    if "K-QA" in record["data"]["name"]:
        notes.append(
            "K-QA pairs general medical questions with LLM answers and physician claims; "
            "they are not portal messages and replies."
        )
    template = resources.files("editf1.cards").joinpath("templates", "adapter_card.md")
    return CardSpec(
        name=name or folder.name,
        task=record["task"],
        report=record.get("agreement"),
        evaluated_on=evaluated_on,
        evaluated_on_id=evaluated_on_id or _evaluated_on_id(evaluated_on),
        datasets=hub_datasets(record["data"]["name"]) if datasets is None else datasets,
        pipeline_tag="text-generation",
        base_model=record["base"].get("upstream"),
        library_name="peft",
        notes=notes,
        template=Path(str(template)),
        context={"record": record, "location": location or str(folder)},
    )
