"""Does edit-F1 agree with what oncologists actually did? OncQA, against two baselines.

In OncQA stage 2 oncologists edited GPT-4 drafts into the replies they would send; the
data records the character edit distance (Levenshtein, checked here) and whether the
draft was acceptable as is, with modifications, or not at all. In stage 1 oncologists
wrote their own replies without a draft (37 cases by two of them). Three scores are
compared on the same rows:

* ``edit-F1``: content F1 with the embedded judges (the default ``EditF1Scorer``);
* ``exact``: content F1 with ``content_judge="exact"`` (a reference sentence matches
  only a draft sentence with the same words), the model-free baseline judge;
* ``difflib``: ``difflib.SequenceMatcher(None, draft, reply, autojunk=False).ratio()``,
  a character-level similarity (autojunk off: on texts over 200 characters it would
  treat every common letter as junk).

Figures (95% percentile bootstrap CIs from ``editf1.stats.bootstrap``, resampling
cases, seeded):

1. stage 2, edited drafts: Spearman's rho of each score with the normalised edit
   distance (edit distance / length of the longer text), over the drafts the
   oncologist changed; and each score per acceptability class, with Spearman's rho
   against the class (0 no modifications, 1 with modifications, 2 unacceptable);
2. stage 1, the paper's setting: the draft against the oncologist's own reply (corpus
   micro F1, or mean ratio), and whether that predicts how much the same case's draft
   was edited in stage 2 (rho per case);
3. inter-annotator predictability (``editf1.analysis.inter_annotator``): one oncologist's reply
   scored against the other's, beside the draft on the same cases;
4. ``leave_out_other``: edit-F1 with the sentences the embedded theme judge labels Other
   (greetings, sign-offs, names) left out of the content counts, beside the paper's
   counting of every sentence, on both stages.

    python benchmarks/validity.py --data-dir ../shared/data/oncqa

Writes ``benchmarks/results/validity.json``, ``validity.md`` and ``validity.png``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import statistics
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: Acceptability ratings of OncQA stage 2 (``q3``), in order of how much editing they mean.
ACCEPTABILITY = (
    "Acceptable with no modifications",
    "Acceptable with modifications",
    "Unacceptable (Major modifications or rewrite required)",
)
SHORT_CLASS = {
    ACCEPTABILITY[0]: "as is",
    ACCEPTABILITY[1]: "modified",
    ACCEPTABILITY[2]: "unacceptable",
}
METRICS = ("edit-F1", "exact", "difflib")


def char_ratio(prediction: str, reference: str) -> float:
    """difflib's similarity ratio 2M/T of two texts, in [0, 1] (autojunk off).

    >>> char_ratio("abcd", "abce")
    0.75
    """
    return difflib.SequenceMatcher(None, prediction, reference, autojunk=False).ratio()


def normalised_edit_distance(edit_distance: int, prediction: str, reference: str) -> float:
    """Character edit distance divided by the longer text's length, in [0, 1].

    >>> normalised_edit_distance(1, "abcd", "abce")
    0.25
    """
    longest = max(len(prediction), len(reference))
    return edit_distance / longest if longest else 0.0


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (scipy), NaN when one side is constant (a bootstrap resample can
    be; :func:`editf1.stats.bootstrap` skips those).

    >>> spearman([1, 2, 3], [0.3, 0.2, 0.1])
    -1.0
    """
    from scipy.stats import spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


