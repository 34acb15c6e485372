"""The functions that write the documentation's tables and quoted figures from the
results files (:mod:`research.docs_tables` puts them between their markers).

Each function takes no argument and returns Markdown: a table's lines (``TABLES``) or
a short phrase (``FIGURES``). They read ``benchmarks/results/*.json`` as the benchmark
scripts wrote them, by key: a judge, set or recipe the file holds gets its row, one it
does not hold has none, so a rerun that adds or drops a judge needs no edit here. A file
that is absent gives one line saying which script writes it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: Content judges of ``content_judge_real.json`` by key: the name a user passes
#: (``--content-judge``) and a short description. Keys not listed show as they are.
CONTENT_JUDGES = {
    "default": ("`embedding`", "sentence embeddings and word overlap, key-term veto"),
    "cross_encoder": ("`cross-encoder`", "a fine-tuned cross-encoder reads each span"),
    "llm": ("`llm`", "SmolLM2-135M-Instruct + the team's LoRA adapter, decision mode"),
    "veto": ("`embedding`, term veto only", "a parameter file no longer shipped"),
    "v1": ("`embedding`, no veto", "a parameter file no longer shipped"),
    "v2": ("`embedding` v2", "a parameter file no longer shipped"),
    "always_no_match": ("always NO MATCH", "a baseline: never a match"),
}
#: What each content judge reads wrong, in words (its figures are computed below).
CONTENT_NOTES = {
    "default": "sees that two texts share a topic, not whether the span states the "
    "sentence; its veto knows only the kinds of change it lists",
    "cross_encoder": "not better than the embedding judge over every held-out set, and "
    "short of the targets it was trained for (docs/judges.md); trained on the team's "
    "labels (LLM annotator agents following the guide), not on clinicians'",
    "llm": "the shipped adapter is a small model trained on few items: a template to "
    "train your own, not a judge to score with",
}
#: Held-out label sets of ``content_judge_real.json``: what is compared, who labelled.
CONTENT_SETS = {
    "team": "OncQA: oncologist's sentence vs the GPT-4 draft (team)",
    "kqa": "K-QA: physician's claim vs an LLM answer (physicians' majority)",
    "stage2": "OncQA stage 2: edited sentence vs the draft (from the oncologists' edits)",
    "oncqa_other_reply": "OncQA: vs the other oncologist's reply (team)",
    "oncqa_edited_draft": "OncQA: vs an oncologist-edited draft (team)",
    "oncqa_edit_vs_draft": "OncQA: edited reply vs its GPT-4 draft (team)",
    "kqa_statements": "K-QA: physicians' statements vs an LLM answer (team)",
    "kqa_free_form": "K-QA: physician's free-form answer vs an LLM answer (team)",
    "expertqa_revision": "ExpertQA: expert's revision vs the system answer (team)",
    "kqa_physician": "K-QA: statements vs the physicians' free-form answer (team)",
}
#: The default theme judge's entry in ``theme_judge_real.json``.
THEME_DEFAULT = "v2, real + team"
THEME_NAMES = {
    "v2, real + team": "`embedding` (the shipped parameters)",
    "v2 recipe, team-written only": "the same recipe, team-written sentences only",
    "embeddings only, real + team": "embeddings only, real + team-written sentences",
    "v1 (team-written only)": "embeddings only, team-written sentences (no longer shipped)",
}
#: The nine labels in the paper's order; the first eight are the clinical themes.
OTHER = "Other"


@cache
def load(name: str, folder: Path = RESULTS) -> dict | None:
    """``folder/name.json`` as a dict, or None when the file is absent."""
    path = folder / f"{name}.json"
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def absent(name: str, script: str) -> str:
    """The line written where results file ``name`` is absent."""
    return f"*`benchmarks/results/{name}.json` is not there yet: `{script}` writes it.*"


def ci(estimate: dict | None, digits: int = 3) -> str:
    """``value [low, high]``, or ``–`` for None or an estimate without a value."""
    if not estimate or estimate.get("value") is None:
        return "–"
    v, lo, hi = (estimate[k] for k in ("value", "low", "high"))
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def value(estimate: dict | None, digits: int = 3) -> str:
    """The estimate's value alone."""
    if not estimate or estimate.get("value") is None:
        return "–"
    return f"{estimate['value']:.{digits}f}"


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A Markdown table (cells are made strings)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _med(summary: dict) -> str:
    """``median [q1, q3] (n)`` of a per-pair summary."""
    return f"{summary['median']:.3f} [{summary['q1']:.3f}, {summary['q3']:.3f}] ({summary['n']})"


