"""editf1.clear_caches: every in-process cache is filled here, then found empty after."""

from __future__ import annotations

import json
import re
from pathlib import Path

import editf1
from editf1.caches import cached, clear_caches

SRC = Path(__file__).resolve().parents[1] / "src" / "editf1"


def test_no_cache_escapes_the_registry():
    """A function cache made with functools directly would be out of clear_caches' reach."""
    pattern = re.compile(r"\blru_cache\b|^from functools import .*\bcache\b|@(functools\.)?cache\b")
    offenders = [
        f"{path.relative_to(SRC)}:{number}"
        for path in SRC.rglob("*.py")
        if path.name != "caches.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_cached_functions_are_cleared():
    calls = []

    @cached(maxsize=2)
    def double(x):
        calls.append(x)
        return 2 * x

    assert (double(2), double(2), calls) == (4, 4, [2])
    clear_caches()
    assert double.cache_info().currsize == 0
    assert (double(2), calls) == (4, [2, 2])


def test_clear_caches_empties_every_cache(tmp_path, theme_judge_cls):
    import editf1.judges as registry
    from editf1.judges import key_terms, load_content_judge
    from editf1.judges.encoder import default_encoder
    from editf1.judges.generative import judges, loading
    from editf1.judges.generative.tiny import build_tiny_causal_lm
    from editf1.scorer import EditF1Scorer
    from research import team_labels

    # the judge registry, a generative judge's model and its weight files' digests
    tiny = build_tiny_causal_lm(tmp_path / "tiny")
    load_content_judge("llm", {"base": str(tiny)})
    # the judge editf1.score loads
    editf1.score(
        predictions=["Rest."], references=["Rest."], content_judge="exact", theme_judge=None
    )
    # the theme labels of a scorer the caller holds
    held = EditF1Scorer("exact", theme_judge_cls({"Rest.": "Logistics"}))
    held.score(["Rest."], ["Rest."])
    # the default encoder and the embeddings of an encoder the caller holds
    encoder = default_encoder()
    encoder.encode(["Rest today."])
    # key terms, the team labels' upstream files
    key_terms.compare(key_terms.extract("Take 5 mg."), key_terms.extract("Take 10 mg."))

    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "file.jsonl").write_text(json.dumps({"text": "Rest."}) + "\n")
    assert team_labels._records(str(tmp_path), "source", "file.jsonl") == {"0": {"text": "Rest."}}

    function_caches = [
        judges.load_judge_model,
        loading._file_sha256,
        default_encoder,
        key_terms.extract,
        key_terms.compare,
        team_labels._records,
    ]
    sizes = {
        "registry": lambda: len(registry._cache),
        "theme labels": lambda: len(held.theme_cache._labels),
        "embeddings": lambda: len(encoder._cache),
        **{f.__name__: (lambda f=f: f.cache_info().currsize) for f in function_caches},
    }
    assert [name for name, size in sizes.items() if not size()] == []  # all filled
    editf1.clear_caches()
    assert {name: size() for name, size in sizes.items()} == dict.fromkeys(sizes, 0)
    # what was cleared loads again
    assert default_encoder() is not encoder
