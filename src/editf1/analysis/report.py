"""``edit-f1 report``: HTML and Markdown reports with plots from scored runs.

From one or more runs of ``edit-f1 score`` (:func:`editf1.analysis.compare.load_run`) the report
shows, per system: corpus content- and theme-level precision/recall/F1 with case-level
bootstrap 95% CIs; per-theme F1 bars (Seegmiller et al., arXiv 2601.11344, Table 15);
the share of responses containing each theme, systems beside the clinicians (Table 5);
per-theme content recall (Table 14); histograms of per-pair F1; and, for every two
runs scored against the same references, the paired bootstrap difference in edit-F1
with its 95% CI and p-value (:func:`editf1.analysis.compare.compare_all`); where both
runs were scored with clinicians' gold labels of the same pairs (``edit-f1 score
--gold``), the prediction-powered (PPI++) CI of the difference
(:func:`editf1.analysis.compare.compare_with_gold`).

Plots use matplotlib's object API (no global pyplot state); needs the ``report``
extra (``pip install "edit-f1[report]"``).
"""

from __future__ import annotations

import base64
import importlib.metadata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from editf1.analysis.compare import (
    PairedDifference,
    ScoredRun,
    compare_all,
    compare_with_gold,
    corpus_estimates,
    reference_mismatch,
)
from editf1.io import staged_folder
from editf1.stats import check_n_resamples
from editf1.themes import THEMES

__all__ = ["ReportFiles", "write_report"]

