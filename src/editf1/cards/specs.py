"""The card of the cross-encoder content judge; its text: ``templates/cross_encoder_card.md``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from editf1.cards.render import HUB_DATASETS, CardSpec

__all__ = ["cross_encoder_card_spec"]


def cross_encoder_card_spec(
    results: dict, folder: str | Path, *, name: str = "edit-f1-cross-encoder-content"
) -> CardSpec:
    """The card of the cross-encoder content judge (:mod:`editf1.judges.cross_encoder`):
    its report is the judge's row on the team's OncQA set (the paper's setting) with that
    set's annotators as ``human_ceiling``; its text gives every set's figures beside the
    embedding judge and always NO MATCH.

    Args:
        results: ``benchmarks/results/content_judge_real.json``: every judge on every
            held-out set (``held_out``), the annotators' ``ceiling`` per set.
        folder: the model folder (its ``judge.json`` holds the settings and the
            training record).
    """
    import json

    from editf1.judges.cross_encoder import WEIGHTS_FILE, CrossEncoderConfig

    folder = Path(folder)
    settings = json.loads((folder / "judge.json").read_text("utf-8"))
    held_out, ceilings = results["held_out"], results["ceiling"]
    report = held_out["team"]["cross_encoder"] | {"split": "held-out cases"}
    if ceilings.get("team"):
        report["human_ceiling"] = {k: ceilings["team"][k] for k in ("agreement", "cohen_kappa")}
    template = resources.files("editf1.cards").joinpath("templates", "cross_encoder_card.md")
    return CardSpec(
        name=name,
        task="content",
        report=report,
        evaluated_on=(
            "the team's OncQA labels (oncologist sentence vs the GPT-4 draft), held-out "
            "cases of research.content_splits.split_by_case"
        ),
        evaluated_on_id="team_content_labels",
        datasets=[HUB_DATASETS["K-QA"]],
        pipeline_tag="text-classification",
        base_model="sentence-transformers/all-MiniLM-L6-v2",
        library_name="edit-f1",
        template=Path(str(template)),
        context={
            "config": CrossEncoderConfig.from_json(settings),
            "record": settings["record"],
            "size": (folder / WEIGHTS_FILE).stat().st_size,
            "held_out": held_out,
            "ceilings": ceilings,
        },
    )
