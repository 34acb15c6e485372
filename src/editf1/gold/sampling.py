"""Which pairs to label (n of the N scored pairs uniformly at random, in the order drawn,
so that the first k labelled are a uniform sample too), the annotation file a labelling app
reads, and an annotator's answers as a gold row. Every row records the draw, which
:func:`editf1.gold.labels.bind_gold` checks.

Annotation row (JSON Lines; the annotator's working file, holding the texts)::

    {"id": "31-2", "prediction": "<draft>", "reference": "<reply>",
     "reference_sentences": [{"start": 0, "end": 45}, ...],   # the splitter's, to label
     "prediction_sentences": [{"start": 0, "end": 30}, ...],  # the candidate spans
     "themes": true,                                          # ask for every sentence's theme
     "reference_sha256": "...", "prediction_sha256": "...",
     "sampling": {"design": "uniform", "population": 1000, "size": 50, "seed": 0,
                  "keys_sha256": "...", "rank": 0},
     "score_arguments": ["pairs.jsonl"]}   # optional: edit-f1 score's arguments for the app
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from editf1.gold.labels import UNIFORM, PairText, drawn_order, keys_digest, sha256_text
from editf1.inputs import InputError, describe
from editf1.segment import Sentence, SentenceSplitter
from editf1.themes import THEMES

__all__ = ["ANNOTATION_FIELDS", "gold_row", "read_annotation", "sample_for_labels"]

#: The fields every annotation row has.
ANNOTATION_FIELDS = ("id", "prediction", "reference", "reference_sentences")
ANNOTATION_FIELDS += ("prediction_sentences", "themes", "reference_sha256", "prediction_sha256")
ANNOTATION_FIELDS += ("sampling",)


def _offsets(sentences: Sequence[Sentence]) -> list[dict]:
    return [{"start": s.start, "end": s.end} for s in sentences]


def sample_for_labels(
    pairs: Sequence[PairText],
    n: int,
    *,
    seed: int = 0,
    themes: bool = True,
    splitter: SentenceSplitter | None = None,
    score_arguments: Sequence[str] | None = None,
) -> list[dict]:
    """Draw n pairs uniformly at random: n annotation rows, in the order drawn.

    Args:
        pairs: the N scored pairs (keys unique), in the order they will be scored.
        n: pairs to draw, 1 <= n <= N.
        seed: seed of ``numpy.random.default_rng(seed).permutation``.
        themes: ask the annotator for every sentence's theme as well.
        splitter: the scorer's splitter (default :class:`~editf1.segment.SentenceSplitter`).
        score_arguments: the ``edit-f1 score`` arguments that read ``pairs``.

    Raises:
        ValueError: for n outside [1, N], repeated keys, or a reply with no sentence.

    >>> rows = sample_for_labels([PairText(k, "Rest.", "Rest.") for k in "abc"], 2, seed=0)
    >>> [r["id"] for r in rows], rows[1]["sampling"]["rank"]
    (['c', 'a'], 1)
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(pairs):
        raise ValueError(f"n must be an int from 1 to the {len(pairs)} pairs, got {n!r}")
    keys = [p.key for p in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("the pairs' keys repeat: a sample could not name its pairs")
    splitter = splitter or SentenceSplitter()
    record = {"design": UNIFORM, "population": len(pairs), "size": n, "seed": seed}
    record["keys_sha256"] = keys_digest(keys)
    rows = []
    for rank, index in enumerate(drawn_order(len(pairs), n, seed)):
        pair = pairs[index]
        reference = splitter.split(pair.reference)
        if not reference:
            raise ValueError(f"pair {pair.key!r}: the reply has no sentence to label")
        rows.append(
            {
                "id": pair.key,
                "prediction": pair.prediction,
                "reference": pair.reference,
                "reference_sentences": _offsets(reference),
                "prediction_sentences": _offsets(splitter.split(pair.prediction)),
                "themes": themes,
                "reference_sha256": sha256_text(pair.reference),
                "prediction_sha256": sha256_text(pair.prediction),
                "sampling": record | {"rank": rank},
            }
        )
        if score_arguments is not None:
            rows[-1]["score_arguments"] = [str(a) for a in score_arguments]
    return rows


def _span_in(span, text: str) -> bool:
    if not isinstance(span, dict):
        return False
    start, end = span.get("start"), span.get("end")
    return isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)


