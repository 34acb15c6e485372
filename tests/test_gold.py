"""Gold-label files (editf1.gold.labels): gold counts by hand, and every check's message,
which names line, id and field and never quotes a text."""

from __future__ import annotations

import json

import numpy as np
import pytest

from editf1.gold.labels import PairText, bind_gold, keys_digest, load_gold, pair_keys, sha256_text
from editf1.gold.sampling import gold_row, read_annotation, sample_for_labels
from editf1.inputs import InputError

DRAFT = "Rest today. Drink water. Call us if it gets worse."
REPLY = "Rest today. Take ibuprofen."
PAIRS = [PairText("a", DRAFT, REPLY), PairText("b", "Hello there.", "Rest. Ice it.")]
# the reply's sentences: 0-11 "Rest today.", 12-27 "Take ibuprofen."; the draft's:
# 0-11, 12-24 "Drink water.", 25-50 "Call us if it gets worse."


def _row(**fields) -> dict:
    row = {
        "id": "a",
        "reference_sentences": [
            {"start": 0, "end": 11, "match": {"start": 0, "end": 11}},
            {"start": 12, "end": 27, "match": None},
        ],
    }
    return row | fields


def _errors(rows, pairs=PAIRS) -> list[str]:
    with pytest.raises(InputError) as caught:
        bind_gold(rows, pairs, source="gold.jsonl")
    for message in caught.value.errors:
        for text in (DRAFT, REPLY, "Rest today.", "Drink water", "ibuprofen"):
            assert text not in message
    return caught.value.errors


def test_gold_counts_by_hand():
    gold = bind_gold([_row()], PAIRS)
    (pair,) = gold.pairs
    # EM 1 (Rest today.), EA 1 (Take ibuprofen.), ED 2 (Drink water., Call us ...)
    assert pair.content_counts == (1, 2, 1)
    assert [d.text for d in pair.counts.deletions] == ["Drink water.", "Call us if it gets worse."]
    assert (pair.key, pair.row, gold.n_pairs, gold.has_themes, gold.sampling) == (
        "a",
        0,
        2,
        False,
        None,
    )
    # a span inside a sentence: "Call us" matched leaves "if it gets worse." as a deletion
    part = _row(
        reference_sentences=[
            {"start": 0, "end": 11, "match": None},
            {"start": 12, "end": 27, "match": "Call us"},
        ]
    )
    (pair,) = bind_gold([part], PAIRS).pairs
    assert pair.content_counts == (1, 3, 1)
    assert pair.matches[1].start == 25 and pair.matches[1].end == 32


def test_themes_give_theme_counts_over_the_scored_themes():
    themed = _row(
        reference_sentences=[
            {
                "start": 0,
                "end": 11,
                "match": {"start": 0, "end": 11},
                "theme": "Medical planning instruction",
            },
            {
                "start": 12,
                "end": 27,
                "match": None,
                "theme": "Medication-related follow-up questions",
            },
        ],
        prediction_sentences=[
            {"start": 0, "end": 11, "theme": "Medical planning instruction"},
            {"start": 12, "end": 24, "theme": "Other"},
            {"start": 25, "end": 50, "theme": "Contingency planning"},
        ],
    )
    gold = bind_gold([themed], PAIRS)
    assert gold.has_themes
    counts = gold.pairs[0].theme_counts(
        [
            "Medical planning instruction",
            "Medication-related follow-up questions",
            "Contingency planning",
        ]
    )
    # reply {planning, medication}, draft {planning, contingency} (Other not scored)
    assert counts.as_tuple() == (1, 1, 1)


def test_a_span_outside_the_draft_or_not_in_it():
    errors = _errors(
        [
            _row(
                reference_sentences=[
                    {"start": 0, "end": 11, "match": {"start": 40, "end": 99}},
                    {"start": 12, "end": 27, "match": "Take ibuprofen"},
                ]
            )
        ]
    )
    assert errors == [
        "gold.jsonl, row 0 (id 'a').reference_sentences[0].match: characters 40-99 are not a "
        "span of the draft (str of 50 characters)",
        "gold.jsonl, row 0 (id 'a').reference_sentences[1].match (a text, str of 14 "
        "characters) does not occur in the draft: give it exactly as written there, or as "
        "offsets {start, end}",
    ]


