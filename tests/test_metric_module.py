"""The evaluate module: both load paths, the bare name offline, options, distributed mode."""

from __future__ import annotations

import doctest
import multiprocessing
import os
import re
import subprocess
import sys
from pathlib import Path

import evaluate
import pytest

from editf1.inputs import InputError
from editf1.integrations import hf_metric

ROOT = Path(__file__).resolve().parents[1]
METRIC_DIR = ROOT / "metrics" / "edit_f1"

PREDICTIONS = ["Rest today. Drink water. Call us.", "Take 2.5 mg b.i.d. with food."]
REFERENCES = ["Rest today. Take ibuprofen.", "Take 2.5 mg b.i.d. with food."]
# Pair 0: EM 1 (Rest today.), EA 1 (Take ibuprofen.), ED 2 (Drink water., Call us.).
# Pair 1: identical, EM 1, EA 0, ED 0.
# Micro: P = 2/(2+2) = 0.5, R = 2/(2+1) = 2/3, F1 = 2*0.5*(2/3)/(0.5+2/3) = 4/7.


def _exact(path: str):
    return evaluate.load(path, "exact+none")


def test_load_from_repository_folder_micro_averages(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = _exact("metrics/edit_f1").compute(predictions=PREDICTIONS, references=REFERENCES)
    assert result["precision"] == pytest.approx(0.5)
    assert result["recall"] == pytest.approx(2 / 3)
    assert result["f1"] == pytest.approx(4 / 7)
    assert (result["expected_matches"], result["expected_additions"]) == (2, 1)
    assert result["expected_deletions"] == 2
    assert [p["f1"] for p in result["per_pair"]] == pytest.approx([0.4, 1.0])
    assert "theme_f1" not in result
    assert result["reproducibility"].startswith("content:exact-sentence-match|theme:none|")


def test_load_from_installed_package_path_and_add_batch():
    metric = _exact(str(hf_metric.metric_path()))
    for prediction, reference in zip(PREDICTIONS, REFERENCES):
        metric.add_batch(predictions=[prediction], references=[reference])
    result = metric.compute(return_pairs=False)
    assert result["f1"] == pytest.approx(4 / 7)
    assert "per_pair" not in result


def test_metric_path_holds_the_module():
    assert (hf_metric.metric_path() / "edit_f1.py").is_file()


def test_unknown_options_raise_instead_of_being_dropped():
    with pytest.raises(ValueError, match=r"config name 'exactt\+none': give 'default'"):
        evaluate.load(str(METRIC_DIR), "exactt+none")
    with pytest.raises(ValueError, match=r"config name 'exact\+nothing'"):
        evaluate.load(str(METRIC_DIR), "exact+nothing")
    metric = _exact(str(METRIC_DIR))
    with pytest.raises(TypeError, match=r"unknown compute option\(s\) \['include_others'\]"):
        metric.compute(predictions=["a b."], references=["a b."], include_others=True)


def test_judges_by_config_name_or_by_compute_keywords():
    """The config name chooses the judges, or compute's keywords with the default config;
    not both. A judge object goes to compute."""
    by_name = _exact(str(METRIC_DIR)).compute(predictions=PREDICTIONS, references=REFERENCES)
    metric = evaluate.load(str(METRIC_DIR))
    by_keywords = metric.compute(
        predictions=PREDICTIONS, references=REFERENCES, content_judge="exact", theme_judge=None
    )
    assert by_name["reproducibility"].startswith("content:exact-sentence-match|theme:none|")
    assert by_keywords["reproducibility"] == by_name["reproducibility"]
    assert by_keywords["run"]["content_judge"] == {
        "name": "exact",
        "fingerprint": "exact-sentence-match",
        "options": {},
    }
    only_content = evaluate.load(str(METRIC_DIR), "exact")
    assert only_content.compute(predictions=["Rest."], references=["Rest."], theme_judge=None)
    with pytest.raises(ValueError, match="content_judge chosen by the config name 'exact' and"):
        only_content.compute(predictions=["Rest."], references=["Rest."], theme_judge=None,
                             content_judge="exact")  # fmt: skip


def test_load_refuses_keywords_evaluate_would_drop():
    """evaluate.load passes unknown keywords to the module, and evaluate ignores them: a
    judge named there would silently score with the defaults. They are refused."""
    with pytest.raises(ValueError, match=r"does not take \['content_judge', 'judge'\]"):
        evaluate.load(str(METRIC_DIR), content_judge="exact", judge="exact")
    assert evaluate.load(str(METRIC_DIR), "exact+none", keep_in_memory=True) is not None


def test_bad_rows_are_named():
    metric = _exact(str(METRIC_DIR))
    with pytest.raises(InputError, match=r"references\[1\] has no word"):
        metric.compute(predictions=["a b.", "c d."], references=["a b.", "   "])
    # evaluate's own format check would name neither row nor field
    with pytest.raises(InputError, match=r"predictions\[0\] must be a string, got None$"):
        metric.compute(predictions=[None, "a."], references=["a.", "b."])
    # rows are numbered across the batches of one computation
    metric.add_batch(predictions=["a.", "b."], references=["a.", "b."])
    with pytest.raises(InputError, match=r"references\[2\]\[1\] must be a string, got int$"):
        metric.add_batch(predictions=["c."], references=[["c.", 7]])


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("include_other", "False", "include_other must be a bool (True or False), got str"),
        ("include_other", 0, "include_other must be a bool (True or False), got int"),
        ("return_pairs", None, "return_pairs must be a bool (True or False), got None"),
        ("batch_size", 1.5, "batch_size must be an int, got float"),
        ("batch_size", "7", "batch_size must be an int, got str of 1 character"),
        ("batch_size", True, "batch_size must be an int, got bool"),
    ],
)
def test_compute_options_are_checked_by_type(option, value, message):
    metric = _exact(str(METRIC_DIR))
    with pytest.raises(TypeError, match=re.escape(message)):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, **{option: value})
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, batch_size=0)
    # the module is usable again after a refused computation
    assert metric.compute(predictions=PREDICTIONS, references=REFERENCES)["f1"] == pytest.approx(
        4 / 7
    )