def spearman_estimate(x, y, groups, n_resamples: int, seed: int) -> dict:
    """rho of ``x`` and ``y`` with a case-level bootstrap CI, as a dict; ``value`` is
    ``None`` when rho is undefined (one side constant, e.g. every score 0)."""
    from editf1.stats import bootstrap

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.isnan(spearman(x, y)):
        return {"value": None, "low": None, "high": None, "n": len(x), "note": "constant input"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        estimate = bootstrap(
            lambda i: spearman(x[i], y[i]),
            len(x),
            groups=groups,
            n_resamples=n_resamples,
            seed=seed,
        )
    return estimate.to_dict()


def mean_estimate(values, groups, n_resamples: int, seed: int) -> dict:
    """The mean of ``values`` with a case-level bootstrap CI, as a dict."""
    from editf1.stats import bootstrap

    values = np.asarray(values, dtype=float)
    return bootstrap(
        lambda i: float(values[i].mean()),
        len(values),
        groups=groups,
        n_resamples=n_resamples,
        seed=seed,
    ).to_dict()


def micro_f1_estimate(pairs, groups, n_resamples: int, seed: int) -> dict:
    """Corpus (micro) content F1 of scored pairs, with a case-level bootstrap CI."""
    from editf1.aggregate import prf
    from editf1.stats import bootstrap

    counts = np.array(
        [(p.expected_matches, p.expected_deletions, p.expected_additions) for p in pairs]
    )
    return bootstrap(
        lambda i: prf(*(int(c) for c in counts[i].sum(axis=0)), 0.0).f1,
        len(counts),
        groups=groups,
        n_resamples=n_resamples,
        seed=seed,
    ).to_dict()


def distribution(values: Sequence[float]) -> dict:
    """n, mean, quartiles and the share of perfect scores (1.0) of per-pair values.

    >>> distribution([0.0, 0.5, 1.0])["median"], distribution([0.0, 0.5, 1.0])["share_perfect"]
    (0.5, 0.3333333333333333)
    """
    values = np.asarray(values, dtype=float)
    q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75])
    return {
        "n": len(values),
        "mean": float(values.mean()),
        "q1": float(q1),
        "median": float(median),
        "q3": float(q3),
        "share_perfect": float((values >= 1.0).mean()),
    }


def scorers() -> dict:
    """The two edit-F1 variants (content scores only; themes are not compared here)."""
    from editf1.scorer import EditF1Scorer

    return {
        "edit-F1": EditF1Scorer(theme_judge=None, zero_division=0.0),
        "exact": EditF1Scorer(content_judge="exact", theme_judge=None, zero_division=0.0),
    }


def score_rows(scorer_by_name: dict, rows: list[dict]) -> dict[str, list]:
    """Per-row scores of every metric: ``{"edit-F1": [PairResult...], "exact": [...],
    "difflib": [float...]}``."""
    predictions = [r["prediction"] for r in rows]
    references = [r["reference"] for r in rows]
    out: dict[str, list] = {
        name: scorer.score(predictions, references).pairs for name, scorer in scorer_by_name.items()
    }
    out["difflib"] = [char_ratio(p, r) for p, r in zip(predictions, references)]
    return out


def per_row(scored: dict[str, list], name: str) -> list[float]:
    """Per-row values of one metric: content F1 of each pair, or the ratio."""
    return [p if isinstance(p, float) else p.content.f1 for p in scored[name]]


def edited_figures(rows, scored, n_resamples: int, seed: int) -> dict:
    """Stage 2: rho with the normalised edit distance, and scores per acceptability class."""
    ned = [
        normalised_edit_distance(r["edit_distance"], r["prediction"], r["reference"]) for r in rows
    ]
    changed = [i for i, r in enumerate(rows) if r["edit_distance"] > 0]
    cases = [r["case_id"] for r in rows]
    grade = [ACCEPTABILITY.index(r["acceptability"]) for r in rows]
    out = {
        "rows": len(rows),
        "changed_rows": len(changed),
        "changed_cases": len({cases[i] for i in changed}),
        "normalised_edit_distance_changed": distribution([ned[i] for i in changed]),
        "metrics": {},
    }
    for name in METRICS:
        values = per_row(scored, name)
        pick = [values[i] for i in changed]
        figures = {
            "rho_with_normalised_edit_distance_changed_rows": spearman_estimate(
                pick, [ned[i] for i in changed], [cases[i] for i in changed], n_resamples, seed
            ),
            "rho_with_normalised_edit_distance_all_rows": spearman_estimate(
                values, ned, cases, n_resamples, seed
            ),
            "rho_with_acceptability_all_rows": spearman_estimate(
                values, grade, cases, n_resamples, seed
            ),
            "per_class": {
                SHORT_CLASS[label]: distribution(
                    [v for v, r in zip(values, rows) if r["acceptability"] == label]
                )
                for label in ACCEPTABILITY
            },
            "changed_rows_scored_perfect": sum(v >= 1.0 for v in pick),
            "changed_rows_scored_perfect_ids": [
                {"id": rows[i]["id"], "class": SHORT_CLASS[rows[i]["acceptability"]], "ned": ned[i]}
                for i in changed
                if values[i] >= 1.0
            ],
        }
        if name != "difflib":
            figures["corpus_f1"] = micro_f1_estimate(scored[name], cases, n_resamples, seed)
        out["metrics"][name] = figures
    return out


