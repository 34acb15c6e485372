"""The documentation's figures are generated, never typed: the tables between their
markers are what ``python -m research.docs_tables`` writes from the results files today,
no hand-written Markdown file carries a figure outside them, and the README stays short
with links that resolve."""

from __future__ import annotations

import re

import pytest

from research import docs_figures
from research.docs_tables import (
    BLOCK,
    GENERATED_MARKDOWN,
    INLINE,
    ROOT,
    markdown_files,
    refresh,
    refresh_text,
)

#: Blocks of the dataset cards whose figures tests/test_team_labels.py and
#: tests/test_content_labels.py compare with the label files' summaries.
CHECKED_BLOCK = re.compile(
    r"^<!-- ((?:stage-2 )?figures)[:\s][^>]*-->\n.*?^<!-- end \1 -->", re.S | re.M
)
#: A figure typed by hand: a number with three or more decimals, or a ratio such as 1.39x.
FIGURE = re.compile(r"(?<![\w.])\d+\.\d{3,}(?![\w.])|(?<![\w.])\d+\.\d+x\b")
#: arXiv identifiers (2601.11344) are not figures.
ARXIV = re.compile(r"\b\d{4}\.\d{4,5}(?:v\d+)?\b")


def test_the_generated_tables_are_fresh():
    stale = [str(path.relative_to(ROOT)) for path in refresh(write=False)]
    assert stale == [], f"stale tables in {stale}: run python -m research.docs_tables"


def _outside_blocks(text: str) -> str:
    for pattern in (BLOCK, CHECKED_BLOCK):
        text = pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return INLINE.sub("", ARXIV.sub("", text))


def test_no_hand_written_markdown_file_types_a_figure():
    typed = []
    for path in markdown_files():
        lines = _outside_blocks(path.read_text(encoding="utf-8")).splitlines()
        typed += [
            f"{path.relative_to(ROOT)}:{k}: {m.group(0)}"
            for k, line in enumerate(lines, 1)
            for m in FIGURE.finditer(line)
        ]
    assert typed == [], "figures typed outside generated blocks:\n" + "\n".join(typed)


def test_the_figure_rule_catches_what_it_must_and_spares_the_rest():
    caught = "kappa 0.428 [0.142, 0.615] and 1.39x BERTScore"
    spared = "arXiv 2601.11344, torch 2.13.0, 127.0.0.1, F1 0.9, rank 8, 2.5 mg, 10%"
    assert [m.group(0) for m in FIGURE.finditer(_outside_blocks(caught))] == [
        "0.428",
        "0.142",
        "0.615",
        "1.39x",
    ]
    assert not FIGURE.search(_outside_blocks(spared))
    block = "a\n<!-- table: x -->\n| 0.123 |\n<!-- end table -->\n"
    block += "b <!-- figure: y -->0.456<!-- end figure -->\n"
    assert not FIGURE.search(_outside_blocks(block))


def test_every_markdown_file_is_hand_written_or_generated():
    skip = {"build", "runs", "wheels", "node_modules", "__pycache__"}  # and hidden folders
    found = {
        path
        for path in ROOT.rglob("*.md")
        if not any(
            part in skip or part.startswith(".") or part.endswith(".egg-info")
            for part in path.relative_to(ROOT).parts
        )
    }
    generated = {path for pattern in GENERATED_MARKDOWN for path in ROOT.glob(pattern)}
    unclassified = sorted(
        str(p.relative_to(ROOT)) for p in found - generated - set(markdown_files())
    )
    assert unclassified == [], f"add them to research/docs_tables.py's lists: {unclassified}"


def test_the_readme_is_read_in_five_minutes():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize(
    "path", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_every_relative_link_resolves(path):
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), f"{path.name}: {target}"
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{path.name}: {target}"


def test_a_block_is_written_anew_and_the_text_around_it_kept():
    text = (
        "Intro.\n<!-- table: t -->\nold row\n<!-- end table -->\n"
        "It is <!-- figure: f -->old<!-- end figure -->, said once.\n"
    )
    fresh = refresh_text(text, "x.md", {"t": lambda: "| a |\n|---|"}, {"f": lambda: "0.5"})
    assert fresh == (
        "Intro.\n<!-- table: t -->\n| a |\n|---|\n<!-- end table -->\n"
        "It is <!-- figure: f -->0.5<!-- end figure -->, said once.\n"
    )
    assert refresh_text(fresh, "x.md", {"t": lambda: "| a |\n|---|"}, {"f": lambda: "0.5"}) == fresh


def test_an_unknown_block_or_a_figure_opening_a_line_is_refused():
    with pytest.raises(KeyError, match=r"x\.md: no table named 'nope'"):
        refresh_text("<!-- table: nope -->\n<!-- end table -->\n", "x.md", {}, {})
    with pytest.raises(KeyError, match=r"x\.md: no figure named 'nope'"):
        refresh_text("a <!-- figure: nope --><!-- end figure -->\n", "x.md", {}, {})
    with pytest.raises(ValueError, match="opens a line"):
        refresh_text("<!-- figure: f -->1<!-- end figure -->\n", "x.md", {}, {"f": lambda: "1"})


def _row(kappa: tuple[float, float, float], judge_rate: float, rate: float) -> dict:
    value, low, high = kappa
    estimate = {"value": value, "low": low, "high": high}
    return {"n": 10, "cases": 4, "cohen_kappa": estimate, "judge_match_rate": judge_rate,
            "match_rate": rate}  # fmt: skip


def test_the_judges_table_has_a_row_for_each_judge_the_results_file_holds(monkeypatch):
    """A judge the file holds gets its row, whatever its key; one it does not hold has
    none; the ceiling closes the table. Figures from the made-up payload, by hand."""
    payload = {
        "held_out": {
            "kqa": {
                "default": _row((0.4, 0.1, 0.6), 0.3, 0.3),
                "new_judge": _row((0.2, -0.1, 0.5), 0.1, 0.3),
                "always_no_match": _row((0.0, 0.0, 0.0), 0.0, 0.3),
            },
            "team": {
                "default": _row((0.3, 0.2, 0.5), 0.1, 0.2),
                "new_judge": _row((0.5, 0.3, 0.7), 0.25, 0.2),
                "always_no_match": _row((0.0, 0.0, 0.0), 0.0, 0.2),
            },
        },
        "ceiling": {"kqa": {"cohen_kappa": {"value": 0.65, "low": 0.5, "high": 0.8}}, "team": None},
    }
    monkeypatch.setattr(docs_figures, "load", lambda name, folder=None: payload)
    lines = docs_figures.content_judges().splitlines()
    assert len(lines) == 2 + 3  # header, rule, two judges, the ceiling
    assert lines[3] == (
        "| `new_judge` | 0.200 [-0.100, 0.500] | 0.500 [0.300, 0.700] | kappa's CI reaches 0 "
        "on 1 of 2 held-out sets; too many matches on OncQA (0.25 vs 0.20 labelled) |"
    )
    embedding = "| `embedding`: sentence embeddings and word overlap, key-term veto | "
    assert lines[2].startswith(embedding + "0.400 [0.100, 0.600] | 0.300 [0.200, 0.500] | ")
    assert "on 0 of 2 held-out sets; too few matches on OncQA (0.10 vs 0.20 labelled)" in lines[2]
    assert lines[4] == "| the annotators with each other (ceiling) | 0.650 [0.500, 0.800] | – |  |"
