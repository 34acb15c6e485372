"""The public sets from ``../shared/data``: counts and values through the builder classes
and through their Hub-ready folders, and ``edit-f1 score`` on their splits end to end.

Counts are those of the team's copies (deterministic subsets of the upstream releases,
see ``../shared/data/README.md``): OncQA 63 cases, 100 own replies, 100 edited drafts,
263 graded responses; K-QA 201 questions, 26 LLM-vs-physician pairs, 208 NLI rows over
27 questions; ExpertQA medicine 100 lines, 43 of them verbatim repeats, so 57 pairs.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import Counter
from pathlib import Path

import datasets
import pytest

from editf1.builders import builder_class, load_split
from editf1.builders.hub import build_note, size_category, write_hub_folder
from editf1.builders.public import DuplicateRecordsWarning, UnmatchedRecordsWarning
from editf1.builders.readers import kqa_nli_rows, oncqa_rows
from editf1.cli.main import main
from editf1.themes import THEMES

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FAST = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]

pytestmark = [
    pytest.mark.skipif(
        not all((SHARED_DATA / name).is_dir() for name in ("oncqa", "kqa", "expertqa")),
        reason=f"{SHARED_DATA} (the team's read-only copies of OncQA, K-QA and ExpertQA) is "
        "absent: a fresh clone outside this workplace",
    ),
    # the known, documented notes on these copies; tests that check them use pytest.warns
    pytest.mark.filterwarnings("ignore::editf1.builders.public.DuplicateRecordsWarning"),
    pytest.mark.filterwarnings("ignore::editf1.builders.public.UnmatchedRecordsWarning"),
]

_COUNTS = ("expected_matches", "expected_additions", "expected_deletions")


def split(name: str, config: str | None, tmp_path: Path, folder: str) -> datasets.Dataset:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicateRecordsWarning)
        warnings.simplefilter("ignore", UnmatchedRecordsWarning)
        return load_split(
            name, config, data_dir=str(SHARED_DATA / folder), cache_dir=str(tmp_path / "cache")
        )


# -- OncQA ---------------------------------------------------------------------------
@pytest.mark.parametrize("config", ["own_reply", "edited"])
def test_oncqa_pairs_are_the_core_reader_rows_plus_context(tmp_path, config):
    pairs = split("oncqa", config, tmp_path, "oncqa")
    rows = oncqa_rows(SHARED_DATA / "oncqa", config)
    assert pairs.num_rows == 100 and len(set(pairs["case_id"])) == 63
    assert pairs["id"] == [r["id"] for r in rows]
    assert pairs["prediction"] == [r["prediction"] for r in rows]
    assert pairs["reference"] == [r["reference"] for r in rows]
    assert set(pairs["system"]) == {"gpt-4"} and set(pairs["annotator_id"]) == {None}
    first = pairs[0]
    assert first["id"] == "0-1" and first["message"] == (
        "I've been feeling more fatigued than usual for the past week, and I'm having "
        "trouble completing my daily tasks. Is this normal? Should I be concerned?"
    )
    assert first["ehr_summary"].startswith("Age: 55 years\nGender: Male\nCancer diagnosis:")
    if config == "edited":
        assert pairs["edit_distance"] == [r["edit_distance"] for r in rows]
        assert pairs["edit_distance"][:3] == [46, 0, 703] and sum(pairs["edit_distance"]) == 16644
        assert Counter(pairs["acceptability"])["Acceptable with no modifications"] == 57
        assert Counter(pairs["harm"]) == {
            "No harm": 41,
            "Mild harm": 34,
            "Moderate harm": 13,
            "Severe harm": 8,
            None: 4,
        }


def test_oncqa_cases_parse_input_into_message_and_chart(tmp_path):
    cases = split("oncqa", "cases", tmp_path, "oncqa")
    assert cases.num_rows == 63
    assert sum(len(c["responses"]) for c in cases) == 200  # 100 own replies + 100 edits
    edits = [r for c in cases for r in c["responses"] if r["draft_index"] is not None]
    assert len(edits) == 100
    # three stage-2 drafts differ from Master2.csv by a few characters: kept as drafts
    assert [c["id"] for c in cases if len(c["drafts"]) == 2] == ["41", "47", "81"]
    first = cases[0]
    assert first["ehr"] == {
        "age": "55 years",
        "sex": "Male",
        "problems": ["hypertension", "hyperlipidemia"],
        "medications": ["lisinopril", "amlodipine", "simvastatin", "aspirin", "pantoprazole"],
        "encounters": [
            {
                "date": "1 week ago",
                "summary": "55-year-old male with newly diagnosed stage III NSCLC. He is on "
                "chemoradiation and tolerating treatment well. No significant side effects "
                "were reported. Will continue treatment as planned.",
            }
        ],
        "other": [
            {"name": "Cancer diagnosis", "value": "Stage III non-small cell lung cancer (NSCLC)"},
            {"name": "Prior cancer treatments", "value": "None"},
            {
                "name": "Current cancer treatments",
                "value": "radiotherapy with concurrent cisplatin (started 2 weeks ago)",
            },
        ],
    }
    assert first["attributes"][0] == {
        "name": "sample_label",
        "value": "Sample 1 (active treatment)",
    }
    assert "Patient message" not in "".join(cases["ehr_summary"])
    assert all(c["message"] and c["ehr"]["age"] and c["ehr"]["sex"] for c in cases)


def test_oncqa_content_grading(tmp_path):
    graded = split("oncqa", "content_grading", tmp_path, "oncqa")
    assert graded.num_rows == 263  # 78 rows of s44 + 185 of d56
    assert Counter(graded["source"]) == {"raw_md": 100, "doc_edit": 100, "gpt_raw": 63}
    assert sum(r["flags"]["AnyEdu"] for r in graded) == 184
    assert sum(r["flags"]["Clarify"] for r in graded) == 37
    assert graded[0]["id"] == "s44-0" and graded[0]["case_id"] == "4"


# -- K-QA ----------------------------------------------------------------------------
def test_kqa_questions_and_llm_vs_physician_pairs(tmp_path):
    with pytest.warns(UnmatchedRecordsWarning, match=r"1 NLI question\(s\) have no physician"):
        load_split(
            "kqa", "pairs", data_dir=str(SHARED_DATA / "kqa"), cache_dir=str(tmp_path / "c0")
        )
    questions = split("kqa", "questions", tmp_path, "kqa")
    assert questions.num_rows == 201
    assert sum(len(q["drafts"]) for q in questions) == 26
    assert sum(a["name"] == "Must_have" for q in questions for a in q["attributes"]) == 892
    pairs = split("kqa", "pairs", tmp_path, "kqa")
    assert pairs.num_rows == 26 and pairs["id"][:3] == ["0-1", "1-1", "4-1"]
    assert Counter(pairs["system"]) == {"askk": 9, "gpt4": 7, "gpt35": 6, "bard": 4}
    assert pairs[0]["reference"].startswith("Escitalopram, sold under the brand names Lexapro")
    assert pairs[0]["prediction"].startswith("Lexapro is a medication that belongs to a class")


def test_kqa_nli_content_match_annotations(tmp_path):
    nli = split("kqa_nli", None, tmp_path, "kqa")
    rows = kqa_nli_rows(SHARED_DATA / "kqa")
    assert nli.num_rows == 208 and len(set(nli["context"])) == 27
    assert sum(nli["majority_match"]) == 77 == sum(r["match"] for r in rows)
    labels = Counter(a["label"] for r in nli for a in r["annotations"])
    assert labels == {"Neutral": 360, "Entailment": 229, "Contradiction": 35}
    first = nli[0]
    assert [a["annotator_id"] for a in first["annotations"]] == ["label_0", "label_1", "label_2"]
    assert [a["match"] for a in first["annotations"]] == rows[0]["annotator_matches"]
    assert first["reference_sentence"] == rows[0]["claim"] and first["system"] == "gpt35"
    assert {a["matched_span"] for r in nli for a in r["annotations"]} == {None}


# -- ExpertQA ------------------------------------------------------------------------
def test_expertqa_medicine_drops_verbatim_repeats_with_a_warning(tmp_path):
    with pytest.warns(DuplicateRecordsWarning, match=r"43 line\(s\) repeat an earlier line"):
        pairs = load_split(
            "expertqa_medicine",
            data_dir=str(SHARED_DATA / "expertqa"),
            cache_dir=str(tmp_path / "cache"),
        )
    lines = (SHARED_DATA / "expertqa" / "medicine_val.jsonl").read_text().splitlines()
    assert len(lines) == 100 and len(set(lines)) == 57 == pairs.num_rows
    assert Counter(pairs["usefulness"]) == {"Useful": 46, "Partially useful": 10,
                                            "Not useful at all": 1}  # fmt: skip
    assert len(set(pairs["annotator_id"])) == 46 and pairs["id"][:2] == ["0-1", "1-1"]
    first = json.loads(lines[0])
    answer = first["answers"]["post_hoc_gs_gpt4"]
    assert pairs[0]["prediction"] == answer["answer_string"]
    assert pairs[0]["reference"] == answer["revised_answer_string"]
    assert pairs[0]["system"] == "post_hoc_gs_gpt4" and pairs[0]["ehr_summary"] is None
    cases = split("expertqa_medicine", "cases", tmp_path, "expertqa")
    assert cases.num_rows == 57 and all(c["responses"][0]["draft_index"] == 0 for c in cases)


# -- Hub-ready folders of the real sets ------------------------------------------------
@pytest.mark.parametrize(
    ("name", "folder", "counts"),
    [
        ("oncqa", "oncqa", {"own_reply": 100, "edited": 100, "cases": 63, "content_grading": 263}),
        ("kqa", "kqa", {"pairs": 26, "questions": 201}),
        ("kqa_nli", "kqa", {"default": 208}),
        ("expertqa_medicine", "expertqa", {"edited": 57, "cases": 57}),
    ],
)
def test_real_sets_export_to_folders_that_load_dataset_reads(tmp_path, name, folder, counts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = write_hub_folder(name, tmp_path / name, data_dir=str(SHARED_DATA / folder))
    assert written.counts == {config: {"test": n} for config, n in counts.items()}
    card = (written.path / "README.md").read_text(encoding="utf-8")
    committed = (Path(__file__).resolve().parents[1] / "datasets" / name / "README.md").read_text()
    # the committed card is the exported one: the builder publishes the rows the pinned
    # upstream files give, so the card states them and their size category
    assert counts == builder_class(name).PUBLISHED_ROWS
    assert f"size_categories:\n- {size_category(max(counts.values()))}\n" in card
    # the committed card is the exported one but for its opening note on how to build
    # the data beside it (a folder with the data needs none)
    first = re.search(rf"Unable to find '\.\.\./datasets/{name}/([^']+)'", committed)[1]
    note = build_note(name, builder_class(name), f"datasets/{name}", first)
    assert card == committed.replace("\n".join(note) + "\n\n", "", 1)
    for config, n in counts.items():
        rows = datasets.load_dataset(
            str(written.path), config, split="test", cache_dir=str(tmp_path / "c")
        )
        assert rows.num_rows == n
        assert f"| `{config}` |" in card and f"`test` ({n})" in card
    assert not list((SHARED_DATA / folder).glob("*.parquet")), "nothing written to shared data"


# -- edit-f1 score on dataset splits ----------------------------------------------------
@pytest.mark.parametrize(
    ("options", "folder", "rows"),
    [
        (["--dataset", "oncqa", "--config", "edited"], "oncqa", 100),
        (["--dataset", "oncqa", "--config", "own_reply"], "oncqa", 100),
        (["--dataset", "expertqa_medicine"], "expertqa", 57),
        (["--dataset", "kqa", "--config", "pairs", "--split", "test"], "kqa", 26),
    ],
    ids=["oncqa-edited", "oncqa-own-reply", "expertqa", "kqa"],
)
def test_score_dataset_splits_end_to_end(tmp_path, capsys, options, folder, rows):
    args = [*options, "--data-dir", str(SHARED_DATA / folder)]
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["score", *args, "-o", str(out), "--summary-json", str(summary), *FAST])
    assert code == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(scored) == rows and scored[0]["id"] == "0-1"
    assert all(math.isfinite(r["f1"]) for r in scored)
    s = json.loads(summary.read_text())
    em, ea, ed = (sum(r[k] for r in scored) for k in _COUNTS)
    assert s["expected_matches"] == em
    assert s["f1"] == pytest.approx(2 * em / (2 * em + ea + ed))  # micro F1 from the counts
    assert f"edit-F1 on {rows} pair(s)" in capsys.readouterr().out


@pytest.mark.slow
def test_score_a_dataset_split_with_the_default_embedded_judges(tmp_path, capsys):
    out, summary = tmp_path / "kqa.jsonl", tmp_path / "summary.json"
    args = ["score", "--dataset", "kqa", "--data-dir", str(SHARED_DATA / "kqa"), "-o", str(out)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*args, "--summary-json", str(summary), "--no-progress"]) == 0
    s = json.loads(summary.read_text())
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(scored) == 26
    assert s["expected_matches"] == sum(r["expected_matches"] for r in scored) > 0
    em, ea, ed = (sum(r[k] for r in scored) for k in _COUNTS)
    assert (s["precision"], s["recall"]) == pytest.approx((em / (em + ed), em / (em + ea)))
    assert sum(len(r["reference_themes"]) for r in scored) > 0
    assert {a["theme"] for r in scored for a in r["alignment"]} <= set(THEMES)
    assert "edit-F1 on 26 pair(s)" in capsys.readouterr().out


# -- the download path, without a network: a download manager serving the local copies --
class LocalDownloads(datasets.DownloadManager):
    """datasets' DownloadManager that records the URLs asked for and serves the local
    copies in ``../shared/data`` (named like the builder's local files) instead."""

    def __init__(self, folder: Path, cache_dir: Path):
        super().__init__(download_config=datasets.DownloadConfig(cache_dir=str(cache_dir)))
        self.folder, self.urls = folder, []

    def download(self, url_or_urls):
        self.urls.extend(url_or_urls.values())
        return {name: str(self.folder / name) for name in url_or_urls}


@pytest.mark.parametrize(
    ("name", "config", "folder", "expected"),
    [
        ("oncqa", "edited", "oncqa", 100),
        ("kqa", "pairs", "kqa", 26),
        ("expertqa_medicine", "edited", "expertqa", 57),
    ],
)
def test_download_path_fetches_the_pinned_upstream_files(tmp_path, name, config, folder, expected):
    cls = builder_class(name)
    downloads = LocalDownloads(SHARED_DATA / folder, tmp_path / "downloads")
    builder = cls(config_name=config, cache_dir=str(tmp_path / "cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        builder.download_and_prepare(dl_manager=downloads)
    assert builder.as_dataset()["test"].num_rows == expected
    assert downloads.urls == [f.resolve() for f in cls.UPSTREAM.values()]
    assert all("/{revision}/" not in url and url.startswith("https://raw.githubusercontent.com/")
               for url in downloads.urls)  # fmt: skip
    pinned = cls(config_name=config, revision="0123abc", cache_dir=str(tmp_path / "c2"))
    downloads = LocalDownloads(SHARED_DATA / folder, tmp_path / "downloads")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pinned.download_and_prepare(dl_manager=downloads)
    assert all("/0123abc/" in url for url in downloads.urls)
