"""Scoring across processes: shares, row numbers and the merge checked in one process by
hand; ``edit-f1 score`` under ``torchrun`` and ``accelerate launch`` with 2 CPU processes
(gloo) gives the output and summary of one process while each process judges half."""

from __future__ import annotations

import json
import multiprocessing
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from editf1.aggregate import UndefinedMetricWarning
from editf1.cli.main import main
from editf1.inputs import check_rows
from editf1.integrations.distributed import (
    renumbered,
    score_across_processes,
    share_of,
)
from editf1.judges.exact import ExactMatchContentJudge
from editf1.scorer import EditF1Scorer

BIN = Path(sys.executable).parent
METRIC_DIR = Path(__file__).resolve().parents[1] / "metrics" / "edit_f1"
FAST = ["--content-judge", "exact", "--theme-judge", "none", "--no-progress"]


class FakeState:
    """Stands in for accelerate's PartialState: process ``index`` of ``n``, no process
    group; its split is accelerate's own method."""

    def __init__(self, index: int = 0, n: int = 1):
        self.process_index, self.num_processes = index, n
        self.is_main_process = index == 0
        self.waited = 0

    def split_between_processes(self, inputs):
        from accelerate import PartialState

        return PartialState.split_between_processes(self, inputs)

    def wait_for_everyone(self):
        self.waited += 1


def test_shares_are_contiguous_first_ones_longer():
    assert [share_of(FakeState(k, 2), 5) for k in range(2)] == [range(0, 3), range(3, 5)]
    assert [share_of(FakeState(k, 3), 1) for k in range(3)] == [range(0, 1), range(0), range(0)]
    assert share_of(FakeState(0, 1), 4) == range(0, 4)


# Five rows, exact judge; the themes of the scripted judge below.
ROWS = [
    ("a", "Rest today. Drink water.", "Rest today. Take ibuprofen."),
    ("b", "Call us.", "Call us."),
    ("c", "Rest today.", ["Take ibuprofen.", "Rest today. Call us."]),
    ("d", "", "Call us."),
    ("e", "Take ibuprofen.", "Take ibuprofen. Rest today."),
]
THEMES = {
    "Rest today.": "Medical planning instruction",
    "Take ibuprofen.": "Medical planning instruction",
    "Drink water.": "Medical planning instruction",
    "Call us.": "Contingency planning",
}


@pytest.fixture
def scorer(theme_judge_cls):
    return EditF1Scorer(content_judge="exact", theme_judge=theme_judge_cls(THEMES))


def _shared(scorer, rows, n):
    """Each of ``n`` processes' pairs, judged one after the other here, renumbered."""
    pairs = []
    for k in range(n):
        share = share_of(FakeState(k, n), len(rows))
        judged = scorer.iter_pairs(check_rows(rows)[share.start : share.stop])
        pairs += [renumbered(pair, share.start) for pair in judged]
    return pairs


def test_merged_shares_equal_one_process(scorer):
    with pytest.warns(UndefinedMetricWarning) as one_warnings:
        whole = scorer.score([p for _, p, _ in ROWS], [r for _, _, r in ROWS], ids=list("abcde"))
    pairs = _shared(scorer, ROWS, 2)  # rows 0-2 and 3-4
    # row numbers are the input's; the third row's two replies keep that number too
    assert [p.row for p in pairs] == [0, 1, 2, 3, 4]
    assert [p.row for p in pairs[2].per_reference] == [2, 2]
    with pytest.warns(UndefinedMetricWarning) as merged_warnings:
        merged = scorer.aggregate(pairs, keep_pairs=True)
    assert merged.summary() == whole.summary()
    assert [p.to_dict() for p in merged.pairs] == [p.to_dict() for p in whole.pairs]
    # The empty draft is row 3 (the second share's first row), named as in one process.
    assert "1 row(s) [3]" in str(merged_warnings[0].message)
    assert [str(w.message) for w in merged_warnings] == [str(w.message) for w in one_warnings]
    # By hand: EM 1+1+1+0+1 = 4 (row 2: its second reply, "Rest today."), EA 1+0+1+1+1
    # = 4, ED 1+0+0+0+0 = 1. all_references adds row 2's first reply (EM 0, EA 1, ED 1).
    assert (merged.expected_matches, merged.expected_additions) == (4, 4)
    assert merged.expected_deletions == 1
    every = merged.all_references
    assert (every.expected_matches, every.expected_additions, every.expected_deletions) == (
        4,
        5,
        2,
    )


