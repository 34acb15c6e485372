"""A plain-text summary of a corpus result, for terminals and logs."""

from __future__ import annotations

__all__ = ["format_summary"]


def format_summary(summary: dict) -> str:
    """:meth:`editf1.results.CorpusResult.summary` as a table: content and theme scores with
    their counts, then per theme F1, the share of replies and drafts with it (Table 5) and
    the content recall of its reply sentences (Table 14); "–" where nothing defines them."""
    lines = [
        f"edit-F1 on {summary['n_pairs']} pair(s)",
        f"  content  precision {summary['precision']:.3f}  recall {summary['recall']:.3f}  "
        f"F1 {summary['f1']:.3f}   (expected matches {summary['expected_matches']}, "
        f"additions {summary['expected_additions']}, deletions {summary['expected_deletions']})",
    ]
    if "theme_f1" in summary:
        lines.append(
            f"  themes   precision {summary['theme_precision']:.3f}  recall "
            f"{summary['theme_recall']:.3f}  F1 {summary['theme_f1']:.3f}   "
            f"({len(summary['themes_scored'])} themes)"
        )
        width = max(len(t) for t in summary["per_theme"])
        lines.append("")
        lines.append(
            f"  {'theme':<{width}}  {'F1':>5}  {'reply %':>7}  {'draft %':>7}  "
            f"{'content recall':>14}  {'reply sentences':>15}"
        )
        undefined = False
        for theme, s in summary["per_theme"].items():
            f1, recall = _defined(s)
            undefined = undefined or f1 is None or recall is None
            lines.append(
                f"  {theme:<{width}}  {_cell(f1, 5)}  {100 * s['reference_proportion']:7.1f}  "
                f"{100 * s['prediction_proportion']:7.1f}  {_cell(recall, 14)}  "
                f"{s['reference_sentences']:15d}"
            )
        if undefined:
            lines.append(
                "  –: no reply or draft has the theme (F1), no reply sentence has it "
                "(content recall)"
            )
    unusable = summary.get("unusable_judgements", 0) + summary.get("unusable_theme_judgements", 0)
    lines.append("")
    lines.append(f"  unusable judge outputs: {unusable}")
    lines.append(f"  {summary['reproducibility']}")
    return "\n".join(lines)


def _defined(theme: dict) -> tuple[float | None, float | None]:
    """A per-theme entry's F1 and content recall, ``None`` where nothing defines them."""
    f1 = None if theme["reference_count"] == theme["prediction_count"] == 0 else theme["f1"]
    recall = None if theme["reference_sentences"] == 0 else theme["content_recall"]
    return f1, recall


def _cell(value: float | None, width: int) -> str:
    return f"{'–':>{width}}" if value is None else f"{value:{width}.3f}"