def test_a_span_without_a_word_and_an_ambiguous_text():
    pairs = [PairText("a", "Rest. Rest. Ice.", REPLY)]
    errors = _errors(
        [
            _row(
                reference_sentences=[
                    {"start": 0, "end": 11, "match": {"start": 4, "end": 6}},
                    {"start": 12, "end": 27, "match": "Rest."},
                ]
            )
        ],
        pairs,
    )
    assert "reference_sentences[0].match: characters 4-6 of the draft hold no word" in errors[0]
    assert "reference_sentences[1].match (a text, str of 5 characters) occurs 2 times" in errors[1]


def test_unknown_and_repeated_ids_unknown_fields():
    errors = _errors([_row(id="zzz"), _row(), _row(), _row(id="b", note="x"), {"id": 3}])
    assert errors == [
        "gold.jsonl, row 0 (id 'zzz'): no scored pair has this id",
        "gold.jsonl, row 2 (id 'a'): the pair is labelled again (first at gold.jsonl, row 1)",
        "gold.jsonl, row 3 (id 'b'): unknown field(s) ['note']; known: ['annotator', "
        "'complete', 'id', 'prediction_sentences', 'prediction_sha256', 'reference_sentences', "
        "'reference_sha256', 'sampling']",
        "gold.jsonl, row 4: id must be a non-empty string, got int",
    ]


def test_a_sentence_that_is_not_the_splitters_a_missing_and_a_repeated_one():
    (error,) = _errors(
        [
            _row(
                reference_sentences=[
                    {"start": 0, "end": 10, "match": None},
                    {"start": 12, "end": 27, "match": None},
                ]
            )
        ]
    )
    assert error == (
        "gold.jsonl, row 0 (id 'a').reference_sentences[0]: characters 0-10 are not one of "
        "the reply's sentences as the splitter splits it (2: 0-11, 12-27)"
    )
    (error,) = _errors([_row(reference_sentences=[{"start": 0, "end": 11, "match": None}])])
    assert error == (
        "gold.jsonl, row 0 (id 'a').reference_sentences: 1 of the reply's 2 sentences have "
        "no entry (characters 12-27)"
    )
    (error,) = _errors([_row(reference_sentences=[{"start": 0, "end": 11, "match": None}] * 2)])
    assert "reference_sentences[1]: sentence 0-11 is given twice" in error
    (error,) = _errors(
        [
            _row(
                reference_sentences=[
                    {"start": 0, "end": 11},
                    {"start": 12, "end": 27, "match": None},
                ]
            )
        ]
    )
    assert (
        "reference_sentences[0]: no match field (give a draft span, or null for NO MATCH)" in error
    )


def test_changed_texts_and_partial_themes():
    errors = _errors([_row(reference_sha256=sha256_text("another reply"))])
    assert errors == [
        "gold.jsonl, row 0 (id 'a').reference_sha256 does not match the reply of that pair: "
        "the labels were made on another text (str of 27 characters now)"
    ]
    half = _row()
    half["reference_sentences"][0]["theme"] = "Logistics"
    (error,) = _errors([half])
    assert "themes are given for some sentences only" in error
    wrong = _row()
    wrong["reference_sentences"][0]["theme"] = "Logistic"
    assert any(
        "theme is not one of the nine themes (got str of 8 characters)" in e
        for e in _errors([wrong])
    )


def test_rows_in_progress_are_left_out_and_counted():
    gold = bind_gold([_row(), {"id": "b", "complete": False, "reference_sentences": []}], PAIRS)
    assert [p.key for p in gold.pairs] == ["a"] and gold.in_progress == ("b",)
    with pytest.raises(ValueError, match="no complete labelled pair"):
        bind_gold([{"id": "b", "complete": False}], PAIRS)


