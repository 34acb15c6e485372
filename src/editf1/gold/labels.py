"""Clinicians' gold labels of a few pairs: the file format, its checks, and the gold counts
(:mod:`editf1.count` with the clinician's spans: Algorithm 1 of Seegmiller et al.).

A gold-label file (JSON Lines), one row per labelled pair::

    {"id": "31-2",                        # the pair's id (its row number where pairs have none)
     "reference_sentences": [             # every sentence of the reply, as the splitter splits it
       {"start": 0, "end": 45,            # the sentence's offsets in the reply
        "match": {"start": 120, "end": 180},  # the draft span (offsets in the draft), or null
        "theme": "Logistics"},            # optional: one of editf1.themes.THEMES
       ...],
     "prediction_sentences": [            # optional, with themes: every draft sentence's theme
       {"start": 0, "end": 30, "theme": "Other"}, ...],
     "reference_sha256": "...", "prediction_sha256": "...",  # optional: the texts labelled
     "annotator": "dr-a",                 # optional
     "complete": true,                    # optional (default true); false: still being labelled
     "sampling": {"design": "uniform", "population": 1000, "size": 50, "seed": 0,
                  "keys_sha256": "...", "rank": 3}}   # optional: how the pair was drawn

``match`` may also be the span's text, if it occurs exactly once in the draft. Rows with
``"complete": false`` are left out and counted. The ``sampling`` record is what
``edit-f1 sample-for-labels`` drew; the estimators of :mod:`editf1.ppi` need a uniform
random sample of the scored pairs, so another design, population or pair ids is refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from numbers import Integral

from editf1.count import ContentCounts, count_content, count_themes
from editf1.inputs import InputError, describe
from editf1.judges.base import ContentJudgement
from editf1.results import ThemeCounts
from editf1.segment import Sentence, SentenceSplitter, has_word
from editf1.themes import THEMES

__all__ = [
    "GoldLabels",
    "GoldPair",
    "PairText",
    "bind_gold",
    "keys_digest",
    "load_gold",
    "pair_keys",
    "sha256_text",
]

#: The fields a row may have, and its sampling record.
ROW_FIELDS = frozenset({"id", "reference_sentences", "prediction_sentences", "sampling"})
ROW_FIELDS |= {"reference_sha256", "prediction_sha256", "annotator", "complete"}
SAMPLING_FIELDS = frozenset({"design", "population", "size", "seed", "keys_sha256", "rank"})
#: The only sampling design the estimators support.
UNIFORM = "uniform"


def sha256_text(text: str) -> str:
    """The sha256 hex digest of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def keys_digest(keys: Sequence[str]) -> str:
    """The sha256 of the scored pairs' keys, one per line (a sampling record's ``keys_sha256``)."""
    return sha256_text("\n".join(keys))


def drawn_order(population: int, size: int, seed: int) -> list[int]:
    """The indices ``sample-for-labels`` draws, in order:
    ``numpy.random.default_rng(seed).permutation(population)[:size]``."""
    import numpy as np

    return np.random.default_rng(seed).permutation(population)[:size].tolist()


def pair_keys(ids: Sequence[str | None]) -> list[str]:
    """The key of each pair: its id when every pair has one, else its row number from 0."""
    if ids and all(i is not None for i in ids):
        return [str(i) for i in ids]
    return [str(i) for i in range(len(ids))]


@dataclass(frozen=True)
class PairText:
    """One scored pair's texts: its ``key`` (:func:`pair_keys`), the draft
    (``prediction``) and the clinician's one reply (``reference``)."""

    key: str
    prediction: str
    reference: str