def test_judge_options_must_be_dicts():
    metric = _exact(str(METRIC_DIR))
    with pytest.raises(TypeError, match="content_judge_options must be a dict or None, got str"):
        metric.compute(predictions=["Rest."], references=["Rest."], content_judge_options="fast")


@pytest.mark.parametrize(
    ("predictions", "references", "error", "message"),
    [
        ([], [], ValueError, "no pairs to score"),
        (None, None, ValueError, "no pairs to score"),
        ("Rest today.", "Rest today.", TypeError, "predictions must be a list of strings (one "),
        (["Rest today."], "Rest today.", TypeError, "references must be a list of strings (one "),
        ((p for p in PREDICTIONS), REFERENCES, TypeError, "got generator; pass a list"),
        (PREDICTIONS, {"a": "Rest."}, TypeError, "references must be a list of strings"),
        (PREDICTIONS, REFERENCES[:1], ValueError, "got 2 predictions and 1 references"),
        (["Rest \ud800today."], ["Rest."], InputError, "predictions[0] is not valid Unicode"),
    ],
)
def test_empty_single_string_and_generator_inputs_are_refused(
    predictions, references, error, message
):
    metric = _exact(str(METRIC_DIR))
    with pytest.raises(error, match=re.escape(message)):
        metric.compute(predictions=predictions, references=references)


def test_a_datasets_column_or_array_is_a_list_of_pairs(tmp_path):
    import datasets
    import numpy as np

    rows = datasets.Dataset.from_dict({"prediction": PREDICTIONS, "reference": REFERENCES})
    metric = _exact(str(METRIC_DIR))
    from_column = metric.compute(predictions=rows["prediction"], references=rows["reference"])
    from_array = metric.compute(predictions=np.array(PREDICTIONS), references=REFERENCES)
    assert from_column["f1"] == from_array["f1"] == pytest.approx(4 / 7)
    assert from_column["n_pairs"] == from_array["n_pairs"] == 2


def _arrow_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.arrow"))


