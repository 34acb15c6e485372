"""Scored runs read back, paired bootstrap comparisons and `edit-f1 report`: hand-computed
values on small runs, and two systems on OncQA (GPT-4 drafts vs the oncologists' edited
drafts, both against the oncologists' own replies)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from editf1.analysis.compare import (
    TooFewCasesError,
    case_pattern,
    compare_all,
    compare_runs,
    corpus_estimates,
    load_run,
    pair_result_from_dict,
)
from editf1.cli.main import main
from editf1.io import JsonlWriter
from editf1.scorer import EditF1Scorer

pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install '.[report]')")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
needs_oncqa = pytest.mark.skipif(
    not (SHARED_DATA / "oncqa" / "stage1.csv").is_file(),
    reason="../shared/data/oncqa is absent (the team's read-only copy of AIM-Harvard/OncQA)",
)
PNG = b"\x89PNG\r\n\x1a\n"
THEMES = {
    "Rest today.": "Medical planning instruction",
    "Drink water.": "Medical planning instruction",
    "Take ibuprofen.": "Medication-related follow-up questions",
    "Call us.": "Contingency planning",
}
IDS = ["c1-1", "c1-2", "c2-1", "c3-1"]
REFS = [
    "Rest today. Call us.",
    "Rest today. Take ibuprofen.",
    "Drink water.",
    "Call us. Rest today.",
]
# By hand, exact judge:
#   A: (EM, EA, ED) = (1,1,0) (0,2,1) (0,1,1) (1,1,0): EM 2, EA 5, ED 2: P 1/2, R 2/7, F1 4/11.
#   B: (2,0,0) (1,1,0) (1,0,0) (2,0,0): EM 6, EA 1, ED 0: P 1, R 6/7, F1 12/13.
DRAFTS_A = ["Rest today.", "Hi there.", "Hi there.", "Call us."]
DRAFTS_B = ["Rest today. Call us.", "Rest today.", "Drink water.", "Call us. Rest today."]
CASES = r"(c\d)-\d"


def _score_to_files(scorer, folder: Path, name: str, drafts, refs=REFS, ids=IDS):
    """What `edit-f1 score` writes: per-row JSONL and the summary JSON."""
    run, summary = folder / f"{name}.edit_f1.jsonl", folder / f"{name}.summary.json"
    with JsonlWriter(run) as write:
        result = scorer.score_stream(zip(ids, drafts, refs), sink=lambda p: write(p.to_dict()),
                                     keep_pairs=True)  # fmt: skip
    summary.write_text(json.dumps(result.summary()), encoding="utf-8")
    return run, summary, result


def _score_with_record(scorer, path: Path, drafts) -> Path:
    """Per-row JSONL as `edit-f1 score` writes it: each line with the run record."""
    record = {"run": scorer.provenance}
    with JsonlWriter(path) as write:
        scorer.score_stream(zip(IDS, drafts, REFS), sink=lambda p: write(p.to_dict() | record))
    return path


@pytest.fixture
def scorer(theme_judge_cls):
    return EditF1Scorer(
        content_judge="exact", theme_judge=theme_judge_cls(THEMES), zero_division=0.0
    )


@pytest.fixture
def runs(scorer, tmp_path):
    a = _score_to_files(scorer, tmp_path, "A", DRAFTS_A)
    b = _score_to_files(scorer, tmp_path, "B", DRAFTS_B)
    return a, b


def test_load_run_gives_back_the_scorers_figures(runs):
    (path, summary, result), _ = runs
    run = load_run(path, summary=summary)
    assert run.name == "A" and run.keys == tuple(IDS)
    assert run.result.summary() == result.summary()
    assert [p.to_dict() for p in run.pairs] == [p.to_dict() for p in result.pairs]
    assert pair_result_from_dict(result.pairs[1].to_dict()).alignment == result.pairs[1].alignment
    # Without the summary: the same figures; the judges are then "not recorded".
    bare = load_run(path, "system A")
    assert bare.name == "system A" and bare.result.f1 == pytest.approx(4 / 11)
    assert bare.result.reproducibility.startswith("not recorded (no run record")


def test_load_run_refuses_files_that_do_not_belong(runs, tmp_path):
    (path_a, _, _), (_, summary_b, _) = runs
    with pytest.raises(ValueError, match="not from the same run"):
        load_run(path_a, summary=summary_b)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path_a.read_text().splitlines()[0] + '\n{"row": 1}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl, line 2: not a scored pair"):
        load_run(bad)


def test_paired_bootstrap_difference_by_hand(runs):
    a, b = (load_run(path, summary=summary) for path, summary, _ in runs)
    f1, theme = compare_runs(a, b, metrics=["f1", "theme_f1"], cases=case_pattern(CASES),
                             n_resamples=199, seed=3)  # fmt: skip
    assert (f1.baseline_value, f1.system_value) == pytest.approx((4 / 11, 12 / 13))
    assert f1.difference.value == pytest.approx(12 / 13 - 4 / 11)
    # B keeps every sentence of A's and adds more: its micro F1 is higher on every
    # resample, so no resampled difference is <= 0 and p = 2 (1 + 0) / (199 + 1).
    assert f1.difference.low > 0 and f1.p_value == pytest.approx(0.01)
    assert (f1.n_cases, f1.difference.n) == (3, 4)
    # Themes: A tp 2, fn 5 (F1 4/9); B tp 6, fn 1 (F1 12/13).
    assert (theme.baseline_value, theme.system_value) == pytest.approx((4 / 9, 12 / 13))
    # The same seed gives the same interval; a run against itself differs by exactly 0.
    assert compare_runs(a, b, metrics=["f1"], cases=case_pattern(CASES), n_resamples=199,
                        seed=3)[0] == f1  # fmt: skip
    (same,) = compare_runs(a, a, metrics=["f1"], n_resamples=100)
    assert (same.difference.value, same.difference.low, same.difference.high) == (0, 0, 0)
    assert same.p_value == 1.0
    estimates = corpus_estimates(b, n_resamples=100)
    assert estimates["f1"].value == pytest.approx(12 / 13)
    assert estimates["theme_f1"].low <= estimates["theme_f1"].value


def test_runs_against_several_replies_are_compared_on_each_runs_best(scorer, tmp_path):
    """OncQA's shape: a list of replies per message, and two systems whose drafts are
    closest to different replies. By hand, exact judge (EM, EA, ED against the best):
    A: m1 reply 0 (2, 0, 0), m2 reply 0 (1, 0, 0): F1 1.
    B: m1 reply 1 (1, 1, 0) (reply 0: F1 0), m2 reply 1 (2, 0, 0) (reply 0: F1 2/3):
    EM 3, EA 1, ED 0: P 1, R 3/4, F1 6/7."""
    replies = [["Rest today. Drink water.", "Call us. Take ibuprofen."],
               ["Drink water.", "Drink water. Call us."]]  # fmt: skip
    ids = ["m1", "m2"]
    a = _score_to_files(scorer, tmp_path, "A", ["Rest today. Drink water.", "Drink water."],
                        replies, ids)  # fmt: skip
    b = _score_to_files(scorer, tmp_path, "B", ["Call us.", "Drink water. Call us."],
                        replies, ids)  # fmt: skip
    run_a, run_b = (load_run(path, summary=summary) for path, summary, _ in (a, b))
    assert [p.best_reference for p in run_b.pairs] == [1, 1]
    assert run_b.replies == ((2, 2), (1, 2))
    (f1,) = compare_runs(run_a, run_b, metrics=["f1"], n_resamples=100)
    assert (f1.baseline_value, f1.system_value) == pytest.approx((1, 6 / 7))
    assert f1.difference.value == pytest.approx(6 / 7 - 1)
    # Other replies are still refused: a second reply of another length, or one reply.
    shorter = [[replies[0][0], "Call us."], replies[1]]
    c = _score_to_files(scorer, tmp_path, "C", ["Call us.", "Drink water. Call us."],
                        shorter, ids)  # fmt: skip
    with pytest.raises(ValueError, match="pair 'm1' was scored against replies of different"):
        compare_runs(run_a, load_run(c[0]))
    one = [replies[0], "Drink water."]
    d = _score_to_files(scorer, tmp_path, "D", ["Rest today. Drink water.", "Drink water."],
                        one, ids)  # fmt: skip
    with pytest.raises(ValueError, match="pair 'm2' was scored against 2 replies in 'A' and 1"):
        compare_runs(run_a, load_run(d[0]))


def test_runs_on_different_references_are_not_compared(scorer, runs, tmp_path):
    a = load_run(runs[0][0])
    other_refs = [*REFS[:3], "Call us. Rest now."]
    c = load_run(_score_to_files(scorer, tmp_path, "C", DRAFTS_B, refs=other_refs)[0])
    with pytest.raises(ValueError, match="pair 'c3-1' was scored against different references"):
        compare_runs(a, c)
    d = load_run(_score_to_files(scorer, tmp_path, "D", DRAFTS_B[:3], REFS[:3], IDS[:3])[0])
    differences, skipped = compare_all([a, c, d], n_resamples=100)
    assert differences == []
    assert [(s[0], s[1]) for s in skipped] == [("A", "C"), ("A", "D"), ("C", "D")]
    assert "1 only in 'A'" in skipped[1][2]
    with pytest.raises(ValueError, match="does not match the pair id 'x'"):
        case_pattern(CASES)("x")


def test_runs_of_one_case_are_not_compared(runs):
    """Every resample of one case is that case: the CI has width 0 and p = 2 / (B + 1),
    which read as significant whatever the systems are; the pair is skipped, saying why."""
    a, b = (load_run(paths[0]) for paths in runs[:2])
    one_case = case_pattern(r"(c)\d-\d")  # every pair in case "c"
    with pytest.raises(TooFewCasesError, match="only 1 case"):
        compare_runs(a, b, cases=one_case, n_resamples=100)
    differences, skipped = compare_all([a, b], cases=one_case, n_resamples=100)
    assert differences == [] and [s[:2] for s in skipped] == [("A", "B")]
    assert "only 1 case" in skipped[0][2]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(", "is not a regular expression"), (r"(x)?c\d-\d", "with its first group")],
)
def test_a_bad_case_pattern_is_named(pattern, message):
    with pytest.raises(ValueError, match=message):
        case_pattern(pattern)("c0-1")


def test_report_command_writes_html_markdown_and_plots(runs, tmp_path, capsys):
    (path_a, summary_a, _), (path_b, summary_b, _) = runs
    out = tmp_path / "report"
    args = ["report", str(path_a), str(path_b), "--name", "model A", "--name", "model B",
            "--summary", str(summary_a), "--summary", str(summary_b), "--case-pattern", CASES,
            "--n-resamples", "199", "--seed", "3", "-o", str(out),
            "--title", "Two models"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    for name in ("report.html", "report.md", "per_theme_f1.png", "theme_proportions.png",
                 "per_pair_f1.png"):  # fmt: skip
        assert f"wrote {out / name}" in printed
    for name in ("per_theme_f1.png", "theme_proportions.png", "per_pair_f1.png"):
        assert (out / name).read_bytes()[:8] == PNG
    md = (out / "report.md").read_text()
    assert md.startswith("# Two models")
    row_a = next(line for line in md.splitlines() if line.startswith("| model A | 4 |"))
    assert "| 2 | 5 | 2 |" in row_a and "0.364 [" in row_a  # EM, EA, ED and F1 4/11
    comparison = next(
        line for line in md.splitlines() if line.startswith("| model A | model B | f1")
    )
    assert "| 0.364 | 0.923 | 0.559 [" in comparison and "| 0.0100 | 4 | 3 |" in comparison
    assert "| theme | Clinicians % replies | model A F1 |" in md
    assert "![Theme F1 of each system, per theme" in md and "](per_theme_f1.png)" in md
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 3 and "<td>model B</td>" in page


def test_report_command_errors_name_the_problem(runs, tmp_path, capsys):
    (path_a, _, _), (path_b, _, _) = runs
    args = ["report", str(path_a), str(path_b), "--name", "only one", "-o", str(tmp_path)]
    assert main(args) == 2
    assert "give --name once per run (2), got 1" in capsys.readouterr().err
    assert main(["report", str(path_a), str(path_a), "-o", str(tmp_path)]) == 2
    assert "distinct names" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("expected_matches", "three", "a count (an integer >= 0), got str of 5 characters"),
        ("expected_deletions", -1, "a count (an integer >= 0), got int"),
        ("row", 1.5, "a count (an integer >= 0), got float"),
        ("f1", "0.5", "a number in [0, 1], got str of 3 characters"),
        ("theme_recall", 2, "a number in [0, 1], got int"),
    ],
)
def test_report_on_a_non_numeric_count_is_one_line_naming_file_row_and_field(
    runs, tmp_path, capsys, field, value, says
):
    """Issue 22, class 5: no traceback, and no text of the row in the message."""
    (path_a, _, _), _ = runs
    lines = path_a.read_text().splitlines()
    row = json.loads(lines[1])
    row[field] = value
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    assert main(["report", str(bad), "-o", str(tmp_path / "report")]) == 2
    err = capsys.readouterr().err
    assert err == f"edit-f1: error: {bad}, line 2: field {field!r} must be {says}\n"


def _oncqa_example():
    spec = importlib.util.spec_from_file_location(
        "oncqa_report", ROOT / "examples" / "oncqa_report.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_oncqa
def test_two_systems_on_oncqa_with_paired_cis(tmp_path):
    """GPT-4 drafts and the oncologists' edits of them, on the same own replies."""
    systems = _oncqa_example().system_rows(SHARED_DATA / "oncqa")
    runs = []
    for name, rows in systems.items():
        source = tmp_path / f"{name}.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in rows))
        runs.append(tmp_path / f"{name}.edit_f1.jsonl")
        assert main(["score", str(source), "-o", str(runs[-1]), "--content-judge", "exact",
                     "--theme-judge", "none", "--no-progress"]) == 0  # fmt: skip
    out = tmp_path / "report"
    assert main(["report", *map(str, runs), "--case-pattern", r"(.+)-\d+",
                 "--n-resamples", "300", "-o", str(out)]) == 0  # fmt: skip
    md = (out / "report.md").read_text()
    assert "| gpt4-draft | 100 |" in md and "| oncologist-edited-draft | 100 |" in md
    comparison = [line for line in md.splitlines() if line.startswith("| gpt4-draft | onc")]
    assert [line.split(" | ")[2] for line in comparison] == ["f1", "precision", "recall"]
    assert all(line.endswith("| 100 | 63 |") for line in comparison)  # 100 pairs, 63 messages
    assert "Theme figures are omitted" in md and (out / "per_pair_f1.png").is_file()