@dataclass(frozen=True)
class GoldPair:
    """One labelled pair: the clinician's decisions and the gold counts they give.

    Attributes:
        row: its row among the scored pairs (from 0); ``line``: its line in the gold file
            (from 1; 0 for rows in memory).
        matches: per reference sentence, the gold draft span, or ``None`` for NO MATCH.
        reference_themes, prediction_themes: every sentence's theme, or ``None``.
    """

    key: str
    row: int
    line: int
    reference_sentences: tuple[Sentence, ...]
    matches: tuple[Sentence | None, ...]
    prediction_sentences: tuple[Sentence, ...]
    reference_themes: tuple[str, ...] | None
    prediction_themes: tuple[str, ...] | None
    counts: ContentCounts
    annotator: str | None = None

    @property
    def content_counts(self) -> tuple[int, int, int]:
        """``(EM, ED, EA)``: the (tp, fp, fn) of content edit-F1."""
        c = self.counts
        return c.expected_matches, c.expected_deletions, c.expected_additions

    def theme_counts(self, themes_scored: Collection[str]) -> ThemeCounts | None:
        """Gold theme (tp, fp, fn) over ``themes_scored`` (§3.2), or ``None`` without
        theme labels."""
        if self.reference_themes is None or self.prediction_themes is None:
            return None
        matched = [span is not None for span in self.matches]
        return count_themes(self.reference_themes, self.prediction_themes, matched, themes_scored)

    def to_dict(self, themes_scored: Collection[str] | None = None) -> dict:
        """The gold counts and decisions, JSON-ready (the ``gold`` entry of a scored row);
        with ``themes_scored`` and theme labels, the gold theme counts too."""
        c = self.counts
        out = {
            "expected_matches": c.expected_matches,
            "expected_additions": c.expected_additions,
            "expected_deletions": c.expected_deletions,
            "matches": [
                None if m is None else {"start": m.start, "end": m.end} for m in self.matches
            ],
        }
        if self.annotator is not None:
            out["annotator"] = self.annotator
        if themes_scored is not None and (t := self.theme_counts(themes_scored)) is not None:
            out |= {
                "theme_true_positives": t.true_positives,
                "theme_false_positives": t.false_positives,
                "theme_false_negatives": t.false_negatives,
                "reference_themes": list(self.reference_themes),
                "prediction_themes": list(self.prediction_themes),
            }
        return out


@dataclass(frozen=True)
class GoldLabels:
    """Gold labels checked against the scored pairs.

    Attributes:
        pairs: the complete labelled pairs, in gold-file order.
        n_pairs: the number of scored pairs N they were checked against.
        sampling: the rows' sampling record (without ``rank``), or ``None``.
        in_progress: keys of rows still being labelled (``"complete": false``).
        skipped_ranks: ranks of the draw before its last labelled pair that no row labels.
    """

    pairs: tuple[GoldPair, ...]
    n_pairs: int
    sampling: dict | None
    in_progress: tuple[str, ...]
    has_themes: bool
    source: str = "gold labels"
    skipped_ranks: tuple[int, ...] = ()


def _int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _offsets(entry, where: str, errors: list[str]) -> tuple[int, int] | None:
    if not isinstance(entry, dict):
        errors.append(f"{where} must be an object with start and end, got {describe(entry)}")
        return None
    start, end = entry.get("start"), entry.get("end")
    if not (_int(start) and _int(end)):
        errors.append(
            f"{where}: start and end must be integers, got {describe(start)} and {describe(end)}"
        )
        return None
    return int(start), int(end)


def _theme(entry: dict, where: str, errors: list[str]) -> str | None:
    theme = entry.get("theme")
    if theme is not None and theme not in THEMES:
        errors.append(f"{where}.theme is not one of the nine themes (got {describe(theme)})")
        return None
    return theme


def _span(match, draft: str, where: str, errors: list[str]) -> Sentence | None:
    if match is None:
        return None
    if isinstance(match, str):
        found = draft.count(match) if match else 0
        if found != 1:
            how = "does not occur" if not found else f"occurs {found} times"
            errors.append(
                f"{where}.match (a text, {describe(match)}) {how} in the draft: give it "
                "exactly as written there, or as offsets {start, end}"
            )
            return None
        start = draft.index(match)
        end = start + len(match)
    else:
        offsets = _offsets(match, f"{where}.match", errors)
        if offsets is None:
            return None
        start, end = offsets
        if not 0 <= start < end <= len(draft):
            errors.append(
                f"{where}.match: characters {start}-{end} are not a span of the draft "
                f"({describe(draft)})"
            )
            return None
    if not has_word(draft[start:end]):
        errors.append(f"{where}.match: characters {start}-{end} of the draft hold no word")
        return None
    return Sentence(draft[start:end], start, end)