def own_reply_figures(rows, scored, edited_rows, n_resamples: int, seed: int) -> dict:
    """Stage 1 (the paper's setting), and whether it predicts the stage-2 edits per case."""
    cases = [r["case_id"] for r in rows]
    by_case_ned: dict[str, list[float]] = {}
    by_case_grade: dict[str, list[int]] = {}
    for r in edited_rows:
        ned = normalised_edit_distance(r["edit_distance"], r["prediction"], r["reference"])
        by_case_ned.setdefault(r["case_id"], []).append(ned)
        by_case_grade.setdefault(r["case_id"], []).append(ACCEPTABILITY.index(r["acceptability"]))
    common = sorted(set(cases) & set(by_case_ned))
    out = {
        "rows": len(rows),
        "cases": len(set(cases)),
        "cases_in_both_stages": len(common),
        "metrics": {},
    }
    for name in METRICS:
        values = per_row(scored, name)
        by_case: dict[str, list[float]] = {}
        for case, value in zip(cases, values):
            by_case.setdefault(case, []).append(value)
        case_score = [statistics.mean(by_case[c]) for c in common]
        figures = {
            "per_pair": distribution(values),
            "mean": mean_estimate(values, cases, n_resamples, seed),
            "rho_case_score_with_stage2_normalised_edit_distance": spearman_estimate(
                case_score,
                [statistics.mean(by_case_ned[c]) for c in common],
                None,
                n_resamples,
                seed,
            ),
            "rho_case_score_with_stage2_acceptability": spearman_estimate(
                case_score,
                [statistics.mean(by_case_grade[c]) for c in common],
                None,
                n_resamples,
                seed,
            ),
        }
        if name != "difflib":
            figures["corpus_f1"] = micro_f1_estimate(scored[name], cases, n_resamples, seed)
        out["metrics"][name] = figures
    return out


def iap_figures(rows, scored, scorer_by_name, n_resamples: int, seed: int) -> dict:
    """Inter-annotator predictability on cases with two oncologists, beside the draft."""
    from editf1.analysis.inter_annotator import inter_annotator_predictability

    replies: dict[str, list[str]] = {}
    for r in rows:
        replies.setdefault(r["case_id"], []).append(r["reference"])
    two = {case for case, texts in replies.items() if len(texts) >= 2}
    keep = [i for i, r in enumerate(rows) if r["case_id"] in two]
    draft_cases = [rows[i]["case_id"] for i in keep]
    out = {"cases": len(two), "metrics": {}}
    for name in METRICS:
        if name == "difflib":
            ordered = [
                (case, char_ratio(texts[a], texts[b]))
                for case, texts in replies.items()
                if case in two
                for a in range(len(texts))
                for b in range(len(texts))
                if a != b
            ]
            clinicians = mean_estimate(
                [v for _, v in ordered], [c for c, _ in ordered], n_resamples, seed
            )
            draft = mean_estimate([scored[name][i] for i in keep], draft_cases, n_resamples, seed)
        else:
            iap = inter_annotator_predictability(
                scorer_by_name[name], replies, n_resamples=n_resamples, seed=seed
            )
            clinicians = iap.f1.to_dict()
            draft = micro_f1_estimate(
                [scored[name][i] for i in keep], draft_cases, n_resamples, seed
            )
        out["metrics"][name] = {
            "oncologist_vs_oncologist": clinicians,
            "draft_vs_oncologist_same_cases": draft,
            "gap": clinicians["value"] - draft["value"],
        }
    return out


