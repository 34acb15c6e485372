"""Scored runs read back from disk (:func:`load_run`), and paired comparisons of systems
scored against the same references (:func:`compare_runs`: the difference of a
micro-averaged figure with a paired, case-level bootstrap CI and p-value,
:func:`editf1.stats.paired_bootstrap`; Efron & Tibshirani 1993, §13 and §16).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from editf1.aggregate import aggregate, micro_prf, pair_counts
from editf1.count import count_themes
from editf1.inputs import describe
from editf1.judges.base import VetoedSpan
from editf1.results import PRF, CorpusResult, PairResult, SentenceAlignment
from editf1.segment import Sentence
from editf1.stats import Estimate, bootstrap, paired_bootstrap
from editf1.themes import CLINICAL_THEMES, OTHER, THEMES
from editf1.validation.agreement import to_jsonable

__all__ = [
    "METRICS",
    "PairedDifference",
    "ScoredRun",
    "TooFewCasesError",
    "case_pattern",
    "compare_all",
    "compare_runs",
    "corpus_estimates",
    "load_run",
    "pair_result_from_dict",
    "reference_mismatch",
]

#: Micro-averaged figures a comparison can test; ``theme_*`` need theme scores in both runs.
METRICS = ("f1", "precision", "recall", "theme_f1", "theme_precision", "theme_recall")
_DEFAULT_METRICS = ("f1", "precision", "recall", "theme_f1")
_COUNT_FIELDS = ("row", "expected_matches", "expected_additions", "expected_deletions")
_COUNT_FIELDS += ("unusable_judgements", "unusable_theme_judgements")
_SCORE_FIELDS = ("precision", "recall", "f1", "theme_precision", "theme_recall", "theme_f1")


def _sentence(d: dict) -> Sentence:
    return Sentence(d["text"], d["start"], d["end"])


def _vetoed(d: dict) -> VetoedSpan:
    return VetoedSpan(_sentence(d["span"]), tuple(d["kinds"]), d["probability"])


def _check_numbers(d: dict) -> None:
    """Raise ValueError naming the first count or score field of ``d`` out of range."""
    for field in _COUNT_FIELDS:
        value = d.get(field, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(
                f"field {field!r} must be a count (an integer >= 0), got {describe(value)}"
            )
    for field in _SCORE_FIELDS:
        value = d.get(field, 0.0)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (ok and 0.0 <= value <= 1.0):
            raise ValueError(f"field {field!r} must be a number in [0, 1], got {describe(value)}")


def pair_result_from_dict(d: dict) -> PairResult:
    """Rebuild a :class:`PairResult` from :meth:`PairResult.to_dict` output, all but
    ``PRF.undefined`` (the ``warnings`` still name it); theme counts are counted again over
    the 9 themes where the pair's themes include Other, else the 8 clinical ones.

    Raises:
        KeyError: naming a missing field.
        ValueError: naming a count or score field that is not a number in range.
    """
    _check_numbers(d)
    has_themes = "theme_f1" in d
    alignment = tuple(
        SentenceAlignment(
            reference=_sentence(a["reference_sentence"]),
            status=a["status"],
            match=_sentence(a["match"]) if a["match"] else None,
            score=a["score"],
            theme=a["theme"],
            judge_output=a.get("judge_output"),
            vetoed=_vetoed(a["vetoed"]) if a.get("vetoed") else None,
        )
        for a in d["alignment"]
    )
    prediction_themes = tuple(s.get("theme") for s in d["prediction_sentences"])
    theme_counts = None
    if has_themes:
        other = OTHER in {*d.get("reference_themes", ()), *d.get("prediction_themes", ())}
        theme_counts = count_themes(
            [a.theme for a in alignment],
            prediction_themes,
            [a.status == "match" for a in alignment],
            THEMES if other else CLINICAL_THEMES,
        )
    return PairResult(
        **{field: d[field] for field in _COUNT_FIELDS[:4]},  # row, EM, EA, ED
        id=d.get("id"),
        content=PRF(d["precision"], d["recall"], d["f1"]),
        alignment=alignment,
        expected_deletion_sentences=tuple(map(_sentence, d["expected_deletion_sentences"])),
        prediction_sentences=tuple(map(_sentence, d["prediction_sentences"])),
        prediction_sentence_themes=prediction_themes,
        theme_counts=theme_counts,
        theme=PRF(d["theme_precision"], d["theme_recall"], d["theme_f1"]) if has_themes else None,
        **{field: d.get(field, 0) for field in _COUNT_FIELDS[4:]},  # the unusable judgements
        warnings=tuple(d.get("warnings", ())),
        best_reference=d.get("best_reference"),
    )


def _reply_sizes(d: dict) -> tuple[int | None, ...] | None:
    """None for a one-reply row, else EM + EA per reply (None where an older run lacks it)."""
    if "best_reference" not in d:
        return None
    entries = d.get("per_reference") or [{}] * d["n_references"]
    return tuple(
        e["expected_matches"] + e["expected_additions"]
        if "expected_matches" in e and "expected_additions" in e
        else None
        for e in entries
    )


@dataclass(frozen=True)
class ScoredRun:
    """One system's scored pairs, as read back from ``edit-f1 score`` output.

    Attributes:
        result: the corpus result re-aggregated from the pairs (in file order).
        keys: one pairing key per pair: its ``id`` when every row has one, else its
            ``row`` number as a string.
        gold: pair key -> the row's ``gold`` entry (``edit-f1 score --gold``); empty without.
        replies: per pair, the sentence count of each of its replies where it was
            scored against several, else ``None``; empty for a run made in memory.
        provenance: the run record (:attr:`editf1.scorer.EditF1Scorer.provenance`) of the
            file's lines, else its summary's; empty without either.
    """

    name: str
    path: Path | None
    result: CorpusResult
    keys: tuple[str, ...]
    gold: dict = dataclasses.field(default_factory=dict)
    replies: tuple[tuple[int | None, ...] | None, ...] = ()
    provenance: dict = dataclasses.field(default_factory=dict)

    @property
    def pairs(self) -> list[PairResult]:
        return self.result.pairs

    @property
    def has_themes(self) -> bool:
        return self.result.theme is not None


def _read_pairs(path: Path) -> tuple[list, list, list, dict]:
    """The pairs, run records, reply sizes and gold entries (by index) of a per-row file."""
    records, pairs, replies, gold = [], [], [], {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text, so not a run of edit-f1 score") from None
    # split on "\n" only: a JSON string may hold U+2028, which str.splitlines splits on
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        not_pair = f"{path}, line {number}: not a scored pair written by edit-f1 score"
        try:
            row = json.loads(line)
            pairs.append(pair_result_from_dict(row))
            records.append(row.get("run"))
            if records[-1] != records[0]:
                raise ValueError(
                    "its run record (judges, options, versions) differs from the first "
                    "line's: the file mixes runs"
                )
            replies.append(_reply_sizes(row))
            if "gold" in row:
                gold[len(pairs) - 1] = row["gold"]
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{not_pair} (not JSON: {error.msg} at column {error.colno})"
            ) from None
        except (KeyError, TypeError, AttributeError) as error:
            what = f"no field {error}" if isinstance(error, KeyError) else "bad fields"
            raise ValueError(f"{not_pair} ({what})") from None
        except ValueError as error:  # a count or score that is not a number
            raise ValueError(f"{path}, line {number}: {error}") from None
    if not pairs:
        raise ValueError(f"{path}: no scored pairs")
    return pairs, records, replies, gold


def load_run(
    path: str | Path,
    name: str | None = None,
    *,
    summary: str | Path | dict | None = None,
) -> ScoredRun:
    """Read a per-row JSONL file written by ``edit-f1 score`` (or ``to_dict`` rows).

    Args:
        name: the system's name (default: the file name without ``.edit_f1.jsonl``).
        summary: the run's summary (``--summary-json`` file, or the dict), checked against
            the pairs. The scored themes are the summary's, else those of the run record's
            ``include_other``, else the 8 clinical ones unless a row lists Other.

    Raises:
        FileNotFoundError: if a file is missing.
        ValueError: naming the line that is not a scored pair of this run, or the summary
            or ids that do not fit the pairs.
    """
    path = Path(path)
    pairs, records, replies, gold = _read_pairs(path)
    if isinstance(summary, (str, Path)):
        try:
            summary = json.loads(Path(summary).read_text(encoding="utf-8"))
        except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise ValueError(
                f"{summary}: not a summary written by edit-f1 score ({error})"
            ) from None
    if summary is not None and not isinstance(summary, dict):
        raise ValueError(
            f"the summary of {path} is not a JSON object (got {type(summary).__name__})"
        )
    provenance = records[0] or (summary or {}).get("run") or {}
    if summary and summary.get("themes_scored"):
        themes = tuple(summary["themes_scored"])
    elif provenance:
        themes = THEMES if provenance["options"]["include_other"] is True else CLINICAL_THEMES
    elif any(OTHER in p.reference_themes | p.prediction_themes for p in pairs):
        themes = THEMES
    else:
        themes = CLINICAL_THEMES
    zero_division = provenance.get("options", {}).get("zero_division", 0.0)
    result = aggregate(  # the scorer's warnings were issued when the run was scored
        pairs,
        themes_scored=themes,
        zero_division=0.0 if zero_division == "warn" else zero_division,
        provenance=provenance,
        keep_pairs=True,
        warn=False,
    )
    if summary:
        _check_summary(summary, result, path, lines_recorded=records[0] is not None)
    with_ids = all(p.id is not None for p in pairs)
    keys = tuple(p.id if with_ids else str(p.row) for p in pairs)
    if duplicates := sorted(k for k, n in Counter(keys).items() if n > 1):
        raise ValueError(f"{path}: duplicate ids {duplicates[:10]}; pairs cannot be matched")
    default_name = path.name.removesuffix(".jsonl").removesuffix(".edit_f1")
    gold = {keys[k]: g for k, g in gold.items()}
    return ScoredRun(name or default_name, path, result, keys, gold, tuple(replies), provenance)


def _check_summary(summary: dict, result: CorpusResult, path: Path, lines_recorded: bool):
    """Raise ValueError if the summary's run record or figures differ from the pairs'."""
    recorded = (result.provenance, result.reproducibility)
    given = (summary.get("run", recorded[0]), summary.get("reproducibility", recorded[1]))
    if lines_recorded and given != recorded:
        raise ValueError(
            f"the summary's run record or reproducibility string differs from the run record "
            f"of the lines of {path}: they are not from the same run"
        )
    for key, value in result.summary().items():
        if key not in summary or not isinstance(value, (int, float)):
            continue
        given = summary[key]
        if isinstance(given, bool) or not isinstance(given, (int, float)):
            raise ValueError(f"the summary of {path} gives {key} as {type(given).__name__}")
        if abs(given - value) > 1e-9:
            raise ValueError(
                f"the summary gives {key} = {summary[key]} but the pairs in {path} "
                f"give {value}: they are not from the same run"
            )


def case_pattern(pattern: str) -> Callable[[str], str]:
    """A function mapping a pair's key to its case: the first group of ``pattern``
    (``re.fullmatch``), e.g. ``(.+)-\\d+`` for OncQA ids ``"<case>-<n>"``.

    Raises:
        ValueError: for a pattern without a group; at call time, for a key it does not match.
    """
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ValueError(f"case pattern {pattern!r} is not a regular expression: {error}") from None
    if compiled.groups < 1:
        raise ValueError(f"case pattern {pattern!r} needs a group, e.g. (.+)-\\d+")

    def case(key: str) -> str:
        found = compiled.fullmatch(key)
        if found is None or found.group(1) is None:
            raise ValueError(
                f"case pattern {pattern!r} does not match the pair id {key!r}"
                + ("" if found is None else " with its first group")
            )
        return found.group(1)

    return case


def _micro(pairs: Sequence[PairResult], metric: str) -> Callable[[np.ndarray], float]:
    """``metric`` of the pairs at the given indices, micro-averaged from their counts."""
    counts = pair_counts(pairs, "theme" if metric.startswith("theme_") else "content")
    field = metric.removeprefix("theme_")
    return lambda idx: getattr(micro_prf(counts[idx]), field)


def _value(pairs: Sequence[PairResult], metric: str) -> float:
    return _micro(pairs, metric)(np.arange(len(pairs)))


def _aligned(baseline: ScoredRun, system: ScoredRun) -> list[PairResult]:
    """``system``'s pairs in the order of ``baseline``'s keys."""
    order = {key: i for i, key in enumerate(system.keys)}
    return [system.pairs[order[key]] for key in baseline.keys]


def corpus_estimates(
    run: ScoredRun,
    *,
    cases: Callable[[str], str] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Estimate]:
    """``{metric: Estimate}`` of each of :data:`METRICS` the run has: the corpus (micro)
    figure in [0, 1] with a case-level bootstrap CI (``cases``: pair key -> case, default
    one case per pair)."""
    groups = None if cases is None else [cases(k) for k in run.keys]
    boot = {"groups": groups, "n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    return {
        metric: bootstrap(_micro(run.pairs, metric), len(run.pairs), **boot)
        for metric in METRICS
        if run.has_themes or not metric.startswith("theme_")
    }


@dataclass(frozen=True)
class PairedDifference:
    """``system − baseline`` for one micro-averaged metric, on the same references.

    Attributes:
        baseline_value, system_value: the metric of each run, in [0, 1].
        difference: ``system_value - baseline_value`` with its paired bootstrap CI
            (``n``: pairs).
        p_value: two-sided bootstrap p-value for "no difference", in (0, 1]
            (:func:`editf1.stats.paired_bootstrap`).
    """

    metric: str
    baseline: str
    system: str
    baseline_value: float
    system_value: float
    difference: Estimate
    p_value: float
    n_cases: int
    n_resamples: int
    seed: int

    def to_dict(self) -> dict:
        return to_jsonable(dict(self.__dict__))


def _replies(run: ScoredRun) -> tuple[tuple[int | None, ...] | None, ...]:
    """:attr:`ScoredRun.replies`, or for a run made in memory its pairs' replies."""
    return run.replies or tuple(
        tuple(r.expected_matches + r.expected_additions for r in p.per_reference)
        if p.per_reference
        else None
        for p in run.pairs
    )


