"""What a few gold labels say about a corpus score (docs/gold-labels.md): each figure
judge-only over all N pairs, gold-only over the n labelled pairs, and prediction-powered
(PPI++, Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453: the judge's counts corrected
by the gold labels; :mod:`editf1.ppi`), beside the judge's agreement with the gold labels.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from editf1.aggregate import pair_counts
from editf1.gold.labels import GoldLabels, GoldPair, pair_keys
from editf1.ppi import (
    MIN_LABELLED,
    PPIEstimate,
    UndefinedEstimateError,
    classical_ratio,
    ppi_ratio,
    ppi_ratio_difference,
    ratio_columns,
)
from editf1.results import CorpusResult
from editf1.stats import bootstrap, check_n_resamples
from editf1.validation.agreement import (
    binary_agreement_report,
    inter_annotator_report,
    theme_label_report,
    to_jsonable,
)

__all__ = [
    "ESTIMATES",
    "FEW_LABELLED",
    "METRICS",
    "GoldReport",
    "MetricEstimates",
    "check_report_options",
    "format_gold_report",
    "gold_report",
    "prediction_powered_difference",
]

METRICS = ("precision", "recall", "f1")
#: The three estimates of each figure, in report order.
ESTIMATES = ("judge_only", "gold_only", "prediction_powered")
#: Bootstrap resamples of the agreement statistics' CIs.
N_RESAMPLES = 2000
#: Below this many labelled pairs the report notes that n is too small for precise
#: intervals (the usual rule of thumb for a normal approximation).
FEW_LABELLED = 30
#: The legend of the ``lam`` column (:mod:`editf1.ppi`).
LAM_LEGEND = (
    "lam: the PPI++ power-tuning weight on the judge's counts (Angelopoulos, Duchi & Zrnic "
    "2023, arXiv 2311.01453), tuned to narrow the interval: 0 = gold labels only, 1 = the "
    "judge at full weight (plain PPI, still corrected by the gold labels)"
)


@dataclass(frozen=True)
class MetricEstimates:
    """One corpus figure (``metric``, e.g. ``"theme_f1"``) three ways: ``judge_only``,
    ``gold_only``, ``prediction_powered``, each a :class:`~editf1.ppi.PPIEstimate` (in
    [0, 1]) or ``None`` where undefined (``notes`` says why)."""

    metric: str
    judge_only: PPIEstimate | None
    gold_only: PPIEstimate | None
    prediction_powered: PPIEstimate | None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return to_jsonable(dict(self.__dict__))


@dataclass(frozen=True)
class GoldReport:
    """The prediction-powered corpus figures and the judge's agreement on the gold labels.

    Attributes:
        n_pairs, n_labelled, in_progress: pairs scored (N), complete labelled pairs (n),
            and labelled pairs left out as incomplete.
        content: ``{"precision", "recall", "f1"}`` -> :class:`MetricEstimates`.
        theme: the same for the theme figures, or ``None`` without theme labels.
        content_agreement: :func:`~editf1.validation.agreement.binary_agreement_report`
            of gold against judge decisions on the labelled reply sentences, plus
            ``gold_match_rate``, ``judge_match_rate``, ``match_rate_bias`` (judge minus
            gold; bootstrap CIs over pairs) and ``pairs``.
        theme_agreement: :func:`~editf1.validation.agreement.theme_label_report` on every
            labelled sentence, or ``None``.
        inter_annotator: :func:`~editf1.validation.agreement.inter_annotator_report` of
            ``"content"`` and ``"theme"`` on the pairs a second annotator also labelled
            (``pairs``, ``sentences``), or ``None``.
    """

    n_pairs: int
    n_labelled: int
    in_progress: int
    sampling: dict | None
    confidence: float
    content: dict[str, MetricEstimates]
    theme: dict[str, MetricEstimates] | None
    content_agreement: dict
    theme_agreement: dict | None = None
    inter_annotator: dict | None = None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        """JSON-ready (every estimate a dict)."""
        return to_jsonable(dict(self.__dict__))

    def format(self) -> str:
        """The report as text, for the command line."""
        return format_gold_report(self.to_dict())


def _estimates(
    metric: str, judge: np.ndarray, gold: np.ndarray, labelled, confidence
) -> MetricEstimates:
    """The three estimates of ``metric`` from (N, 3) judge and (n, 3) gold counts."""
    name = metric.removeprefix("theme_")
    unlabelled = np.setdiff1d(np.arange(len(judge)), labelled)
    columns, gold_columns = ratio_columns(judge, name), ratio_columns(gold, name)
    runs = {
        "judge_only": lambda: classical_ratio(columns, confidence=confidence),
        "gold_only": lambda: classical_ratio(gold_columns, confidence=confidence),
        "prediction_powered": lambda: ppi_ratio(
            gold_columns, columns[labelled], columns[unlabelled], confidence=confidence
        ),
    }
    values, notes = {}, []
    for estimate, run in runs.items():
        try:
            values[estimate] = run()
        except UndefinedEstimateError as error:
            values[estimate] = None
            notes.append(
                f"{estimate.replace('_', ' ')}: {metric} {str(error).partition(' is ')[2]}"
            )
    return MetricEstimates(metric, **values, notes=tuple(notes))


def _bind(result: CorpusResult, gold: GoldLabels) -> list[int]:
    """The row of each labelled pair in ``result.pairs``, by key (ValueError where none)."""
    if result.pairs is None or len(result.pairs) != gold.n_pairs:
        held = "no pairs" if result.pairs is None else f"{len(result.pairs)} pairs"
        raise ValueError(
            f"the gold labels were checked against {gold.n_pairs} pairs, the result holds "
            f"{held}: score the same pairs, keeping them"
        )
    keys = pair_keys([p.id for p in result.pairs])
    rows = {key: k for k, key in enumerate(keys)}
    if len(rows) != len(keys):
        raise ValueError("the scored pairs' ids repeat: gold labels cannot name a pair")
    missing = [g.key for g in gold.pairs if g.key not in rows]
    if missing:
        raise ValueError(
            f"{len(missing)} labelled pair(s) have no scored pair of that id (e.g. "
            f"{missing[0]!r}): score the pairs the labels were checked against"
        )
    return [rows[g.key] for g in gold.pairs]


def _judge_decisions(result: CorpusResult, gold: GoldLabels, rows: list[int]):
    """Per labelled reply sentence: (pair key, gold match, judge match)."""
    keys, human, judge = [], [], []
    for g, row in zip(gold.pairs, rows):
        pair = result.pairs[row]
        ours = [(a.reference.start, a.reference.end) for a in pair.alignment]
        theirs = [(s.start, s.end) for s in g.reference_sentences]
        if ours != theirs:
            raise ValueError(
                f"pair {g.key!r}: the gold labels' reply sentences are not the scored pair's "
                "(check the labels with the scorer's splitter)"
            )
        keys += [g.key] * len(g.matches)
        human += [span is not None for span in g.matches]
        judge += [a.status == "match" for a in pair.alignment]
    return keys, np.array(human, dtype=bool), np.array(judge, dtype=bool)


def _content_agreement(result, gold, rows, n_resamples, seed) -> dict:
    keys, human, judge = _judge_decisions(result, gold, rows)
    kw = {"groups": keys, "n_resamples": n_resamples, "seed": seed}
    rates = {
        "gold_match_rate": lambda i: float(human[i].mean()),
        "judge_match_rate": lambda i: float(judge[i].mean()),
        "match_rate_bias": lambda i: float(judge[i].mean() - human[i].mean()),
    }
    report = binary_agreement_report(human, judge, **kw)
    report |= {name: bootstrap(rate, len(human), **kw) for name, rate in rates.items()}
    return report | {"pairs": len(gold.pairs)}


def _sentence_themes(g: GoldPair) -> list[str]:
    return [*g.reference_themes, *g.prediction_themes]


def _theme_agreement(result, gold, rows, n_resamples, seed) -> dict:
    human, judge, keys = [], [], []
    for g, row in zip(gold.pairs, rows):
        pair = result.pairs[row]
        human += _sentence_themes(g)
        judge += [a.theme for a in pair.alignment] + list(pair.prediction_sentence_themes)
        keys += [g.key] * (len(g.reference_themes) + len(g.prediction_themes))
    return theme_label_report(human, judge, groups=keys, n_resamples=n_resamples, seed=seed)


def _inter_annotator(gold: GoldLabels, second, n_resamples, seed) -> dict | None:
    theirs = {g.key: g for g in (second.pairs if second else ())}
    shared = [(g, theirs[g.key]) for g in gold.pairs if g.key in theirs]
    if not shared:
        return None
    levels = {"content": lambda g: [m is not None for m in g.matches]}
    if all(a.reference_themes is not None and b.reference_themes is not None for a, b in shared):
        levels["theme"] = _sentence_themes
    out = {"pairs": len(shared), "sentences": sum(len(a.matches) for a, _ in shared)}
    for level, labels in levels.items():
        keys = [a.key for a, _ in shared for _ in labels(a)]
        annotators = [[x for pair in shared for x in labels(pair[k])] for k in (0, 1)]
        out[level] = inter_annotator_report(
            annotators, groups=keys, n_resamples=n_resamples, seed=seed
        )
    return out


def check_report_options(
    gold: GoldLabels, *, confidence: float = 0.95, n_resamples: int | None = None, seed: int = 0
) -> int:
    """Check :func:`gold_report`'s options and labelled pairs before any judge runs;
    return ``n_resamples`` (:data:`N_RESAMPLES` for ``None``).

    Raises:
        TypeError: for an option :func:`gold_report` does not take.
        ValueError: for fewer than :data:`editf1.ppi.MIN_LABELLED` pairs or ``n_resamples``.
    """
    if len(gold.pairs) < MIN_LABELLED:
        raise ValueError(
            f"prediction-powered inference needs at least {MIN_LABELLED} labelled pairs, "
            f"got {len(gold.pairs)}"
        )
    return check_n_resamples(N_RESAMPLES if n_resamples is None else n_resamples, confidence)


def gold_report(
    result: CorpusResult,
    gold: GoldLabels,
    *,
    second: GoldLabels | None = None,
    confidence: float = 0.95,
    n_resamples: int | None = None,
    seed: int = 0,
) -> GoldReport:
    """Prediction-powered corpus figures and the judge's agreement on the gold labels
    (:func:`editf1.gold.apply.with_gold` checks labels against the texts and calls this);
    with fewer than :data:`FEW_LABELLED` labelled pairs the first note says n is small.

    Args:
        result: the scored corpus with the pairs the labels were checked against
            (:func:`~editf1.gold.labels.bind_gold`); labelled pairs are found by key.
        gold: the gold labels of a uniform random sample of those pairs.
        second: a second annotator's labels of (some of) the same pairs.
        n_resamples, seed: the agreement statistics' bootstrap over pairs (default
            :data:`N_RESAMPLES`).

    Raises:
        ValueError: if the result holds other pairs or sentences than the labels were
            checked against, or as :func:`check_report_options`.
    """
    n_resamples = check_report_options(gold, confidence=confidence, n_resamples=n_resamples)
    rows = _bind(result, gold)
    labelled = np.array(rows)
    judge = pair_counts(result.pairs, "content")
    gold_counts = np.array([g.content_counts for g in gold.pairs], dtype=np.int64)
    content = {m: _estimates(m, judge, gold_counts, labelled, confidence) for m in METRICS}
    theme = theme_agreement = None
    notes = []
    if len(gold.pairs) < FEW_LABELLED:
        notes.append(
            f"only {len(gold.pairs)} labelled pairs (fewer than {FEW_LABELLED}): n is too "
            "small for these intervals to be precise (they can span [0, 1]); label more pairs"
        )
    if gold.has_themes and result.theme is not None:
        judge_themes = pair_counts(result.pairs, "theme")
        gold_themes = np.array(
            [g.theme_counts(result.themes_scored).as_tuple() for g in gold.pairs], dtype=np.int64
        )
        theme = {
            m: _estimates(f"theme_{m}", judge_themes, gold_themes, labelled, confidence)
            for m in METRICS
        }
        theme_agreement = _theme_agreement(result, gold, rows, n_resamples, seed)
    elif gold.has_themes:
        notes.append("the gold labels hold themes but the pairs were scored without a theme judge")
    if gold.sampling is None:
        notes.append(
            "the gold labels record no sampling: the estimates assume the labelled pairs "
            "are a uniform random sample of the scored pairs"
        )
    if gold.in_progress:
        notes.append(f"{len(gold.in_progress)} labelled pair(s) still in progress are left out")
    if second is not None and (ours := {g.key for g in gold.pairs}) != (
        theirs := {g.key for g in second.pairs}
    ):
        notes.append(
            f"the second annotator's labels cover {len(ours & theirs)} of the first's "
            f"{len(ours)} labelled pair(s), and {len(theirs - ours)} pair(s) the first's do "
            "not: the annotators' agreement is measured on the shared ones only"
        )
    if gold.skipped_ranks:
        shown = ", ".join(map(str, gold.skipped_ranks[:10]))
        notes.append(
            f"{len(gold.skipped_ranks)} pair(s) drawn before the last labelled one have no "
            f"label (ranks {shown}{' ...' if len(gold.skipped_ranks) > 10 else ''}): the "
            "estimates assume the labelled pairs are the first of the draw; label them in "
            "draw order, a pair skipped because it was hard biases them"
        )
    return GoldReport(
        n_pairs=gold.n_pairs,
        n_labelled=len(gold.pairs),
        in_progress=len(gold.in_progress),
        sampling=gold.sampling,
        confidence=confidence,
        content=content,
        theme=theme,
        content_agreement=_content_agreement(result, gold, rows, n_resamples, seed),
        theme_agreement=theme_agreement,
        inter_annotator=_inter_annotator(gold, second, n_resamples, seed),
        notes=tuple(notes),
    )


def prediction_powered_difference(
    baseline_judge,
    system_judge,
    baseline_gold,
    system_gold,
    labelled: Sequence[int],
    metric: str = "f1",
    *,
    lam: float | None = None,
    confidence: float = 0.95,
) -> PPIEstimate:
    """PPI++ estimate and CI, in [-1, 1], of ``system − baseline`` for one corpus figure
    of two systems scored against the same references (:func:`editf1.ppi.ppi_ratio_difference`).

    Args:
        baseline_judge, system_judge: (N, 3) judge counts (tp, fp, fn) of the same pairs.
        baseline_gold, system_gold: (n, 3) gold counts of the labelled pairs, in the
            order of ``labelled``.
        labelled: the n labelled rows of the judge arrays, a uniform random sample.
        metric: ``"precision"``, ``"recall"`` or ``"f1"``.
        lam: the power-tuning weight, ``None`` (default) to tune it.

    Raises:
        UndefinedEstimateError: if a system's figure is undefined.
        ValueError: for mismatched shapes or fewer than 2 labelled pairs.
    """
    base, other = np.asarray(baseline_judge), np.asarray(system_judge)
    if base.shape != other.shape:
        raise ValueError(f"the systems' counts differ in shape: {base.shape} and {other.shape}")
    rows = np.asarray(labelled, dtype=int)
    unlabelled = np.setdiff1d(np.arange(len(base)), rows)
    judge = np.hstack([ratio_columns(other, metric), ratio_columns(base, metric)])
    gold = np.hstack([ratio_columns(system_gold, metric), ratio_columns(baseline_gold, metric)])
    return ppi_ratio_difference(
        gold, judge[rows], judge[unlabelled], lam=lam, confidence=confidence
    )


def _estimate_text(e: dict | None) -> str:
    if e is None:
        return "undefined"
    return f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def format_gold_report(report: dict) -> str:
    """:meth:`GoldReport.to_dict` as text (also for a report read back from JSON)."""
    sampling = report["sampling"]
    how = (
        f"a {sampling.get('design', 'uniform')} random sample"
        + (f", seed {sampling['seed']}" if sampling.get("seed") is not None else "")
        if sampling
        else "sampling not recorded"
    )
    lines = [
        f"gold labels: {report['n_labelled']} of {report['n_pairs']} pairs ({how}); "
        f"{report['confidence']:.0%} CIs",
        f"  {'':<18} {'judge only':<22} {'gold only':<22} prediction-powered",
    ]
    tuned_any = False
    for level, block in (("content", report["content"]), ("theme", report["theme"])):
        for metric, m in (block or {}).items():
            ppi = m["prediction_powered"]
            tuned = f"  (lam {ppi['lam']:.2f})" if ppi else ""
            tuned_any = tuned_any or bool(ppi)
            lines.append(
                f"  {level + ' ' + metric:<18} {_estimate_text(m['judge_only']):<22} "
                f"{_estimate_text(m['gold_only']):<22} {_estimate_text(ppi)}{tuned}"
            )
            lines += [f"    note: {note}" for note in m["notes"]]
    if tuned_any:
        lines += textwrap.wrap(
            LAM_LEGEND, width=100, initial_indent="  ", subsequent_indent="       "
        )
    lines += [f"  note: {note}" for note in report["notes"]]
    a = report["content_agreement"]
    lines.append(
        f"  the judge against the gold labels ({a['n']} reply sentences in {a['pairs']} pairs):"
    )
    names = ("agreement", "cohen_kappa", "gold_match_rate", "judge_match_rate", "match_rate_bias")
    lines += [f"    {name.replace('_', ' '):<18} {_estimate_text(a[name])}" for name in names]
    if t := report.get("theme_agreement"):
        lines.append(
            f"  theme labels ({t['n']} sentences): agreement {_estimate_text(t['micro_f1'])}"
            f", Cohen's kappa {_estimate_text(t['cohen_kappa'])}"
        )
    if ia := report.get("inter_annotator"):
        c = ia["content"]
        lines.append(
            f"  two annotators ({ia['sentences']} sentences in {ia['pairs']} pairs): agreement "
            f"{_estimate_text(c['agreement'])}, Cohen's kappa {_estimate_text(c['cohen_kappa'])}"
        )
    return "\n".join(lines)
