"""``edit-f1 report``: HTML and Markdown reports with plots from scored runs
(:func:`editf1.analysis.compare.load_run`); what it shows is listed in docs/report.md.
Plots (:mod:`editf1.analysis.figures`) need the ``report`` extra.
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from editf1.analysis.compare import (
    PairedDifference,
    ScoredRun,
    compare_all,
    corpus_estimates,
    reference_mismatch,
)
from editf1.analysis.figures import (
    clinician_series,
    defined_f1,
    draw_bars,
    per_pair_histograms,
    per_theme_f1_bars,
    scored_themes,
    theme_proportion_bars,
)
from editf1.analysis.gold_compare import compare_with_gold
from editf1.analysis.pairs import PairAlignment, differing_pairs
from editf1.io import staged_folder
from editf1.stats import check_n_resamples

__all__ = ["ReportFiles", "write_report"]


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote: ``html``, ``markdown`` and the PNG ``figures``."""

    html: Path
    markdown: Path
    figures: tuple[Path, ...]


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 else "< 0.0001"


def _judges_of(run) -> dict[str, str]:
    """The fingerprints of a run's ``content`` and ``theme`` judges, from its run record."""
    record = run.provenance
    if not record:
        return {}
    theme = record["theme_judge"]
    return {
        "content": record["content_judge"]["fingerprint"],
        "theme": "none" if theme is None else theme["fingerprint"],
    }


def _judge_cell(judge: dict | None) -> str:
    if judge is None:
        return "none"
    given = judge.get("options")
    options = ", ".join(
        f"{k}={json.dumps(v)}" for k, v in (given.items() if isinstance(given, dict) else ())
    )
    return (
        f"{judge.get('name', 'unnamed')} (fingerprint {judge['fingerprint']}"
        f"{'; options ' + options if options else ''})"
    )


def _provenance_cells(run) -> list[str]:
    """The content judge, theme judge, scoring options and versions of a run's record."""
    record = run.provenance
    if not record:
        return [
            "not recorded (no run record in the lines, no summary given)",
            *["not recorded"] * 3,
        ]
    return [
        _judge_cell(record["content_judge"]),
        _judge_cell(record["theme_judge"]),
        ", ".join(f"{k}: {v}" for k, v in record["options"].items()),
        ", ".join(f"{k} {v}" for k, v in record["versions"].items()),
    ]


def _judge_notes(runs, differences) -> list[str]:
    """A note for each two runs compared whose records name different judges."""
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