def test_merged_share_accumulators_equal_one_process(scorer):
    """What the training callback gathers: each share's summed counts, not its pairs."""
    with pytest.warns(UndefinedMetricWarning) as one_warnings:
        whole = scorer.score([p for _, p, _ in ROWS], [r for _, _, r in ROWS], ids=list("abcde"))
    rows, merged = check_rows(ROWS), scorer.accumulator()
    for k in range(2):
        share = share_of(FakeState(k, 2), len(rows))
        mine = scorer.accumulator()
        for pair in scorer.iter_pairs(rows[share.start : share.stop]):
            mine.add(renumbered(pair, share.start))
        merged.merge(mine)
    with pytest.warns(UndefinedMetricWarning) as merged_warnings:
        result = merged.result(scorer.provenance, judges=scorer.judges)
    assert result.summary() == whole.summary() and result.pairs is None
    assert result.all_references.summary() == whole.all_references.summary()
    assert [str(w.message) for w in merged_warnings] == [str(w.message) for w in one_warnings]


def test_one_process_writes_the_output_and_leaves_no_shards(scorer, tmp_path):
    state = FakeState(0, 1)
    out = tmp_path / "out" / "run.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        run = score_across_processes(scorer, ROWS, out, state=state)
        whole = scorer.score([p for _, p, _ in ROWS], [r for _, _, r in ROWS], ids=list("abcde"))
    assert run.pairs_per_process == (5,) and state.waited == 1
    assert run.result.summary() == whole.summary()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [p.to_dict() for p in whole.pairs]
    assert sorted(p.name for p in out.parent.iterdir()) == ["run.jsonl"]


def test_a_killed_runs_shards_are_warned_about_not_its_own(scorer, tmp_path):
    """A run killed before its cleanup leaves ``.<name>.<random>.shards``; the next run
    names it (file names only) and does not count the shards folder it makes itself."""
    out = tmp_path / "run.jsonl"
    (tmp_path / ".run.jsonl.k1ll3d.shards").mkdir()
    (tmp_path / ".run.jsonl.k1ll3d.shards" / "rank-0.pickle").write_bytes(b"pairs")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score_across_processes(scorer, ROWS, out, state=FakeState(0, 1))
    left = [str(w.message) for w in caught if "temporary file(s)" in str(w.message)]
    assert left == [
        f"{tmp_path} holds 1 temporary file(s) left by an earlier write of run.jsonl that "
        "was killed: ['.run.jsonl.k1ll3d.shards']; they may hold copies of the data: "
        "delete them once no run is writing run.jsonl"
    ]
    assert (tmp_path / ".run.jsonl.k1ll3d.shards").is_dir()  # never removed


def test_missing_share_and_standard_output_are_refused(scorer, tmp_path, monkeypatch):
    import accelerate.utils

    monkeypatch.setattr(accelerate.utils, "broadcast_object_list", lambda objects: objects)
    out = tmp_path / "run.jsonl"
    # process 0 of 2 alone: process 1 never wrote its share (no shared folder)
    with pytest.raises(ValueError, match=r"results of process\(es\) \[1\] are missing"):
        score_across_processes(scorer, ROWS, out, state=FakeState(0, 2))
    assert list(tmp_path.iterdir()) == []  # neither an output nor the shard folder
    with pytest.raises(ValueError, match="to a file, not to -"):
        score_across_processes(scorer, ROWS, "-", state=FakeState(0, 2))
    bad = [*ROWS, ("f", "Rest.", " ")]
    with pytest.raises(ValueError, match=r"references\[5\] has no word"):
        score_across_processes(scorer, bad, out, state=FakeState(1, 2))