# -- the metric on real data: validity.json -----------------------------------------------


def typical() -> str:
    """Content F1 of OncQA's GPT-4 drafts against oncologists' replies: the paper's
    setting, the oncologist's edit of the draft, two oncologists with each other, and the
    drafts per acceptability class."""
    v = load("validity")
    if v is None:
        return absent("validity", "python benchmarks/validity.py")
    own, edited = v["own_reply"], v["edited"]
    per_class = edited["metrics"]["edit-F1"]["per_class"]
    iap = v["iap"]["metrics"]["edit-F1"]
    rows = [
        [
            f"GPT-4 draft vs an oncologist's own reply, written without seeing it "
            f"(the paper's setting; {own['rows']} pairs)",
            ci(own["metrics"]["edit-F1"]["corpus_f1"]),
        ],
        [
            f"one oncologist's reply vs another's to the same message (the human ceiling; "
            f"{v['iap']['cases']} messages)",
            ci(iap["oncologist_vs_oncologist"]),
        ],
        [
            f"GPT-4 draft vs the oncologist's edit of that draft ({edited['rows']} pairs)",
            ci(edited["metrics"]["edit-F1"]["corpus_f1"]),
        ],
    ]
    rows += [
        [f"… drafts the oncologist judged {label}: per-draft median [quartiles] (n)", _med(s)]
        for label, s in (
            ("acceptable as is", per_class["as is"]),
            ("acceptable with modifications", per_class["modified"]),
            ("unacceptable", per_class["unacceptable"]),
        )
    ]
    judge = v["judges"]["edit-F1"].split("(")[0]
    return markdown_table([f"OncQA, content judge `{judge}`", "content F1 [95% CI]"], rows)


def validity_edits() -> str:
    """Spearman's rho of each score with the oncologists' edits (stage 2)."""
    v = load("validity")
    if v is None:
        return absent("validity", "python benchmarks/validity.py")
    e = v["edited"]
    rows = []
    for name, m in e["metrics"].items():
        rows.append(
            [
                name,
                ci(m["rho_with_normalised_edit_distance_changed_rows"]),
                ci(m["rho_with_normalised_edit_distance_all_rows"]),
                ci(m["rho_with_acceptability_all_rows"]),
                f"{m['changed_rows_scored_perfect']}/{e['changed_rows']}",
            ]
        )
    header = [
        "score",
        f"rho with normalised edit distance ({e['changed_rows']} changed drafts)",
        f"rho, all {e['rows']} drafts",
        "rho with acceptability",
        "changed drafts scored 1.0",
    ]
    return markdown_table(header, rows)


def validity_classes() -> str:
    """Each score per acceptability class: median [quartiles] (n)."""
    v = load("validity")
    if v is None:
        return absent("validity", "python benchmarks/validity.py")
    metrics = v["edited"]["metrics"]
    classes = ("as is", "modified", "unacceptable")
    rows = [[name, *(_med(m["per_class"][c]) for c in classes)] for name, m in metrics.items()]
    return markdown_table(["score", *classes], rows)


def validity_own_reply() -> str:
    """The paper's setting, and whether a case's score predicts its stage-2 edits."""
    v = load("validity")
    if v is None:
        return absent("validity", "python benchmarks/validity.py")
    rows = []
    for name, m in v["own_reply"]["metrics"].items():
        rows.append(
            [
                name,
                ci(m["corpus_f1"] if "corpus_f1" in m else m["mean"]),
                _med(m["per_pair"]),
                ci(m["rho_case_score_with_stage2_normalised_edit_distance"]),
                ci(m["rho_case_score_with_stage2_acceptability"]),
            ]
        )
    header = [
        "score",
        "corpus value [95% CI]",
        "per pair: median [quartiles] (n)",
        "rho with the stage-2 edit distance",
        "rho with stage-2 acceptability",
    ]
    return markdown_table(header, rows)


