"""Smoke tests of the benchmark scripts' code paths (benchmarks/): the figures they
compute, on small hand-made pairs with values worked out by hand. No timing is asserted
here; speed and memory figures live in benchmarks/results."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from editf1.scorer import EditF1Scorer
from editf1.segment import SentenceSplitter

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str):
    """Import ``benchmarks/<name>.py`` (the scripts import ``benchlib`` beside them)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


benchlib = _load("benchlib")
validity = _load("validity")
scaling = _load("scaling")
speed = _load("speed")

# (draft, reply): exact judge EM/EA/ED = 1/1/2 (F1 0.4), 2/0/0 (1.0), 0/1/1 (0.0)
PAIRS = [
    ("Rest today. Drink water. Call us.", "Rest today. Take ibuprofen."),
    ("Take two tablets. Call us.", "Take two tablets. Call us."),
    ("Rest.", "Call us tomorrow."),
]


def _exact() -> EditF1Scorer:
    return EditF1Scorer(content_judge="exact", theme_judge=None, zero_division=0.0)


def test_character_ratio_and_normalised_edit_distance_by_hand():
    # SequenceMatcher ratio 2M/T: "abc" common in "abcd"/"abce" -> 2*3/8
    assert validity.char_ratio("abcd", "abce") == 0.75
    assert validity.char_ratio("Rest today.", "Rest today.") == 1.0
    assert validity.char_ratio("ab", "cd") == 0.0
    assert validity.normalised_edit_distance(1, "abcd", "abce") == 0.25
    assert validity.normalised_edit_distance(3, "ab", "abcde") == 0.6
    assert validity.normalised_edit_distance(0, "", "") == 0.0


def test_per_row_scores_of_the_exact_judge_and_difflib_on_three_pairs():
    rows = [{"prediction": p, "reference": r} for p, r in PAIRS]
    scored = validity.score_rows({"exact": _exact()}, rows)
    assert validity.per_row(scored, "exact") == pytest.approx([0.4, 1.0, 0.0])
    counts = [
        (p.expected_matches, p.expected_additions, p.expected_deletions) for p in scored["exact"]
    ]
    assert counts == [(1, 1, 2), (2, 0, 0), (0, 1, 1)]
    assert validity.per_row(scored, "difflib")[1] == 1.0


def test_spearman_with_bootstrap_and_undefined_cases():
    estimate = validity.spearman_estimate([1, 2, 3, 4], [0.9, 0.5, 0.2, 0.1], None, 100, 0)
    assert estimate["value"] == -1.0 and estimate["low"] == -1.0 and estimate["high"] == -1.0
    constant = validity.spearman_estimate([0, 0, 0], [1, 2, 3], None, 100, 0)
    assert constant["value"] is None and constant["note"] == "constant input"
    assert validity._fmt(constant) == "undefined (constant score)"


def test_micro_f1_sums_counts_before_dividing():
    pairs = _exact().score([p for p, _ in PAIRS], [r for _, r in PAIRS]).pairs
    # EM 3, ED 3, EA 2 -> P 0.5, R 0.6, F1 6/11
    estimate = validity.micro_f1_estimate(pairs, None, 100, 0)
    assert estimate["value"] == pytest.approx(6 / 11)
    assert validity.mean_estimate([0.0, 0.5, 1.0], None, 100, 0)["value"] == 0.5


def test_distribution_per_acceptability_class():
    d = validity.distribution([0.0, 0.5, 1.0, 1.0])
    assert d == {
        "n": 4,
        "mean": 0.625,
        "q1": 0.375,
        "median": 0.75,
        "q3": 1.0,
        "share_perfect": 0.5,
    }