def _micro_from_rows(path: Path) -> dict[str, float]:
    """Content and theme micro figures of a scored run, worked out from its per-pair rows
    alone: counts summed over pairs (EM, EA, ED; theme tp, fp, fn from each pair's
    reference and draft theme sets), then divided."""
    em = ea = ed = tp = fp = fn = 0
    for line in path.read_text().splitlines():
        row = json.loads(line)
        em, ea, ed = (
            em + row["expected_matches"],
            ea + row["expected_additions"],
            ed + row["expected_deletions"],
        )
        reference, draft = set(row["reference_themes"]), set(row["prediction_themes"])
        tp, fp, fn = (
            tp + len(reference & draft),
            fp + len(draft - reference),
            fn + len(reference - draft),
        )
    return {
        "counts": (em, ea, ed),
        "f1": 2 * em / (2 * em + ea + ed),
        "theme_precision": tp / (tp + fp),
        "theme_recall": tp / (tp + fn),
        "theme_f1": 2 * tp / (2 * tp + fp + fn),
    }


def _check_oncqa_report(md: str, out: Path) -> None:
    """The report's system rows and paired rows hold the figures of the per-pair rows."""
    lines = md.splitlines()
    systems = ("gpt4-draft", "oncologist-edited-draft")
    micro = {name: _micro_from_rows(out / f"{name}.edit_f1.jsonl") for name in systems}
    for name, figures in micro.items():
        cells = next(line for line in lines if line.startswith(f"| {name} | 100 |")).split(" | ")
        assert tuple(int(c) for c in cells[5:8]) == figures["counts"], name
        for k, key in ((4, "f1"), (8, "theme_precision"), (9, "theme_recall"), (10, "theme_f1")):
            assert cells[k].startswith(f"{figures[key]:.3f} ["), (name, key)
    for metric in ("f1", "theme_f1"):
        row = next(
            line for line in lines if line.startswith(f"| {systems[0]} | {systems[1]} | {metric} |")
        )
        cells = row.strip("| ").split(" | ")
        baseline, system = (micro[name][metric] for name in systems)
        assert (cells[3], cells[4]) == (f"{baseline:.3f}", f"{system:.3f}"), metric
        difference, ci = cells[5].split(" [")
        low, high = (float(x) for x in ci.rstrip("]").split(", "))
        # system minus baseline, inside its own CI
        assert float(difference) == pytest.approx(system - baseline, abs=5e-4), metric
        assert low <= system - baseline <= high and 0.0 < float(cells[6]) <= 1.0, metric
        assert cells[7:9] == ["100", "63"], metric