def validity_iap() -> str:
    """Inter-annotator predictability: one oncologist's reply scored against another's."""
    v = load("validity")
    if v is None:
        return absent("validity", "python benchmarks/validity.py")
    rows = [
        [
            name,
            ci(m["oncologist_vs_oncologist"]),
            ci(m["draft_vs_oncologist_same_cases"]),
            f"{m['gap']:+.3f}",
        ]
        for name, m in v["iap"]["metrics"].items()
    ]
    header = ["score", "oncologist vs oncologist", "GPT-4 draft vs oncologist, same cases", "gap"]
    return markdown_table(header, rows)


# -- content judges on real labels: content_judge_real.json --------------------------------


def _judge_name(key: str) -> str:
    return CONTENT_JUDGES.get(key, (f"`{key}`", ""))[0]


def _judge_cell(key: str) -> str:
    """The judge's name and what it reads."""
    name, what = CONTENT_JUDGES.get(key, (f"`{key}`", ""))
    return f"{name}: {what}" if what else name


def _judge_rows(payload: dict, name: str) -> dict:
    """judge key -> (row, subset size or None) on held-out set ``name``, every judge the
    file holds (the LLM judge's row from its subset when it has none on the whole set)."""
    rows = {judge: (row, None) for judge, row in payload["held_out"][name].items()}
    for judge, row in payload.get("held_out_llm", {}).get(name, {}).items():
        if judge not in rows:
            rows[judge] = (row, row["n"])
    return rows


def _falls_short(payload: dict, judge: str) -> str:
    """Where ``judge`` falls short, from its figures: the sets where its kappa's CI
    reaches 0, and its match rate beside the labelled one on the team's OncQA set."""
    chance, judged = [], 0
    for name in payload["held_out"]:
        row = _judge_rows(payload, name).get(judge, (None,))[0]
        if row is None:
            continue
        judged += 1
        if row["cohen_kappa"]["low"] <= 0:
            chance.append(name)
    parts = [f"kappa's CI reaches 0 on {len(chance)} of {judged} held-out sets"]
    team = _judge_rows(payload, "team").get(judge, (None,))[0]
    if team is not None:
        said, labelled = team["judge_match_rate"], team["match_rate"]
        way = "too few" if said < labelled else "too many"
        parts.append(f"{way} matches on OncQA ({said:.2f} vs {labelled:.2f} labelled)")
    note = CONTENT_NOTES.get(judge)
    return "; ".join(parts + ([note] if note else []))


def content_judges() -> str:
    """The README's table: each content judge's kappa on K-QA's physicians and the team's
    OncQA labels, beside the annotators' own, and where it falls short."""
    p = load("content_judge_real")
    if p is None:
        return absent("content_judge_real", "python benchmarks/content_judge_real.py")
    kqa, team = _judge_rows(p, "kqa"), _judge_rows(p, "team")

    def kappa(rows, judge):
        row, subset = rows.get(judge, (None, None))
        text = ci(row["cohen_kappa"]) if row else "–"
        return f"{text} ({subset} items)" if subset else text

    rows = [
        [_judge_cell(j), kappa(kqa, j), kappa(team, j), _falls_short(p, j)]
        for j in kqa
        if j != "always_no_match"
    ]
    ceiling = p["ceiling"]
    rows.append(
        [
            "the annotators with each other (ceiling)",
            ci((ceiling.get("kqa") or {}).get("cohen_kappa")),
            ci((ceiling.get("team") or {}).get("cohen_kappa")),
            "",
        ]
    )
    size = {name: next(iter(p["held_out"][name].values()))["n"] for name in ("kqa", "team")}
    header = [
        "content judge",
        f"Cohen's kappa: K-QA physicians ({size['kqa']} claims)",
        f"Cohen's kappa: team's OncQA labels ({size['team']} sentences)",
        "where it falls short",
    ]
    return markdown_table(header, rows)