def test_only_the_main_process_reports_shared_errors(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prediction": "Rest.", "reference": " "}\n', encoding="utf-8")
    out = ["-o", str(tmp_path / "o.jsonl")]
    monkeypatch.setenv("RANK", "1")  # a non-main process; WORLD_SIZE unset: one process
    assert main(["score", str(bad), *out, *FAST]) == 2
    assert capsys.readouterr().err == ""  # the main process reports the same bad row
    monkeypatch.setenv("RANK", "0")
    assert main(["score", str(bad), *out, *FAST]) == 2
    assert f"{bad}, line 1: field 'reference' has no word" in capsys.readouterr().err


def test_standard_input_and_output_are_refused_under_several_processes(
    tmp_path, capsys, monkeypatch
):
    pairs = tmp_path / "p.jsonl"
    pairs.write_text('{"prediction": "Rest.", "reference": "Rest."}\n', encoding="utf-8")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(["score", str(pairs), "-o", "-", *FAST]) == 2
    assert "cannot share standard input or output" in capsys.readouterr().err


# ---- two real processes (slow: each starts Python, torch and the process group) ----


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pair_rows() -> list[dict]:
    """20 rows: row 13 has an empty draft, rows 2, 7, 12, 17 two replies."""
    rows = []
    for i in range(20):
        reference = f"Rest today. Take ibuprofen {i} mg. Call us if worse."
        if i % 5 == 2:
            reference = [reference, f"Drink water. Rest today {i}."]
        draft = "" if i == 13 else f"Rest today. Drink water. Take ibuprofen {i} mg."
        rows.append({"id": f"r{i}", "prediction": draft, "reference": reference})
    return rows


def _pairs_file(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in _pair_rows()), encoding="utf-8")
    return path


def _launch(launcher: list[str], args: list[str]) -> subprocess.CompletedProcess:
    command = [*launcher, "-m", "editf1.cli", "score", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.slow
def test_torchrun_two_processes_equal_one(tmp_path, capsys):
    pairs = _pairs_file(tmp_path / "pairs.jsonl")
    one, two = tmp_path / "one", tmp_path / "two"
    with pytest.warns(UndefinedMetricWarning, match=r"1 row\(s\) \[13\]"):
        args = [str(pairs), "-o", str(one / "out.jsonl"), "--summary-json", str(one / "s.json")]
        assert main(["score", *args, *FAST]) == 0
    single = capsys.readouterr().out
    torchrun = [str(BIN / "torchrun"), "--nproc_per_node", "2", "--master_port"]
    args = [str(pairs), "-o", str(two / "out.jsonl"), "--summary-json", str(two / "s.json")]
    done = _launch([*torchrun, str(_free_port())], [*args, *FAST])
    assert (two / "out.jsonl").read_bytes() == (one / "out.jsonl").read_bytes()
    assert (two / "s.json").read_bytes() == (one / "s.json").read_bytes()
    assert "all_references" in json.loads((two / "s.json").read_text())
    # each process judged half; the table is printed once, by the main process
    assert "judged by 2 processes: 10 + 10 pairs" in done.stdout
    assert done.stdout.count("edit-F1 on 20 pair(s)") == 1
    assert done.stdout.replace("  judged by 2 processes: 10 + 10 pairs\n", "") == single.replace(
        str(one), str(two)
    )
    # the warning names the input's row 13 (the second process's fourth) by its line, once
    assert done.stderr.count("edit-f1: warning: precision") == 1
    assert f"for 1 row(s) ({pairs}, line 14) and set to 0.0" in done.stderr
    assert sorted(p.name for p in two.iterdir()) == ["out.jsonl", "s.json"]  # no shards left


@pytest.mark.slow
def test_accelerate_launch_shards_a_dataset_split(tmp_path, capsys):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["score", "--dataset", "demo", "-o", str(one), "-q", *FAST]) == 0
    launcher = [str(BIN / "accelerate"), "launch", "--multi_gpu", "--num_processes", "2"]
    launcher += ["--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    done = _launch(
        [*launcher, "--main_process_port", str(_free_port())],
        ["--dataset", "demo", "-o", str(two), *FAST],
    )
    assert two.read_bytes() == one.read_bytes()
    assert "judged by 2 processes: 6 + 6 pairs" in done.stdout