def leave_out_other_figures(edited_rows, own_rows, scored_edited, scored_own, **kw) -> dict:
    """Stage 2 and stage 1 with the sentences labelled Other left out of the content
    counts, beside the paper's counting (the edit-F1 rows scored above)."""
    from editf1.scorer import EditF1Scorer

    scorer = EditF1Scorer(theme_judge="embedding", leave_out_other=True, zero_division=0.0)
    out = {"theme_judge": scorer.theme_judge.fingerprint}
    for name, rows, paper in (
        ("edited", edited_rows, scored_edited),
        ("own_reply", own_rows, scored_own),
    ):
        pairs = scorer.score([r["prediction"] for r in rows], [r["reference"] for r in rows]).pairs
        cases = [r["case_id"] for r in rows]
        counted = sum(p.expected_matches + p.expected_additions for p in pairs)
        figures = {
            "corpus_f1": micro_f1_estimate(pairs, cases, **kw),
            "paper_corpus_f1": micro_f1_estimate(paper["edit-F1"], cases, **kw),
            "reference_sentences_left_out": sum(len(p.alignment) for p in pairs) - counted,
        }
        if name == "edited":
            values = [p.content.f1 for p in pairs]
            figures["per_class"] = {
                SHORT_CLASS[label]: distribution(
                    [v for v, r in zip(values, rows) if r["acceptability"] == label]
                )
                for label in ACCEPTABILITY
            }
        out[name] = figures
    return out


