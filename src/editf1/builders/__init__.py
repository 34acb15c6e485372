"""Dataset builders and Hub-ready dataset folders for edit-F1.

Every set the library knows, as :class:`datasets.GeneratorBasedBuilder` subclasses used
directly (``datasets`` 4+ runs no loading scripts), in the shared schemas of
:mod:`editf1.builders.schema`:

=================  ====================================  ==============================
name               builder                               configs (default first)
=================  ====================================  ==============================
demo               :class:`DemoBuilder`                  pairs, cases
oncqa              :class:`OncQABuilder`                 own_reply, edited, cases,
                                                         content_grading
kqa                :class:`KQABuilder`                   pairs, questions
kqa_nli            :class:`KQANLIBuilder`                default (content matches)
expertqa_medicine  :class:`ExpertQAMedicineBuilder`      edited, cases
syppm              :class:`SyPPMBuilder`                 cases, pairs
ippm, socppm,      :class:`IPPMBuilder`,                 cases, pairs
hospital_export    :class:`SoCPPMBuilder`,
                   :class:`HospitalExportBuilder`
content_matches    :class:`ContentMatchBuilder`          default
theme_annotations  :class:`ThemeAnnotationBuilder`       default
=================  ====================================  ==============================

>>> from editf1.builders import load_split
>>> pairs = load_split("demo", "pairs", "test", cache_dir=getfixture("tmp_path"))
>>> pairs.num_rows, pairs.column_names[:6]
(12, ['id', 'case_id', 'message', 'ehr_summary', 'prediction', 'reference'])
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import datasets

    from editf1.builders.base import EditF1Builder

__all__ = [
    "BUILDERS",
    "BUILDER_NAMES",
    "SYPPM_COLLECTION",
    "ContentMatchBuilder",
    "DemoBuilder",
    "EditF1Builder",
    "EditF1Config",
    "ExpertQAMedicineBuilder",
    "ExportError",
    "HospitalExportBuilder",
    "IPPMBuilder",
    "KQABuilder",
    "KQANLIBuilder",
    "OncQABuilder",
    "SoCPPMBuilder",
    "SyPPMBuilder",
    "ThemeAnnotationBuilder",
    "builder_class",
    "load_builder",
    "load_split",
]

# Names resolve lazily (PEP 562), so that ``edit-f1 --help`` does not import datasets.
_EXPORTS = {
    "EditF1Builder": "base",
    "EditF1Config": "base",
    "ExportError": "exports",
    "DemoBuilder": "public",
    "OncQABuilder": "oncqa",
    "KQABuilder": "public",
    "KQANLIBuilder": "public",
    "ExpertQAMedicineBuilder": "public",
    "SyPPMBuilder": "hospital",
    "IPPMBuilder": "hospital",
    "SoCPPMBuilder": "hospital",
    "HospitalExportBuilder": "hospital",
    "ContentMatchBuilder": "annotations",
    "ThemeAnnotationBuilder": "annotations",
}

#: Builder name -> class name (see the table above).
_REGISTRY = {
    "demo": "DemoBuilder",
    "oncqa": "OncQABuilder",
    "kqa": "KQABuilder",
    "kqa_nli": "KQANLIBuilder",
    "expertqa_medicine": "ExpertQAMedicineBuilder",
    "syppm": "SyPPMBuilder",
    "ippm": "IPPMBuilder",
    "socppm": "SoCPPMBuilder",
    "hospital_export": "HospitalExportBuilder",
    "content_matches": "ContentMatchBuilder",
    "theme_annotations": "ThemeAnnotationBuilder",
}

#: The builder names, in the order of the table above.
BUILDER_NAMES: tuple[str, ...] = tuple(_REGISTRY)
#: The Hugging Face collection where the paper releases SyPPM (:class:`SyPPMBuilder`);
#: here, not in :mod:`.hospital`, so that ``edit-f1 --help`` names it without importing
#: ``datasets``.
SYPPM_COLLECTION = "PortalPal-AI/evaluating-alignment-for-patient-message-response-drafting"


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f"editf1.builders.{_EXPORTS[name]}"), name)
    if name == "BUILDERS":  # builder name -> class
        return {key: builder_class(key) for key in _REGISTRY}
    raise AttributeError(f"module 'editf1.builders' has no attribute {name!r}")


def builder_class(name: str) -> type[EditF1Builder]:
    """The builder class registered as ``name`` (a key of :data:`BUILDER_NAMES`).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; known: {list(BUILDER_NAMES)}")
    return __getattr__(_REGISTRY[name])


def load_builder(name: str, config_name: str | None = None, **kwargs) -> EditF1Builder:
    """A builder by name: ``load_builder("oncqa", "edited", data_dir=...)``.

    Args:
        name: one of :data:`BUILDER_NAMES`.
        config_name: a config of that builder; None is its default.
        **kwargs: ``data_dir``, ``cache_dir`` and config options (``revision``,
            ``export_files``, ``column_map``, ``split_fractions``, ``seed``, ...).

    Raises:
        ValueError: for an unknown name, config or option.
    """
    cls = builder_class(name)
    names = [c.name for c in cls.BUILDER_CONFIGS]
    if config_name is not None and config_name not in names:
        raise ValueError(f"{name}: unknown config {config_name!r}; configs are {names}")
    for key in ("data_dir", "cache_dir"):
        if isinstance(kwargs.get(key), Path):
            kwargs[key] = str(kwargs[key])
    return cls(config_name=config_name, **kwargs)


def load_split(
    name: str, config_name: str | None = None, split: str | None = None, **kwargs
) -> datasets.Dataset:
    """Prepare a builder and return one split as a :class:`datasets.Dataset`.

    Args:
        name, config_name, **kwargs: as :func:`load_builder`.
        split: a split of the config; None is ``"test"`` when the config has it, else
            its only split.

    Returns:
        The split's rows (Arrow-backed, in the builder's features).

    Raises:
        ValueError: for an unknown split, or None with several splits and no ``test``,
            listing the config's splits.
        FileNotFoundError, ExportError: from the builder, naming file, row and field.
    """
    builder = load_builder(name, config_name, **kwargs)
    builder.download_and_prepare()
    splits = builder.as_dataset()
    return splits[choose_split(splits, split, f"{name}/{builder.config.name}")]


def choose_split(splits, split: str | None, where: str) -> str:
    """``split`` if ``splits`` has it; for None, ``"test"`` or the only split.

    >>> choose_split({"train": 1, "test": 2}, None, "x"), choose_split({"all": 1}, None, "x")
    ('test', 'all')

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