def reference_mismatch(baseline: ScoredRun, system: ScoredRun) -> str | None:
    """Why two runs cannot be compared pair by pair, or ``None`` if they can.

    They can when they hold the same pair keys and each pair the same reference
    sentences. A draft scored against several replies is compared on each run's best
    reply: where both chose the same reply its sentences must agree, else the runs must
    have had as many replies of the same sentence counts (only the best is in a file).
    """
    if set(baseline.keys) != set(system.keys):
        only_base = sorted(set(baseline.keys) - set(system.keys))
        only_system = sorted(set(system.keys) - set(baseline.keys))
        return (
            f"the runs hold different pairs: {len(only_base)} only in {baseline.name!r} "
            f"(e.g. {only_base[:3]}), {len(only_system)} only in {system.name!r} "
            f"(e.g. {only_system[:3]})"
        )
    other = dict(zip(system.keys, zip(system.pairs, _replies(system))))
    for key, pair, replies in zip(baseline.keys, baseline.pairs, _replies(baseline)):
        other_pair, other_replies = other[key]
        counts = [len(r) if r else 1 for r in (replies, other_replies)]
        if (replies is None) != (other_replies is None) or counts[0] != counts[1]:
            return (
                f"pair {key!r} was scored against {counts[0]} replies in {baseline.name!r} "
                f"and {counts[1]} in {system.name!r}"
            )
        if replies and pair.best_reference != other_pair.best_reference:
            if any(a != b for a, b in zip(replies, other_replies) if None not in (a, b)):
                return (
                    f"pair {key!r} was scored against replies of different lengths in the two runs"
                )
            continue  # each run's best of the same replies
        ours = [a.reference.text for a in pair.alignment]
        theirs = [a.reference.text for a in other_pair.alignment]
        if ours != theirs:
            return f"pair {key!r} was scored against different references in the two runs"
    themes = baseline.has_themes and system.has_themes
    if themes and baseline.result.themes_scored != system.result.themes_scored:
        return "the runs score different theme sets (one with --include-other)"
    return None


