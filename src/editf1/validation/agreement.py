"""How far a judge agrees with clinicians (Seegmiller et al., arXiv 2601.11344, Tables 7
and 8), next to how far clinicians agree with each other (the human ceiling).

Every statistic has a 95% percentile bootstrap CI over *cases*, a case's items drawn
together (:func:`editf1.stats.bootstrap`, as Buckley et al., arXiv 2609.12822): ``groups``
gives each item's case (default: each item its own case); ``n_resamples`` and ``seed`` are
the bootstrap's. An unusable judgement counts as NO MATCH / a wrong theme, as the scorer does.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
from sklearn.metrics import cohen_kappa_score, confusion_matrix, f1_score

from editf1.judges.base import ContentJudge, ContentJudgement, JudgeRequest, ThemeJudge
from editf1.judges.contract import judge_content, judge_themes
from editf1.segment import Sentence, SentenceSplitter
from editf1.stats import Estimate, bootstrap
from editf1.themes import CLINICAL_THEMES, THEMES
from editf1.validation.labelled import ContentItem, ThemeItem

__all__ = [
    "UNUSABLE",
    "agreement",
    "binary_agreement_report",
    "clinical_micro_f1",
    "cohen_kappa",
    "content_agreement_report",
    "expected_calibration_error",
    "format_report",
    "inter_annotator_report",
    "judge_content_items",
    "judge_theme_items",
    "label_agreement_report",
    "span_overlap",
    "theme_agreement_report",
    "theme_label_report",
    "to_jsonable",
]

#: The confusion-matrix column of theme judgements that could not be used.
UNUSABLE = "(unusable)"


def agreement(y_true: Sequence, y_pred: Sequence) -> float:
    """Share of items on which the two labelings agree, a fraction in [0, 1]."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float((y_true == y_pred).mean()) if len(y_true) else 0.0


def cohen_kappa(y_true: Sequence, y_pred: Sequence, weights: str | None = None) -> float:
    """Cohen's kappa in [-1, 1], (p_o - p_e) / (1 - p_e) (scikit-learn's
    ``cohen_kappa_score``); 1.0, never NaN, when both use one and the same label throughout.

    Args:
        weights: ``None``, ``"linear"`` or ``"quadratic"`` (ordinal scores).

    Raises:
        ValueError: if the lengths differ.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"cohen_kappa: {len(y_true)} labels against {len(y_pred)}")
    if len(set(y_true.tolist()) | set(y_pred.tolist())) < 2:
        return 1.0
    value = cohen_kappa_score(y_true, y_pred, weights=weights)
    return 0.0 if np.isnan(value) else float(value)


def _stats(groups, n_resamples: int, seed: int) -> dict:
    return {"groups": groups, "n_resamples": n_resamples, "seed": seed}


def _agreement_and_kappa(pairs, n: int, weights: str | None, kw: dict) -> dict:
    """Bootstrapped ``agreement`` and ``cohen_kappa``, each the mean over ``pairs`` ``(x, y)``."""
    measures = {"agreement": agreement, "cohen_kappa": lambda x, y: cohen_kappa(x, y, weights)}
    return {
        name: bootstrap(lambda i, f=f: float(np.mean([f(x[i], y[i]) for x, y in pairs])), n, **kw)
        for name, f in measures.items()
    }


def _mean_where(values: np.ndarray, where: np.ndarray):

    def stat(idx):
        keep = idx[where[idx]]
        return float(np.mean(values[keep])) if len(keep) else np.nan

    return stat


def binary_agreement_report(
    human: Sequence[bool],
    judge: Sequence[bool],
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Agreement of a match / no-match judge with human labels (Table 7), with CIs.

    Args:
        human, judge: N booleans each, True for "the draft contains this sentence".

    Returns:
        ``{"agreement", "cohen_kappa", "match_agreement", "non_match_agreement":
        Estimate, "confusion_matrix": [[TN, FP], [FN, TP]] (rows human), "n": N}``;
        match (non-match) agreement is the judge's agreement on the items the humans
        call a match (no match), ``None`` where they never do.

    Raises:
        ValueError: if the lengths differ or there are no items.
    """
    h, j = np.asarray(human, dtype=bool), np.asarray(judge, dtype=bool)
    if len(h) != len(j):
        raise ValueError(f"{len(h)} human labels against {len(j)} judge labels")
    kw = _stats(groups, n_resamples, seed)
    alike = h == j
    return {
        **_agreement_and_kappa([(h, j)], len(h), None, kw),
        "match_agreement": bootstrap(_mean_where(alike, h), len(h), **kw) if h.any() else None,
        "non_match_agreement": (
            bootstrap(_mean_where(alike, ~h), len(h), **kw) if not h.all() else None
        ),
        "confusion_matrix": confusion_matrix(h, j, labels=[False, True]).tolist(),
        "n": len(h),
    }


