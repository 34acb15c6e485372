"""edit-F1: how much would a clinician edit this LLM-drafted reply to a patient message?

Content- and theme-level precision, recall and F1 of a draft against the clinician's
reply (Seegmiller et al., arXiv 2601.11344). ``import editf1`` loads no model (exports are
lazy) and switches telemetry off (:func:`editf1.privacy.telemetry_off`).

>>> import editf1
>>> result = editf1.score(
...     predictions=["Rest today. Drink water. Call us."],
...     references=["Rest today. Take ibuprofen."],
...     content_judge="exact", theme_judge=None,
... )
>>> round(result.precision, 4), round(result.recall, 4), round(result.f1, 4)
(0.3333, 0.5, 0.4)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from editf1.privacy import telemetry_off

telemetry_off()

if TYPE_CHECKING:
    from editf1.aggregate import UndefinedMetricWarning
    from editf1.caches import clear_caches
    from editf1.inputs import InputError
    from editf1.judges import ContentJudge, ThemeJudge, load_content_judge, load_theme_judge
    from editf1.results import CorpusResult, PairResult
    from editf1.scorer import EditF1Scorer
    from editf1.themes import THEMES

__all__ = [
    "THEMES",
    "ContentJudge",
    "CorpusResult",
    "EditF1Scorer",
    "InputError",
    "PairResult",
    "ThemeJudge",
    "UndefinedMetricWarning",
    "__version__",
    "clear_caches",
    "load_content_judge",
    "load_theme_judge",
    "score",
]

_EXPORTS = {
    "EditF1Scorer": "editf1.scorer",
    "CorpusResult": "editf1.results",
    "PairResult": "editf1.results",
    "ContentJudge": "editf1.judges",
    "ThemeJudge": "editf1.judges",
    "load_content_judge": "editf1.judges",
    "load_theme_judge": "editf1.judges",
    "THEMES": "editf1.themes",
    "InputError": "editf1.inputs",
    "UndefinedMetricWarning": "editf1.aggregate",
    "clear_caches": "editf1.caches",
}

#: ``score``'s keyword arguments for :meth:`EditF1Scorer.score`; the rest build the scorer.
_SCORE_OPTIONS = ("ids", "keep_pairs", "gold")


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    if name == "__version__":
        from editf1.versions import installed_versions

        return installed_versions("edit-f1")["edit-f1"]
    raise AttributeError(f"module 'editf1' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def score(*, predictions, references, **options) -> CorpusResult:
    """Score drafts against clinician replies in one call (content and theme edit-F1).

    ``ids``, ``keep_pairs``: as :meth:`EditF1Scorer.score`; ``gold``: clinicians' labels of
    a uniform sample of the pairs (:func:`editf1.gold.apply.score_with_gold`); the other
    ``options`` build the scorer (:class:`editf1.options.ScoringOptions`), kept per process.

    Raises:
        TypeError: for an unknown option, an option of the wrong type, or inputs not lists.
        ValueError, InputError: as :class:`EditF1Scorer`; bad rows before any judge loads.
    """
    from editf1.inputs import check_option, check_pairs
    from editf1.scorer import EditF1Scorer

    call = {k: options.pop(k) for k in _SCORE_OPTIONS if k in options}
    try:
        keep_pairs = check_option("keep_pairs", call.get("keep_pairs", True), bool)
    except TypeError as error:
        raise TypeError(f"editf1.score: {error}") from None
    rows = check_pairs(predictions, references, call.get("ids"))  # before any model loads
    try:
        scorer = EditF1Scorer(**options)
    except TypeError as error:
        raise TypeError(f"editf1.score: {error}") from None
    if call.get("gold") is not None:
        from editf1.gold.apply import score_with_gold

        return score_with_gold(scorer, rows, call["gold"], keep_pairs=keep_pairs)
    return scorer.score_stream(rows, total=len(rows), keep_pairs=keep_pairs)