@pytest.mark.slow
@needs_oncqa
def test_oncqa_example_report_with_embedded_judges(tmp_path, monkeypatch):
    out = tmp_path / "oncqa"
    argv = ["oncqa_report.py", "--data-dir", str(SHARED_DATA / "oncqa"), "--output-dir", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as status:
        _oncqa_example().main()
    assert status.value.code == 0
    for name in ("per_theme_f1.png", "theme_proportions.png", "per_pair_f1.png"):
        assert (out / "report" / name).read_bytes()[:8] == PNG
    md = (out / "report" / "report.md").read_text()
    _check_oncqa_report(md, out)
    iap = json.loads((out / "iap.summary.json").read_text())
    assert (iap["n_messages"], iap["n_ordered_pairs"]) == (37, 74)
    # the same figures as the validity benchmark's, whose results the docs' tables show:
    # GPT-4's drafts against the oncologists' own replies, and the human ceiling
    validity = json.loads((ROOT / "benchmarks" / "results" / "validity.json").read_text())
    gpt4 = next(line for line in md.splitlines() if line.startswith("| gpt4-draft | 100 |"))
    own = validity["own_reply"]["metrics"]["edit-F1"]["corpus_f1"]["value"]
    assert gpt4.split(" | ")[4].startswith(f"{own:.3f} [")
    ceiling = validity["iap"]["metrics"]["edit-F1"]["oncologist_vs_oncologist"]["value"]
    assert iap["f1"]["value"] == pytest.approx(ceiling, abs=1e-6)


def test_the_html_page_is_rendered_by_jinja2_and_escapes_every_text(tmp_path):
    """Headings, paragraphs, table cells and captions arrive escaped (a system named
    '<b>A & B</b>' stays text), tables keep their cells in order, and a figure is
    embedded as base64 of its PNG file."""
    import base64

    from editf1.analysis.report import _html

    (tmp_path / "f.png").write_bytes(PNG + b"rest")
    page = _html(
        [
            ("h1", "Report <1>"),
            ("p", "x & y"),
            ("table", ["system", "f1"], [["<b>A & B</b>", "0.5"], ["C", "0.25"]]),
            ("figure", "f.png", 'F1 "per theme"'),
        ],
        tmp_path,
    )
    assert page.startswith("<!DOCTYPE html>") and "<title>Report &lt;1&gt;</title>" in page
    assert "<h1>Report &lt;1&gt;</h1>" in page and "<p>x &amp; y</p>" in page
    assert "<tr><th>system</th><th>f1</th></tr>" in page
    rows = "<tr><td>&lt;b&gt;A &amp; B&lt;/b&gt;</td><td>0.5</td></tr>\n"
    rows += "<tr><td>C</td><td>0.25</td></tr>"
    assert rows in page and "<b>" not in page
    png = base64.b64encode(PNG + b"rest").decode("ascii")
    assert f'<img src="data:image/png;base64,{png}" alt="F1 &#34;per theme&#34;">' in page


@pytest.mark.parametrize("other_first", [False, True])
def test_a_run_scored_with_other_beside_one_without_keeps_its_themes(
    theme_judge_cls, runs, tmp_path, other_first
):
    """A run scored with include_other has an Other row; the others show "–" there, in
    either order (it raised KeyError with the Other run first, and dropped Other after)."""
    with_other = EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(THEMES),
                              zero_division=0.0, include_other=True)  # fmt: skip
    o = _score_to_files(with_other, tmp_path, "O", DRAFTS_B)[:2]
    given = [o, runs[0][:2]] if other_first else [runs[0][:2], o]
    out = tmp_path / "report"
    args = [str(run) for run, _ in given] + [f"--summary={summary}" for _, summary in given]
    assert main(["report", *args, "-o", str(out)]) == 0
    lines = (out / "report.md").read_text().splitlines()

    def cells(line):
        return [c.strip() for c in line.strip("|").split("|")]

    header = cells(next(line for line in lines if line.startswith("| theme |")))
    other = dict(zip(header, cells(next(line for line in lines if line.startswith("| Other |")))))
    # Other is in no reply or draft: F1 and recall are undefined, shown "–" (not the
    # stored 1.0, which read as a perfect theme)
    assert [other[f"O {k}"] for k in ("F1", "% drafts", "recall")] == ["–", "0.0", "–"]
    assert [other[f"A {k}"] for k in ("F1", "% drafts", "recall")] == ["–"] * 3
    assert (other["Clinicians (O) % replies"], other["Clinicians (A) % replies"]) == ("0.0", "–")
    # the plot: no bar for Other in either run, and its legend says why
    from editf1.analysis.figures import per_theme_f1_bars

    bars = per_theme_f1_bars([load_run(run, summary=summary) for run, summary in given])
    assert bars.labels[-1] == "Other" and [v[-1] for _, _, v in bars.series] == [None, None]
    assert bars.absent_label == (
        "undefined: no reply or draft has the theme, or the run does not score it (– in the table)"
    )