def _plot(edited_rows, scored_edited, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ned = [
        normalised_edit_distance(r["edit_distance"], r["prediction"], r["reference"])
        for r in edited_rows
    ]
    grade = [ACCEPTABILITY.index(r["acceptability"]) for r in edited_rows]
    colours = ["tab:green", "tab:orange", "tab:red"]
    fig, axes = plt.subplots(2, 3, figsize=(12, 7), dpi=90)
    rng = np.random.default_rng(0)
    for col, name in enumerate(METRICS):
        values = per_row(scored_edited, name)
        ax = axes[0, col]
        ax.scatter(ned, values, c=[colours[g] for g in grade], s=18, alpha=0.8)
        ax.set_xlabel("normalised edit distance (stage 2)")
        ax.set_ylabel(f"{name} (draft, edited reply)")
        ax.set_title(name)
        ax.set_ylim(-0.05, 1.05)
        ax = axes[1, col]
        groups = [[v for v, g in zip(values, grade) if g == k] for k in range(3)]
        ax.boxplot(groups, showfliers=False)
        for k, group in enumerate(groups):
            ax.scatter(
                k + 1 + rng.uniform(-0.15, 0.15, len(group)), group, s=10, c=colours[k], alpha=0.7
            )
        ax.set_xticks([1, 2, 3], [SHORT_CLASS[label] for label in ACCEPTABILITY])
        ax.set_ylabel(name)
        ax.set_ylim(-0.05, 1.05)
    fig.suptitle("OncQA stage 2: scores of the GPT-4 draft against the oncologist's edit of it")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _fmt(e: dict) -> str:
    if e["value"] is None:
        return "undefined (constant score)"
    return f"{e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"


def _markdown(payload: dict) -> str:
    e, o, i = payload["edited"], payload["own_reply"], payload["iap"]
    lines = [
        "### Validity on OncQA (95% bootstrap CIs over cases, "
        f"{payload['n_resamples']} resamples, seed {payload['seed']})",
        "",
        f"**Stage 2, draft vs the oncologist's edit of it** ({e['rows']} rows; "
        f"{e['changed_rows']} changed drafts in {e['changed_cases']} cases, median normalised "
        f"edit distance {e['normalised_edit_distance_changed']['median']:.3f}). A score that "
        "tracks editing effort has a negative rho with the edit distance and with the "
        "acceptability class.",
        "",
        "| score | rho with normalised edit distance (changed drafts) | rho, all rows | "
        "rho with acceptability class | changed drafts scored 1.0 |",
        "|---|---|---|---|---|",
    ]
    for name in METRICS:
        m = e["metrics"][name]
        lines.append(
            f"| {name} | {_fmt(m['rho_with_normalised_edit_distance_changed_rows'])} | "
            f"{_fmt(m['rho_with_normalised_edit_distance_all_rows'])} | "
            f"{_fmt(m['rho_with_acceptability_all_rows'])} | "
            f"{m['changed_rows_scored_perfect']}/{e['changed_rows']} |"
        )
    lines += [
        "",
        "Per acceptability class, median [quartiles] of the per-pair score (n):",
        "",
        "| score | " + " | ".join(SHORT_CLASS[label] for label in ACCEPTABILITY) + " |",
        "|---|---|---|---|",
    ]
    for name in METRICS:
        cells = []
        for label in ACCEPTABILITY:
            d = e["metrics"][name]["per_class"][SHORT_CLASS[label]]
            cells.append(f"{d['median']:.3f} [{d['q1']:.3f}, {d['q3']:.3f}] (n={d['n']})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"**Stage 1, draft vs the oncologist's own reply** (the paper's setting; {o['rows']} "
        f"pairs, {o['cases']} cases). Corpus micro F1 (edit-F1, exact) or mean ratio "
        f"(difflib); then rho, over the {o['cases_in_both_stages']} cases of both stages, "
        "of the case's score with how much its draft was edited in stage 2:",
        "",
        "| score | corpus value | per-pair median [quartiles] | rho with stage-2 normalised "
        "edit distance | rho with stage-2 acceptability |",
        "|---|---|---|---|---|",
    ]
    for name in METRICS:
        m = o["metrics"][name]
        corpus = m.get("corpus_f1", m["mean"])
        d = m["per_pair"]
        lines.append(
            f"| {name} | {_fmt(corpus)} | {d['median']:.3f} [{d['q1']:.3f}, {d['q3']:.3f}] | "
            f"{_fmt(m['rho_case_score_with_stage2_normalised_edit_distance'])} | "
            f"{_fmt(m['rho_case_score_with_stage2_acceptability'])} |"
        )
    lines += [
        "",
        f"**Inter-annotator predictability** ({i['cases']} cases with two oncologists): one "
        "oncologist's reply scored against the other's (both directions), beside the GPT-4 "
        "draft against the same replies:",
        "",
        "| score | oncologist vs oncologist | draft vs oncologist | gap |",
        "|---|---|---|---|",
    ]
    for name in METRICS:
        m = i["metrics"][name]
        lines.append(
            f"| {name} | {_fmt(m['oncologist_vs_oncologist'])} | "
            f"{_fmt(m['draft_vs_oncologist_same_cases'])} | {m['gap']:+.3f} |"
        )
    left = payload["leave_out_other"]
    lines += [
        "",
        "**Greetings and sign-offs left out** (`leave_out_other`: sentences the theme judge "
        "labels Other are not counted), beside the paper's counting of every sentence:",
        "",
        "| setting | every sentence (the paper) | Other left out | reply sentences left out |",
        "|---|---|---|---|",
    ]
    for name, label in (("own_reply", "draft vs own reply"), ("edited", "draft vs its edit")):
        f = left[name]
        lines.append(
            f"| {label} | {_fmt(f['paper_corpus_f1'])} | {_fmt(f['corpus_f1'])} | "
            f"{f['reference_sentences_left_out']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.DEFAULT_ONCQA)
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)

    edited_rows = benchlib.oncqa_rows_or_exit(args.data_dir, "edited")
    own_rows = benchlib.oncqa_rows_or_exit(args.data_dir, "own_reply")
    by_name = scorers()
    scored_edited = score_rows(by_name, edited_rows)
    scored_own = score_rows(by_name, own_rows)
    kw = {"n_resamples": args.n_resamples, "seed": args.seed}
    payload = {
        "command": "python benchmarks/validity.py " + " ".join(argv or sys.argv[1:]),
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "judges": {name: s.content_judge.fingerprint for name, s in by_name.items()},
        "edited": edited_figures(edited_rows, scored_edited, **kw),
        "own_reply": own_reply_figures(own_rows, scored_own, edited_rows, **kw),
        "iap": iap_figures(own_rows, scored_own, by_name, **kw),
        "leave_out_other": leave_out_other_figures(
            edited_rows, own_rows, scored_edited, scored_own, **kw
        ),
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    _plot(edited_rows, scored_edited, args.output_dir / "validity.png")
    benchlib.write_results("validity", payload, _markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
