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

from editf1.analysis.compare import ScoredRun, compare_all, corpus_estimates, reference_mismatch
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
from editf1.data import read_json
from editf1.io import staged_folder
from editf1.stats import check_n_resamples

__all__ = ["ReportFiles", "write_report"]


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote: ``html``, ``markdown`` and the PNG ``figures``."""

    html: Path
    markdown: Path
    figures: tuple[Path, ...]


#: The report's prose, table headers and figure captions.
TEXT = read_json("report_text.json")
_MARKDOWN_PREFIX = {"h1": "# ", "h2": "## ", "p": ""}


def _fmt(x) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 else "< 0.0001"


def _judges_of(run) -> dict[str, str]:
    """The fingerprints of a run's ``content`` and ``theme`` judges, from its run record."""
    if not run.provenance:
        return {}
    judges = {k: run.provenance[f"{k}_judge"] for k in ("content", "theme")}
    return {k: "none" if j is None else j["fingerprint"] for k, j in judges.items()}


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
        if differ := sorted(k for k in ours.keys() & theirs.keys() if ours[k] != theirs[k]):
            judges = " and ".join(differ)
            notes.append(
                TEXT["judges_differ"].format(baseline=baseline, system=system, judges=judges)
            )
    return notes


def _gold_blocks(runs, confidence: float) -> list[tuple]:
    if sum(bool(run.gold) for run in runs) < 2:
        return []
    rows, notes = [], []
    for baseline, system in combinations(runs, 2):
        found, reason = compare_with_gold(baseline, system, confidence=confidence)
        if reason:
            names = {"baseline": baseline.name, "system": system.name, "reason": reason}
            notes.append(("p", TEXT["no_gold_comparison"].format(**names)))
        for d in found:
            cells = [d.judge_only, d.gold_only, d.difference, f"{d.difference.lam:.2f}"]
            labelled = f"{d.n_labelled} of {d.n_pairs}"
            rows.append([d.baseline, d.system, d.metric, *map(_fmt, cells), labelled])
    blocks = [("h2", "Prediction-powered comparisons (gold labels)")]
    if rows:
        blocks += [("table", TEXT["gold_header"], rows), ("p", TEXT["gold_legend"])]
    return blocks + notes


def _alignment_cells(view: PairAlignment) -> list:
    """One system's column of a pair's table: F1 and counts, matches, additions, deletions."""
    em, ea, ed = view.counts
    score = f"{view.f1:.3f} (EM {em}, EA {ea}, ED {ed})"
    if view.reply is not None:
        score += f", against reply {view.reply + 1}"
    additions = [f"{text} ({note})" if note else text for text, note in view.additions]
    return [score, list(view.matches), additions, list(view.deletions)]


def _pair_blocks(contrasts) -> list[tuple]:
    """The section of the pairs that differ most (HTML only: it quotes the texts)."""
    if not contrasts:
        return []
    blocks = [("h2", "Pairs that differ most"), ("p", TEXT["pairs_intro"])]
    for baseline, system, found, differing, n_pairs in contrasts:
        summary = TEXT["pairs_summary"].format(
            baseline=baseline, system=system, differing=differing, n_pairs=n_pairs, shown=len(found)
        )
        pairs = [
            {
                "heading": f"{c.key}: edit-F1 {c.baseline.f1:.3f} ({baseline}) and "
                f"{c.system.f1:.3f} ({system}), difference {c.difference:+.3f}",
                "header": ["", baseline, system],
                "rows": [
                    {"label": label, "cells": cells}
                    for label, *cells in zip(
                        TEXT["pair_labels"],
                        _alignment_cells(c.baseline),
                        _alignment_cells(c.system),
                    )
                ],
            }
            for c in found
        ]
        blocks.append(("pairs", summary, pairs))
    return blocks