_COLORS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3")
_CLINICIAN_COLOR = "#333333"


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote: ``html``, ``markdown`` and the PNG ``figures``."""

    html: Path
    markdown: Path
    figures: tuple[Path, ...]


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def _ci(estimate) -> str:
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 else "< 0.0001"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def _grouped_barh(ax, labels: Sequence[str], series: list[tuple[str, Sequence[float], str]]):
    """Horizontal grouped bars: one group per label, one bar per series (top to bottom)."""
    y = np.arange(len(labels))
    height = 0.8 / len(series)
    for k, (name, values, color) in enumerate(series):
        offsets = y - 0.4 + height * (k + 0.5)
        ax.barh(offsets, values, height=height, label=name, color=color)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.figure.legend(loc="outside lower center", ncols=min(len(series), 4), fontsize=8)
    ax.grid(axis="x", alpha=0.3)


def _judges_of(run) -> dict[str, str]:
    """The ``content:`` and ``theme:`` parts of a run's reproducibility string (empty
    when the run was loaded without its summary)."""
    parts = (p.split(":", 1) for p in run.result.reproducibility.split("|") if ":" in p)
    return {k: v for k, v in parts if k in ("content", "theme")}


def _judge_notes(runs, differences) -> list[str]:
    """A note for each compared pair of runs whose summaries name different judges:
    their difference mixes the systems with the judges."""
    by_name = {run.name: run for run in runs}
    notes = []
    for baseline, system in dict.fromkeys((d.baseline, d.system) for d in differences):
        ours, theirs = _judges_of(by_name[baseline]), _judges_of(by_name[system])
        differ = sorted(k for k in ours.keys() & theirs.keys() if ours[k] != theirs[k])
        if differ:
            notes.append(
                f"{baseline} and {system} were scored by different {' and '.join(differ)} "
                "judges (see their reproducibility strings): their difference is the "
                "systems' and the judges' together."
            )
    return notes


def _scored_themes(runs) -> list[str]:
    """The themes any run scores, in :data:`~editf1.themes.THEMES` order (a run scored
    with ``include_other`` adds Other; the others have no figure for it)."""
    return [t for t in THEMES if any(t in run.result.per_theme for run in runs)]


def _theme_value(run, theme: str, value) -> float:
    """``value(per-theme score)`` of ``run``, or NaN (no bar, "–") for a theme it does
    not score."""
    score = run.result.per_theme.get(theme)
    return float("nan") if score is None else value(score)


def _plot_per_theme_f1(runs, path: Path) -> None:
    themes = _scored_themes(runs)
    fig = _figure(8, 0.55 * len(themes) + 1.5)
    ax = fig.add_subplot()
    series = [
        (
            run.name,
            [_theme_value(run, t, lambda s: s.f1) for t in themes],
            _COLORS[k % len(_COLORS)],
        )
        for k, run in enumerate(runs)
    ]
    _grouped_barh(ax, themes, series)
    ax.set_xlim(0, 1)
    ax.set_xlabel("theme F1 (draft has theme → reply has theme)")
    ax.set_title("Per-theme F1 (Table 15 view)")
    fig.savefig(path)


def _clinician_series(runs) -> list[tuple[str, ScoredRun]]:
    """One 'Clinicians' series when all runs share references, else one per run."""
    if all(reference_mismatch(runs[0], other) is None for other in runs[1:]):
        return [("Clinicians", runs[0])]
    return [(f"Clinicians ({run.name})", run) for run in runs]


def _plot_theme_proportions(runs, path: Path) -> None:
    themes = _scored_themes(runs)
    fig = _figure(8, 0.6 * len(themes) + 1.5)
    ax = fig.add_subplot()
    clinicians = _clinician_series(runs)
    shades = np.linspace(0.2, 0.55, len(clinicians))
    series = [
        (
            name,
            [_theme_value(run, t, lambda s: 100 * s.reference_proportion) for t in themes],
            _CLINICIAN_COLOR if len(clinicians) == 1 else str(shade),
        )
        for (name, run), shade in zip(clinicians, shades)
    ]
    series += [
        (
            run.name,
            [_theme_value(run, t, lambda s: 100 * s.prediction_proportion) for t in themes],
            _COLORS[k % len(_COLORS)],
        )
        for k, run in enumerate(runs)
    ]
    _grouped_barh(ax, themes, series)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of responses containing the theme")
    ax.set_title("Theme proportions: systems beside clinicians (Table 5 view)")
    fig.savefig(path)


def _plot_histograms(runs, path: Path) -> None:
    panels = [("content edit-F1 per pair", lambda p: p.content.f1)]
    if all(run.has_themes for run in runs):
        panels.append(("theme edit-F1 per pair", lambda p: p.theme.f1))
    fig = _figure(5 * len(panels), 3.6)
    bins = np.linspace(0, 1, 11)
    for k, (label, value) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1)
        ax.hist(
            [[value(p) for p in run.pairs] for run in runs],
            bins=bins,
            label=[run.name for run in runs],
            color=[_COLORS[i % len(_COLORS)] for i in range(len(runs))],
        )
        ax.set_xlabel(label)
        ax.set_ylabel("pairs")
        ax.set_xlim(0, 1)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Distribution of per-pair F1")
    fig.savefig(path)


def _gold_blocks(runs, confidence: float) -> list[tuple]:
    """The prediction-powered comparisons of every two runs scored with gold labels."""
    if sum(bool(run.gold) for run in runs) < 2:
        return []
    rows, notes = [], []
    for i, baseline in enumerate(runs):
        for system in runs[i + 1 :]:
            found, reason = compare_with_gold(baseline, system, confidence=confidence)
            if reason:
                notes.append(("p", f"No prediction-powered comparison of {baseline.name} and "
                                   f"{system.name}: {reason}."))  # fmt: skip
            rows += [
                [d.baseline, d.system, d.metric, _fmt(d.judge_only), _ci(d.gold_only),
                 _ci(d.difference), f"{d.difference.lam:.2f}", f"{d.n_labelled} of {d.n_pairs}"]
                for d in found
            ]  # fmt: skip
    blocks = [("h2", "Prediction-powered comparisons (gold labels)")]
    if rows:
        header = ["baseline", "system", "metric", "judge only", "gold only [95% CI]",
                  "prediction-powered [95% CI]", "lam", "labelled pairs"]  # fmt: skip
        blocks += [
            ("table", header, rows),
            (
                "p",
                "system − baseline. Judge only: the judge's difference over all pairs, "
                "uncorrected. Gold only: the labelled pairs' gold counts alone. "
                "Prediction-powered (PPI++, Angelopoulos, Duchi & Zrnic 2023): the judge's "
                "counts on every pair corrected by the gold labels, power-tuned by lam; "
                "valid whatever the judge's errors, given a uniform random sample of "
                "labelled pairs. Delta-method CIs.",
            ),
        ]
    return blocks + notes


def _blocks(runs, estimates, differences, skipped, figures, options) -> list[tuple]:
    """The report as a list of blocks, rendered to Markdown and HTML alike."""
    blocks: list[tuple] = [("h1", options["title"])]
    blocks.append(
        (
            "p",
            f"{len(runs)} scored run(s). Corpus figures are micro-averaged (counts summed "
            "over pairs, then divided; Seegmiller et al. 2026, §3). Brackets hold "
            f"{options['confidence']:.0%} percentile bootstrap CIs over "
            f"{options['case_note']}, {options['n_resamples']} resamples, seed "
            f"{options['seed']}.",
        )
    )
    themes = all(run.has_themes for run in runs)
    header = ["system", "pairs", "precision", "recall", "edit-F1", "EM", "EA", "ED"]
    if themes:
        header += ["theme precision", "theme recall", "theme edit-F1"]
    header.append("unusable judge outputs")
    rows = []
    for run in runs:
        r, e = run.result, estimates[run.name]
        row = [run.name, str(r.n_pairs), _ci(e["precision"]), _ci(e["recall"]), _ci(e["f1"])]
        row += [str(r.expected_matches), str(r.expected_additions), str(r.expected_deletions)]
        if themes:
            row += [_ci(e["theme_precision"]), _ci(e["theme_recall"]), _ci(e["theme_f1"])]
        row.append(str(r.unusable_judgements + r.unusable_theme_judgements))
        rows.append(row)
    blocks += [("h2", "Systems"), ("table", header, rows)]
    blocks.append(
        (
            "p",
            "EM: expected matches (reply sentences the draft already says), EA: expected "
            "additions (reply sentences missing from the draft), ED: expected deletions "
            "(draft sentences the clinician would remove). precision = EM/(EM+ED), "
            "recall = EM/(EM+EA).",
        )
    )
    if len(runs) > 1:
        blocks.append(("h2", "Paired comparisons (same references)"))
        if differences:
            blocks.append(
                (
                    "table",
                    ["baseline", "system", "metric", "baseline value", "system value",
                     "difference (system − baseline) [95% CI]", "p-value", "pairs", "cases"],
                    [
                        [d.baseline, d.system, d.metric, _fmt(d.baseline_value),
                         _fmt(d.system_value), _ci(d.difference), _p(d.p_value),
                         str(d.difference.n), str(d.n_cases)]
                        for d in differences
                    ],
                )
            )  # fmt: skip
            blocks.append(
                (
                    "p",
                    "Each bootstrap resample draws the same cases for both systems. The "
                    "p-value is two-sided, 2·min(P(d* ≤ 0), P(d* ≥ 0)) over the B "
                    "resampled differences d*; it is below 0.05 exactly when the 95% CI "
                    "excludes 0. Such a difference is unlikely to come from which messages "
                    "happened to be sampled; it says nothing about judge error.",
                )
            )
        for note in _judge_notes(runs, differences):
            blocks.append(("p", note))
        for baseline, system, reason in skipped:
            blocks.append(("p", f"Not compared, {baseline} and {system}: {reason}."))
        blocks += _gold_blocks(runs, options["confidence"])
    for name, caption in figures:
        blocks.append(("figure", name, caption))
    if themes:
        per_theme_header = ["theme"]
        clinicians = _clinician_series(runs)
        per_theme_header += [f"{name} % replies" for name, _ in clinicians]
        for run in runs:
            per_theme_header += [f"{run.name} F1", f"{run.name} % drafts", f"{run.name} recall"]
        per_theme_rows = []
        for theme in _scored_themes(runs):
            row = [theme]
            for _, run in clinicians:
                s = run.result.per_theme.get(theme)
                row.append("–" if s is None else f"{100 * s.reference_proportion:.1f}")
            for run in runs:
                s = run.result.per_theme.get(theme)
                row += (
                    ["–"] * 3
                    if s is None
                    else [
                        "–" if s.reference_count == s.prediction_count == 0 else _fmt(s.f1),
                        f"{100 * s.prediction_proportion:.1f}",
                        "–" if s.reference_sentences == 0 else _fmt(s.content_recall),
                    ]
                )
            per_theme_rows.append(row)
        blocks += [
            ("h2", "Per theme"),
            (
                "p",
                "F1: theme edit-F1 (Table 15). % replies / % drafts: share of responses "
                "containing the theme (Table 5). recall: content recall of the reply "
                "sentences of this theme, matched / all (Table 14). –: no reply or draft "
                "has the theme (F1), no reply sentence has it (recall).",
            ),
            ("table", per_theme_header, per_theme_rows),
        ]
    blocks.append(("h2", "Reproducibility"))
    blocks.append(
        (
            "table",
            ["system", "per-row file", "judges, options and versions"],
            [[run.name, str(run.path or ""), run.result.reproducibility] for run in runs],
        )
    )
    blocks.append(("p", f"Report written by edit-f1 {options['version']}."))
    return blocks


def _markdown(blocks) -> str:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = []
    for kind, *rest in blocks:
        if kind == "h1":
            out.append(f"# {rest[0]}")
        elif kind == "h2":
            out.append(f"## {rest[0]}")
        elif kind == "p":
            out.append(rest[0])
        elif kind == "table":
            header, rows = rest
            out.append("| " + " | ".join(map(cell, header)) + " |")
            out.append("|" + "---|" * len(header))
            out += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
        elif kind == "figure":
            name, caption = rest
            out.append(f"![{caption}]({name})\n\n*{caption}*")
        out.append("")
    return "\n".join(out)


def _html(blocks, folder: Path) -> str:
    """The self-contained HTML page of ``blocks`` (figures embedded as base64 PNGs),
    rendered from ``templates/report.html`` by jinja2 with autoescaping."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("editf1.analysis", "templates"),
        autoescape=True,
        keep_trailing_newline=True,
    )
    page = []
    for kind, *rest in blocks:
        if kind == "table":
            page.append({"kind": kind, "header": rest[0], "rows": rest[1]})
        elif kind == "figure":
            name, caption = rest
            png = base64.b64encode((folder / name).read_bytes()).decode("ascii")
            page.append({"kind": kind, "png": png, "caption": caption})
        else:
            page.append({"kind": kind, "text": rest[0]})
    title = next(block["text"] for block in page if block["kind"] == "h1")
    return environment.get_template("report.html").render(title=title, blocks=page)