def _sentences(
    entries, sentences: Sequence[Sentence], where: str, what: str, errors: list[str]
) -> list[dict] | None:
    """``entries`` in the order of the sentences they name (each once), or ``None``."""
    if not isinstance(entries, list):
        errors.append(f"{where} must be a list with one entry per sentence of the {what}")
        return None
    index = {(s.start, s.end): k for k, s in enumerate(sentences)}
    ordered: list[dict | None] = [None] * len(sentences)
    before = len(errors)
    for k, entry in enumerate(entries):
        offsets = _offsets(entry, f"{where}[{k}]", errors)
        if offsets is None:
            continue
        if offsets not in index:
            listed = ", ".join(f"{s.start}-{s.end}" for s in sentences[:12])
            errors.append(
                f"{where}[{k}]: characters {offsets[0]}-{offsets[1]} are not one of the "
                f"{what}'s sentences as the splitter splits it ({len(sentences)}: {listed}"
                f"{', ...' if len(sentences) > 12 else ''})"
            )
        elif ordered[index[offsets]] is not None:
            errors.append(f"{where}[{k}]: sentence {offsets[0]}-{offsets[1]} is given twice")
        else:
            ordered[index[offsets]] = entry
    bad = len(errors) > before
    missing = [k for k, entry in enumerate(ordered) if entry is None]
    if missing and not bad:
        shown = ", ".join(f"{sentences[k].start}-{sentences[k].end}" for k in missing[:10])
        errors.append(
            f"{where}: {len(missing)} of the {what}'s {len(sentences)} sentences have no "
            f"entry (characters {shown})"
        )
    return None if bad or missing else ordered


def _sampling(value, where: str, errors: list[str]) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.append(f"{where}.sampling must be an object, got {describe(value)}")
        return None
    if unknown := sorted(set(value) - SAMPLING_FIELDS):
        errors.append(
            f"{where}.sampling: unknown field(s) {unknown}; known: {sorted(SAMPLING_FIELDS)}"
        )
        return None
    return {k: v for k, v in value.items() if k != "rank"}


def _row(row, where, pair: PairText, row_index, line, splitter, errors) -> GoldPair | None:
    """One complete row checked against its pair (errors added), or ``None``."""
    before = len(errors)
    for what, side in (("reply", "reference"), ("draft", "prediction")):
        field, text = f"{side}_sha256", getattr(pair, side)
        digest = row.get(field)
        if digest is not None and digest != sha256_text(text):
            errors.append(
                f"{where}.{field} does not match the {what} of that pair: the labels were "
                f"made on another text ({describe(text)} now)"
            )
    if len(errors) > before:
        return None
    reference = tuple(splitter.split(pair.reference))
    prediction = tuple(splitter.split(pair.prediction))
    entries = _sentences(
        row.get("reference_sentences"), reference, f"{where}.reference_sentences", "reply", errors
    )
    draft_entries, themed = None, "prediction_sentences" in row
    if themed:
        at = f"{where}.prediction_sentences"
        draft_entries = _sentences(row["prediction_sentences"], prediction, at, "draft", errors)
    if entries is None or (themed and draft_entries is None):
        return None
    matches, themes = [], []
    for k, entry in enumerate(entries):
        at = f"{where}.reference_sentences[{k}]"
        if "match" not in entry:
            errors.append(f"{at}: no match field (give a draft span, or null for NO MATCH)")
            continue
        if unknown := sorted(set(entry) - {"start", "end", "match", "theme"}):
            errors.append(f"{at}: unknown field(s) {unknown}")
        matches.append(_span(entry["match"], pair.prediction, at, errors))
        themes.append(_theme(entry, at, errors))
    draft_themes = []
    for k, entry in enumerate(draft_entries or ()):
        at = f"{where}.prediction_sentences[{k}]"
        if unknown := sorted(set(entry) - {"start", "end", "theme"}):
            errors.append(f"{at}: unknown field(s) {unknown}")
        if entry.get("theme") is None:
            errors.append(
                f"{at}: no theme (prediction_sentences give every draft sentence's theme)"
            )
        draft_themes.append(_theme(entry, at, errors))
    labelled = [t is not None for t in themes] + [draft_entries is not None]
    if any(labelled) and not all(labelled):
        errors.append(
            f"{where}: themes are given for some sentences only: give every reply sentence a "
            "theme and prediction_sentences with every draft sentence's, or no themes"
        )
    if len(errors) > before:
        return None
    judgements = [ContentJudgement("no_match" if s is None else "match", s) for s in matches]
    counts = count_content(pair.prediction, prediction, judgements, splitter)
    with_themes = all(labelled)
    return GoldPair(
        key=pair.key,
        row=row_index,
        line=line,
        reference_sentences=reference,
        matches=tuple(matches),
        prediction_sentences=prediction,
        reference_themes=tuple(themes) if with_themes else None,
        prediction_themes=tuple(draft_themes) if with_themes else None,
        counts=counts,
        annotator=row.get("annotator"),
    )


