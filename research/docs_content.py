"""Tables of docs/judges.md and docs/validity.md about the content judges' second round:
the cross-encoder's recipe one change at a time, the targets it was trained for, the
run rule's floor, and greetings left out of the counts. Each reads its results file
(``benchmarks/results/``) and says which script writes it when it is absent.
"""

from __future__ import annotations

from research.docs_figures import absent, ci, load, markdown_table, value

__all__ = ["CONTENT_TABLES"]

#: The held-out sets of the recipes table, in the order the targets name them.
SETS = (
    "team",
    "kqa",
    "oncqa_edited_draft",
    "oncqa_other_reply",
    "kqa_statements",
    "kqa_free_form",
    "kqa_physician",
    "stage2",
    "oncqa_edit_vs_draft",
    "expertqa_revision",
)


def _cell(row: dict | None) -> str:
    if row is None:
        return "–"
    return (
        f"{value(row['auroc'], 2)} / {value(row['agreement'], 2)} / "
        f"{value(row['cohen_kappa'], 2)} / {row['judge_match_rate']:.2f}"
    )


def recipes() -> str:
    """One row per recipe (and the default embedding judge), one cell per held-out set:
    AUROC / agreement / kappa / the judge's match rate."""
    p = load("cross_encoder_recipes")
    if p is None:
        return absent("cross_encoder_recipes", "python benchmarks/cross_encoder_recipes.py")
    rows = {"the default `embedding` judge": p.get("default")} | {
        f"`{name}`: {r['description']}": r for name, r in p["recipes"].items()
    }
    first = next(r for r in rows.values() if r)["held_out"]
    sets = [s for s in SETS if s in first]
    header = ["recipe"] + [
        f"{s} ({first[s]['n']} items, {first[s]['match_rate']:.2f} labelled)" for s in sets
    ]
    header.append("stage 2 F1: as is / unacceptable")
    body = []
    for label, r in rows.items():
        if not r:
            continue
        accept = r["stage2_acceptability"]
        stage2 = f"{value(accept.get('as is'))} / {value(accept.get('unacceptable'))}"
        body.append([label, *(_cell(r["held_out"].get(s)) for s in sets), stage2])
    return markdown_table(header, body)


def _rate_ok(row: dict) -> str:
    labelled, judged = row["match_rate"], row["judge_match_rate"]
    ok = abs(judged - labelled) <= 0.15 * labelled
    return f"{judged:.3f} vs {labelled:.3f} ({'within' if ok else 'outside'} ±15%)"


def targets() -> str:
    """The second round's targets beside the cross-encoder's and the embedding judge's
    held-out figures (95% CIs over cases)."""
    p = load("content_judge_real")
    if p is None or "cross_encoder" not in p["held_out"]["team"]:
        return absent("content_judge_real", "python benchmarks/content_judge_real.py")
    held, accept = p["held_out"], p["stage2_acceptability"]["judges"]
    judges = [("cross_encoder", "`cross-encoder`"), ("default", "`embedding`")]
    checks = [
        ("OncQA sentence vs GPT-4 draft (team): AUROC >= 0.80", "team", "auroc"),
        ("OncQA sentence vs GPT-4 draft (team): Cohen's kappa >= 0.45", "team", "cohen_kappa"),
        ("OncQA sentence vs GPT-4 draft (team): agreement >= 0.80", "team", "agreement"),
        ("K-QA held-out questions: agreement >= 0.78", "kqa", "agreement"),
        ("K-QA held-out questions: AUROC >= 0.80", "kqa", "auroc"),
    ]
    rows = [[what, *(ci(held[s][j][key]) for j, _ in judges)] for what, s, key in checks]
    for name in SETS:
        if name in held:
            rows.append(
                [f"match rate within ±15% of the labelled: {name}"]
                + [_rate_ok(held[name][j]) for j, _ in judges]
            )
    for label, key in (("unacceptable <= 0.45", "unacceptable"), ("as is >= 0.95", "as is")):
        rows.append(
            [f"OncQA stage 2, mean content F1 of drafts {label}"]
            + [ci(accept[j].get(key)) for j, _ in judges]
        )
    rows.append(
        ["OncQA case 12-2's dose change: NO MATCH"]
        + [p["dose_change_case_12"].get(j, "–") for j, _ in judges]
    )
    return markdown_table(["target", *(name for _, name in judges)], rows)


def run_floor() -> str:
    """Mean Cohen's kappa on the fitting items per run floor, and the chosen one."""
    p = load("run_floor")
    if p is None:
        return absent("run_floor", "python -m research.run_floor")
    sets = list(next(iter(p["cohen_kappa"].values())))
    rows = [
        [
            f"**{floor}**" if float(floor) == p["chosen"] else floor,
            f"{p['mean_cohen_kappa'][floor]:.4f}",
            *(f"{kappas[s]:.3f}" for s in sets),
        ]
        for floor, kappas in p["cohen_kappa"].items()
    ]
    header = ["run_floor", "mean kappa", *(f"{s} ({p['items'][s]})" for s in sets)]
    return markdown_table(header, rows)


def leave_out_other() -> str:
    """OncQA corpus content F1 with every sentence counted (the paper) and with the
    sentences the theme judge labels Other left out."""
    p = load("validity")
    if p is None or "leave_out_other" not in p:
        return absent("validity", "python benchmarks/validity.py")
    left = p["leave_out_other"]
    rows = []
    for name, label in (
        ("own_reply", "GPT-4 draft vs the oncologist's own reply"),
        ("edited", "GPT-4 draft vs the oncologist's edit of it"),
    ):
        f = left[name]
        rows.append(
            [label, ci(f["paper_corpus_f1"]), ci(f["corpus_f1"]), f["reference_sentences_left_out"]]
        )
    for short in ("as is", "modified", "unacceptable"):
        d = left["edited"]["per_class"][short]
        rows.append(
            [
                f"… drafts judged acceptable {short}" if short != "unacceptable"
                else "… drafts judged unacceptable",
                "",
                f"median {d['median']:.3f} [{d['q1']:.3f}, {d['q3']:.3f}] ({d['n']})",
                "",
            ]
        )  # fmt: skip
    header = [
        "OncQA",
        "every sentence counted (the paper)",
        "`--leave-out-other`",
        "reply sentences left out",
    ]
    return markdown_table(header, rows)


CONTENT_TABLES = {
    "cross-encoder-recipes": recipes,
    "cross-encoder-targets": targets,
    "run-floor": run_floor,
    "leave-out-other": leave_out_other,
}
