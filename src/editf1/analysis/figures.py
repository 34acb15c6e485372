"""The plots of ``edit-f1 report``: each bar chart's data (:class:`Bars`, from
:func:`per_theme_f1_bars`, :func:`theme_proportion_bars`) drawn by :func:`draw_bars`
(matplotlib's object API, no pyplot state), and :func:`per_pair_histograms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from editf1.analysis.compare import ScoredRun, reference_mismatch
from editf1.results import ThemeScore
from editf1.themes import THEMES

__all__ = [
    "Bars",
    "clinician_series",
    "defined_f1",
    "draw_bars",
    "per_pair_histograms",
    "per_theme_f1_bars",
    "scored_themes",
    "theme_proportion_bars",
]

COLORS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3")
CLINICIAN_COLOR = "#333333"
_ABSENT_COLOR = "0.55"
_ABSENT_BOX = {"facecolor": "none", "edgecolor": _ABSENT_COLOR, "hatch": "////"}
_ABSENT_TEXT = {"va": "center", "fontsize": 7, "color": _ABSENT_COLOR, "style": "italic"}


@dataclass(frozen=True)
class Bars:
    """The data of a grouped horizontal bar chart.

    Attributes:
        labels: one group per label, drawn top to bottom (themes).
        series: ``(name, color, values)`` per series, in the legend's order; a value is
            a number in ``[0, xmax]``, or ``None`` where undefined.
        absent_mark, absent_label: the word written where a value is ``None``, and the
            legend's words for it.
    """

    title: str
    xlabel: str
    labels: tuple[str, ...]
    series: tuple[tuple[str, str, tuple[float | None, ...]], ...]
    xmax: float
    absent_mark: str
    absent_label: str
    value_format: str = "{:.2f}"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def scored_themes(runs: Sequence[ScoredRun]) -> list[str]:
    """The themes any run scores, in :data:`~editf1.themes.THEMES` order."""
    return [t for t in THEMES if any(t in run.result.per_theme for run in runs)]


def clinician_series(runs: Sequence[ScoredRun]) -> list[tuple[str, ScoredRun]]:
    """One ``("Clinicians", run)`` when all runs share references, else one
    ``("Clinicians (<run>)", run)`` per run."""
    if all(reference_mismatch(runs[0], other) is None for other in runs[1:]):
        return [("Clinicians", runs[0])]
    return [(f"Clinicians ({run.name})", run) for run in runs]


def defined_f1(score: ThemeScore | None) -> float | None:
    """A theme's F1 (Seegmiller et al., Table 15), or ``None`` where the run does not
    score the theme or no reply and no draft has it (the stored 1.0 is no score)."""
    if score is None or score.reference_count == score.prediction_count == 0:
        return None
    return score.f1


def _run_series(runs, themes, value) -> list:
    return [
        (run.name, COLORS[k % len(COLORS)], tuple(value(run, t) for t in themes))
        for k, run in enumerate(runs)
    ]


def per_theme_f1_bars(runs: Sequence[ScoredRun]) -> Bars:
    """Theme F1 of each run (with theme scores) per scored theme (:func:`defined_f1`):
    :class:`Bars` with values in [0, 1], one series per run."""
    themes = scored_themes(runs)
    series = _run_series(runs, themes, lambda run, t: defined_f1(run.result.per_theme.get(t)))
    unscored = any(t not in run.result.per_theme for run in runs for t in themes)
    return Bars(
        title="Theme F1 per theme",
        xlabel="theme F1 over all pairs\n(1: drafts have the theme exactly where replies "
        "do; 0: never in the same pair)",
        labels=tuple(themes),
        series=tuple(series),
        xmax=1.0,
        absent_mark="undefined",
        absent_label="undefined: no reply or draft has the theme"
        + (", or the run does not score it" if unscored else "")
        + " (– in the table)",
    )


def theme_proportion_bars(runs: Sequence[ScoredRun]) -> Bars:
    """The percentage of replies (:func:`clinician_series`) and of each run's drafts
    containing each scored theme (Seegmiller et al., Table 5; ``None`` where a run does
    not score it): :class:`Bars` with values in [0, 100], the clinicians first."""
    themes = scored_themes(runs)
    clinicians = clinician_series(runs)
    shades = np.linspace(0.2, 0.55, len(clinicians))

    def percent(run, theme, field):
        score = run.result.per_theme.get(theme)
        return None if score is None else 100 * getattr(score, field)

    series = [
        (
            name,
            CLINICIAN_COLOR if len(clinicians) == 1 else str(round(float(shade), 3)),
            tuple(percent(run, t, "reference_proportion") for t in themes),
        )
        for (name, run), shade in zip(clinicians, shades)
    ]
    series += _run_series(runs, themes, lambda run, t: percent(run, t, "prediction_proportion"))
    return Bars(
        title="Share of responses containing each theme",
        xlabel="% of replies or drafts containing the theme",
        labels=tuple(themes),
        series=tuple(series),
        xmax=100.0,
        absent_mark="not scored",
        absent_label="not scored: the run does not score the theme",
        value_format="{:.0f}%",
    )


def draw_bars(bars: Bars):
    """Draw :class:`Bars` as a matplotlib ``Figure``: a defined value a bar with its
    value beside it, 0 a mark at 0, ``None`` a hatched empty box with ``absent_mark``."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig = _figure(9, 0.22 * len(bars.labels) * len(bars.series) + 2.0)
    ax = fig.add_subplot()
    y = np.arange(len(bars.labels))
    height = 0.8 / len(bars.series)
    handles, absent, zero = [], False, False
    for k, (name, color, values) in enumerate(bars.series):
        offsets = y - 0.4 + height * (k + 0.5)
        widths = [0.0 if v is None else v for v in values]
        handles.append(ax.barh(offsets, widths, height=height, label=name, color=color))
        for offset, value in zip(offsets, values):
            if value is None:
                absent = True
                ax.barh(offset, 0.04 * bars.xmax, height=height * 0.9, linewidth=0.6, **_ABSENT_BOX)
                ax.text(0.05 * bars.xmax, offset, bars.absent_mark, **_ABSENT_TEXT)
                continue
            if value == 0:
                zero = True
                mark = {"markersize": max(4.0, 40 * height), "markeredgewidth": 4}
                ax.plot([0], [offset], marker="|", color=color, clip_on=False, **mark)
            label = bars.value_format.format(value)
            ax.text(value + 0.01 * bars.xmax, offset, label, va="center", fontsize=7)
    if absent:
        handles.append(Patch(label=bars.absent_label, **_ABSENT_BOX))
    if zero:
        mark = {"marker": "|", "markersize": 9, "markeredgewidth": 2.5, "linestyle": "none"}
        handles.append(Line2D([], [], color="black", label="a value of 0", **mark))
    ax.set_yticks(y, bars.labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.1 * bars.xmax)
    ax.set_xticks(np.linspace(0, bars.xmax, 6))
    ax.set_xlabel(bars.xlabel)
    ax.set_title(bars.title)
    ax.grid(axis="x", alpha=0.3)
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8)
    return fig


def per_pair_histograms(runs: Sequence[ScoredRun]):
    """A matplotlib ``Figure`` of histograms of per-pair content edit-F1 (and theme
    edit-F1 where every run has theme scores), ten bins over [0, 1], one colour per run."""
    from matplotlib.ticker import MaxNLocator

    panels = [("content edit-F1 of a pair", lambda p: p.content.f1)]
    if all(run.has_themes for run in runs):
        panels.append(("theme edit-F1 of a pair", lambda p: p.theme.f1))
    fig = _figure(5 * len(panels), 3.6)
    bins = np.linspace(0, 1, 11)
    for k, (label, value) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1)
        ax.hist(
            [[value(p) for p in run.pairs] for run in runs],
            bins=bins,
            label=[run.name for run in runs],
            color=[COLORS[i % len(COLORS)] for i in range(len(runs))],
        )
        ax.set_xlabel(label)
        ax.set_ylabel("number of pairs")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(0, 1)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Distribution of per-pair edit-F1")
    return fig