def bind_gold(
    rows: Sequence[dict] | Sequence[tuple[int, dict]],
    pairs: Sequence[PairText],
    splitter: SentenceSplitter | None = None,
    *,
    source: str = "gold labels",
) -> GoldLabels:
    """Check gold-label rows against the scored pairs and compute their gold counts.

    Args:
        rows: the gold rows (dicts, or ``(line, dict)`` as :func:`editf1.io.read_jsonl`
            gives them), in the module docstring's format.
        pairs: every scored pair, in order; keys unique.
        splitter: the scorer's splitter (default :class:`~editf1.segment.SentenceSplitter`).

    Raises:
        InputError: listing every problem by line, id and field (never a text): ids,
            fields, sentences, spans, texts, themes or sampling records that do not fit.
        ValueError: if there is no complete row.
    """
    splitter = splitter or SentenceSplitter()
    keys = [p.key for p in pairs]
    where_is = {key: k for k, key in enumerate(keys)}
    if len(where_is) != len(keys):
        raise ValueError("the scored pairs' keys repeat: gold labels cannot name a pair")
    errors, gold, in_progress, seen, samplings, ranks = [], [], [], {}, {}, {}
    for k, (line, row) in enumerate(r if isinstance(r, tuple) else (0, r) for r in rows):
        place = f"{source}, line {line}" if line else f"{source}, row {k}"
        if not isinstance(row, dict):
            errors.append(f"{place}: expected an object, got {describe(row)}")
            continue
        key = row.get("id")
        if not isinstance(key, str) or not key:
            errors.append(f"{place}: id must be a non-empty string, got {describe(key)}")
            continue
        where = f"{place} (id {key!r})"
        if unknown := sorted(set(row) - ROW_FIELDS):
            errors.append(f"{where}: unknown field(s) {unknown}; known: {sorted(ROW_FIELDS)}")
            continue
        if key not in where_is:
            errors.append(f"{where}: no scored pair has this id")
            continue
        if key in seen:
            errors.append(f"{where}: the pair is labelled again (first at {seen[key]})")
            continue
        seen[key] = place
        complete = row.get("complete", True)
        if not isinstance(complete, bool):
            errors.append(f"{where}.complete must be true or false, got {describe(complete)}")
            continue
        samplings[where] = _sampling(given := row.get("sampling"), where, errors)
        ranks[where] = (key, given.get("rank") if isinstance(given, dict) else None)
        if not complete:
            in_progress.append(key)
            continue
        labelled = _row(row, where, pairs[where_is[key]], where_is[key], line, splitter, errors)
        if labelled is not None:
            gold.append(labelled)
    records: dict = {}
    for where, record in samplings.items():
        records.setdefault(repr(sorted(record.items())) if record else None, where)
    if len(records) > 1:
        firsts = "; ".join(f"one first at {where}" for where in list(records.values())[:3])
        errors.append(
            f"{source}: the rows hold {len(records)} different sampling records ({firsts}; "
            "a row without one counts as another); label one sample"
        )
    sampling = next(iter(samplings.values()), None) if len(records) == 1 else None
    skipped: list[int] = []
    if sampling is not None:
        errors += _sampling_errors(sampling, keys, source)
        if not errors:
            skipped = _draw_errors(sampling, ranks, keys, errors)
    if gold and not errors:
        themed = [g.reference_themes is not None for g in gold]
        if any(themed) and not all(themed):
            errors.append(
                f"{source}: {sum(themed)} labelled pair(s) have theme labels and "
                f"{len(themed) - sum(themed)} do not (e.g. id {gold[themed.index(False)].key!r})"
                ": theme estimates need them on every labelled pair"
            )
    if errors:
        raise InputError(errors)
    if not gold:
        raise ValueError(f"{source}: no complete labelled pair ({len(in_progress)} in progress)")
    return GoldLabels(
        pairs=tuple(gold),
        n_pairs=len(pairs),
        sampling=sampling,
        in_progress=tuple(in_progress),
        has_themes=all(g.reference_themes is not None for g in gold),
        source=source,
        skipped_ranks=tuple(skipped),
    )