def _per_theme_table(runs) -> tuple:
    """The per-theme table: the replies' shares, then each run's F1, share and recall."""
    clinicians = clinician_series(runs)
    header = ["theme", *(f"{name} % replies" for name, _ in clinicians)]
    for run in runs:
        header += [f"{run.name} F1", f"{run.name} % drafts", f"{run.name} recall"]
    rows = []
    for theme in scored_themes(runs):
        row = [theme]
        for _, run in clinicians:
            s = run.result.per_theme.get(theme)
            row.append("–" if s is None else f"{100 * s.reference_proportion:.1f}")
        for s in (run.result.per_theme.get(theme) for run in runs):
            row += (
                ["–"] * 3
                if s is None
                else [
                    "–" if defined_f1(s) is None else _fmt(s.f1),
                    f"{100 * s.prediction_proportion:.1f}",
                    "–" if s.reference_sentences == 0 else _fmt(s.content_recall),
                ]
            )
        rows.append(row)
    return ("table", header, rows)


def _blocks(runs, estimates, differences, skipped, figures, options) -> list[tuple]:
    """The report as a list of blocks, rendered to Markdown and HTML alike."""
    intro = TEXT["intro"].format(runs=len(runs), **options)
    blocks: list[tuple] = [("h1", options["title"]), ("p", intro)]
    themes = all(run.has_themes for run in runs)
    if not themes:
        blocks.append(("p", TEXT["no_themes"]))
    header = ["system", "pairs", "precision", "recall", "edit-F1", "EM", "EA", "ED"]
    metrics = ["precision", "recall", "f1"]
    if themes:
        header += ["theme precision", "theme recall", "theme edit-F1"]
        metrics += ["theme_precision", "theme_recall", "theme_f1"]
    header.append("unusable judge outputs")
    rows = []
    for run in runs:
        r, e = run.result, estimates[run.name]
        counts = [r.expected_matches, r.expected_additions, r.expected_deletions]
        row = [run.name, r.n_pairs, *(e[m] for m in metrics[:3]), *counts]
        row += [e[m] for m in metrics[3:]]
        row.append(r.unusable_judgements + r.unusable_theme_judgements)
        rows.append(list(map(str, row)))
    blocks += [("h2", "Systems"), ("table", header, rows), ("p", TEXT["systems_legend"])]
    if len(runs) > 1:
        blocks.append(("h2", "Paired comparisons (same references)"))
        if differences:
            rows = []
            for d in differences:
                values = [d.baseline_value, d.system_value, d.difference, _p(d.p_value)]
                values += [d.difference.n, d.n_cases]
                rows.append([d.baseline, d.system, d.metric, *map(_fmt, values)])
            blocks += [("table", TEXT["paired_header"], rows), ("p", TEXT["paired_legend"])]
        blocks += [("p", note) for note in _judge_notes(runs, differences)]
        blocks += [
            ("p", TEXT["not_compared"].format(baseline=a, system=b, reason=reason))
            for a, b, reason in skipped
        ]
        blocks += _gold_blocks(runs, options["confidence"])
    blocks += [("figure", name, TEXT["figures"][name]) for name in figures]
    if themes:
        blocks += [("h2", "Per theme"), ("p", TEXT["per_theme_legend"]), _per_theme_table(runs)]
    blocks += _pair_blocks(options["contrasts"])
    provenance = [[run.name, str(run.path or ""), *_provenance_cells(run)] for run in runs]
    blocks += [("h2", "Reproducibility"), ("table", TEXT["provenance_header"], provenance)]
    blocks.append(("p", f"Report written by edit-f1 {options['version']}."))
    return blocks


def _markdown(blocks) -> str:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    out = []
    for kind, *rest in blocks:
        if kind in _MARKDOWN_PREFIX:
            out.append(f"{_MARKDOWN_PREFIX[kind]}{rest[0]}")
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
        cases: pair key -> case for the bootstrap (default: a case per pair).
        protect: inputs (the runs' files, summaries) no report file may replace.
        top_pairs: how many of the pairs that differ most report.html shows for each
            two comparable runs (:func:`editf1.analysis.pairs.differing_pairs`; 0: none).

    Raises:
        ValueError: for no runs, repeated names, a bad option, an ``output_dir`` that is a
            file, or a file in ``protect`` it would replace.
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
    differences, skipped = compare_all(runs, **boot)
    themes = all(run.has_themes for run in runs)
    figures = ["per_theme_f1.png", "theme_proportions.png"] if themes else []
    figures.append("per_pair_f1.png")
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
        folder / "report.html", folder / "report.md", tuple(folder / name for name in figures)
    )
