"""A plain-text summary of a corpus result, for terminals and logs."""

from __future__ import annotations

__all__ = ["format_summary"]


def format_summary(summary: dict) -> str:
    """Format :meth:`editf1.results.CorpusResult.summary` as a table.

    Shows content and theme precision/recall/F1 with the counts behind them, then per
    theme: F1, the share of replies and of drafts containing the theme (Table 5) and
    the content recall of the reply's sentences of that theme (Table 14).
    """
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
        for theme, s in summary["per_theme"].items():
            lines.append(
                f"  {theme:<{width}}  {s['f1']:5.3f}  {100 * s['reference_proportion']:7.1f}  "
                f"{100 * s['prediction_proportion']:7.1f}  {s['content_recall']:14.3f}  "
                f"{s['reference_sentences']:15d}"
            )
    unusable = summary.get("unusable_judgements", 0) + summary.get("unusable_theme_judgements", 0)
    lines.append("")
    lines.append(f"  unusable judge outputs: {unusable}")
    lines.append(f"  {summary['reproducibility']}")
    return "\n".join(lines)