def test_edited_figures_on_hand_made_rows():
    a, b, c = validity.ACCEPTABILITY
    rows = [
        {"prediction": p, "reference": r, "case_id": str(i), "edit_distance": d, "acceptability": k}
        for i, ((p, r), d, k) in enumerate(zip(PAIRS, [20, 0, 15], [b, a, c]))
    ]
    scored = validity.score_rows({"exact": _exact()}, rows)
    scored["edit-F1"] = scored["exact"]  # the embedded judge needs the real model
    figures = validity.edited_figures(rows, scored, n_resamples=100, seed=0)
    assert figures["changed_rows"] == 2 and figures["changed_cases"] == 2
    exact = figures["metrics"]["exact"]
    # normalised edit distances 20/33 and 15/17 against F1 0.4 and 0.0: rho -1 on 2
    # rows is undefined (fewer than 3), on all 3 rows (0.4, 1.0, 0.0) vs (0.61, 0, 0.88): -1
    assert exact["rho_with_normalised_edit_distance_changed_rows"]["value"] is None
    assert exact["rho_with_normalised_edit_distance_all_rows"]["value"] == -1.0
    assert exact["rho_with_acceptability_all_rows"]["value"] == -1.0
    assert exact["per_class"]["as is"]["median"] == 1.0
    assert exact["per_class"]["unacceptable"]["median"] == 0.0
    assert exact["changed_rows_scored_perfect"] == 0
    assert exact["corpus_f1"]["value"] == pytest.approx(6 / 11)


def test_inter_annotator_figures_with_the_exact_judge():
    rows = [
        {
            "case_id": "m1",
            "prediction": "Rest today. Call us.",
            "reference": "Rest today. Drink water.",
        },
        {"case_id": "m1", "prediction": "Rest today. Call us.", "reference": "Rest today."},
        {"case_id": "m2", "prediction": "Hi.", "reference": "Hello there."},
    ]
    scored = validity.score_rows({"exact": _exact()}, rows)
    scored["edit-F1"] = scored["exact"]
    figures = validity.iap_figures(rows, scored, {"edit-F1": _exact(), "exact": _exact()}, 100, 0)
    assert figures["cases"] == 1
    exact = figures["metrics"]["exact"]
    # replies scored on each other: EM 2, EA 1, ED 1 -> F1 2/3 (inter_annotator doctest)
    assert exact["oncologist_vs_oncologist"]["value"] == pytest.approx(2 / 3)
    # the draft against both replies of m1: EM 2, EA 1, ED 2 -> P 0.5, R 2/3, F1 4/7
    assert exact["draft_vs_oncologist_same_cases"]["value"] == pytest.approx(4 / 7)
    assert exact["gap"] == pytest.approx(2 / 3 - 4 / 7)


def test_whitespace_variants_keep_sentences_and_words():
    splitter = SentenceSplitter()
    text = "Hi Maria,\nPlease take 2.5 mg twice daily. Call us at 5 p.m. if it hurts.\nBest,"
    assert benchlib.whitespace_variant(text, 0, splitter) == text
    variant = benchlib.whitespace_variant(text, 3, splitter)
    assert variant.startswith("Hi    Maria,\nPlease    take 2.5 mg")
    original = [s.text for s in splitter.split(text)]
    changed = [s.text for s in splitter.split(variant)]
    assert [s.split() for s in changed] == [s.split() for s in original]
    assert changed[-1] == "Best," and changed[0] != original[0]  # no space: unchanged


def test_variant_rows_and_their_check():
    rows = [
        {"id": "a", "prediction": "Rest today.", "reference": "Call us now."},
        {"id": "b", "prediction": "Drink water.", "reference": "Rest."},
    ]
    out = scaling.variant_rows(rows, 5, SentenceSplitter())
    assert [r["id"] for r in out] == ["a#0", "b#0", "a#1", "b#1", "a#2"]
    assert out[4]["prediction"] == "Rest   today." and out[3]["reference"] == "Rest."

    def words(texts):
        return {"input_ids": [t.split() for t in texts]}

    checked = scaling.check_variants(rows, [1, 2], SentenceSplitter(), words)
    assert checked["sentences_checked"] == 8 and checked["sentences_unchanged"] == 2