def test_a_run_keeps_the_value_it_gave_undefined_ratios(theme_judge_cls, tmp_path):
    """Empty drafts leave corpus precision undefined: a run scored with zero_division=1.0
    printed 1.0, and the report says the same (it said 0.0, and called the summary
    another run's)."""
    scorer = EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(THEMES),
                          zero_division=1.0)  # fmt: skip
    run, summary, _ = _score_to_files(scorer, tmp_path, "E", [""] * 4)
    loaded = load_run(run, summary=summary)
    assert (loaded.result.precision, loaded.result.recall) == (1.0, 0.0)


def test_a_broken_summary_or_run_file_is_named(runs, tmp_path):
    run = runs[0][0]
    for text, message in [
        ("{\n", "not a summary written by edit-f1 score"),
        ("[1, 2]", r"is not a JSON object \(got list\)"),
        ('{"f1": "x"}', "gives f1 as str"),
    ]:
        broken = tmp_path / "broken.json"
        broken.write_text(text)
        with pytest.raises(ValueError, match=message) as error:
            load_run(run, summary=broken)
        assert "broken.json" in str(error.value) or str(run) in str(error.value)
    binary = tmp_path / "run.edit_f1.jsonl"
    binary.write_bytes(b"\x1f\x8b\x08\x00\xff")  # a gzipped file
    with pytest.raises(ValueError, match=r"run\.edit_f1\.jsonl: not UTF-8 text"):
        load_run(binary)


