"""The tables of ``docs/gold-labels.md`` and ``docs/training.md``, written from their
results files (:mod:`research.docs_tables` puts them between their markers): the
prediction-powered simulation and the drafting baselines."""

from __future__ import annotations

import json

from research.docs_figures import RESULTS, absent, ci, load, markdown_table

#: The two sets of the example draw: the paper's setting and the edited drafts.
EXAMPLE_SETS = ("OncQA", "OncQA: edited reply vs the GPT-4 draft")


def _f1_or_first(metrics: dict) -> tuple[str, dict]:
    """The simulation's content F1, or its only metric where F1 is not defined."""
    name = "f1" if "f1" in metrics else next(iter(metrics))
    return name, metrics[name]


def ppi_example() -> str:
    """One draw: all-gold, judge-only, gold-only and prediction-powered content F1."""
    p = load("ppi_simulation")
    if p is None:
        return absent("ppi_simulation", "python benchmarks/ppi_simulation.py")
    sets = [(name, p["sets"][name]) for name in EXAMPLE_SETS if name in p["sets"]]
    f1 = [entry["simulation"]["metrics"]["f1"] for _, entry in sets]
    draw = f1[0]["example_draw"]
    n, rest = draw["ppi_tuned"]["n"], draw["ppi_tuned"]["n_unlabelled"]
    rows = [
        ["all-gold (the team's labels of every pair)", *(f"{m['all_gold']:.3f}" for m in f1)],
        ["judge only", *(ci(m["judge_only"]) for m in f1)],
        [f"gold only ({n} labelled pairs)", *(ci(m["example_draw"]["gold_only"]) for m in f1)],
        [
            f"prediction-powered ({n} labelled + {rest} judge-only)",
            *(ci(m["example_draw"]["ppi_tuned"]) for m in f1),
        ],
    ]
    header = [
        "content F1 [95% CI]",
        *(f"{name} ({e['simulation']['n_pairs']} pairs)" for name, e in sets),
    ]
    return markdown_table(header, rows)


def ppi_coverage() -> str:
    """Over the draws: coverage of the all-gold value, width against gold-only, bias."""
    p = load("ppi_simulation")
    if p is None:
        return absent("ppi_simulation", "python benchmarks/ppi_simulation.py")
    rows = []
    for name, entry in p["sets"].items():
        metric, m = _f1_or_first(entry["simulation"]["metrics"])
        for k, (n, sizes) in enumerate(m["sizes"].items()):
            first = k == 0
            rows.append(
                [
                    f"{name} ({entry['simulation']['n_pairs']})" if first else "",
                    metric if first else "",
                    f"{m['all_gold']:.3f}" if first else "",
                    f"{m['judge_only']['value']:.3f}" if first else "",
                    n,
                    f"{sizes['gold_only']['coverage']:.3f}",
                    f"{sizes['ppi_tuned']['coverage']:.3f}",
                    f"{sizes['ppi_tuned_normal']['coverage']:.3f}",
                    f"{sizes['ppi_lam1']['coverage']:.3f}",
                    f"{sizes['ppi_tuned']['width_vs_gold_only']:.2f}",
                    f"{sizes['ppi_tuned']['bias']:+.3f}",
                ]
            )
    header = [
        "set (pairs)",
        "figure",
        "all-gold",
        "judge only",
        "n labelled",
        "coverage: gold only",
        "prediction-powered",
        "the same, normal interval",
        "plain PPI (lam = 1)",
        "width / gold-only",
        "bias",
    ]
    return markdown_table(header, rows)


def ppi_coverage_range() -> str:
    """The range of the prediction-powered interval's coverage over every set, figure
    and n, and the lowest coverage of the gold labels alone (a phrase)."""
    p = load("ppi_simulation")
    sizes = [
        (name, metric, n, s)
        for name, entry in p["sets"].items()
        for metric, figure in entry["simulation"]["metrics"].items()
        for n, s in figure["sizes"].items()
    ]
    ppi = [s["ppi_tuned"]["coverage"] for *_, s in sizes]
    name, metric, n, s = min(sizes, key=lambda found: found[3]["gold_only"]["coverage"])
    return (
        f"{min(ppi):.3f} to {max(ppi):.3f} of the draws; the gold labels alone cover in as "
        f"few as {s['gold_only']['coverage']:.3f} ({name}, {metric}, {n} labelled pairs)"
    )


def ppi_draws() -> str:
    """How many draws per n the simulation made (a phrase)."""
    p = load("ppi_simulation")
    return f"{p['draws']:,} draws per n (seed {p['seed']})"


def drafting() -> str:
    """edit-f1 draft's strategies with SmolLM2-135M on OncQA, scored by the default judges."""
    folder = RESULTS / "drafting_oncqa"
    summaries = sorted(folder.glob("*.summary.json"))
    if not summaries:
        return absent("drafting_oncqa/*.summary", "research/drafting_oncqa.sh")
    rows = []
    for path in summaries:
        s = json.loads(path.read_text("utf-8"))
        rows.append(
            [
                path.name.removesuffix(".summary.json"),
                *(f"{s[k]:.3f}" for k in ("precision", "recall", "f1")),
                *(s[k] for k in ("expected_matches", "expected_additions", "expected_deletions")),
                f"{s['theme_f1']:.3f}",
            ]
        )
    header = ["strategy", "content P", "content R", "content F1", "EM", "EA", "ED", "theme F1"]
    return markdown_table(header, rows)


#: Table name -> its function.
GOLD_TABLES = {"ppi-example": ppi_example, "ppi-coverage": ppi_coverage, "drafting": drafting}
#: Figure name -> its function.
GOLD_FIGURES = {"ppi-coverage-range": ppi_coverage_range, "ppi-draws": ppi_draws}