def test_scaling_fit_needs_two_sizes():
    assert scaling._linear_fit(np.array([100.0]), np.array([20.0])) is None
    assert scaling._linear_fit(np.array([100.0, 100.0]), np.array([20.0, 21.0])) is None
    two = scaling._linear_fit(np.array([100.0, 1100.0]), np.array([20.0, 120.0]))
    assert two["slope_s_per_pair"] == pytest.approx(0.1) and two["r2"] == 1.0
    assert two["intercept_s"] == pytest.approx(10.0)
    # by hand: mean x 1, mean y 2, slope 1/2, intercept 1.5; fitted 1.5, 2, 2.5; residuals
    # -0.5, 1, -0.5 (SS 1.5 of a total 2: R^2 0.25); largest share 0.5 / 1
    three = scaling._linear_fit(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 2.0]))
    assert three["slope_s_per_pair"] == pytest.approx(0.5)
    assert three["intercept_s"] == pytest.approx(1.5)
    assert three["r2"] == pytest.approx(0.25)
    assert three["max_abs_residual_share"] == pytest.approx(0.5)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_scaling_compares_outputs_row_by_row_with_float_tolerance(tmp_path):
    rows = [
        {"id": "a#0", "expected_matches": 1, "probability": 0.25, "exact": True},
        {"id": "b#0", "expected_matches": 2, "probability": 0.5, "exact": False},
    ]
    one = _jsonl(tmp_path / "one.jsonl", rows)
    same = scaling.compare_outputs(one, _jsonl(tmp_path / "same.jsonl", rows))
    assert same == {
        "rows": 2,
        "identical_bytes": True,
        "same": True,
        "max_abs_float_difference": 0.0,
        "first_difference": None,
        "tolerance": 1e-6,
    }
    # 0.5 -> 0.5000003: apart by 3e-7, within 1e-6; the bytes differ
    near = [rows[0], rows[1] | {"probability": 0.5000003}]
    found = scaling.compare_outputs(one, _jsonl(tmp_path / "near.jsonl", near))
    assert found["same"] and not found["identical_bytes"]
    assert found["max_abs_float_difference"] == pytest.approx(3e-7)
    far = [rows[0], rows[1] | {"probability": 0.500002}]
    found = scaling.compare_outputs(one, _jsonl(tmp_path / "far.jsonl", far))
    assert (
        not found["same"] and found["first_difference"] == "floats apart by 2e-06 (tolerance 1e-06)"
    )
    # counts are integers: no tolerance; the row's line and field are named, not its value
    count = [rows[0], rows[1] | {"expected_matches": 3}]
    found = scaling.compare_outputs(one, _jsonl(tmp_path / "count.jsonl", count))
    assert found["first_difference"] == "line 2: .expected_matches: values differ"
    swapped = scaling.compare_outputs(one, _jsonl(tmp_path / "swapped.jsonl", rows[::-1]))
    assert swapped["first_difference"] == "line 1: .id: values differ"
    short = scaling.compare_outputs(one, _jsonl(tmp_path / "short.jsonl", rows[:1]))
    assert short["first_difference"] == "2 against 1 lines" and short["rows"] == 2
    summaries = (
        _jsonl(tmp_path / "s1.json", [{"f1": 0.4, "n_pairs": 2}]),
        _jsonl(tmp_path / "s2.json", [{"f1": 0.4, "n_pairs": 2, "extra": 1}]),
    )
    found = scaling.compare_outputs(one, one, summaries)
    assert found["same"] and not found["summary_same"]
    assert found["summary_first_difference"] == ".: keys ['extra'] differ"


def test_scaling_json_gap_by_hand():
    assert scaling.json_gap({"p": [0.1, 1]}, {"p": [0.1000005, 1]}) == pytest.approx(5e-7)
    assert scaling.json_gap(2, 2.0) == 0.0  # a float on one side: compared as numbers
    for a, b, where in [
        ({"p": [1, 2]}, {"p": [1]}, ".p: 2 against 1 items"),
        ([True], [1.0], "[0]: a boolean against a number"),
        ({"s": None}, {"s": "x"}, ".s: values differ"),
    ]:
        with pytest.raises(scaling.OutputsDiffer) as error:
            scaling.json_gap(a, b)
        assert str(error.value) == where
    assert scaling._pairs_per_process("x\n  judged by 2 processes: 10 + 9 pairs\n") == [10, 9]
    assert scaling._pairs_per_process("edit-F1 on 20 pair(s)") is None