def _floats_apart(a, b, where="") -> float:
    """The largest difference between the floats of two JSON values that are otherwise
    equal (AssertionError naming the first other difference)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        return max([_floats_apart(a[k], b[k], f"{where}.{k}") for k in a], default=0.0)
    if isinstance(a, list):
        assert len(a) == len(b), where
        return max([_floats_apart(x, y, where) for x, y in zip(a, b)], default=0.0)
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b)
    assert a == b, where
    return 0.0


@pytest.mark.slow
def test_embedded_judges_two_processes_same_decisions(tmp_path, capsys):
    """The embedded judges encode each share in their own batches: the same decisions
    and counts as one process, probabilities within 1e-6."""
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["score", "-o", str(one), "-q"]) == 0
    torchrun = [str(BIN / "torchrun"), "--nproc_per_node", "2", "--master_port"]
    done = _launch([*torchrun, str(_free_port())], ["-o", str(two), "--no-progress"])
    assert "judged by 2 processes: 6 + 6 pairs" in done.stdout
    rows = [[json.loads(line) for line in p.read_text().splitlines()] for p in (one, two)]
    assert _floats_apart(*rows) < 1e-6  # statuses, spans, themes and counts equal


class CountingExactJudge(ExactMatchContentJudge):
    """The exact judge, counting the (draft, reply) pairs it judges in this process."""

    judged = 0

    def match(self, requests):
        self.judged += len(requests)
        return super().match(requests)


def _evaluate_rank(process_id: int, cache_dir: str, rows: list, queue) -> None:
    """One rank of evaluate's distributed mode: adds its half of ``rows``, computes."""
    import evaluate

    judge = CountingExactJudge()
    metric = evaluate.load(str(METRIC_DIR), num_process=2, process_id=process_id,
                           experiment_id="idle_rank", cache_dir=cache_dir)  # fmt: skip
    half = rows[10 * process_id : 10 * (process_id + 1)]
    metric.add_batch(predictions=[r["prediction"] for r in half],
                     references=[r["reference"] for r in half])  # fmt: skip
    result = metric.compute(return_pairs=False, content_judge=judge, theme_judge=None)
    queue.put((process_id, judge.judged, None if result is None else result["n_pairs"]))


@pytest.mark.slow
def test_evaluate_distributed_mode_judges_every_pair_on_rank_0(tmp_path):
    """Why the metric card points to the accelerate path: under evaluate's num_process=2
    rank 0 judges all 20 pairs after the gather and rank 1 none, where under torchrun
    each process judges 10 (test_torchrun_two_processes_equal_one): the busiest
    process's judging halves."""
    # evaluate takes one kind of reference per computation: each row's first reply
    rows = [r | {"reference": r["reference"][0]} if isinstance(r["reference"], list) else r
            for r in _pair_rows()]  # fmt: skip
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    ranks = [context.Process(target=_evaluate_rank, args=(k, str(tmp_path), rows, queue))
             for k in (0, 1)]  # fmt: skip
    for rank in ranks:
        rank.start()
    judged = {k: (n, pairs) for k, n, pairs in (queue.get(timeout=300) for _ in ranks)}
    for rank in ranks:
        rank.join(timeout=60)
    assert judged == {0: (20, 20), 1: (0, None)}
