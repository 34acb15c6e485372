"""Dataset builders and Hub-ready dataset folders for edit-F1.

Every set the library knows (:data:`BUILDER_NAMES`; configs: docs/datasets.md), as a
:class:`datasets.GeneratorBasedBuilder` used directly, in :mod:`editf1.builders.schema`:

>>> from editf1.builders import load_split
>>> pairs = load_split("demo", "pairs", "test", cache_dir=getfixture("tmp_path"))
>>> pairs.num_rows, pairs.column_names[:6]
(12, ['id', 'case_id', 'message', 'ehr_summary', 'prediction', 'reference'])
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import datasets

    from editf1.builders.base import EditF1Builder

#: Builder name -> (module, class).
_REGISTRY = {
    "demo": ("public", "DemoBuilder"),
    "oncqa": ("oncqa", "OncQABuilder"),
    "kqa": ("public", "KQABuilder"),
    "kqa_nli": ("public", "KQANLIBuilder"),
    "expertqa_medicine": ("public", "ExpertQAMedicineBuilder"),
    "syppm": ("hospital", "SyPPMBuilder"),
    "ippm": ("hospital", "IPPMBuilder"),
    "socppm": ("hospital", "SoCPPMBuilder"),
    "hospital_export": ("hospital", "HospitalExportBuilder"),
    "content_matches": ("annotations", "ContentMatchBuilder"),
    "theme_annotations": ("annotations", "ThemeAnnotationBuilder"),
}
# Names resolve lazily (PEP 562), so that ``edit-f1 --help`` does not import datasets.
_EXPORTS = {"EditF1Builder": "base", "EditF1Config": "base", "ExportError": "exports"}
_EXPORTS |= {cls: module for module, cls in _REGISTRY.values()}

__all__ = ["BUILDER_NAMES", "SYPPM_COLLECTION", *_EXPORTS]
__all__ += ["builder_class", "load_builder", "load_split"]

#: The builder names.
BUILDER_NAMES: tuple[str, ...] = tuple(_REGISTRY)
#: The Hugging Face collection where the paper releases SyPPM (:class:`SyPPMBuilder`);
#: here, so that ``edit-f1 --help`` names it without importing ``datasets``.
SYPPM_COLLECTION = "PortalPal-AI/evaluating-alignment-for-patient-message-response-drafting"


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f"editf1.builders.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'editf1.builders' has no attribute {name!r}")


def builder_class(name: str) -> type[EditF1Builder]:
    """The builder class registered as ``name`` (a key of :data:`BUILDER_NAMES`).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; known: {list(BUILDER_NAMES)}")
    return __getattr__(_REGISTRY[name][1])


def load_builder(name: str, config_name: str | None = None, **kwargs) -> EditF1Builder:
    """A builder by name: ``load_builder("oncqa", "edited", data_dir=...)`` (config None: the
    default; ``kwargs``: ``data_dir``, ``cache_dir`` and config options such as
    ``revision``, ``column_map``, ``split_fractions``).

    Raises:
        ValueError: for an unknown name, config or option.
    """
    cls = builder_class(name)
    names = [c.name for c in cls.BUILDER_CONFIGS]
    if config_name is not None and config_name not in names:
        raise ValueError(f"{name}: unknown config {config_name!r}; configs are {names}")
    return cls(config_name=config_name, **kwargs)


def load_split(
    name: str, config_name: str | None = None, split: str | None = None, **kwargs
) -> datasets.Dataset:
    """Prepare a builder (:func:`load_builder`) and return one split (None:
    :func:`choose_split`) as a :class:`datasets.Dataset`.

    Raises:
        ValueError: for an unknown split, or None with several splits and no ``test``.
        FileNotFoundError, ExportError: from the builder, naming file, row and field.
    """
    builder = load_builder(name, config_name, **kwargs)
    builder.download_and_prepare()
    splits = builder.as_dataset()
    return splits[choose_split(splits, split, f"{name}/{builder.config.name}")]


def choose_split(splits, split: str | None, where: str) -> str:
    """``split`` if ``splits`` has it; for None, ``"test"`` or the only split.

    Raises:
        ValueError: naming ``where`` and the splits there are.
    """
    names = list(splits)
    if split is None:
        if "test" in names or len(names) == 1:
            return "test" if "test" in names else names[0]
        raise ValueError(f"{where} has splits {names}: choose one (--split)")
    if split not in names:
        raise ValueError(f"{where}: no split {split!r}; splits are {names}")
    return split