def content_held_out() -> str:
    """Every judge on every held-out set: AUROC, agreement, kappa, match rates."""
    p = load("content_judge_real")
    if p is None:
        return absent("content_judge_real", "python benchmarks/content_judge_real.py")
    rows = []
    for name in p["held_out"]:
        for k, (judge, (row, subset)) in enumerate(_judge_rows(p, name).items()):
            size = f"{row['n']} ({row['cases']})" if k == 0 or subset else ""
            rows.append(
                [
                    CONTENT_SETS.get(name, name) if k == 0 else "",
                    size,
                    _judge_name(judge),
                    ci(row["auroc"]),
                    ci(row["agreement"]),
                    ci(row["cohen_kappa"]),
                    f"{row['judge_match_rate']:.3f} / {row['match_rate']:.3f}",
                ]
            )
        top = p["ceiling"].get(name)
        if top:
            rows.append(
                [
                    "",
                    f"{top['n']} labelled by {top['annotators']}",
                    "the annotators with each other",
                    "–",
                    ci(top["agreement"]),
                    ci(top["cohen_kappa"]),
                    "",
                ]
            )
    header = [
        "held-out set (labels)",
        "items (cases)",
        "judge",
        "AUROC",
        "agreement",
        "Cohen's kappa",
        "match rate: judge / labelled",
    ]
    return markdown_table(header, rows)


def content_stage2() -> str:
    """Mean content F1 of the OncQA stage-2 drafts per acceptability class, per judge."""
    p = load("content_judge_real")
    if p is None:
        return absent("content_judge_real", "python benchmarks/content_judge_real.py")
    accept = p["stage2_acceptability"]
    classes = ("as is", "modified", "unacceptable")
    verdicts = p.get("dose_change_case_12", {})
    rows = [
        [
            _judge_name(judge),
            *(ci(per_class.get(c)) for c in classes),
            verdicts.get(judge, "–").replace("_", " "),
        ]
        for judge, per_class in accept["judges"].items()
    ]
    header = [
        f"judge ({accept['rows']} edits of {accept['cases']} held-out cases)",
        *(f"mean content F1: {c}" for c in classes),
        "case 12's dose change",
    ]
    return markdown_table(header, rows)


# -- theme judges: theme_judge_real.json --------------------------------------------------


def _theme_name(key: str) -> str:
    return THEME_NAMES.get(key, key)


def theme_judges() -> str:
    """The README's theme row: the default's cross-validated figures and weakest themes."""
    t = load("theme_judge_real")
    if t is None:
        return absent("theme_judge_real", "python benchmarks/theme_judge_real.py")
    j = t["judges"][THEME_DEFAULT]
    clinical = {k: e for k, e in j["per_theme"].items() if k != OTHER}
    weakest = sorted(clinical, key=lambda k: clinical[k]["f1"]["value"])[:2]
    double = j["double_labelled"]
    row = [
        _theme_name(THEME_DEFAULT),
        ci(j["clinical_micro_f1"]),
        ci(j["cohen_kappa"]),
        f"{value(double['judge_vs_first'])} / {value(double['judge_vs_second'])}; "
        f"the annotators with each other {value(double['second_vs_first'])}",
        ", ".join(f"{k} ({value(clinical[k]['f1'])})" for k in weakest),
    ]
    header = [
        "theme judge",
        f"micro-F1, 8 clinical themes ({t['n_items']} sentences, {t['folds']['outer']}-fold "
        "cross-validation by case)",
        "Cohen's kappa, 9 labels",
        f"micro-F1 against each annotator ({double['n']} double-labelled sentences)",
        "weakest themes (F1)",
    ]
    return markdown_table(header, [row])


def theme_summary() -> str:
    """Every recipe of the theme results file: micro-F1, macro-F1 and kappa."""
    t = load("theme_judge_real")
    if t is None:
        return absent("theme_judge_real", "python benchmarks/theme_judge_real.py")
    rows = [
        [
            _theme_name(k),
            ci(j["clinical_micro_f1"]),
            ci(j["macro_f1"]),
            ci(j["cohen_kappa"]),
            ci(j["double_labelled"]["judge_vs_first"]),
            ci(j["double_labelled"]["judge_vs_second"]),
        ]
        for k, j in t["judges"].items()
    ]
    double = next(iter(t["judges"].values()))["double_labelled"]
    rows.append(["the second annotator", "", "", "", ci(double["second_vs_first"]), ""])
    header = [
        "judge",
        "micro-F1, 8 clinical themes",
        "macro-F1, 9 labels",
        "Cohen's kappa",
        "vs the first annotator",
        "vs the second annotator",
    ]
    return markdown_table(header, rows)