def _draw_errors(
    sampling: dict, ranks: dict[str, tuple[str, object]], keys: Sequence[str], errors: list[str]
) -> list[int]:
    """Check each row's pair and rank against the recorded draw (given its ``seed`` and
    ``size``); return the draw's ranks before the last labelled one that no row labels."""
    seed, size = sampling.get("seed"), sampling.get("size")
    if not (_int(seed) and _int(size) and seed >= 0 and 0 < size <= len(keys)):
        return []
    position = {keys[index]: rank for rank, index in enumerate(drawn_order(len(keys), size, seed))}
    for where, (key, rank) in ranks.items():
        if key not in position:
            errors.append(
                f"{where}: this pair is not in the sample the record describes (seed {seed}, "
                f"{size} of {len(keys)} pairs): label only the pairs sample-for-labels drew"
            )
        elif rank is not None and rank != position[key]:
            errors.append(
                f"{where}.sampling.rank is {describe(rank) if not _int(rank) else rank}, but "
                f"the draw puts this pair at rank {position[key]}"
            )
    labelled = {position[key] for key, _ in ranks.values() if key in position}
    return [r for r in range(max(labelled, default=-1)) if r not in labelled]


def _sampling_errors(sampling: dict, keys: Sequence[str], source: str) -> list[str]:
    """Why the labelled pairs are not a uniform sample of these pairs, per the record."""
    errors = []
    design = sampling.get("design", UNIFORM)
    if design != UNIFORM:
        errors.append(
            f"{source}: sampling design {describe(design)} is not supported; the estimates "
            "need a uniform random sample of the scored pairs (edit-f1 sample-for-labels)"
        )
    population = sampling.get("population")
    if population is not None and population != len(keys):
        errors.append(
            f"{source}: the labels were sampled from {population} pairs, but {len(keys)} are "
            "scored: score exactly the pairs they were drawn from"
        )
    elif sampling.get("keys_sha256") not in (None, keys_digest(keys)):
        errors.append(
            f"{source}: the labels were sampled from pairs with other ids (keys_sha256 "
            "differs): score exactly the pairs they were drawn from, in the same order"
        )
    return errors


def load_gold(
    source: str | os.PathLike | Sequence[dict],
    pairs: Sequence[PairText],
    splitter: SentenceSplitter | None = None,
) -> GoldLabels:
    """:func:`bind_gold` of a JSON Lines file or of rows as dicts.

    Raises:
        FileNotFoundError: if the file is missing.
        TypeError: for a source that is neither.
        InputError, ValueError: as :func:`editf1.io.read_jsonl` and :func:`bind_gold`.
    """
    if isinstance(source, (str, os.PathLike)):
        from editf1.io import read_jsonl

        return bind_gold(read_jsonl(source), pairs, splitter, source=os.path.basename(source))
    if not isinstance(source, Sequence) or isinstance(source, (bytes, dict)):
        raise TypeError(f"gold must be a file name or a list of row dicts, got {describe(source)}")
    return bind_gold(list(source), pairs, splitter)