def test_the_sampling_record_must_match_the_scored_pairs():
    keys = [p.key for p in PAIRS]
    ok = {
        "design": "uniform",
        "population": 2,
        "size": 1,
        "seed": 0,
        "keys_sha256": keys_digest(keys),
    }
    gold = bind_gold([_row(sampling=ok | {"rank": 0})], PAIRS)
    assert gold.sampling == ok  # the per-row rank is not part of the shared record
    assert _errors([_row(sampling=ok | {"population": 5})]) == [
        "gold.jsonl: the labels were sampled from 5 pairs, but 2 are scored: score exactly "
        "the pairs they were drawn from"
    ]
    assert "differs" in _errors([_row(sampling=ok | {"keys_sha256": "0" * 64})])[0]
    assert (
        "design str of 10 characters is not supported"
        in _errors([_row(sampling=ok | {"design": "stratified"})])[0]
    )
    two = [_row(sampling=ok), {**_row(id="b"), "sampling": ok | {"seed": 1}}]
    assert (
        "gold.jsonl: the rows hold 2 different sampling records (one first at gold.jsonl, "
        "row 0 (id 'a'); one first at gold.jsonl, row 1 (id 'b'); a row without one counts "
        "as another); label one sample"
    ) in _errors(two)


def test_every_row_must_be_in_the_recorded_draw_at_its_rank():
    """Three pairs, two drawn with seed 0: permutation(3) starts [2, 0], so "c" is rank
    0 and "a" rank 1; "b" was never drawn."""
    pairs = [PairText(key, DRAFT, REPLY) for key in "abc"]
    record = {"design": "uniform", "population": 3, "size": 2, "seed": 0}
    assert _errors([_row(id="b", sampling=record | {"rank": 1})], pairs) == [
        "gold.jsonl, row 0 (id 'b'): this pair is not in the sample the record describes "
        "(seed 0, 2 of 3 pairs): label only the pairs sample-for-labels drew"
    ]
    assert _errors([_row(sampling=record | {"rank": 0})], pairs) == [
        "gold.jsonl, row 0 (id 'a').sampling.rank is 0, but the draw puts this pair at rank 1"
    ]
    # "a" alone: rank 0 ("c") was skipped, which the labels record and the report notes
    gold = bind_gold([_row(sampling=record | {"rank": 1})], pairs)
    assert gold.skipped_ranks == (0,)
    both = [_row(id="c", sampling=record | {"rank": 0}), _row(sampling=record | {"rank": 1})]
    assert bind_gold(both, pairs).skipped_ranks == ()
    # without a seed the draw cannot be recomputed: the rows are taken as recorded
    assert bind_gold([_row(id="b", sampling={"population": 3})], pairs).skipped_ranks == ()


def test_load_from_a_file_names_its_lines(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps(_row()) + "\n\n" + json.dumps(_row(id="nope")) + "\n")
    with pytest.raises(InputError) as caught:
        load_gold(path, PAIRS)
    assert caught.value.errors == ["gold.jsonl, line 3 (id 'nope'): no scored pair has this id"]
    with pytest.raises(TypeError, match="a file name or a list of row dicts"):
        load_gold({"id": "a"}, PAIRS)


def test_pair_keys():
    assert pair_keys(["x", "y"]) == ["x", "y"]
    assert pair_keys(["x", None]) == ["0", "1"]


# ---------------------------------------------------------------- sampling and annotation


def test_sample_for_labels_is_reproducible_and_records_the_draw():
    pairs = [PairText(f"p{k}", DRAFT, REPLY) for k in range(30)]
    first = sample_for_labels(pairs, 10, seed=4)
    again = sample_for_labels(pairs, 10, seed=4)
    other = sample_for_labels(pairs, 10, seed=5)
    ids = [r["id"] for r in first]
    assert ids == [r["id"] for r in again] and ids != [r["id"] for r in other]
    # the documented draw: the first n of default_rng(seed).permutation(N)
    assert ids == [f"p{k}" for k in np.random.default_rng(4).permutation(30)[:10]]
    assert len(set(ids)) == 10
    row = first[3]
    assert row["sampling"] == {
        "design": "uniform",
        "population": 30,
        "size": 10,
        "seed": 4,
        "keys_sha256": keys_digest([p.key for p in pairs]),
        "rank": 3,
    }
    assert row["reference_sentences"] == [{"start": 0, "end": 11}, {"start": 12, "end": 27}]
    assert row["prediction_sentences"][-1] == {"start": 25, "end": 50}
    assert row["reference_sha256"] == sha256_text(REPLY) and row["themes"] is True
    with pytest.raises(ValueError, match="n must be an int from 1 to the 30 pairs"):
        sample_for_labels(pairs, 31)