def test_timed_judges_answer_as_the_judges_they_wrap(theme_judge_cls):
    from editf1.judges import ContentJudge, ThemeJudge, load_content_judge

    content = benchlib.timed_judge(load_content_judge("exact"))
    theme = benchlib.timed_judge(theme_judge_cls({"Rest today.": "Medical planning instruction"}))
    assert isinstance(content, ContentJudge) and isinstance(theme, ThemeJudge)
    scorer = EditF1Scorer(content_judge=content, theme_judge=theme, zero_division=0.0)
    result = scorer.score([p for p, _ in PAIRS], [r for _, r in PAIRS])
    assert result.expected_matches == 3 and content.fingerprint == "exact-sentence-match"
    assert theme.classified[0] == "Rest today." and len(theme.classified) == len(
        set(theme.classified)
    )


class _FakeSentenceTransformer:
    """Deterministic 384-dimensional unit vectors per text, no model."""

    max_seq_length = 256

    def tokenizer(self, texts, **kwargs):  # one word piece per word: nothing is truncated
        return {"input_ids": [t.split() for t in texts]}

    def get_sentence_embedding_dimension(self) -> int:
        return 384

    def encode(self, texts, **kwargs):  # as SentenceEncoder asks: output_value=None
        import torch

        out = np.stack([np.random.default_rng(sum(map(ord, t))).normal(size=384) for t in texts])
        vectors = torch.from_numpy(
            (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)
        )
        return [
            {"attention_mask": torch.ones(1), "token_embeddings": v[None], "sentence_embedding": v}
            for v in vectors
        ]


def test_padded_positions_count_each_batch_at_its_longest_text():
    from editf1.judges.encoder import SentenceEncoder

    def tokenizer(texts, truncation=False, max_length=None):  # one piece per word
        return {"input_ids": [t.split()[:max_length] for t in texts]}

    # batch 1: 3 and 1 words -> 2 x 3; batch 2: 6 words cut to 4 -> 1 x 4; empty batch: 0
    batches = [["a b c", "a"], ["a b c d e f"], []]
    assert speed._padded_tokens(tokenizer, batches, max_length=4) == 6 + 4
    # the encoder's batches as the timed model saw them: one call per batch, longest first
    timed = benchlib.TimedModel(_FakeSentenceTransformer())
    SentenceEncoder(timed, "fake", batch_size=2).encode(["a", "a b c", "a b", "a b c d"])
    assert timed.batches == [["a b c d", "a b c"], ["a b", "a"]]
    assert speed._padded_tokens(timed.tokenizer, timed.batches, 256) == 2 * 4 + 2 * 2


def test_memory_children_are_one_process_per_metric(monkeypatch, tmp_path):
    """speed.py's peak-memory children: edit-F1, then BERTScore, each in a process of its
    own, reported under its own key."""
    commands = []

    def run_measured(command, log):
        commands.append(command)
        log.write_text(json.dumps({"peak_rss_mb": 100.0 * len(commands)}) + "\n")
        return {"returncode": 0, "wall_s": 1.0}

    monkeypatch.setattr(speed.benchlib, "run_measured", run_measured)
    out = speed._memory(tmp_path, 64, tmp_path)
    assert list(out) == ["editf1", "bertscore"]
    assert [c[c.index("--child") + 1] for c in commands] == ["editf1", "bertscore"]
    assert [out[name]["peak_rss_mb"] for name in out] == [100.0, 200.0]


def test_a_second_system_encodes_and_classifies_no_reference_again():
    model = _FakeSentenceTransformer()
    splitter = SentenceSplitter()
    second = speed._second_system(
        model, [p for p, _ in PAIRS], [r for _, r in PAIRS], splitter, repeats=1
    )
    run = second["repeats"][0]
    assert second["distinct_reference_sentences"] == 5
    assert run["reference_texts_encoded_a"] == 5 and run["reference_texts_encoded_b"] == 0
    assert run["reference_sentences_classified_a"] == 5
    assert run["reference_sentences_classified_b"] == 0
    assert run["texts_encoded_b"] > 0  # the new drafts' sentences and spans
    scorer, timed = benchlib.fresh_scorer(model)
    scorer.score(["Rest today."], ["Rest today."])
    assert timed.texts == ["Rest today."]