def test_runs_scored_by_different_judges_are_said_to_be(theme_judge_cls, runs, tmp_path):
    from editf1.judges.exact import ExactMatchContentJudge

    class Renamed(ExactMatchContentJudge):
        fingerprint = "exact-sentence-match-v2"

    other = EditF1Scorer(content_judge=Renamed(), theme_judge=theme_judge_cls(THEMES),
                         zero_division=0.0)  # fmt: skip
    b_other = _score_to_files(other, tmp_path, "B2", DRAFTS_B)
    out = tmp_path / "report"
    args = [str(runs[0][0]), str(b_other[0]), f"--summary={runs[0][1]}", f"--summary={b_other[1]}"]
    assert main(["report", *args, "-o", str(out)]) == 0
    markdown = (out / "report.md").read_text()
    assert "A and B2 were scored by different content judges" in markdown
    # the same judges: no such note
    same = [str(runs[0][0]), str(runs[1][0]), f"--summary={runs[0][1]}", f"--summary={runs[1][1]}"]
    assert main(["report", *same, "-o", str(tmp_path / "same")]) == 0
    assert "different content judges" not in (tmp_path / "same" / "report.md").read_text()


def test_the_per_row_file_alone_names_the_judges_options_and_versions(tmp_path):
    """Every line of `edit-f1 score` carries the run record; a report made from the
    per-row file alone shows the judges, the options and the versions (it said "not
    recorded" without --summary), and a --summary is still taken and checked."""
    import importlib.metadata

    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps({"id": i, "prediction": d, "reference": r}) + "\n"
                              for i, d, r in zip(IDS, DRAFTS_A, REFS)))  # fmt: skip
    run, summary = tmp_path / "A.edit_f1.jsonl", tmp_path / "A.summary.json"
    assert main(["score", str(source), "-o", str(run), "--summary-json", str(summary),
                 "--content-judge", "exact", "--theme-judge", "none", "--zero-division", "0",
                 "-q"]) == 0  # fmt: skip
    records = [json.loads(line)["run"] for line in run.read_text().splitlines()]
    assert len(records) == 4 and all(r == records[0] for r in records)
    record = records[0]
    assert record["content_judge"] == {"name": "exact", "fingerprint": "exact-sentence-match",
                                       "options": {}}  # fmt: skip
    assert record["theme_judge"] is None
    assert (record["options"]["include_other"], record["options"]["zero_division"]) == (False, 0)
    version = importlib.metadata.version("edit-f1")
    assert record["versions"]["edit-f1"] == version
    # read back alone: the same reproducibility string as the summary's
    written = json.loads(summary.read_text())["reproducibility"]
    loaded = load_run(run)
    assert loaded.result.reproducibility == written and loaded.provenance == record
    out = tmp_path / "report"
    assert main(["report", str(run), "--n-resamples", "100", "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    header = "| system | per-row file | content judge | theme judge | scoring options | versions |"
    row = md.split(header)[1].splitlines()[2].strip("|").split(" | ")
    assert [c.strip() for c in row[:4]] == ["A", str(run), "exact (fingerprint "
                                            "exact-sentence-match)", "none"]  # fmt: skip
    assert row[4].startswith("splitter: punkt-clinical:")
    assert row[4].endswith(", include_other: False, zero_division: 0.0")
    assert row[5].strip().startswith(f"edit-f1 {version}, nltk ")
    assert "not recorded" not in md
    # --summary keeps working beside it
    again = ["report", str(run), "--summary", str(summary), "--n-resamples", "100"]
    assert main([*again, "-o", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "report.md").read_text() == md


def test_a_run_record_that_differs_between_lines_or_from_the_summary_is_refused(scorer, tmp_path):
    path = _score_with_record(scorer, tmp_path / "R.edit_f1.jsonl", DRAFTS_A)
    record = scorer.provenance
    run = load_run(path)
    assert run.result.reproducibility == scorer.reproducibility
    # a judge given as an instance is named by its class
    theme = {"name": "ScriptedThemeJudge", "fingerprint": "scripted-theme", "options": {}}
    assert run.provenance["theme_judge"] == theme
    # zero_division 0.0 read back from the record, not from a summary
    assert record["options"]["zero_division"] == 0.0 and "|zero_division:0.0|" in (
        run.result.reproducibility
    )
    lines = path.read_text().splitlines()
    changed = json.loads(lines[2])
    changed["run"]["options"]["include_other"] = True
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([*lines[:2], json.dumps(changed), *lines[3:]]) + "\n")
    with pytest.raises(ValueError, match=r"mixed.jsonl, line 3: its run record .* mixes runs"):
        load_run(mixed)
    other = {"reproducibility": scorer.reproducibility.replace("content:", "content:other-")}
    with pytest.raises(ValueError, match="reproducibility string differs from the run record"):
        load_run(path, summary=other)


def test_the_run_record_says_whether_other_was_scored(theme_judge_cls, tmp_path):
    """B's drafts and replies have no sentence labelled Other: only the record tells a
    run scored with include_other (9 themes, an Other row) from one without."""
    from editf1 import themes as names

    for include_other, themes in ((True, names.THEMES), (False, names.CLINICAL_THEMES)):
        scorer = EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(THEMES),
                              zero_division=0.0, include_other=include_other)  # fmt: skip
        run = load_run(_score_with_record(scorer, tmp_path / f"{include_other}.jsonl", DRAFTS_B))
        assert run.result.themes_scored == themes
        assert ("Other" in run.result.per_theme) is include_other


def test_the_reproducibility_cells_show_judge_options(runs):
    """By hand: a record's judges as name, fingerprint and options; a run read with a
    summary only, from the summary's run record; neither: not recorded."""
    import dataclasses

    from editf1.analysis.report import _provenance_cells

    (path, summary, _), _ = runs
    record = {
        "content_judge": {"name": "llm", "fingerprint": "llm-content(base=x)",
                          "options": {"adapter": "team/judge", "threshold": 0.7}},
        "theme_judge": None,
        "options": {"splitter": "punkt-clinical:1", "include_other": True,
                    "zero_division": "warn"},
        "versions": {"edit-f1": "9.9", "torch": "absent"},
    }  # fmt: skip
    bare = load_run(path)
    assert _provenance_cells(dataclasses.replace(bare, provenance=record)) == [
        'llm (fingerprint llm-content(base=x); options adapter="team/judge", threshold=0.7)',
        "none",
        "splitter: punkt-clinical:1, include_other: True, zero_division: warn",
        "edit-f1 9.9, torch absent",
    ]
    cells = _provenance_cells(load_run(path, summary=summary))
    assert cells[:2] == [
        "exact (fingerprint exact-sentence-match)",
        "ScriptedThemeJudge (fingerprint scripted-theme)",
    ]
    assert cells[2].endswith("include_other: False, zero_division: 0.0")
    assert _provenance_cells(bare) == [
        "not recorded (no run record in the lines, no summary given)",
        *["not recorded"] * 3,
    ]


# The plots' data, by hand for runs A and B (exact judge, THEMES; 8 clinical themes):
#   replies: Medical planning instruction (MPI) in all 4, Contingency planning (CP) in
#   c1-1 and c3-1, Medication-related follow-up questions (Med) in c1-2.
#   A's drafts: MPI in c1-1, CP in c3-1 ("Hi there." is Other, not scored).
#   B's drafts: MPI in all 4, CP in c1-1 and c3-1, Med in none.
#   F1 per theme: A MPI tp 1, fn 3: 2/5; A CP tp 1, fn 1: 2/3; Med tp 0, fn 1: 0 (both);
#   B MPI and CP 1; the 5 other themes are in no reply or draft: undefined.
UNDEFINED = [
    "Empathetic communication",
    "Symptom-related follow-up questions",
    "Medical assessment explanation",
    "Logistics",
    "Care coordination",
]
MED = "Medication-related follow-up questions"


def test_per_theme_f1_bars_by_hand(runs):
    from editf1.analysis.figures import per_theme_f1_bars
    from editf1.themes import CLINICAL_THEMES

    a, b = (load_run(path) for path, _, _ in runs)
    bars = per_theme_f1_bars([a, b])
    assert bars.labels == CLINICAL_THEMES
    values = {name: dict(zip(bars.labels, v)) for name, _, v in bars.series}
    assert [name for name, _, _ in bars.series] == ["A", "B"]
    assert values["A"]["Medical planning instruction"] == pytest.approx(2 / 5)
    assert values["A"]["Contingency planning"] == pytest.approx(2 / 3)
    assert values["B"]["Medical planning instruction"] == values["B"]["Contingency planning"] == 1
    # a real 0 stays 0; a theme no reply or draft has is None (the result stores 1.0)
    assert values["A"][MED] == values["B"][MED] == 0.0
    assert all(values[n][t] is None for n in "AB" for t in UNDEFINED)
    assert all(a.result.per_theme[t].f1 == 1.0 for t in UNDEFINED)
    # plain words, no table numbers or arrows
    assert "Table" not in bars.xlabel + bars.title and "→" not in bars.xlabel
    assert bars.absent_mark == "undefined" and bars.xmax == 1.0


def test_theme_proportion_bars_by_hand(runs):
    from editf1.analysis.figures import theme_proportion_bars

    a, b = (load_run(path) for path, _, _ in runs)
    bars = theme_proportion_bars([a, b])
    assert [name for name, _, _ in bars.series] == ["Clinicians", "A", "B"]
    values = {name: dict(zip(bars.labels, v)) for name, _, v in bars.series}
    by_hand = {
        "Clinicians": {"Medical planning instruction": 100, "Contingency planning": 50, MED: 25},
        "A": {"Medical planning instruction": 25, "Contingency planning": 25, MED: 0},
        "B": {"Medical planning instruction": 100, "Contingency planning": 50, MED: 0},
    }
    for name, figures in by_hand.items():
        assert {t: values[name][t] for t in figures} == pytest.approx(figures), name
        assert all(values[name][t] == 0 for t in UNDEFINED), name
    assert bars.xlabel == "% of replies or drafts containing the theme"


def test_draw_bars_marks_zero_and_undefined_in_the_legend():
    """What the drawing is given comes back as its legend and labels: a hatched box
    for an undefined value and a mark for a value of 0, each named once, only where
    used."""
    from editf1.analysis.figures import Bars, draw_bars

    bars = Bars("t", "x words", ("p", "q"), (("S", "#000000", (0.0, None)),), 1.0,
                "undefined", "undefined: no reply or draft has the theme")  # fmt: skip
    fig = draw_bars(bars)
    (ax,) = fig.axes
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["S", "undefined: no reply or draft has the theme", "a value of 0"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["p", "q"]
    assert sorted(t.get_text() for t in ax.texts) == ["0.00", "undefined"]
    assert ax.get_xlabel() == "x words" and ax.get_title() == "t"
    only_defined = Bars("t", "x", ("p",), (("S", "#000000", (0.5,)),), 1.0, "u", "u: none")
    legend = [t.get_text() for t in draw_bars(only_defined).legends[0].get_texts()]
    assert legend == ["S"]


def test_the_per_pair_histograms_count_pairs_on_integer_ticks(runs):
    """4 pairs: a count axis with ticks at 0.5 would read as half a pair."""
    from editf1.analysis.figures import per_pair_histograms

    a, b = (load_run(path) for path, _, _ in runs)
    fig = per_pair_histograms([a, b])
    assert [ax.get_xlabel() for ax in fig.axes] == ["content edit-F1 of a pair",
                                                    "theme edit-F1 of a pair"]  # fmt: skip
    for ax in fig.axes:
        ticks = ax.get_yticks()
        assert ax.get_ylabel() == "number of pairs" and len(ticks) >= 2
        assert all(float(t).is_integer() for t in ticks), ticks
        # A's content F1 per pair: 2/3, 0, 0, 2/3; B's: 1, 2/3, 1, 1 (bins of width 0.1)
        heights = [[p.get_height() for p in bars] for bars in ax.containers]
        assert [sum(h) for h in heights] == [4, 4]
    content = [[p.get_height() for p in bars] for bars in fig.axes[0].containers]
    assert (content[0][0], content[0][6], content[1][6], content[1][9]) == (2, 2, 1, 3)


# Per pair (EM, EA, ED) and content F1, by hand (see the top of this file):
#   A: c1-1 (1,1,0) 2/3, c1-2 (0,2,1) 0, c2-1 (0,1,1) 0, c3-1 (1,1,0) 2/3.
#   B: c1-1 (2,0,0) 1, c1-2 (1,1,0) 2/3, c2-1 (1,0,0) 1, c3-1 (2,0,0) 1.
#   B - A: c1-1 1/3, c1-2 2/3, c2-1 1, c3-1 1/3.


def test_differing_pairs_by_hand(runs):
    from editf1.analysis.pairs import differing_pairs

    a, b = (load_run(path) for path, _, _ in runs)
    found, differing = differing_pairs(a, b, top=3)
    assert differing == 4
    # largest difference first; c1-1 and c3-1 tie at 1/3, the earlier row first
    assert [c.key for c in found] == ["c2-1", "c1-2", "c1-1"]
    assert [c.difference for c in found] == pytest.approx([1, 2 / 3, 1 / 3])
    c21, c12, _ = found
    assert (c21.baseline.system, c21.system.system) == ("A", "B")
    assert (c21.baseline.f1, c21.baseline.counts, c21.baseline.reply) == (0.0, (0, 1, 1), None)
    assert c21.baseline.matches == ()
    assert c21.baseline.additions == (("Drink water.", ""),)
    assert c21.baseline.deletions == ("Hi there.",)
    assert c21.system.matches == (("Drink water.", "Drink water."),)
    assert (c21.system.additions, c21.system.deletions) == ((), ())
    assert c12.baseline.additions == (("Rest today.", ""), ("Take ibuprofen.", ""))
    assert c12.system.matches == (("Rest today.", "Rest today."),)
    assert c12.system.additions == (("Take ibuprofen.", ""),)
    assert c12.system.counts == (1, 1, 0) and c12.system.f1 == pytest.approx(2 / 3)
    # all four when asked for more; none for 0; a run against itself differs nowhere
    assert [c.key for c in differing_pairs(a, b, top=10)[0]] == ["c2-1", "c1-2", "c1-1", "c3-1"]
    assert differing_pairs(a, b, top=0) == ([], 4)
    assert differing_pairs(a, a) == ([], 0)
    with pytest.raises(ValueError, match="top must be an int >= 0, got -1"):
        differing_pairs(a, b, top=-1)


def test_differing_pairs_refuses_runs_of_other_references(scorer, runs, tmp_path):
    from editf1.analysis.pairs import differing_pairs

    a = load_run(runs[0][0])
    c = load_run(_score_to_files(scorer, tmp_path, "C", DRAFTS_B, REFS[:3], IDS[:3])[0])
    with pytest.raises(ValueError, match="cannot contrast 'A' with 'C': the runs hold different"):
        differing_pairs(a, c)


def test_an_unusable_judgement_is_an_expected_addition_named_so(runs):
    from editf1.analysis.pairs import alignment_of

    (path, _, _), _ = runs
    row = json.loads(path.read_text().splitlines()[0])  # c1-1: Rest today. matched, Call us. not
    row["alignment"][1]["status"] = "unusable"
    view = alignment_of("A", pair_result_from_dict(row))
    assert view.matches == (("Rest today.", "Rest today."),)
    assert view.additions == (("Call us.", "judge output unusable"),)


def test_report_html_shows_the_pairs_that_differ_most_escaped(scorer, runs, tmp_path, capsys):
    """The HTML shows each system's alignment of the pairs that differ most (escaped:
    a draft's markup stays text); report.md gives their number only, no text."""
    drafts = [*DRAFTS_B[:2], 'Drink water. Keep the dose <5 mg & "rest" > 2 h.', DRAFTS_B[3]]
    c = _score_to_files(scorer, tmp_path, "C", drafts)[0]
    out = tmp_path / "report"
    args = ["report", str(runs[0][0]), str(c), "--n-resamples", "100", "--top-pairs", "2"]
    assert main([*args, "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    # C's c2-1: EM 1, EA 0, ED 1: F1 2/3 (difference +2/3, as c1-2's: c1-2 is earlier)
    headings = [line for line in page.splitlines() if line.startswith("<h3>")]
    assert headings == [
        "<h3>c1-2: edit-F1 0.000 (A) and 0.667 (C), difference +0.667</h3>",
        "<h3>c2-1: edit-F1 0.000 (A) and 0.667 (C), difference +0.667</h3>",
    ]
    assert (
        "<p>C against A: 4 of 4 pairs differ in content edit-F1; the 2 that differ most.</p>"
        in (page)
    )
    assert "<td>0.667 (EM 1, EA 0, ED 1)</td>" in page
    assert "<li><q>Drink water.</q> → <q>Drink water.</q></li>" in page
    assert "<li>Keep the dose &lt;5 mg &amp; &#34;rest&#34; &gt; 2 h.</li>" in page
    assert "<5 mg" not in page
    md = (out / "report.md").read_text()
    assert "C against A: 4 of 4 pairs differ in content edit-F1; the 2 that differ most." in md
    assert "5 mg" not in md and "Drink water." not in md and "Hi there." not in md
    # 0: no such section; below 0: one line naming the option
    assert main([*args[:-1], "0", "-o", str(tmp_path / "none")]) == 0
    assert "Pairs that differ most" not in (tmp_path / "none" / "report.html").read_text()
    capsys.readouterr()
    assert main([*args[:-1], "-1", "-o", str(tmp_path / "bad")]) == 2
    assert capsys.readouterr().err == "edit-f1: error: --top-pairs must be 0 or more, got -1\n"
