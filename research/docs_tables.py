"""Every table of figures in the hand-written Markdown files, written from the results
files, never typed: ``python -m research.docs_tables`` (from the repository root)
rewrites them, ``--check`` exits 1 naming the ones that are stale.

A generated table sits between two markers on lines of their own,

    <!-- table: NAME -->
    | ... the rows NAME's function writes ... |
    <!-- end table -->

and a figure quoted in a sentence between two markers inside the line (never at its
start, where Markdown would read the comment as an HTML block):

    ... the physicians with each other: <!-- figure: NAME -->agreement ...<!-- end figure -->.

The text between the markers is replaced; everything else is the writer's. The functions
that write each block are in :mod:`research.docs_figures` (the metric and the judges),
:mod:`research.docs_benchmarks` and :mod:`research.docs_gold` (:func:`registry`); they
read ``benchmarks/results/*.json``, the shipped judges' records (``judges/*/``,
``cards/reports/``) and, for the default judges' names, the library itself.
``tests/test_docs.py`` checks that running this changes nothing and that no Markdown
file carries a figure outside these blocks.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

__all__ = [
    "BLOCK",
    "GENERATED_MARKDOWN",
    "HAND_WRITTEN_MARKDOWN",
    "INLINE",
    "ROOT",
    "main",
    "markdown_files",
    "refresh",
    "refresh_text",
    "registry",
]

#: The repository root.
ROOT = Path(__file__).resolve().parents[1]
#: Markdown files people write (globs from the root): their figures are generated here.
HAND_WRITTEN_MARKDOWN = (
    "README.md",
    "CHANGELOG.md",
    "CONTRIBUTING.md",
    "docs/*.md",
    "benchmarks/README.md",
    "judges/README.md",
    "metrics/edit_f1/README.md",
    "datasets/*/README.md",
    "cards/templates/*.md",
    "src/editf1/cards/templates/*.md",
    "src/editf1/builders/templates/*.md",
    "src/editf1/integrations/static/*.md",
)
#: Markdown files code writes whole, with the code that writes them (never edited by hand).
GENERATED_MARKDOWN = {
    "benchmarks/results/*.md": "the benchmark script of the same name",
    "benchmarks/results/*/*.md": "the benchmark script of the folder (edit-f1 report)",
    "cards/*/README.md": "python -m research.model_cards (tests/test_cards.py)",
    "judges/*/README.md": "edit-f1 train-judge and python -m research.model_cards",
}
#: A generated table: its name, then its lines (group 2).
BLOCK = re.compile(r"^<!-- table: (\S+) -->\n(.*?)^<!-- end table -->$", re.S | re.M)
#: A generated figure inside a line: its name, then its text (group 2).
INLINE = re.compile(r"<!-- figure: (\S+) -->(.*?)<!-- end figure -->")


def markdown_files(root: Path = ROOT) -> list[Path]:
    """The hand-written Markdown files that exist under ``root``, sorted."""
    found = {path for pattern in HAND_WRITTEN_MARKDOWN for path in root.glob(pattern)}
    return sorted(found)


def refresh_text(text: str, where: str, tables: dict, figures: dict) -> str:
    """``text`` with every block's contents written anew.

    Args:
        text: a Markdown file's text.
        where: its name, for errors.
        tables, figures: block name -> function of no argument returning the block's
            text (a table: its lines without the last newline; a figure: one line).

    Raises:
        KeyError: a block names no known function (the message names file and block).
        ValueError: an inline figure opens a line.
    """

    def table(match: re.Match) -> str:
        name = match.group(1)
        if name not in tables:
            raise KeyError(f"{where}: no table named {name!r} (known: {', '.join(tables)})")
        return f"<!-- table: {name} -->\n{tables[name]()}\n<!-- end table -->"

    def figure(match: re.Match) -> str:
        name = match.group(1)
        if name not in figures:
            raise KeyError(f"{where}: no figure named {name!r} (known: {', '.join(figures)})")
        return f"<!-- figure: {name} -->{figures[name]()}<!-- end figure -->"

    if re.search(r"^<!-- figure:", text, re.M):
        raise ValueError(f"{where}: a figure marker opens a line (Markdown reads it as HTML)")
    return INLINE.sub(figure, BLOCK.sub(table, text))


def registry() -> tuple[dict, dict]:
    """(table name -> function, figure name -> function) of every block."""
    from research.docs_benchmarks import BENCHMARK_FIGURES, BENCHMARK_TABLES
    from research.docs_content import CONTENT_TABLES
    from research.docs_figures import FIGURES, JUDGE_TABLES
    from research.docs_gold import GOLD_FIGURES, GOLD_TABLES

    tables = JUDGE_TABLES | BENCHMARK_TABLES | GOLD_TABLES | CONTENT_TABLES
    return tables, FIGURES | BENCHMARK_FIGURES | GOLD_FIGURES


def refresh(root: Path = ROOT, write: bool = True) -> list[Path]:
    """Rewrite the blocks of every hand-written Markdown file under ``root``.

    Returns:
        The files whose text changed (written only when ``write``).
    """
    tables, figures = registry()
    changed = []
    for path in markdown_files(root):
        text = path.read_text(encoding="utf-8")
        fresh = refresh_text(text, str(path.relative_to(root)), tables, figures)
        if fresh != text:
            changed.append(path)
            if write:
                path.write_text(fresh, encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    """The command: rewrite the blocks, or with ``--check`` only name the stale files."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    changed = refresh(write=not args.check)
    for path in changed:
        verb = "stale" if args.check else "wrote"
        print(f"{verb}: {path.relative_to(ROOT)}")
    return 1 if changed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