def test_peak_memory_of_a_child_process(tmp_path):
    measured = benchlib.run_measured([sys.executable, "-c", "print('hi')"], tmp_path / "log")
    assert measured["returncode"] == 0 and measured["peak_rss_mb"] > 0
    assert (tmp_path / "log").read_text() == "hi\n"


def test_scripts_exit_with_a_clear_message_without_data(tmp_path):
    with pytest.raises(SystemExit, match="--data-dir"):
        benchlib.oncqa_rows_or_exit(tmp_path, "own_reply")


def _tiny_judge_args(tiny, **options) -> argparse.Namespace:
    """benchmarks/llm_judge.py's arguments for the tiny model, CPU, batches of 4."""
    defaults = {
        "base": str(tiny),
        "adapter": None,
        "theme_base": None,
        "theme_adapter": None,
        "skip_theme": False,
        "batch_size": 4,
        "max_new_tokens": 6,
        "device": "cpu",
        "dtype": None,
    }
    return argparse.Namespace(**{**defaults, **options})


@pytest.mark.filterwarnings("ignore::editf1.scorer.UnusableJudgementWarning")
def test_llm_judge_benchmark_on_a_tiny_model(tmp_path):
    pytest.importorskip("peft", reason="the generative judges need the llm extra")
    from editf1.judges.generative.tiny import build_tiny_causal_lm

    llm_judge = _load("llm_judge")
    tiny = build_tiny_causal_lm(tmp_path / "tiny")
    loaded = llm_judge.judges(_tiny_judge_args(tiny))
    rows = [{"prediction": p, "reference": r} for p, r in PAIRS]
    records = llm_judge.measure(loaded, rows, chunk=2, device="cpu", log=lambda m: None)
    assert [r["pairs"] for r in records] == [2, 1]
    assert [r["reference_sentences"] for r in records] == [4, 1]
    summary = llm_judge.summarise(records, list(loaded))
    # both ways decode greedily under the same constraints: the same answers
    assert summary["pairs"] == 3 and summary["same_answers"] == 3
    assert summary["content"]["sentences"] == 5
    # the naive way reads the draft's prompt prefix once per sentence, batched once
    tokens = summary["content"]["prompt_tokens"]
    assert tokens["per_sentence"] > tokens["shared_prefix"] > 0
    statuses = summary["content_answers"]
    assert statuses["matches"] + statuses["no_matches"] + statuses["unusable"] == 5


def test_decision_agreement_counts_by_hand():
    from editf1.segment import Sentence

    def span(start, end):
        return Sentence("x" * (end - start), start, end)

    # pair 1: statuses alike for sentences 1 and 3, both matched there; spans 0-10 and
    # 5-12 overlap, 20-30 and 30-40 only touch; themes (reference, then draft) alike on
    # 2 of 4. Pair 2: answered alike, no theme label at all (not counted).
    decided = [
        (
            [("match", span(0, 10)), ("no_match", None), ("match", span(20, 30))],
            ["Logistics", "Other", "Other"],
            ["Logistics"],
        ),
        ([("unusable", None)], [None], [None]),
    ]
    generated = [
        (
            [("match", span(5, 12)), ("match", span(0, 4)), ("match", span(30, 40))],
            ["Logistics", "Other", "Care coordination"],
            ["Other"],
        ),
        ([("unusable", None)], [None], [None]),
    ]
    assert _load("llm_judge").decision_agreement(decided, generated) == {
        "same_answers": 1,
        "sentences": 4,
        "same_status": 3,
        "both_match": 2,
        "overlapping_spans": 1,
        "themes": 4,
        "same_themes": 2,
    }


