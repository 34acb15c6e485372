"""``edit-f1 cards``: regenerate the card of every shipped judge from a manifest
(``model_cards/cards.json``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from editf1.cards.render import write_card
from editf1.cards.specs import (
    adapter_card_spec,
    cross_encoder_card_spec,
    embedding_content_card_spec,
    embedding_theme_card_spec,
)

__all__ = ["build_cards"]


def _read_report(root: Path, ref: str) -> dict:
    """A report from ``"path"`` or ``"path#key"`` (a key of the JSON file, e.g. an
    adapter record's ``agreement``; ``"path#a/b"`` for ``data["a"]["b"]``), relative
    to ``root``."""
    path, _, keys = ref.partition("#")
    data = json.loads((root / path).read_text("utf-8"))
    for key in keys.split("/") if keys else ():
        data = data[key]
    return data


def build_cards(
    manifest: str | Path, output: str | Path, *, into_adapter_folders: bool = True
) -> list[Path]:
    """Regenerate the card of every shipped judge listed in ``manifest``.

    The manifest (``model_cards/cards.json``) is ``{"cards": [...]}`` with entries
    ``{"name", "source": "embedding-content" | "embedding-theme" | "adapter" |
    "cross-encoder", "report": path (embedding-content, embedding-theme,
    cross-encoder: ``content_judge_real.json``), "adapter": folder (adapter,
    cross-encoder)}``,
    paths relative to the manifest's folder; an adapter entry may add ``"location"``, how users name
    the adapter; any entry may add ``"compare": {label: report}``, other judges
    measured on the same items (a report is ``"path"`` or ``"path#key"``). Each card
    goes to ``output/<name>/``; with ``into_adapter_folders``, an adapter's card is
    also written into the adapter folder, so it can be pushed as it is.

    Returns:
        The files written.

    Raises:
        ValueError: for an unknown source; FileNotFoundError for a missing file.
    """
    manifest = Path(manifest)
    root = manifest.parent
    written = []
    for entry in json.loads(manifest.read_text("utf-8"))["cards"]:
        source = entry["source"]
        comparison = [
            (label, _read_report(root, ref)) for label, ref in entry.get("compare", {}).items()
        ]
        if source == "embedding-content":
            spec = embedding_content_card_spec(
                _read_report(root, entry["report"]), name=entry["name"]
            )
        elif source == "embedding-theme":
            spec = embedding_theme_card_spec(
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
                folder, record, name=entry["name"], location=entry.get("location", str(folder))
            )
        else:
            raise ValueError(f"{manifest}: unknown card source {source!r}")
        spec = replace(spec, comparison=comparison)
        if source == "adapter" and into_adapter_folders:
            written += write_card(spec, folder)
        written += write_card(spec, Path(output) / entry["name"])
    return written
