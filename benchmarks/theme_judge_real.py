"""The embedded theme judge on real clinical sentences, trained with and without them.

The team labelled 856 real sentences with the annotation guide's nine themes
(``research.team_labels.load_team_theme_items``: OncQA oncologists' replies and
GPT-4 drafts, K-QA physicians' answers, ExpertQA experts' revisions; a case is a
patient message or question, and an OncQA message's replies and draft share one). Three
judges are compared on them, each on sentences whose case it never saw:

* ``v2 recipe, team-written only``: embeddings, sentence features and word n-grams
  (``editf1.judges.embedding.EmbeddingThemeJudge``), hyperparameters chosen by 4-fold
  cross-validation on the 450 team-written sentences of ``theme_sentences.jsonl``,
  fitted on them alone;
* ``embeddings only, real + team``: embeddings only (what ``edit-f1 train-judge
  embedding-theme`` fits), fitted on real and team-written sentences together, ``C``
  chosen by nested cross-validation;
* ``v2, real + team``: v2's features fitted on both, ``C`` and the word weight chosen by
  nested cross-validation (``research.theme_judge_fit.cross_validate_theme_judge``).

Cross-validation splits by case: 5 outer folds of scikit-learn's StratifiedGroupKFold
(groups: cases, stratified by theme, shuffled with seed 0); in each, the hyperparameters
are chosen by 4 inner StratifiedGroupKFold folds of the training cases only (score:
micro-F1 over the 8 clinical themes), and the team-written sentences are in every
training set and never evaluated. Figures: per-theme F1, micro-F1 over the 8 clinical
themes (``clinical_micro_f1``: Other is no class), the share of sentences labelled as
the humans did (micro-F1 over all nine), macro F1 and Cohen's kappa, each with a 95%
percentile bootstrap CI from 2,000 resamples over cases (``editf1.stats.bootstrap``,
seed 0), and the confusion matrix; on the 160 sentences a second annotator labelled,
the judge against each and the two annotators against each other.

Physicians' own labels: OncQA ``content_grading_s44.csv`` / ``content_grading_d56.csv``
flag each response (GPT-4 drafts, oncologists' edits of them and their own replies) for
what it does. A flag is compared with "the judge finds one of the mapped themes in some
sentence of the response" (:data:`FLAG_THEMES`); the v2 judge of each response is the
outer fold's judge that never saw the response's case. Agreement and Cohen's kappa with
95% CIs from 2,000 bootstrap resamples over cases. As a reference for the mapping itself,
the team's own sentence labels (every sentence of the oncologists' own replies is
labelled) are compared with the flags the same way.

    .venv/bin/python benchmarks/theme_judge_real.py --data-dir ../shared/data --write-params

Writes ``benchmarks/results/theme_judge_real.json`` and ``theme_judge_real.md``; with
``--write-params``, the v2 judge fitted on all sentences (hyperparameters chosen by
5-fold cross-validation by case on all of them) to ``src/editf1/data/theme_judge_v2.json``
with the nested cross-validation's figures. About 15 minutes on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import benchlib
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: Each physician flag (OncQA content grading) and the themes that show it, from the
#: annotation guide's rules (/work/shared/ANNOTATION_GUIDE.md, copied into the theme
#: labels' dataset card). Several are looser than the flag: Medical planning
#: instruction covers tests and treatments as well as urgent evaluation, so "judge finds
#: it" cannot be specific to UrgentVisit; Inform is read as "asks the patient to inform
#: or contact their care team" (the guide's Care coordination rule), from the flag's
#: name and the responses it marks; the grading guidelines were not available.
FLAG_THEMES: dict[str, tuple[str, ...]] = {
    "Clarify": ("Symptom-related follow-up questions", "Medication-related follow-up questions"),
    "Contingency": ("Contingency planning",),
    "Delegate": ("Care coordination",),
    "UrgentVisit": ("Medical planning instruction",),
    "NonurgentVisit": ("Logistics",),
    "Manage": ("Medical planning instruction",),
    "Inform": ("Care coordination",),
    "AnyEdu": ("Medical assessment explanation",),
}

#: The hyperparameter candidates of the embeddings-only judge (no word features).
C_GRID = ({"C": 10.0}, {"C": 30.0}, {"C": 100.0})
TEAM_SOURCE = "editf1/data/theme_sentences.jsonl"
V2_FILE = benchlib.ROOT / "src" / "editf1" / "data" / "theme_judge_v2.json"
N_RESAMPLES = 2000


def _estimate(statistic, n, groups) -> dict:
    from editf1.stats import bootstrap

    return bootstrap(statistic, n, groups=groups, n_resamples=N_RESAMPLES, seed=0).to_dict()


def theme_figures(items, predicted: list[str]) -> dict:
    """Per-theme and overall figures of one judge's themes of ``items``."""
    from editf1.judges.base import ThemeJudgement
    from editf1.validation.agreement import (
        clinical_micro_f1,
        theme_agreement_report,
        to_jsonable,
    )

    human = np.array([item.theme for item in items])
    judge = np.array(predicted)
    groups = np.array([item.case for item in items])
    report = to_jsonable(
        theme_agreement_report(items, [ThemeJudgement(t) for t in predicted], seed=0)
    )
    report["clinical_micro_f1"] = _estimate(
        lambda i: clinical_micro_f1(human[i], judge[i]), len(items), groups
    )
    by_source = {}
    for source in sorted({item.source for item in items}):
        keep = np.flatnonzero([item.source == source for item in items])
        by_source[source] = _estimate(
            lambda i, k=keep: clinical_micro_f1(human[k][i], judge[k][i]), len(keep), groups[keep]
        )
    report["clinical_micro_f1_by_source"] = by_source
    double = [k for k, item in enumerate(items) if len(item.annotators) == 2]
    first = np.array([items[k].annotators[0] for k in double])
    second = np.array([items[k].annotators[1] for k in double])
    on_double = judge[double]
    report["double_labelled"] = {
        "n": len(double),
        "judge_vs_first": _estimate(
            lambda i: clinical_micro_f1(first[i], on_double[i]), len(double), groups[double]
        ),
        "judge_vs_second": _estimate(
            lambda i: clinical_micro_f1(second[i], on_double[i]), len(double), groups[double]
        ),
        "second_vs_first": _estimate(
            lambda i: clinical_micro_f1(first[i], second[i]), len(double), groups[double]
        ),
    }
    return report