def _gold_blocks(runs, confidence: float) -> list[tuple]:
    if sum(bool(run.gold) for run in runs) < 2:
        return []
    rows, notes = [], []
    for baseline, system in combinations(runs, 2):
        found, reason = compare_with_gold(baseline, system, confidence=confidence)
        if reason:
            notes.append(("p", f"No prediction-powered comparison of {baseline.name} and "
                               f"{system.name}: {reason}."))  # fmt: skip
        rows += [
            [d.baseline, d.system, d.metric, _fmt(d.judge_only), str(d.gold_only),
             str(d.difference), f"{d.difference.lam:.2f}", f"{d.n_labelled} of {d.n_pairs}"]
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


def _alignment_cells(view: PairAlignment) -> list:
    """One system's column of a pair's table: F1 and counts, matches, additions, deletions."""
    em, ea, ed = view.counts
    score = f"{view.f1:.3f} (EM {em}, EA {ea}, ED {ed})"
    if view.reply is not None:
        score += f", against reply {view.reply + 1}"
    return [
        score,
        list(view.matches),
        [f"{text} ({note})" if note else text for text, note in view.additions],
        list(view.deletions),
    ]


def _pair_blocks(contrasts) -> list[tuple]:
    """The section of the pairs that differ most (HTML only: it quotes the texts)."""
    if not contrasts:
        return []
    blocks = [
        ("h2", "Pairs that differ most"),
        (
            "p",
            "For each two systems scored against the same references, the pairs whose "
            "content edit-F1 differs most, largest difference first, with each system's "
            "alignment. Matched: a reply sentence and the draft span the content judge "
            "matched it to. Expected additions: reply sentences the draft lacks. Expected "
            "deletions: draft sentences left over. This part quotes the texts of the "
            "pairs, and is in report.html only.",
        ),
    ]
    labels = [
        "edit-F1 of the pair",
        "matched: reply sentence → draft span",
        "expected additions (reply sentences the draft lacks)",
        "expected deletions (draft sentences left over)",
    ]
    for baseline, system, found, differing, n_pairs in contrasts:
        summary = (
            f"{system} against {baseline}: {differing} of {n_pairs} pairs differ in content "
            f"edit-F1; the {len(found)} that differ most."
        )
        pairs = [
            {
                "heading": f"{c.key}: edit-F1 {c.baseline.f1:.3f} ({baseline}) and "
                f"{c.system.f1:.3f} ({system}), difference {c.difference:+.3f}",
                "header": ["", baseline, system],
                "rows": [
                    {"label": label, "cells": cells}
                    for label, *cells in zip(
                        labels, _alignment_cells(c.baseline), _alignment_cells(c.system)
                    )
                ],
            }
            for c in found
        ]
        blocks.append(("pairs", summary, pairs))
    return blocks


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
    if not themes:
        blocks.append(("p", "Theme figures are omitted: a run was scored without a theme judge."))
    header = ["system", "pairs", "precision", "recall", "edit-F1", "EM", "EA", "ED"]
    if themes:
        header += ["theme precision", "theme recall", "theme edit-F1"]
    header.append("unusable judge outputs")
    rows = []
    for run in runs:
        r, e = run.result, estimates[run.name]
        row = [run.name, str(r.n_pairs), str(e["precision"]), str(e["recall"]), str(e["f1"])]
        row += [str(r.expected_matches), str(r.expected_additions), str(r.expected_deletions)]
        if themes:
            row += [str(e["theme_precision"]), str(e["theme_recall"]), str(e["theme_f1"])]
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
                         _fmt(d.system_value), str(d.difference), _p(d.p_value),
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
        blocks += [("p", note) for note in _judge_notes(runs, differences)]
        blocks += [("p", f"Not compared, {a} and {b}: {reason}.") for a, b, reason in skipped]
        blocks += _gold_blocks(runs, options["confidence"])
    blocks += [("figure", name, caption) for name, caption in figures]
    if themes:
        per_theme_header = ["theme"]
        clinicians = clinician_series(runs)
        per_theme_header += [f"{name} % replies" for name, _ in clinicians]
        for run in runs:
            per_theme_header += [f"{run.name} F1", f"{run.name} % drafts", f"{run.name} recall"]
        per_theme_rows = []
        for theme in scored_themes(runs):
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
                        "–" if defined_f1(s) is None else _fmt(s.f1),
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
    blocks += _pair_blocks(options["contrasts"])
    blocks.append(("h2", "Reproducibility"))
    blocks.append(
        (
            "table",
            ["system", "per-row file", "content judge", "theme judge", "scoring options",
             "versions"],
            [[run.name, str(run.path or ""), *_provenance_cells(run)] for run in runs],
        )
    )  # fmt: skip
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
        elif kind == "pairs":
            out.append(f"{rest[0]} The pairs and alignments are in report.html.")
        out.append("")
    return "\n".join(out)


def _html(blocks, folder: Path) -> str:
    """``blocks`` as one HTML page (``templates/report.html``, autoescaped; PNGs inline)."""
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
        elif kind == "pairs":
            page.append({"kind": kind, "text": rest[0], "pairs": rest[1]})
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
    top_pairs: int = 10,
) -> ReportFiles:
    """Write ``report.html`` (self-contained, figures embedded), ``report.md`` and PNGs.

    Args:
        runs: one or more runs (:func:`editf1.analysis.compare.load_run`), distinct names.
        output_dir: folder to write; its files are replaced only once all are written
            (:func:`editf1.io.staged_folder`), other files in it kept.
        title: the report's title.
        cases: pair key -> case for the bootstrap (default: a case per pair).
        n_resamples, confidence, seed: bootstrap settings.
        protect: inputs (the runs' files, summaries) no report file may replace.
        top_pairs: how many of the pairs that differ most report.html shows for each
            two comparable runs (:func:`editf1.analysis.pairs.differing_pairs`; 0: none).

    Returns:
        :class:`ReportFiles`.

    Raises:
        ValueError: for no runs or repeated names, ``top_pairs`` below 0, an
            ``output_dir`` that is a file, a file in ``protect`` it would replace, or
            too few ``n_resamples`` (:func:`editf1.stats.check_n_resamples`).
        ImportError: without matplotlib (the ``report`` extra).
    """
    check_n_resamples(n_resamples, confidence)
    if not runs:
        raise ValueError("a report needs at least one scored run")
    names = [run.name for run in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"runs need distinct names, got {names}; pass a name per run")
    if isinstance(top_pairs, bool) or not isinstance(top_pairs, int) or top_pairs < 0:
        raise ValueError(f"top_pairs must be an int >= 0, got {top_pairs!r}")
    folder = Path(output_dir)
    boot = {"cases": cases, "n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    estimates = {run.name: corpus_estimates(run, **boot) for run in runs}
    differences: list[PairedDifference]
    differences, skipped = compare_all(runs, **boot) if len(runs) > 1 else ([], [])
    themes = all(run.has_themes for run in runs)
    figures = []
    if themes:
        figures += [
            (
                "per_theme_f1.png",
                "Theme F1 of each system, per theme (the paper's Table 15); a hatched box "
                "marks a theme no reply or draft has (undefined, – in the table), a mark "
                "at 0 an F1 of 0",
            ),
            (
                "theme_proportions.png",
                "Share of responses containing each theme: clinicians' replies beside "
                "each system's drafts (the paper's Table 5)",
            ),
        ]
    figures.append(("per_pair_f1.png", "Histograms of per-pair edit-F1 (number of pairs)"))
    options = {
        "title": title,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        "case_note": "cases (pairs of one case drawn together)" if cases else "pairs",
        "version": importlib.metadata.version("edit-f1"),
        "contrasts": [
            (a.name, b.name, *differing_pairs(a, b, top_pairs), len(a.pairs))
            for a, b in combinations(runs, 2)
            if top_pairs and reference_mismatch(a, b) is None
        ],
    }
    blocks = _blocks(runs, estimates, differences, skipped, figures, options)
    with staged_folder(folder, protect=protect) as stage:
        if themes:
            draw_bars(per_theme_f1_bars(runs)).savefig(stage / "per_theme_f1.png")
            draw_bars(theme_proportion_bars(runs)).savefig(stage / "theme_proportions.png")
        per_pair_histograms(runs).savefig(stage / "per_pair_f1.png")
        (stage / "report.md").write_text(_markdown(blocks), encoding="utf-8")
        (stage / "report.html").write_text(_html(blocks, stage), encoding="utf-8")
    return ReportFiles(
        folder / "report.html", folder / "report.md", tuple(folder / n for n, _ in figures)
    )