def _llm_judge_ways(tmp_path, skip_naive: bool):
    """benchmarks/llm_judge.py's judges on a tiny causal LM with the decision mode
    (and the naive way unless ``skip_naive``), measured on PAIRS two at a time:
    ``(module, judges, records)``."""
    pytest.importorskip("peft", reason="the generative judges need the llm extra")
    from editf1.judges.generative.tiny import build_tiny_causal_lm

    llm_judge = _load("llm_judge")
    tiny = build_tiny_causal_lm(tmp_path / "tiny")
    options = {"skip_naive": skip_naive, "decision": True, "decision_window": None}
    loaded = llm_judge.judges(_tiny_judge_args(tiny, max_new_tokens=None, **options))
    rows = [{"prediction": p, "reference": r} for p, r in PAIRS]
    records = llm_judge.measure(loaded, rows, chunk=2, device="cpu", log=lambda m: None)
    return llm_judge, loaded, records


def _llm_judge_table(llm_judge, summary, loaded, records, ways) -> str:
    """benchmarks/llm_judge.py's markdown of a measured run of the tiny judges."""
    payload = {
        "summary": summary,
        "args": {"setting": "own_reply", "seed": 0, "chunk": 2, "device": "cpu"},
        "judge": {t: by_way["shared_prefix"].fingerprint for t, by_way in loaded.items()},
        "decision_judge": {t: by_way["decision"].fingerprint for t, by_way in loaded.items()},
        "judge_ways": ways,
        "gpu": None,
        "torch_threads": 1,
        "machine_before": benchlib.machine_state(),
        "machine_after": benchlib.machine_state(),
        "records": records,
    }
    return llm_judge._markdown(payload)


@pytest.mark.filterwarnings("ignore::editf1.scorer.UnusableJudgementWarning")
def test_llm_judge_benchmark_runs_the_three_ways_in_one_run_against_the_naive_way(tmp_path):
    llm_judge, loaded, records = _llm_judge_ways(tmp_path, skip_naive=False)
    ways = ["per_sentence", "shared_prefix", "decision"]
    assert [list(by_way) for by_way in loaded.values()] == [ways] * 2
    # the ways alternate chunk by chunk: all three timed on every chunk
    assert all(f"total_{w}_s" in r for r in records for w in ways)
    summary = llm_judge.summarise(records, list(loaded))
    # each way against the naive way: the ratio of summed seconds, per judge and in all
    for task in ("content", "theme", "total"):
        key = "total_{}_s" if task == "total" else task + "_{}_s"
        seconds = {w: sum(r[key.format(w)] for r in records) for w in ways}
        assert summary[task]["speedup_vs_naive"] == pytest.approx(
            {w: seconds["per_sentence"] / seconds[w] for w in ways[1:]}, rel=1e-12
        )
    # the decision mode's answers against the naive judge's, counted from each way's
    # own scorer run on the three pairs
    answers = {}
    for way in ("per_sentence", "decision"):
        scorer = EditF1Scorer(loaded["content"][way], loaded["theme"][way], zero_division=0.0)
        answers[way] = scorer.score([p for p, _ in PAIRS], [r for _, r in PAIRS]).pairs
    aligned = [
        (a, b)
        for x, y in zip(answers["decision"], answers["per_sentence"])
        for a, b in zip(x.alignment, y.alignment)
    ]
    against_naive = summary["decision_vs_naive"]
    assert against_naive["sentences"] == 5
    assert against_naive["same_status"] == sum(a.status == b.status for a, b in aligned)
    # the batched judge answers as the naive one, so both comparisons agree
    assert summary["same_answers"] == 3 and against_naive == summary["decision"]
    table = _llm_judge_table(llm_judge, summary, loaded, records, ways)
    speedup = summary["total"]["speedup_vs_naive"]
    row = (
        f"| speed-up against the naive way, whole scorer call | | 1.0x | "
        f"**{speedup['shared_prefix']:.1f}x** | **{speedup['decision']:.1f}x** |"
    )
    assert row in table
    verdict = "met" if speedup["decision"] >= 10 else "missed"
    assert f"decision scoring {speedup['decision']:.1f}x its speed (target >= 10x: {verdict})" in (
        table
    )