def write_report(
    runs: Sequence[ScoredRun],
    output_dir: str | Path,
    *,
    title: str = "edit-F1 report",
    cases: Callable[[str], str] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    protect: Iterable[str | Path] = (),
) -> ReportFiles:
    """Write ``report.html`` (self-contained, figures embedded), ``report.md`` and PNGs.

    Args:
        runs: one or more runs (:func:`editf1.analysis.compare.load_run`), with distinct names.
        output_dir: folder to write (created if missing). The report's files are
            written beside it first and replace those of the same names only once all
            are written (:func:`editf1.io.staged_folder`); other files in it are kept.
        title: the report's title.
        cases: pair key -> case for the bootstrap (:func:`editf1.analysis.compare.case_pattern`);
            default: every pair is its own case.
        n_resamples, confidence, seed: bootstrap settings (the same seed gives the same
            report).
        protect: inputs (the runs' files, their summaries) that a report file may not
            replace.

    Returns:
        :class:`ReportFiles`.

    Raises:
        ValueError: for no runs or repeated names, an ``output_dir`` that is a file, a
            report file that would replace a file in ``protect``, or too few
            ``n_resamples`` (:func:`editf1.stats.check_n_resamples`).
        ImportError: if matplotlib is not installed (the ``report`` extra).
    """
    check_n_resamples(n_resamples, confidence)
    if not runs:
        raise ValueError("a report needs at least one scored run")
    names = [run.name for run in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"runs need distinct names, got {names}; pass a name per run")
    folder = Path(output_dir)
    boot = {"cases": cases, "n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    estimates = {run.name: corpus_estimates(run, **boot) for run in runs}
    differences: list[PairedDifference]
    differences, skipped = compare_all(runs, **boot) if len(runs) > 1 else ([], [])
    figures = []
    if all(run.has_themes for run in runs):
        figures += [
            ("per_theme_f1.png", "Per-theme F1 of each system (Table 15 view)"),
            (
                "theme_proportions.png",
                "Share of responses containing each theme: clinicians' replies beside "
                "each system's drafts (Table 5 view)",
            ),
        ]
    figures.append(("per_pair_f1.png", "Histograms of per-pair content and theme edit-F1"))
    options = {
        "title": title,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        "case_note": "cases (pairs of one case drawn together)" if cases else "pairs",
        "version": importlib.metadata.version("edit-f1"),
    }
    blocks = _blocks(runs, estimates, differences, skipped, figures, options)
    if not all(run.has_themes for run in runs):
        blocks.insert(
            2, ("p", "Theme figures are omitted: a run was scored without a theme judge.")
        )
    with staged_folder(folder, protect=protect) as stage:
        if all(run.has_themes for run in runs):
            _plot_per_theme_f1(runs, stage / "per_theme_f1.png")
            _plot_theme_proportions(runs, stage / "theme_proportions.png")
        _plot_histograms(runs, stage / "per_pair_f1.png")
        (stage / "report.md").write_text(_markdown(blocks), encoding="utf-8")
        (stage / "report.html").write_text(_html(blocks, stage), encoding="utf-8")
    return ReportFiles(
        folder / "report.html", folder / "report.md", tuple(folder / n for n, _ in figures)
    )