def test_a_failing_compute_leaves_no_arrow_file(tmp_path):
    """In one process the pairs stay in memory; a failure leaves nothing behind."""
    metric = evaluate.load(str(METRIC_DIR), "exact+none", cache_dir=str(tmp_path))
    assert metric.keep_in_memory  # evaluate.load passes keep_in_memory=False; edit_f1 keeps them
    metric.add_batch(predictions=PREDICTIONS, references=REFERENCES)
    with pytest.raises(TypeError, match="include_other must be a bool"):
        metric.compute(include_other="yes")  # fails in _compute, after evaluate gathered
    metric.add_batch(predictions=PREDICTIONS, references=REFERENCES)
    with pytest.raises(InputError, match=r"references\[2\] has no word"):
        metric.compute(predictions=["a b."], references=["   "])  # fails in add_batch
    with pytest.raises(ValueError, match="no pairs to score"):
        metric.compute()  # the failed computation was discarded whole
    assert _arrow_files(tmp_path) == []
    assert metric.compute(predictions=PREDICTIONS, references=REFERENCES)["n_pairs"] == 2


def test_the_evaluate_behaviour_the_module_relies_on(tmp_path):
    """What metrics/edit_f1/edit_f1.py and hf_metric.discard_cache rely on in evaluate
    (>=0.4.3,<0.5 in setup.cfg; these fail first if a release changes it): len(module) is
    the number of pairs added to the computation under way and 0 once compute ends it;
    the computation's state lives in the attributes discard_cache resets; _compute gets
    the stored columns as lists and compute's other keywords."""
    state = ("writer", "buf_writer", "data", "selected_feature_format", "cache_file_name")
    locks = ("filelock", "file_paths", "filelocks")
    metric = _exact(str(METRIC_DIR))
    assert len(metric) == 0 and all(getattr(metric, name) is None for name in state + locks)
    metric.add_batch(predictions=PREDICTIONS, references=REFERENCES)
    metric.add(prediction=PREDICTIONS[0], reference=REFERENCES[0])
    assert len(metric) == 3 and metric.writer is not None and metric.buf_writer is not None
    seen = {}

    def record(predictions, references, **kwargs):
        seen.update(predictions=predictions, references=references, kwargs=kwargs)
        return {}

    metric._compute = record
    assert metric.compute(batch_size=4) == {}
    assert seen == {
        "predictions": [*PREDICTIONS, PREDICTIONS[0]],
        "references": [*REFERENCES, REFERENCES[0]],
        "kwargs": {"batch_size": 4},
    }
    assert len(metric) == 0 and metric.writer is None and metric.selected_feature_format is None
    # a computation discarded half-way starts again from row 0
    metric.add_batch(predictions=PREDICTIONS, references=REFERENCES)
    hf_metric.discard_cache(metric)
    assert len(metric) == 0 and all(getattr(metric, name) is None for name in state + locks)
    with pytest.raises(InputError, match=r"references\[0\] has no word"):
        metric.add_batch(predictions=["a b."], references=["   "])


def test_zero_division_option_reaches_the_scorer():
    metric = _exact(str(METRIC_DIR))
    result = metric.compute(predictions=[""], references=["Rest today."], zero_division=1.0)
    # Empty draft: EM 0, ED 0, EA 1 -> precision undefined -> 1.0; recall 0; F1 0.
    assert (result["precision"], result["recall"], result["f1"]) == (1.0, 0.0, 0.0)