def theme_per_theme() -> str:
    """The default theme judge's F1 per theme (support)."""
    t = load("theme_judge_real")
    if t is None:
        return absent("theme_judge_real", "python benchmarks/theme_judge_real.py")
    j = t["judges"][THEME_DEFAULT]
    rows = [[f"{k} ({e['support']})", ci(e["f1"])] for k, e in j["per_theme"].items()]
    rows += [[f"`{k}`", ci(e)] for k, e in j["clinical_micro_f1_by_source"].items()]
    return markdown_table(["theme (support), or source of the sentences", "F1 [95% CI]"], rows)


def theme_flags() -> str:
    """OncQA physicians' content flags against "the judge finds the mapped theme"."""
    t = load("theme_judge_real")
    if t is None:
        return absent("theme_judge_real", "python benchmarks/theme_judge_real.py")
    judges = t["flag_judges"]
    rows = []
    for flag, entry in t["flags"].items():
        own = [ci(entry.get(f"{j}_on_own_replies", {}).get("cohen_kappa")) for j in judges]
        team = ci(entry.get("team_labels_on_own_replies", {}).get("cohen_kappa"))
        themes = ", ".join(entry["themes"]) or "–"
        rows.append([flag, themes, *(ci(entry[j]["cohen_kappa"]) for j in judges), team, *own])
    header = [
        "physicians' flag",
        "theme(s)",
        *(f"kappa, judge {j} ({t['flag_responses']} responses)" for j in judges),
        "kappa, team labels (oncologists' replies)",
        *(f"kappa, judge {j} (oncologists' replies)" for j in judges),
    ]
    return markdown_table(header, rows)


# -- generative judges on K-QA: cards/reports and the adapter's record --------------------


def llm_kqa() -> str:
    """The embedded judge, SmolLM2-135M zero-shot and with the K-QA LoRA adapter, on the
    held-out K-QA claims (generate mode), beside the physicians' ceiling."""
    reports = ROOT / "cards" / "reports"
    record = ROOT / "judges" / "smollm2-kqa-content" / "editf1_judge.json"
    sources = {
        "`embedding`": reports / "embedding-content.kqa-test.json",
        "SmolLM2-135M + LoRA (`judges/smollm2-kqa-content`)": record,
        "SmolLM2-135M-Instruct zero-shot": reports / "smollm2-zero-shot.kqa-test.json",
    }
    rows = []
    for name, path in sources.items():
        data = json.loads(path.read_text("utf-8"))
        data = data.get("agreement", data) if path == record else data
        rows.append([name, ci(data["agreement"]), ci(data["cohen_kappa"])])
    ceiling = load("content_judge_real")["ceiling"]["kqa"]
    physicians = ["the physicians with each other", ci(ceiling["agreement"])]
    rows.append([*physicians, ci(ceiling["cohen_kappa"])])
    header = [f"content judge, K-QA held out ({data['agreement']['n']} claims)", "agreement"]
    return markdown_table([*header, "Cohen's kappa"], rows)


def kqa_ceiling() -> str:
    """K-QA's physicians with each other on the held-out claims (a phrase)."""
    c = load("content_judge_real")["ceiling"]["kqa"]
    return f"agreement {ci(c['agreement'])}, Cohen's kappa {ci(c['cohen_kappa'])}"


def default_judges() -> str:
    """The scorer's default judges, from the library (a phrase)."""
    from dataclasses import fields

    from editf1.options import ScoringOptions

    options = {f.name: f for f in fields(ScoringOptions)}
    content, theme = options["content_judge"].default, options["theme_judge"].default
    return f"`{content}` for content and `{theme}` for themes"


#: Table name -> its function, for the metric's and the judges' tables.
JUDGE_TABLES = {
    "typical": typical,
    "validity-edits": validity_edits,
    "validity-classes": validity_classes,
    "validity-own-reply": validity_own_reply,
    "validity-iap": validity_iap,
    "content-judges": content_judges,
    "content-held-out": content_held_out,
    "content-stage2": content_stage2,
    "theme-judges": theme_judges,
    "theme-summary": theme_summary,
    "theme-per-theme": theme_per_theme,
    "theme-flags": theme_flags,
    "llm-kqa": llm_kqa,
}
#: Figure name -> its function.
FIGURES = {"kqa-ceiling": kqa_ceiling, "default-judges": default_judges}
