"""Gold labels end to end: edit-f1 sample-for-labels, score --gold and report on the shipped
demo set with the exact judge; editf1.score(gold=...) and the evaluate module's gold=."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import editf1
from editf1.builders.readers import demo_rows
from editf1.cli.main import main
from editf1.gold.labels import drawn_order
from editf1.scorer import EditF1Scorer

FAST = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]
LABELLED = ("demo-02", "demo-08", "demo-09")


@pytest.fixture(autouse=True)
def few_resamples(monkeypatch):
    """The agreement CIs' bootstrap with 100 resamples, the fewest taken (sklearn's kappa
    is slow)."""
    monkeypatch.setattr("editf1.gold.report.N_RESAMPLES", 100)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def demo_file(tmp_path) -> Path:
    return _write(tmp_path / "pairs.jsonl", demo_rows())


def test_sample_for_labels_is_reproducible(tmp_path, demo_file, capsys):
    outputs = []
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        out = tmp_path / f"{name}.jsonl"
        assert (
            main(
                [
                    "sample-for-labels",
                    str(demo_file),
                    "-n",
                    "4",
                    "--seed",
                    str(seed),
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0] != outputs[2]
    rows = _jsonl(tmp_path / "a.jsonl")
    # what the labelling app's last screen turns into the next command
    assert {tuple(r["score_arguments"]) for r in rows} == {(str(demo_file),)}
    assert [r["sampling"]["rank"] for r in rows] == [0, 1, 2, 3]
    assert {r["sampling"]["population"] for r in rows} == {12}
    assert "drew 4 of 12 pairs (uniform, seed 0)" in capsys.readouterr().out
    assert (
        main(["sample-for-labels", str(demo_file), "-n", "13", "-o", str(tmp_path / "x.jsonl")])
        == 2
    )
    assert "n must be an int from 1 to the 12 pairs" in capsys.readouterr().err


def test_score_gold_end_to_end(tmp_path, demo_file, exact_demo, demo_gold_rows, capsys):
    _, result = exact_demo
    gold = _write(tmp_path / "gold.jsonl", demo_gold_rows(result))
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    argv = [
        "score",
        str(demo_file),
        "--gold",
        str(gold),
        "-o",
        str(out),
        "--summary-json",
        str(summary),
        *FAST,
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "gold labels: 3 of 12 pairs (sampling not recorded); 95% CIs" in printed
    # under the table: what lam is, and that 3 labelled pairs are too few
    assert "  lam: the PPI++ power-tuning weight on the judge's counts (Angelopoulos" in printed
    assert "  note: only 3 labelled pairs (fewer than 30): n is too small" in printed
    report = json.loads(summary.read_text())["gold"]
    # gold only, by hand: precision 12/25, recall 12/17, F1 24/42; judge only: the run's
    assert report["content"]["precision"]["gold_only"]["value"] == pytest.approx(12 / 25)
    assert report["content"]["recall"]["gold_only"]["value"] == pytest.approx(12 / 17)
    assert report["content"]["f1"]["gold_only"]["value"] == pytest.approx(24 / 42)
    assert report["content"]["f1"]["judge_only"]["value"] == pytest.approx(result.f1)
    assert report["content_agreement"]["match_rate_bias"]["value"] == pytest.approx(-1 / 17)
    rows = _jsonl(out)
    labelled = {r["id"]: r["gold"] for r in rows if "gold" in r}
    assert set(labelled) == set(LABELLED)
    names = ("expected_matches", "expected_deletions", "expected_additions")
    assert [labelled["demo-09"][k] for k in names] == [1, 12, 5]


def test_score_gold_refuses_bad_labels_naming_the_line(
    tmp_path, demo_file, exact_demo, demo_gold_rows, capsys
):
    _, result = exact_demo
    rows = demo_gold_rows(result)
    rows[1]["id"] = "demo-99"
    gold = _write(tmp_path / "gold.jsonl", rows)
    assert (
        main(["score", str(demo_file), "--gold", str(gold), "-o", str(tmp_path / "o.jsonl"), *FAST])
        == 2
    )
    err = capsys.readouterr().err
    assert "gold.jsonl, line 2 (id 'demo-99'): no scored pair has this id" in err
    assert not (tmp_path / "o.jsonl").exists()
    assert main(["score", str(demo_file), "--second-gold", str(gold), *FAST]) == 2
    assert "--second-gold needs --gold" in capsys.readouterr().err
    # --limit scores other pairs than a recorded sample was drawn from
    sampled = tmp_path / "annotation.jsonl"
    assert main(["sample-for-labels", str(demo_file), "-n", "2", "-o", str(sampled)]) == 0
    record = _jsonl(sampled)[0]["sampling"]
    rows = demo_gold_rows(result)
    for row in rows:
        row["sampling"] = record
    _write(gold, rows)
    assert (
        main(
            [
                "score",
                str(demo_file),
                "--gold",
                str(gold),
                "--limit",
                "5",
                "-o",
                str(tmp_path / "o.jsonl"),
                *FAST,
            ]
        )
        == 2
    )
    assert "the labels were sampled from 12 pairs, but 5 are scored" in capsys.readouterr().err


def test_report_gives_the_prediction_powered_difference(tmp_path, exact_demo, demo_gold_rows):
    rows, _ = exact_demo
    # system b: the demo drafts; system a: every draft cut to its first sentence
    cut = [dict(r, prediction=r["prediction"].split("\n")[0]) for r in rows]
    runs = {}
    for name, pairs, matched in (("a", cut, ()), ("b", rows, ("demo-09",))):
        scored = EditF1Scorer(content_judge="exact", theme_judge=None).score(
            [r["prediction"] for r in pairs],
            [r["reference"] for r in pairs],
            ids=[r["id"] for r in pairs],
        )
        gold = _write(tmp_path / f"gold_{name}.jsonl", demo_gold_rows(scored, matched))
        source = _write(tmp_path / f"{name}.jsonl", pairs)
        runs[name] = tmp_path / f"{name}.edit_f1.jsonl"
        assert (
            main(["score", str(source), "--gold", str(gold), "-o", str(runs[name]), "-q", *FAST])
            == 0
        )
        runs[name + "_gold"] = [
            json.loads(line)["gold"]
            for line in runs[name].read_text().splitlines()
            if "gold" in json.loads(line)
        ]
    report = tmp_path / "report"
    assert (
        main(["report", str(runs["a"]), str(runs["b"]), "-o", str(report), "--n-resamples", "100"])
        == 0
    )
    markdown = (report / "report.md").read_text()
    section = markdown.split("## Prediction-powered comparisons (gold labels)")[1]
    row = next(line for line in section.splitlines() if line.startswith("| a | b | precision |"))
    cells = [c.strip() for c in row.strip("|").split("|")]

    def precision(entries):
        em = sum(e["expected_matches"] for e in entries)
        return em / (em + sum(e["expected_deletions"] for e in entries))

    # gold only: b's gold precision minus a's, from the labelled pairs' gold counts
    gold_only = precision(runs["b_gold"]) - precision(runs["a_gold"])
    assert cells[4].startswith(f"{gold_only:.3f} [")
    assert cells[7] == "3 of 12"


@pytest.mark.parametrize("given", ["2", "99", "-5", "many"])
def test_n_resamples_below_the_minimum_is_refused_by_the_parser(tmp_path, given, capsys):
    run = tmp_path / "a.edit_f1.jsonl"
    assert main(["report", str(run), "-o", str(tmp_path / "r"), "--n-resamples", given]) == 2
    err = capsys.readouterr().err
    assert "error: argument --n-resamples: must be an integer of at least 100" in err
    assert f"got {given!r} (see" in err if given == "many" else f"got {given} (see" in err


def test_python_and_evaluate_take_gold(exact_demo, demo_gold_rows):
    rows, result = exact_demo
    drafts, replies = [r["prediction"] for r in rows], [r["reference"] for r in rows]
    ids = [r["id"] for r in rows]
    scored = editf1.score(
        predictions=drafts,
        references=replies,
        ids=ids,
        gold=demo_gold_rows(result),
        content_judge="exact",
        theme_judge=None,
    )
    assert scored.gold.content["recall"].gold_only.value == pytest.approx(12 / 17)
    assert scored.summary()["gold"]["n_labelled"] == 3
    evaluate = pytest.importorskip("evaluate")
    metric = evaluate.load(
        str(Path(__file__).resolve().parents[1] / "metrics" / "edit_f1"), "exact+none"
    )
    out = metric.compute(
        predictions=drafts,
        references=replies,
        ids=ids,
        gold=demo_gold_rows(result),
        return_pairs=False,
    )
    assert out["gold"]["content"]["f1"]["gold_only"]["value"] == pytest.approx(24 / 42)
    assert "per_pair" not in out
    with pytest.raises(ValueError, match="one reply per draft"):
        editf1.score(
            predictions=drafts,
            references=[[r] for r in replies],
            ids=ids,
            gold=demo_gold_rows(result),
            content_judge="exact",
            theme_judge=None,
        )


def test_score_gold_keeps_the_labels_and_notes_skipped_and_unshared_pairs(
    tmp_path, demo_file, exact_demo, demo_gold_rows, capsys
):
    """-o or --summary-json at a gold file is refused before any work, and the same file
    twice is no second annotator; labels that skip a drawn pair, and a second file that
    labels other pairs, are scored with a note saying so."""
    _, result = exact_demo
    gold = _write(tmp_path / "gold.jsonl", demo_gold_rows(result))
    before = gold.read_bytes()
    base = ["score", str(demo_file), "--gold", str(gold), *FAST]
    assert main([*base, "-o", str(gold)]) == 2
    assert "would overwrite the input file" in capsys.readouterr().err
    assert main([*base, "-o", str(tmp_path / "o.jsonl"), "--summary-json", str(gold)]) == 2
    assert gold.read_bytes() == before
    assert main([*base, "--second-gold", str(gold), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "--gold and --second-gold are the same file" in capsys.readouterr().err
    # the labelled pairs as a recorded draw of 12 with the order the seed gives; rank 0
    # left out of the first file, and the second file labels only that first pair
    order = drawn_order(12, 12, 0)
    ids = [demo_rows()[i]["id"] for i in order]
    labelled = {row["id"]: row for row in demo_gold_rows(result)}
    ranked = sorted(labelled, key=ids.index)
    record = {"design": "uniform", "population": 12, "size": 12, "seed": 0}
    rows = [labelled[k] | {"sampling": record | {"rank": ids.index(k)}} for k in ranked]
    first = _write(tmp_path / "first.jsonl", rows[1:])
    second = _write(tmp_path / "second.jsonl", rows[:2])
    argv = ["score", str(demo_file), "--gold", str(first), "--second-gold", str(second)]
    assert main([*argv, "-o", str(tmp_path / "o.jsonl"), *FAST]) == 0
    printed = capsys.readouterr().out
    skipped = [r for r in range(ids.index(ranked[-1])) if ids[r] not in ranked[1:]]
    assert f"{len(skipped)} pair(s) drawn before the last labelled one have no label" in printed
    assert "cover 1 of the first's 2 labelled pair(s), and 1 pair(s) the first's do not" in printed


def test_score_gold_with_one_labelled_pair_is_refused_before_scoring(
    tmp_path, demo_file, exact_demo, demo_gold_rows, capsys
):
    _, result = exact_demo
    gold = _write(tmp_path / "gold.jsonl", demo_gold_rows(result)[:1])
    out = tmp_path / "o.jsonl"
    assert main(["score", str(demo_file), "--gold", str(gold), "-o", str(out), *FAST]) == 2
    assert "needs at least 2 labelled pairs, got 1" in capsys.readouterr().err
    assert not out.exists()


def test_score_arguments_name_the_options_that_differ_from_scores(tmp_path, capsys):
    table = tmp_path / "pairs.csv"
    table.write_text("case,draft,reply\nc1,Rest.,Rest.\nc2,Ice.,Rest.\n")
    out = tmp_path / "annotation.jsonl"
    argv = ["sample-for-labels", str(table), "-n", "2", "-o", str(out), "--id-field", "case",
            "--prediction-field", "draft", "--reference-field", "reply",
            "--input-format", "csv"]  # fmt: skip
    assert main(argv) == 0
    (arguments,) = {tuple(r["score_arguments"]) for r in _jsonl(out)}
    assert arguments == (str(table), "--input-format", "csv", "--prediction-field", "draft",
                         "--reference-field", "reply", "--id-field", "case")  # fmt: skip


def test_sample_for_labels_names_bad_rows_by_file_and_line(tmp_path, capsys):
    """A CSV's header is line 1: the draft of the second row is on line 3."""
    source = tmp_path / "pairs.csv"
    source.write_text("prediction,reference\nRest.,Rest today.\n,\n")
    out = tmp_path / "a.jsonl"
    assert main(["sample-for-labels", str(source), "-n", "1", "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: {source}, line 3: field 'reference' has no word (empty, whitespace "
        "or punctuation only: str of 0 characters); edit-F1 needs a clinician reply to "
        "compare against\n"
    )
    source.write_text("draft,reply\nRest.,Rest today.\n")
    assert main(["sample-for-labels", str(source), "-n", "1", "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"edit-f1: error: {source}: no column 'prediction' (--prediction-field) or 'reference' "
        "(--reference-field); the header has ['draft', 'reply']\n"
    )
    assert not out.exists()