def flag_figures(rows, themes_of: dict[str, list[list[str]]], reference: dict) -> dict:
    """Agreement and kappa of each flag with "a mapped theme in some sentence".

    ``themes_of``: judge name -> the themes of each row's sentences (rows in order);
    ``reference``: the team labels' themes of the rows they fully cover (row -> themes).
    """
    from editf1.validation.agreement import binary_agreement_report, to_jsonable

    cases = np.array([f"oncqa:{r['case_id']}" for r in rows])
    out = {}
    for flag, themes in FLAG_THEMES.items():
        human = np.array([r["flags"][flag] for r in rows])
        entry = {"themes": list(themes), "flag_rate": round(float(human.mean()), 4)}
        for name, per_row in themes_of.items():
            found = np.array([any(t in themes for t in row) for row in per_row])
            report = binary_agreement_report(human, found, groups=cases, seed=0)
            entry[name] = to_jsonable(
                {k: report[k] for k in ("agreement", "cohen_kappa", "confusion_matrix", "n")}
                | {"found_rate": round(float(found.mean()), 4)}
            )
        covered = sorted(reference)
        labelled = np.array([any(t in themes for t in reference[k]) for k in covered])
        report = binary_agreement_report(human[covered], labelled, groups=cases[covered], seed=0)
        entry["team_labels_on_own_replies"] = to_jsonable(
            {k: report[k] for k in ("agreement", "cohen_kappa", "confusion_matrix", "n")}
        )
        for name, per_row in themes_of.items():
            found = np.array([any(t in themes for t in per_row[k]) for k in covered])
            report = binary_agreement_report(human[covered], found, groups=cases[covered], seed=0)
            entry[f"{name}_on_own_replies"] = to_jsonable(
                {k: report[k] for k in ("agreement", "cohen_kappa", "n")}
            )
        out[flag] = entry
    return out