@pytest.mark.filterwarnings("ignore::editf1.scorer.UnusableJudgementWarning")
def test_llm_judge_benchmark_times_the_decision_mode(tmp_path):
    llm_judge, loaded, records = _llm_judge_ways(tmp_path, skip_naive=True)
    assert [list(by_way) for by_way in loaded.values()] == [["shared_prefix", "decision"]] * 2
    assert "mode=decision" in loaded["content"]["decision"].fingerprint
    summary = llm_judge.summarise(records, list(loaded))
    d = summary["decision"]
    # the same counts, worked out here from each way's own scorer run on all three pairs
    answers = {}
    for way in ("shared_prefix", "decision"):
        scorer = EditF1Scorer(loaded["content"][way], loaded["theme"][way], zero_division=0.0)
        answers[way] = scorer.score([p for p, _ in PAIRS], [r for _, r in PAIRS]).pairs
    pairs = list(zip(answers["decision"], answers["shared_prefix"]))
    aligned = [(a, b) for x, y in pairs for a, b in zip(x.alignment, y.alignment)]
    both = [(a.match, b.match) for a, b in aligned if a.status == b.status == "match"]

    def said(pair):  # content answers, then theme labels of reference and draft sentences
        return [(s.status, s.match) for s in pair.alignment], [
            *(s.theme for s in pair.alignment),
            *pair.prediction_sentence_themes,
        ]

    labels = [(a, b) for x, y in pairs for a, b in zip(said(x)[1], said(y)[1])]
    assert d == {
        "same_answers": sum(said(x) == said(y) for x, y in pairs),
        "sentences": 5,
        "same_status": sum(a.status == b.status for a, b in aligned),
        "both_match": len(both),
        "overlapping_spans": sum(a.start < b.end and b.start < a.end for a, b in both),
        # 5 reference sentences and 6 draft sentences, each labelled by both ways
        "themes": 11,
        "same_themes": sum(a == b for a, b in labels),
    }
    # the speed-up is the ratio of the two ways' summed scorer-call seconds
    total = {w: sum(r[f"total_{w}_s"] for r in records) for w in ("shared_prefix", "decision")}
    speedup = summary["total"]["decision_speedup_vs_shared_prefix"]
    assert speedup == pytest.approx(total["shared_prefix"] / total["decision"], rel=1e-12)
    assert summary["total"]["decision_seconds_per_pair"] == pytest.approx(total["decision"] / 3)
    assert "decision_speedup_vs_per_sentence" not in summary["total"]
    table = _llm_judge_table(llm_judge, summary, loaded, records, ["shared_prefix", "decision"])
    assert "decision scoring (no generation)" in table
    assert f"{d['same_status']}/5 reference sentences with the same decision" in table


def test_ppi_simulation_figures_on_hand_made_counts():
    simulation = _load("ppi_simulation")
    # 10 pairs (EM, ED, EA), a judge equal to the gold labels: the judge-only bias is 0
    gold = [[1, 1, 0], [0, 2, 1], [2, 0, 0], [1, 1, 1], [0, 1, 2]] * 2
    data = {"metrics": ["precision", "recall"], "judge": gold, "gold": gold}
    out = simulation.simulate(data, sizes=[4, 9, 20], draws=30, seed=0)
    precision = out["metrics"]["precision"]
    assert precision["all_gold"] == pytest.approx(8 / 18)  # EM 8, ED 10
    assert precision["judge_only_bias"] == pytest.approx(0.0, abs=1e-12)
    assert list(precision["sizes"]) == ["4"]  # n must leave 2 pairs unlabelled
    sizes = precision["sizes"]["4"]
    assert sizes["gold_only"]["width_vs_gold_only"] == 1.0
    assert 0 <= sizes["mean_lam"] <= 1
    for name in simulation.ESTIMATORS:
        assert 0 <= sizes[name]["coverage"] <= 1 and sizes[name]["rmse"] >= 0
    # the same seed draws the same samples
    again = simulation.simulate(data, sizes=[4], draws=30, seed=0)
    assert again["metrics"] == out["metrics"]