def inter_annotator_report(
    labels: Sequence[Sequence],
    *,
    groups: Sequence | None = None,
    weights: str | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Agreement among A >= 2 annotators' lists of N labels each, the ceiling for a judge:
    ``{"agreement", "cohen_kappa": Estimate}``, each the mean over the A(A-1)/2 annotator
    pairs, and ``"pairs"``: the same per pair.

    Raises:
        ValueError: for fewer than two annotators.
    """
    matrix = np.asarray(labels)
    pairs = list(combinations(range(len(matrix)), 2))
    if not pairs:
        raise ValueError("inter-annotator agreement needs at least two annotators")
    kw = _stats(groups, n_resamples, seed)
    return {
        **_agreement_and_kappa(
            [(matrix[a], matrix[b]) for a, b in pairs], matrix.shape[1], weights, kw
        ),
        "pairs": {
            f"{a}-{b}": {
                "agreement": agreement(matrix[a], matrix[b]),
                "cohen_kappa": cohen_kappa(matrix[a], matrix[b], weights),
            }
            for a, b in pairs
        },
    }


def expected_calibration_error(
    probabilities: np.ndarray, labels: np.ndarray, bins: int = 10
) -> float:
    """Expected calibration error in [0, 1] of (N,) probabilities against (N,) boolean
    labels: over ``bins`` equal-width bins, |match rate - mean probability| weighted by
    the bin's share (Naeini et al. 2015; Guo et al. 2017, eq. 3).

    Raises:
        ValueError: for no items or mismatched lengths.

    >>> round(expected_calibration_error(np.array([0.9, 0.9, 0.1, 0.1]),
    ...                                  np.array([1, 0, 0, 0])), 3)
    0.25
    """
    p, y = np.asarray(probabilities, float), np.asarray(labels, float)
    if len(p) == 0 or len(p) != len(y):
        raise ValueError(f"need as many labels as probabilities (>0), got {len(p)}, {len(y)}")
    index = np.minimum((p * bins).astype(int), bins - 1)
    # a bin's share times |mean label - mean probability| is |sum label - sum probability| / N
    gaps = np.bincount(index, y, minlength=bins) - np.bincount(index, p, minlength=bins)
    return float(np.abs(gaps).sum() / len(p))


def judge_content_items(
    judge: ContentJudge, items: Sequence[ContentItem], splitter: SentenceSplitter | None = None
) -> list[ContentJudgement]:
    """One judgement per item, in order, from one batched call (items of the same case
    and draft are one :class:`JudgeRequest`; reference sentences used whole).

    Raises:
        RuntimeError: if the judge breaks the interface (:mod:`editf1.judges.contract`).
    """
    splitter = splitter or SentenceSplitter()
    groups: dict[tuple[str, str], list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault((item.case, item.prediction), []).append(i)
    requests = [
        JudgeRequest(
            tuple(Sentence(items[i].reference, 0, len(items[i].reference)) for i in members),
            prediction,
            tuple(splitter.split(prediction)),
        )
        for (_, prediction), members in groups.items()
    ]
    out: list[ContentJudgement | None] = [None] * len(items)
    for members, pair in zip(groups.values(), judge_content(judge, requests)):
        for i, judgement in zip(members, pair):
            out[i] = judgement
    return out


def judge_theme_items(judge: ThemeJudge, items: Sequence[ThemeItem]) -> list:
    """Run a theme judge on labelled sentences in one call; one judgement per item."""
    return judge_themes(judge, [item.text for item in items])


def span_overlap(a: tuple[int, int], b: tuple[int, int], text: str) -> float:
    """Jaccard overlap |a ∩ b| / |a ∪ b| in [0, 1] of two character spans of ``text``,
    counting non-space characters."""
    x, y = ({i for i in range(*s) if not text[i].isspace()} for s in (a, b))
    return len(x & y) / len(x | y) if x | y else 0.0


def _against_annotators(annotators, judge, groups, weights, n_resamples, seed) -> dict:
    matrix = np.asarray(annotators).T  # (A, N)
    kw = _stats(groups, n_resamples, seed)
    judge = np.asarray(judge)
    ceiling = inter_annotator_report(matrix, weights=weights, **kw)
    return {
        "annotators": len(matrix),
        "judge_vs_annotators": _agreement_and_kappa(
            [(row, judge) for row in matrix], len(judge), weights, kw
        ),
        "human_ceiling": {k: ceiling[k] for k in ("agreement", "cohen_kappa")},
    }


def _annotator_matrix(items) -> list | None:
    counts = {len(item.annotators) for item in items}
    if len(counts) != 1 or counts.pop() < 2:
        return None
    return [list(item.annotators) for item in items]


def content_agreement_report(
    items: Sequence[ContentItem],
    judgements: Sequence[ContentJudgement],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Agreement of a content judge's N judgements (:func:`judge_content_items`) with N
    labelled items (Table 7), with bootstrap CIs over the items' cases.

    Returns:
        :func:`binary_agreement_report`'s figures, plus ``exact_span_agreement`` (share
        of annotated human spans the judge returned, whitespace aside) and
        ``span_overlap`` (mean :func:`span_overlap` where both matched), ``None``
        without annotated spans; ``spans_annotated``, ``unusable``, ``cases``; and, when
        every item has the same two or more annotators, ``annotators``,
        ``judge_vs_annotators`` and ``human_ceiling``.

    Raises:
        ValueError: if the lengths differ or there are no items.
    """
    if len(items) != len(judgements) or not items:
        raise ValueError(f"{len(items)} items and {len(judgements)} judgements")
    groups = np.array([item.case for item in items])
    human = np.array([item.match for item in items])
    judge = np.array([j.status == "match" for j in judgements])
    kw = _stats(groups, n_resamples, seed)
    report = binary_agreement_report(human, judge, **kw)
    annotated = np.array([item.match and item.span is not None for item in items])
    exact = np.zeros(len(items), dtype=bool)
    overlap = np.full(len(items), np.nan)
    for i in np.flatnonzero(annotated):
        item, span = items[i], judgements[i].span
        if span is None:
            continue
        exact[i] = " ".join(span.text.split()) == " ".join(item.span.split())
        start = item.prediction.index(item.span)
        overlap[i] = span_overlap(
            (start, start + len(item.span)), (span.start, span.end), item.prediction
        )
    both = annotated & judge
    report["spans_annotated"] = int(annotated.sum())
    report["exact_span_agreement"] = (
        bootstrap(_mean_where(exact, annotated), len(items), **kw) if annotated.any() else None
    )
    report["span_overlap"] = (
        bootstrap(_mean_where(overlap, both), len(items), **kw) if both.any() else None
    )
    report["unusable"] = sum(j.status == "unusable" for j in judgements)
    report["cases"] = len(set(groups.tolist()))
    annotators = _annotator_matrix(items)
    if annotators is not None:
        report |= _against_annotators(annotators, judge, groups, None, n_resamples, seed)
    return report


def _f1(human: np.ndarray, judge: np.ndarray, label: int):
    def stat(idx):
        h, j = human[idx] == label, judge[idx] == label
        denominator = h.sum() + j.sum()
        return 2 * float((h & j).sum()) / denominator if denominator else np.nan

    return stat


def clinical_micro_f1(human: Sequence[str], judge: Sequence[str | None]) -> float:
    """Micro-F1 over the 8 clinical themes, Other no class (Seegmiller et al., Table 8):
    scikit-learn's ``f1_score(average="micro", labels=...)``; 0.0 with no clinical label."""
    judge = ["(none)" if t is None else t for t in judge]
    return float(
        f1_score(human, judge, labels=list(CLINICAL_THEMES), average="micro", zero_division=0.0)
    )


def theme_agreement_report(
    items: Sequence[ThemeItem],
    judgements: Sequence,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Agreement of a theme judge's N :class:`~editf1.judges.ThemeJudgement` with N
    labelled sentences (Table 8): :func:`theme_label_report` over the items' cases, plus,
    when every item has the same two or more annotators, ``annotators``,
    ``judge_vs_annotators`` and ``human_ceiling``.

    Raises:
        ValueError: if the lengths differ or there are no items.
    """
    if len(items) != len(judgements) or not items:
        raise ValueError(f"{len(items)} items and {len(judgements)} judgements")
    groups = [item.case for item in items]
    judge = [j.theme for j in judgements]
    report = theme_label_report(
        [item.theme for item in items], judge, groups=groups, n_resamples=n_resamples, seed=seed
    )
    annotators = _annotator_matrix(items)
    if annotators is not None:
        columns = [*THEMES, UNUSABLE]
        coded = [[columns.index(t) for t in row] for row in annotators]
        judged = [columns.index(UNUSABLE if t is None else t) for t in judge]
        report |= _against_annotators(coded, judged, np.asarray(groups), None, n_resamples, seed)
    return report


def theme_label_report(
    human: Sequence[str],
    judge: Sequence[str | None],
    *,
    groups: Sequence | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Per-theme and micro F1 and Cohen's kappa of theme labels (Table 8), with CIs.

    Args:
        human: N themes from :data:`THEMES`.
        judge: N themes, ``None`` where the judge's answer was unusable.

    Returns:
        ``per_theme`` ({theme: {"f1": Estimate, ``None`` where neither side used it,
        "support"}}), ``clinical_micro_f1`` (:func:`clinical_micro_f1`), ``micro_f1``
        (over all nine: the share labelled as the humans did), ``macro_f1`` (mean over
        themes the humans used), ``cohen_kappa``, ``confusion_matrix`` (rows: human
        themes; columns: the same plus :data:`UNUSABLE`), ``labels``, ``unusable``,
        ``n``, ``cases``.

    Raises:
        ValueError: different lengths, no items, or a theme outside :data:`THEMES`.
    """
    if len(human) != len(judge) or not len(human):
        raise ValueError(f"{len(human)} human and {len(judge)} judge labels")
    columns = [*THEMES, UNUSABLE]
    unknown = sorted({t for t in [*human, *judge] if t is not None} - set(THEMES))
    if unknown:
        raise ValueError(f"unknown theme(s) {unknown}; expected one of {list(THEMES)}")
    h = np.array([THEMES.index(t) for t in human])
    j = np.array([columns.index(UNUSABLE if t is None else t) for t in judge])
    groups = np.arange(len(h)) if groups is None else np.asarray(groups)
    kw = _stats(groups, n_resamples, seed)
    per_theme = {
        theme: {
            "f1": bootstrap(_f1(h, j, k), len(h), **kw) if k in h or k in j else None,
            "support": int((h == k).sum()),
        }
        for k, theme in enumerate(THEMES)
    }
    present = sorted(set(h.tolist()))

    def macro(idx):
        values = [_f1(h, j, k)(idx) for k in present]
        return float(np.nanmean(values)) if not np.isnan(values).all() else np.nan

    clinical = [THEMES.index(t) for t in CLINICAL_THEMES]
    matrix = confusion_matrix(h, j, labels=range(len(columns)))

    def clinical_f1(idx):
        return f1_score(h[idx], j[idx], labels=clinical, average="micro", zero_division=0.0)

    return {
        "per_theme": per_theme,
        "clinical_micro_f1": bootstrap(clinical_f1, len(h), **kw),
        "micro_f1": bootstrap(lambda i: agreement(h[i], j[i]), len(h), **kw),
        "macro_f1": bootstrap(macro, len(h), **kw),
        "cohen_kappa": bootstrap(lambda i: cohen_kappa(h[i], j[i]), len(h), **kw),
        "confusion_matrix": matrix[: len(THEMES)].tolist(),
        "labels": columns,
        "unusable": int((j == len(THEMES)).sum()),
        "n": len(h),
        "cases": len(set(groups.tolist())),
    }


def label_agreement_report(
    human: Sequence,
    judge: Sequence,
    *,
    annotators: Sequence[Sequence] | None = None,
    groups: Sequence | None = None,
    weights: str | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Agreement of any judge's N labels with N human labels, e.g. ordinal scores.

    Args:
        human: e.g. the adjudicated or majority label.
        annotators: optional N rows of each annotator's label (two or more each).
        weights: as :func:`cohen_kappa`; a weighted kappa needs numeric labels.

    Returns:
        ``agreement``, ``cohen_kappa``, ``confusion_matrix`` and its ``labels``, ``n``,
        ``cases``, ``weights``; with annotators, ``annotators``,
        ``judge_vs_annotators``, ``human_ceiling``.

    Raises:
        ValueError: different lengths, no items, or non-numeric ordinal labels.
    """
    h, j = np.asarray(human), np.asarray(judge)
    if len(h) != len(j) or not len(h):
        raise ValueError(f"{len(h)} human and {len(j)} judge labels")
    if weights is not None and not (
        np.issubdtype(h.dtype, np.number) and np.issubdtype(j.dtype, np.number)
    ):
        raise ValueError(f"{weights}-weighted kappa needs numeric (ordinal) labels")
    groups = np.arange(len(h)) if groups is None else np.asarray(groups)
    kw = _stats(groups, n_resamples, seed)
    labels = sorted(set(h.tolist()) | set(j.tolist()))
    report = {
        **_agreement_and_kappa([(h, j)], len(h), weights, kw),
        "confusion_matrix": confusion_matrix(h, j, labels=labels).tolist(),
        "labels": labels,
        "weights": weights,
        "n": len(h),
        "cases": len(set(groups.tolist())),
    }
    if annotators is not None:
        report |= _against_annotators(annotators, j, groups, weights, n_resamples, seed)
    return report


def to_jsonable(value):
    """A report with every object that has ``to_dict`` (an :class:`~editf1.stats.Estimate`,
    a dataclass of estimates) as its dict and NumPy numbers as Python numbers, ready for
    ``json.dumps``."""
    if hasattr(value, "to_dict"):
        return to_jsonable(value.to_dict())
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _line(name: str, value, width: int = 28) -> str:
    if value is None:
        return f"  {name:<{width}} n/a"
    if isinstance(value, dict) and "value" in value:  # an Estimate read back from JSON
        value = Estimate(**value)
    if isinstance(value, Estimate):
        return f"  {name:<{width}} {value}   (n={value.n})"
    return f"  {name:<{width}} {value}"


#: The figures :func:`format_report` writes, in order, where a report has them.
_SCALARS = ("agreement", "non_match_agreement", "match_agreement", "exact_span_agreement")
_SCALARS += ("span_overlap", "clinical_micro_f1", "micro_f1", "macro_f1", "cohen_kappa")


def format_report(report: dict) -> str:
    """A ``*_agreement_report`` (optionally with ``judge`` and ``data`` added) as text:
    each statistic with its CI, then the confusion matrix."""
    lines = [f"{key}: {report[key]}" for key in ("judge", "data") if key in report]
    lines.append(
        f"{report['n']} item{'s' * (report['n'] != 1)} in {report['cases']} "
        f"case{'s' * (report['cases'] != 1)}; value [95% CI] from "
        f"{report.get('n_resamples', 2000)} bootstrap resamples over cases"
    )
    lines += [_line(k, report[k]) for k in _SCALARS if k in report]
    if "per_theme" in report:
        lines.append("  per-theme F1:")
        width = 2 + max(len(theme) for theme in report["per_theme"])
        for theme, entry in report["per_theme"].items():
            line = _line(f"  {theme}", entry["f1"], width)
            lines.append(f"{line}  support {entry['support']}")
    if "judge_vs_annotators" in report:
        lines.append(f"  judge vs each of {report['annotators']} annotators (mean):")
        lines += [_line(f"  {k}", v) for k, v in report["judge_vs_annotators"].items()]
        lines.append("  human ceiling (annotator pairs, mean):")
        lines += [_line(f"  {k}", v) for k, v in report["human_ceiling"].items()]
    if "unusable" in report:
        lines.append(f"  unusable judgements: {report['unusable']} of {report['n']}")
    matrix = report["confusion_matrix"]
    labels = report.get("labels", ["no match", "match"])
    lines.append("  confusion matrix (rows: human, columns: judge):")
    width = max(len(str(x)) for row in matrix for x in row) + 1
    lines.append("    " + " ".join(f"{k:>{width}}" for k in range(len(labels))) + "  labels")
    for i, row in enumerate(matrix):
        cells = " ".join(f"{x:>{width}}" for x in row)
        lines.append(f"    {cells}  {i}: {labels[i] if i < len(labels) else ''}")
    if more := "; ".join(f"{k}: {labels[k]}" for k in range(len(matrix), len(labels))):
        lines.append(f"    {more}")
    return "\n".join(lines)