def read_annotation(path: str | os.PathLike) -> list[dict]:
    """The rows of an annotation file, checked: every field present, the texts those the
    digests name, the sentences offsets into them.

    Raises:
        FileNotFoundError: if the file is missing.
        InputError: naming each line and field that is wrong.
    """
    from editf1.io import read_jsonl

    name = os.path.basename(path)
    numbered = read_jsonl(path, ANNOTATION_FIELDS)
    errors = []
    for line, row in numbered:
        where = f"{name}, line {line}"
        for field in ("reference", "prediction"):
            text, digest = row[field], f"{field}_sha256"
            if not isinstance(text, str) or sha256_text(text) != row[digest]:
                errors.append(f"{where}: {field} ({describe(text)}) does not match {digest}")
                continue
            key = f"{field}_sentences"
            spans = row[key]
            if not isinstance(spans, list) or not all(_span_in(s, text) for s in spans):
                errors.append(f"{where}: {key} must be offsets {{start, end}} into the {field}")
        if not isinstance(row["themes"], bool):
            errors.append(f"{where}: themes must be true or false, got {describe(row['themes'])}")
        arguments = row.get("score_arguments", [])
        if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
            errors.append(f"{where}: score_arguments must be a list of strings")
    if errors:
        raise InputError(errors)
    if not numbered:
        raise ValueError(f"{name}: no pairs to label")
    return [row for _, row in numbered]


def gold_row(
    annotation: dict,
    matches: Sequence[tuple[int, int] | bool | None],
    reference_themes: Sequence[str | None] = (),
    prediction_themes: Sequence[str | None] = (),
    *,
    annotator: str | None = None,
) -> dict:
    """One gold row from an annotator's answers for an annotation row; ``complete`` is
    false until every sentence is answered.

    Args:
        matches: per reference sentence, the draft span's ``(start, end)``, ``None``
            for NO MATCH, or ``False`` where not answered yet.
        reference_themes, prediction_themes: per sentence, a theme or ``None`` where
            not answered yet (empty where themes are not asked for).

    Raises:
        ValueError: for answer lists of the wrong length or an unknown theme.
    """
    refs, drafts = annotation["reference_sentences"], annotation["prediction_sentences"]
    if len(matches) != len(refs):
        raise ValueError(f"{len(matches)} answers for {len(refs)} reference sentences")
    asked = annotation["themes"]
    if asked and (len(reference_themes), len(prediction_themes)) != (len(refs), len(drafts)):
        raise ValueError("themes: one answer per reference and per draft sentence")
    if unknown := [t for t in (*reference_themes, *prediction_themes) if t not in (None, *THEMES)]:
        raise ValueError(f"{len(unknown)} theme(s) not among the nine themes")
    sentences = []
    for k, (s, match) in enumerate(zip(refs, matches)):
        entry = {"start": s["start"], "end": s["end"]}
        if match is not False:
            entry["match"] = None if match is None else {"start": match[0], "end": match[1]}
        if asked and reference_themes[k] is not None:
            entry["theme"] = reference_themes[k]
        sentences.append(entry)
    row = {"id": annotation["id"], "reference_sentences": sentences}
    if asked:
        row["prediction_sentences"] = [
            {"start": s["start"], "end": s["end"]} | ({"theme": t} if t is not None else {})
            for s, t in zip(drafts, prediction_themes)
        ]
    complete = all(m is not False for m in matches) and (
        not asked or None not in (*reference_themes, *prediction_themes)
    )
    row |= {
        "reference_sha256": annotation["reference_sha256"],
        "prediction_sha256": annotation["prediction_sha256"],
        "complete": complete,
        "sampling": annotation["sampling"],
    }
    if annotator is not None:
        row["annotator"] = annotator
    return row