def test_docstring_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(hf_metric.KWARGS_DESCRIPTION, {}, "KWARGS_DESCRIPTION", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 4


def test_bare_name_loads_offline_after_install_metric(tmp_path):
    """`edit-f1 install-metric` then `evaluate.load("edit_f1")`, offline, from a folder
    without ./edit_f1/, in a fresh process with an empty module cache."""
    env = os.environ | {"HF_MODULES_CACHE": str(tmp_path / "modules"), "HF_HUB_OFFLINE": "1"}
    cli = Path(sys.executable).with_name("edit-f1")
    subprocess.run([str(cli), "install-metric"], env=env, check=True, cwd=tmp_path)
    code = (
        "import evaluate\n"
        "m = evaluate.load('edit_f1', 'exact+none')\n"
        f"r = m.compute(predictions={PREDICTIONS!r}, references={REFERENCES!r})\n"
        "print(round(r['f1'], 6))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(round(4 / 7, 6))


def _rank(process_id: int, cache_dir: str, queue) -> None:
    metric = evaluate.load(
        str(METRIC_DIR),
        "exact+none",
        num_process=2,
        process_id=process_id,
        experiment_id="test_distributed",
        cache_dir=cache_dir,
    )
    metric.add_batch(predictions=[PREDICTIONS[process_id]], references=[REFERENCES[process_id]])
    result = metric.compute(return_pairs=False)
    queue.put(
        (
            process_id,
            None if result is None else result["f1"],
            None if result is None else result["n_pairs"],
        )
    )


def test_evaluate_distributed_mode_gathers_all_ranks(tmp_path):
    """One process per rank, as under accelerate: rank 0 returns the corpus score."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    ranks = [context.Process(target=_rank, args=(i, str(tmp_path), queue)) for i in (0, 1)]
    for rank in ranks:
        rank.start()
    results = dict((pid, (f1, n)) for pid, f1, n in (queue.get(timeout=300) for _ in ranks))
    for rank in ranks:
        rank.join(timeout=60)
    assert results[1] == (None, None)
    assert results[0][0] == pytest.approx(4 / 7)
    assert results[0][1] == 2


def _failing_rank(process_id: int, cache_dir: str, how: str, queue) -> None:
    import warnings

    metric = evaluate.load(
        str(METRIC_DIR),
        "exact+none",
        num_process=2,
        process_id=process_id,
        experiment_id=f"test_distributed_{how}",
        cache_dir=cache_dir,
    )
    reference = REFERENCES[process_id]
    if how == "kinds" and process_id == 1:  # a list of replies where rank 0 gives one
        reference = [reference, "Call us."]
    metric.add_batch(predictions=[PREDICTIONS[process_id]], references=[reference])
    # "option": rank 0 gathers both ranks' Arrow files, then the option is refused; the
    # option given on rank 1 is not used there, and it says so
    options = {"include_other": "yes"} if how == "option" else {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome = repr(metric.compute(**options))
    except TypeError as error:
        outcome = str(error)
    queue.put((process_id, outcome, [str(w.message) for w in caught]))


@pytest.mark.parametrize("how", ["option", "kinds"])
def test_a_failing_distributed_compute_deletes_every_ranks_arrow_file(tmp_path, how):
    """With several processes evaluate writes Arrow files; rank 0 deletes them all when
    the computation fails, as evaluate does when it succeeds: after a refused option,
    and when the ranks' files cannot be read together (one gave lists of replies),
    where evaluate fails before it lists the other ranks' files."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    ranks = [
        context.Process(target=_failing_rank, args=(i, str(tmp_path), how, queue)) for i in (0, 1)
    ]
    for rank in ranks:
        rank.start()
    outcomes = {
        pid: (outcome, caught) for pid, outcome, caught in (queue.get(timeout=300) for _ in ranks)
    }
    for rank in ranks:
        rank.join(timeout=60)
    assert outcomes[1][0] == "None"  # rank 1 only hands its pairs over
    if how == "option":
        assert outcomes[0][0].startswith("include_other must be a bool (True or False), got str")
        assert outcomes[1][1] == [
            "compute options ['include_other'] on process 1 are not used: process 0 scores "
            "the pairs of every process with the options given to it"
        ]
    else:
        assert outcomes[0][0].startswith(
            "the processes' pairs cannot be gathered: their references differ in kind"
        )
    assert _arrow_files(tmp_path) == []


def test_evaluate_module_accepts_lists_of_references():
    evaluate = pytest.importorskip("evaluate")
    metric = evaluate.load(str(ROOT / "metrics" / "edit_f1"), "exact+none")
    out = metric.compute(
        predictions=["Rest today. Drink water."],
        references=[["Rest today. Take ibuprofen.", "Drink water. Rest today."]],
    )
    assert out["f1"] == 1.0 and out["all_references"]["f1"] == 0.75
    assert out["per_pair"][0]["best_reference"] == 1
    # evaluate would turn a later list into its string form: mixing is refused.
    with pytest.raises(TypeError, match=r"references\[1\] is list"):
        metric.compute(predictions=["a.", "b."], references=["x.", ["y.", "b."]])
    metric.add_batch(predictions=["Rest."], references=[["Rest.", "Eat."]])
    with pytest.raises(TypeError, match=r"references\[0\] is str"):
        metric.add_batch(predictions=["Rest."], references=["Rest."])
    accumulated = metric.compute(return_pairs=False)
    assert (accumulated["f1"], accumulated["all_references"]["f1"]) == (1.0, 0.5)
    assert "per_pair" not in accumulated