def test_answers_become_gold_rows_that_load():
    (annotation,) = sample_for_labels([PairText("a", DRAFT, REPLY)], 1, themes=False)
    partial = gold_row(annotation, [(0, 11), False], annotator="dr-a")
    assert partial["complete"] is False and "match" not in partial["reference_sentences"][1]
    done = gold_row(annotation, [(0, 11), None], annotator="dr-a")
    assert done["complete"] is True and done["annotator"] == "dr-a"
    gold = bind_gold([done], [PairText("a", DRAFT, REPLY)])
    assert gold.pairs[0].content_counts == (1, 2, 1)
    assert gold.sampling["population"] == 1 and gold.pairs[0].annotator == "dr-a"
    with pytest.raises(ValueError, match="1 answers for 2 reference sentences"):
        gold_row(annotation, [None])


def test_read_annotation_checks_texts_against_their_digests(tmp_path):
    rows = sample_for_labels([PairText("a", DRAFT, REPLY)], 1)
    path = tmp_path / "annotation.jsonl"
    path.write_text(json.dumps(rows[0] | {"reference": "Another reply."}) + "\n")
    with pytest.raises(InputError) as caught:
        read_annotation(path)
    assert caught.value.errors == [
        "annotation.jsonl, line 1: reference (str of 14 characters) does not match reference_sha256"
    ]
    path.write_text(json.dumps(rows[0]) + "\n")
    assert read_annotation(path) == rows


# ---------------------------------------------------------------- the team's label sets


def test_the_team_content_labels_convert_into_gold_rows(shared_data, splitter):
    from research.team_labels import label_set_summary, team_gold_rows

    pairs, rows = team_gold_rows(shared_data)
    assert len(pairs) == len(rows) == 100
    texts = [PairText(p["id"], p["prediction"], p["reference"]) for p in pairs]
    gold = bind_gold(rows, texts, splitter)
    em, ed, ea = np.array([g.content_counts for g in gold.pairs]).sum(0)
    # the label set's own counts (its card): 71 matches and 265 no-matches in 336 sentences
    labels = label_set_summary("content_match_labels", n_resamples=100)["sources"]
    assert (em, ea) == (
        labels["oncqa/stage1.csv"]["labels"]["match"],
        labels["oncqa/stage1.csv"]["labels"]["no_match"],
    )
    assert ed > 0 and not gold.has_themes  # the drafts are only partly theme-labelled
    # the keys are the OncQA own_reply ids, in stage-1 order
    from editf1.builders.readers import oncqa_rows

    assert sorted(p["id"] for p in pairs) == sorted(
        r["id"] for r in oncqa_rows(shared_data / "oncqa")
    )


def test_every_second_round_set_converts_into_gold_rows(shared_data, splitter):
    from collections import Counter

    from research.content_labels import (
        CONTENT_SETS,
        content_set_gold_rows,
        read_content_rows,
    )

    labels = read_content_rows()
    for name, spec in CONTENT_SETS.items():
        pairs, rows, incomplete = content_set_gold_rows(shared_data, name)
        texts = [PairText(p["id"], p["prediction"], p["reference"]) for p in pairs]
        gold = bind_gold(rows, texts, splitter)  # every sentence of every pair is labelled
        em, _, ea = np.array([g.content_counts for g in gold.pairs]).sum(0)
        # the primary annotator's matches and no-matches, counted from the label rows
        counts = Counter(
            r["match"] for r in labels if r["set"] == name and r["annotator"] == spec["primary"]
        )
        if not incomplete:
            assert (em, ea) == (counts[True], counts[False]), name
        assert len(pairs) == len({p["id"] for p in pairs}) > 20, name


def test_kqa_statements_make_one_reference_per_record(shared_data, splitter):
    from research.content_labels import content_set_gold_rows
    from research.team_labels import field_text

    pairs, _, _ = content_set_gold_rows(shared_data, "kqa_statements")
    pair = next(
        p for p in pairs if p["id"].startswith("kqa_statements:questions_w_answers.jsonl:0|")
    )
    # record 0's statements, Must_have then Nice_to_have, one per line
    statements = []
    for name in ("Must_have", "Nice_to_have"):
        k = 0
        while True:
            try:
                statements.append(field_text(shared_data, "kqa", "questions_w_answers.jsonl",
                                             "0", f"{name}[{k}]"))  # fmt: skip
            except ValueError:
                break
            k += 1
    assert pair["reference"] == "\n".join(statements)