class TooFewCasesError(ValueError):
    """Two runs hold fewer than 2 cases: no paired bootstrap can compare them."""


def compare_runs(
    baseline: ScoredRun,
    system: ScoredRun,
    *,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    cases: Callable[[str], str] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[PairedDifference]:
    """One :class:`PairedDifference` per metric, in order, of two systems scored against
    the same references: each resample draws cases with replacement and recomputes both
    runs' micro figures from the *same* pairs.

    Args:
        metrics: names from :data:`METRICS`; theme metrics need theme scores in both.
        cases: pair key -> case, e.g. :func:`case_pattern` (default: a case per pair).

    Raises:
        ValueError: for runs not comparable (:func:`reference_mismatch`), a bad metric.
        TooFewCasesError: (a ValueError) for fewer than 2 cases.

    Example:
        >>> from editf1.scorer import EditF1Scorer
        >>> scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
        >>> refs = ["Rest. Drink water.", "Call us.", "Take ibuprofen."]
        >>> runs = [
        ...     ScoredRun(name, None, scorer.score(drafts, refs), ("a", "b", "c"))
        ...     for name, drafts in [("A", ["Rest.", "Hi.", "Hi."]),
        ...                          ("B", ["Rest. Drink water.", "Call us.", "Hi."])]
        ... ]
        >>> d = compare_runs(*runs, metrics=["f1"], n_resamples=200)[0]
        >>> round(d.baseline_value, 4), round(d.system_value, 4), round(d.difference.value, 4)
        (0.2857, 0.75, 0.4643)
    """
    reason = reference_mismatch(baseline, system)
    if reason:
        raise ValueError(f"cannot compare {baseline.name!r} with {system.name!r}: {reason}")
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {list(METRICS)}")
    lacking = [r.name for r in (baseline, system) if not r.has_themes]
    if lacking and any(m.startswith("theme_") for m in metrics):
        raise ValueError(f"theme metrics need theme scores; {lacking} were scored without")
    aligned = _aligned(baseline, system)
    groups = None if cases is None else [cases(k) for k in baseline.keys]
    n_cases = len(set(groups)) if groups is not None else len(aligned)
    if n_cases < 2:
        raise TooFewCasesError(
            "only 1 case: a paired bootstrap over one case cannot tell the systems apart "
            "(score more messages)"
        )
    boot = {"groups": groups, "n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    names, out = (baseline.name, system.name), []
    for metric in metrics:
        values = (_value(baseline.pairs, metric), _value(aligned, metric))
        paired = paired_bootstrap(
            _micro(baseline.pairs, metric), _micro(aligned, metric), len(aligned), **boot
        )
        out.append(PairedDifference(metric, *names, *values, *paired, n_cases, n_resamples, seed))
    return out


def compare_all(
    runs: Sequence[ScoredRun], **options
) -> tuple[list[PairedDifference], list[tuple[str, str, str]]]:
    """``(differences, skipped)``: :func:`compare_runs` for every two runs (the earlier the
    baseline; theme metrics where both have theme scores), and ``(baseline, system, reason)``
    for runs that cannot be compared (other references, fewer than 2 cases)."""
    differences, skipped = [], []
    metrics = options.pop("metrics", _DEFAULT_METRICS)
    for baseline, system in combinations(runs, 2):
        reason = reference_mismatch(baseline, system)
        if reason:
            skipped.append((baseline.name, system.name, reason))
            continue
        themes = baseline.has_themes and system.has_themes
        chosen = [m for m in metrics if themes or not m.startswith("theme_")]
        try:
            differences += compare_runs(baseline, system, metrics=chosen, **options)
        except TooFewCasesError as error:
            skipped.append((baseline.name, system.name, str(error)))
    return differences, skipped