def classifier_seconds(judge, texts, repeats: int = 5) -> float:
    """Best of ``repeats`` timings of the judge's classification of ``texts`` with their
    embeddings already cached: the classifier's own cost, without the encoder."""
    judge.classify(texts)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        judge.classify(texts)
        best = min(best, time.perf_counter() - start)
    return best


def _cell(estimate) -> str:
    if estimate is None:
        return "n/a"
    return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"


def _markdown(payload: dict) -> str:
    from editf1.themes import THEMES

    judges = payload["judges"]
    names = list(judges)
    lines = [
        "# Theme judge on real clinical sentences",
        "",
        f"{payload['n_items']} sentences in {payload['n_cases']} cases; cross-validation "
        "split by case (StratifiedGroupKFold, 5 outer folds, hyperparameters by 4 inner "
        "folds of the training cases); 95% CIs from 2,000 bootstrap resamples over cases.",
        "",
        "| theme (support) | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for theme in THEMES:
        support = judges[names[0]]["per_theme"][theme]["support"]
        cells = [_cell(judges[n]["per_theme"][theme]["f1"]) for n in names]
        lines.append(f"| {theme} ({support}) | " + " | ".join(cells) + " |")
    for key, label in (
        ("clinical_micro_f1", "**micro-F1, 8 clinical themes**"),
        ("micro_f1", "share labelled as the humans (9 labels)"),
        ("macro_f1", "macro F1"),
        ("cohen_kappa", "Cohen's kappa"),
    ):
        lines.append(f"| {label} | " + " | ".join(_cell(judges[n][key]) for n in names) + " |")
    lines += ["", "Micro-F1 over the 8 clinical themes by source:", ""]
    lines += ["| source | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for source in judges[names[0]]["clinical_micro_f1_by_source"]:
        cells = [_cell(judges[n]["clinical_micro_f1_by_source"][source]) for n in names]
        lines.append(f"| {source} | " + " | ".join(cells) + " |")
    double = judges[names[0]]["double_labelled"]
    lines += [
        "",
        f"On the {double['n']} sentences both annotators labelled (micro-F1, 8 clinical "
        f"themes): second annotator against the first {_cell(double['second_vs_first'])}.",
        "",
        "| judge | vs first annotator | vs second annotator |",
        "|---|---|---|",
    ]
    for n in names:
        d = judges[n]["double_labelled"]
        lines.append(f"| {n} | {_cell(d['judge_vs_first'])} | {_cell(d['judge_vs_second'])} |")
    main = names[-1]
    lines += [
        "",
        f"Confusion matrix of {main} (rows: human, columns: judge, THEMES order):",
        "",
        "| human \\ judge | " + " | ".join(str(k) for k in range(len(THEMES))) + " |",
        "|---|" + "---|" * len(THEMES),
    ]
    for k, row in enumerate(judges[main]["confusion_matrix"]):
        lines.append(
            f"| {k} {THEMES[k]} | " + " | ".join(str(x) for x in row[: len(THEMES)]) + " |"
        )
    flags = payload["flags"]
    flag_judges = payload["flag_judges"]
    lines += [
        "",
        f"Physicians' content flags ({payload['flag_responses']} OncQA responses in "
        f"{payload['flag_cases']} cases): agreement / Cohen's kappa of the flag with "
        '"the judge finds a mapped theme in some sentence".',
        "",
        "| flag | themes | flag rate | "
        + " | ".join(f"{n}: agreement | {n}: kappa" for n in flag_judges)
        + " |",
        "|---|---|---|" + "---|---|" * len(flag_judges),
    ]
    for flag, entry in flags.items():
        cells = []
        for n in flag_judges:
            cells += [_cell(entry[n]["agreement"]), _cell(entry[n]["cohen_kappa"])]
        lines.append(
            f"| {flag} | {' / '.join(entry['themes'])} | {entry['flag_rate']:.2f} | "
            + " | ".join(cells)
            + " |"
        )
    own = next(iter(flags.values()))["team_labels_on_own_replies"]["n"]
    lines += [
        "",
        f"The mapping's own ceiling, on the {own} oncologists' own replies whose every "
        "sentence the team labelled (kappa):",
        "",
        "| flag | team labels | " + " | ".join(flag_judges) + " |",
        "|---|---|" + "---|" * len(flag_judges),
    ]
    for flag, entry in flags.items():
        cells = [_cell(entry[f"{n}_on_own_replies"]["cohen_kappa"]) for n in flag_judges]
        lines.append(
            f"| {flag} | {_cell(entry['team_labels_on_own_replies']['cohen_kappa'])} | "
            + " | ".join(cells)
            + " |"
        )
    speed = payload["speed"]
    lines += [
        "",
        f"Speed ({speed['sentences']} sentences, embeddings cached, best of 5): classifier "
        f"v2 {speed['v2_ms']:.1f} ms; encoding them "
        f"{speed['encode_ms']:.0f} ms ({speed['load']}).",
    ]
    return "\n".join(lines)


def _own_reply_labels(rows, items) -> dict[int, list[str]]:
    """Row index -> the team's themes of its sentences, for oncologists' own replies
    whose every sentence the team labelled (matched by case and text)."""
    from editf1.segment import SentenceSplitter

    labels = {
        (item.case, " ".join(item.text.split())): item.theme
        for item in items
        if item.source == "oncqa/stage1.csv"
    }
    splitter = SentenceSplitter()
    out = {}
    for k, row in enumerate(rows):
        if row["source"] != "raw_md":
            continue
        keys = [
            (f"oncqa:{row['case_id']}", " ".join(s.text.split()))
            for s in splitter.split(row["response"])
        ]
        if keys and all(key in labels for key in keys):
            out[k] = [labels[key] for key in keys]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=benchlib.ROOT.parent / "shared" / "data")
    parser.add_argument("--output-dir", type=Path, default=benchlib.RESULTS)
    parser.add_argument("--write-params", action="store_true", help=f"write {V2_FILE.name}")
    args = parser.parse_args(argv)
    oncqa = args.data_dir / "oncqa"
    needed = [oncqa / f"content_grading_{n}.csv" for n in ("s44", "d56")]
    if not all(p.is_file() for p in needed) or not (args.data_dir / "kqa").is_dir():
        sys.exit(
            f"data not found under {args.data_dir}: pass --data-dir with the folder holding "
            "oncqa/, kqa/ and expertqa/ (in this workplace ../shared/data)."
        )

    from editf1.builders.readers import oncqa_content_grading_rows
    from editf1.judges.embedding import EmbeddingThemeConfig, EmbeddingThemeJudge
    from editf1.judges.encoder import default_encoder
    from editf1.segment import SentenceSplitter
    from editf1.training.classifiers import fit_theme_classifier
    from editf1.validation.labelled import shipped_theme_items
    from research.team_labels import load_team_theme_items
    from research.theme_judge_fit import (
        cross_validate_theme_judge,
        select_theme_hyperparameters,
        train_theme_judge_with_real_labels,
    )

    started = time.perf_counter()
    state = benchlib.machine_state()
    items = load_team_theme_items(args.data_dir)
    team = [replace(item, source=TEAM_SOURCE) for item in shipped_theme_items()]
    encoder = default_encoder()
    start = time.perf_counter()
    encoder.encode([item.text for item in items])
    encode_ms = 1000 * (time.perf_counter() - start)
    texts = [item.text for item in items]

    team_best, _ = select_theme_hyperparameters(team, encoder=encoder)
    team_params = fit_theme_classifier(
        encoder.encode([t.text for t in team]),
        [t.text for t in team],
        [t.theme for t in team],
        vocabulary_texts=[t.text for t in team],
        **team_best,
    )
    team_judge = EmbeddingThemeJudge(
        config=EmbeddingThemeConfig.from_json(team_params), encoder=encoder
    )
    predicted = {"v2 recipe, team-written only": [j.theme for j in team_judge.classify(texts)]}
    print("team-only v2 recipe done", team_best, flush=True)

    embeddings_only = cross_validate_theme_judge(
        items, always_train=team, grid=C_GRID, encoder=encoder, words=False, sentence_features=()
    )
    predicted["embeddings only, real + team"] = embeddings_only.predicted
    print("embeddings-only nested CV done", embeddings_only.chosen, flush=True)

    cv = cross_validate_theme_judge(items, always_train=team, encoder=encoder)
    predicted["v2, real + team"] = cv.predicted
    print("v2 nested CV done", cv.chosen, flush=True)

    judges = {name: theme_figures(items, themes) for name, themes in predicted.items()}

    rows = oncqa_content_grading_rows(oncqa)
    splitter = SentenceSplitter()
    sentences = [[s.text for s in splitter.split(r["response"])] for r in rows]
    fold_of = {item.case: int(k) for item, k in zip(items, cv.fold)}
    fold_judges = [
        EmbeddingThemeJudge(config=EmbeddingThemeConfig.from_json(p), encoder=encoder)
        for p in cv.params
    ]
    missing = sorted({f"oncqa:{r['case_id']}" for r in rows} - set(fold_of))
    if missing:
        sys.exit(f"content-grading cases without theme labels: {missing}")
    themes_of = {
        "v2": [
            [j.theme for j in fold_judges[fold_of[f"oncqa:{r['case_id']}"]].classify(s)]
            for r, s in zip(rows, sentences)
        ],
    }
    flags = flag_figures(rows, themes_of, _own_reply_labels(rows, items))

    final = train_theme_judge_with_real_labels(items, always_train=team, encoder=encoder)
    v2 = EmbeddingThemeJudge(config=EmbeddingThemeConfig.from_json(final), encoder=encoder)
    speed = {
        "sentences": len(texts),
        "v2_ms": 1000 * classifier_seconds(v2, texts),
        "encode_ms": encode_ms,
        "load": benchlib.load_line(state),
    }
    payload = {
        "command": "python benchmarks/theme_judge_real.py --data-dir ../shared/data"
        + (" --write-params" if args.write_params else ""),
        "n_items": len(items),
        "n_cases": len({item.case for item in items}),
        "team_written": len(team),
        "folds": {"outer": 5, "inner": 4, "seed": 0, "by": "case (StratifiedGroupKFold)"},
        "chosen": {
            "v2 recipe, team-written only": team_best,
            "embeddings only, real + team": embeddings_only.chosen,
            "v2, real + team": cv.chosen,
            "v2 final": final["hyperparameters"],
        },
        "judges": judges,
        "flag_judges": list(themes_of),
        "flag_responses": len(rows),
        "flag_cases": len({r["case_id"] for r in rows}),
        "flags": flags,
        "speed": speed,
        "machine": state,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.write_params:
        main_figures = judges["v2, real + team"]
        final["cross_validation"] = {
            "by": "case: StratifiedGroupKFold, 5 outer folds, hyperparameters chosen by 4 "
            "inner folds of the training cases; team-written sentences in every training set",
            "evaluated_on": f"{len(items)} team-labelled real sentences "
            "(datasets/team_theme_labels/data/theme_labels.jsonl)",
            "per_theme_f1": {t: v["f1"] for t, v in main_figures["per_theme"].items()},
            **{
                k: main_figures[k]
                for k in ("clinical_micro_f1", "micro_f1", "macro_f1", "cohen_kappa")
            },
            "confusion_matrix": main_figures["confusion_matrix"],
            "benchmark": "benchmarks/theme_judge_real.py",
        }
        V2_FILE.write_text(json.dumps(final) + "\n", encoding="utf-8")
        print(f"wrote {V2_FILE}")
    benchlib.write_results("theme_judge_real", payload, _markdown(payload), args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
