"""Hub-ready dataset folders (``README.md`` and ``data/<config>/<split>.<format>``, which
``datasets.load_dataset(folder, config)`` reads), or the card alone; uploads: ``push``."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import datasets
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCard, DatasetCardData

from editf1.builders import builder_class, load_builder
from editf1.builders.base import EditF1Builder, field_docs, render_template, template_sections

__all__ = [
    "FILE_FORMATS",
    "SIZE_CATEGORIES",
    "HubFolder",
    "build_note",
    "card_configs",
    "check_card_replaceable",
    "check_export_folder",
    "license_link",
    "render_card",
    "size_category",
    "source_datasets",
    "write_card",
    "write_hub_folder",
]

#: Data file formats a folder may use (one per folder).
FILE_FORMATS = ("parquet", "jsonl")


@dataclass(frozen=True)
class HubFolder:
    """A written Hub-ready folder: its ``path`` and ``counts`` (config -> split -> rows)."""

    path: Path
    counts: dict[str, dict[str, int]]


_BOUNDS = ("1K", "10K", "100K", "1M", "10M", "100M", "1B", "10B", "100B", "1T")
#: The Hub's ``size_categories``: (upper bound on rows, category), smallest first.
SIZE_CATEGORIES = tuple(
    (10 ** (i + 3), f"{_BOUNDS[i - 1]}<n<{bound}" if i else f"n<{bound}")
    for i, bound in enumerate(_BOUNDS)
)
#: Licence texts of the licences the library's own sets use.
_LICENSE_TEXTS = {"apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0"}


def size_category(rows: int | None) -> str:
    """The Hub's ``size_categories`` value for ``rows`` rows (``"unknown"``: not counted)."""
    if rows is None:
        return "unknown"
    return next((category for bound, category in SIZE_CATEGORIES if rows < bound), "n>1T")


def license_link(builder_cls: type[EditF1Builder]) -> str:
    """A card's ``license_link``: a GitHub set's licence file, the library's own sets' licence
    text, else (``other``, ``unknown``) the card's Licence section; KeyError for an own
    set's licence with no known text."""
    if builder_cls.LICENSE in ("other", "unknown"):
        return "README.md#licence"
    if builder_cls.UPSTREAM and builder_cls.HOMEPAGE.startswith("https://github.com/"):
        return f"{builder_cls.HOMEPAGE.rstrip('/')}/blob/HEAD/LICENSE"
    return _LICENSE_TEXTS[builder_cls.LICENSE]


def source_datasets(builder_cls: type[EditF1Builder]) -> list[str]:
    """The Hub's ``source_datasets``: ``original`` for the sets this library may upload,
    ``extended|other-<name>`` for a third party's set on GitHub, else ``extended``."""
    if builder_cls.PUSHABLE:
        return ["original"]
    if builder_cls.HOMEPAGE.startswith("https://github.com/"):
        return [f"extended|other-{builder_cls.HOMEPAGE.rstrip('/').rsplit('/', 1)[1].lower()}"]
    return ["extended"]


def card_configs(builder_cls: type[EditF1Builder]) -> list:
    """The ``configs`` of :func:`render_card` as known without data: every config, its
    default splits, and the ``PUBLISHED_ROWS`` counts where a builder has them."""
    splits = list(getattr(builder_cls, "DEFAULT_SPLITS", None) or ["test"])
    published = builder_cls.PUBLISHED_ROWS if splits == ["test"] else {}
    return [
        (c.name, c.kind, c.description or "", {s: published.get(c.name) for s in splits})
        for c in builder_cls.BUILDER_CONFIGS
    ]


def render_card(
    builder_cls: type[EditF1Builder],
    configs: list[tuple[str, str, str, dict[str, int | None]]],
    *,
    file_format: str = "parquet",
    registry_name: str | None = None,
    card_only: str | None = None,
) -> str:
    """The dataset card (README.md) of a Hub-ready folder: YAML front matter (licence, size
    category, source datasets, tags, ``configs``, every config's ``dataset_info``) and the
    Markdown body of ``templates/card.md`` with the builder's :meth:`~EditF1Builder.card_prose`.

    Args:
        configs: ``(config name, kind, description, {split: rows or None})`` per config;
            the first is the default.
        registry_name: the builder's name in :data:`editf1.builders.BUILDER_NAMES`.
        card_only: for a card without its data files, its folder as a command names it;
            the card then opens with :func:`build_note`.

    Raises:
        ValueError: for an unknown file format.
        KeyError: if a licence has no known link.
        jinja2.UndefinedError: if a field has no description.
    """
    cls = builder_cls
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format must be one of {FILE_FORMATS}, got {file_format!r}")
    name = registry_name or cls.DATASET_NAME
    yaml_configs, infos = [], {}
    for i, (config, kind, _, splits) in enumerate(configs):
        files = [{"split": s, "path": f"data/{config}/{s}.{file_format}"} for s in splits]
        first = {"default": True} if i == 0 else {}
        yaml_configs.append({"config_name": config, "data_files": files} | first)
        infos[config] = datasets.DatasetInfo(features=cls.KIND_FEATURES[kind], config_name=config)
    counted = all(n is not None for *_, splits in configs for n in splits.values())
    largest = max(sum(splits.values()) for *_, splits in configs) if counted else None
    card_data = DatasetCardData(
        license=cls.LICENSE,
        license_link=license_link(cls),
        pretty_name=cls.PRETTY_NAME,
        language=["en"],
        size_categories=[size_category(largest)],
        source_datasets=source_datasets(cls),
        tags=["medical", "clinical", "patient-portal-messages", "edit-f1"],
        task_categories=["text-generation"],
        configs=yaml_configs,
        license_name=(cls.LICENSE == "other" and cls.LICENSE_NAME) or None,  # None: left out
    )
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    shared = template_sections("fields.md")
    prose = cls.card_prose()
    docs = {
        k: field_docs(shared["Fields"] + "\n" + shared.get(f"Fields of {k}", "")) | prose["fields"]
        for _, k, _, _ in configs
    }
    default, _, _, default_splits = configs[0]
    first_file = yaml_configs[0]["data_files"][0]["path"]
    note = None if card_only is None else build_note(name, cls, card_only, first_file)
    body = render_template(
        "card.md",
        builder=cls,
        build_note=note and "\n".join(note),
        prose=prose,
        default=default,
        split="test" if "test" in default_splits else next(iter(default_splits)),
        name=name,
        pair_config=next((c for c, kind, *_ in configs if kind.startswith("pairs")), None),
        counted=counted,
        configs=configs,
        rows=field_docs(shared["Rows"]),
        docs=docs,
    )
    return f"---\n{card_data.to_yaml()}\n---\n" + body


def build_note(
    name: str, builder_cls: type[EditF1Builder], folder: str, first_file: str
) -> list[str]:
    """The opening Markdown lines of a card without its data: the ``FileNotFoundError``
    ``datasets.load_dataset(folder)`` raises (naming ``first_file``) until the data files
    are built, and the ``edit-f1 export-dataset`` command that builds them there."""
    variables = {"builder": builder_cls, "name": name, "folder": folder, "first_file": first_file}
    return render_template("build_note.md", **variables).splitlines()


def check_export_folder(output: str | Path, overwrite: bool = False) -> None:
    """Refuse (FileExistsError, naming up to five entries in the way) to write a Hub-ready
    folder over anything but an edit-f1 card's README.md, unless ``overwrite``."""
    output = Path(output)
    if overwrite or not output.is_dir():
        return
    other = sorted(p.name for p in output.iterdir() if p.name != "README.md")
    if other:
        raise FileExistsError(
            f"{output} is not empty ({other[:5]}); pass --overwrite (overwrite=True) to "
            "replace its README.md and data/"
        )
    check_card_replaceable(output / "README.md", overwrite)


def check_card_replaceable(path: str | Path, overwrite: bool = False) -> None:
    """Refuse (FileExistsError) to replace a README.md whose YAML tags do not hold
    ``edit-f1`` (it may be a user's own notes), unless ``overwrite``."""
    path = Path(path)
    if overwrite or not path.exists():
        return
    try:
        tags = DatasetCard.load(path).data.tags or []
    except Exception:  # not a card at all
        tags = []
    if "edit-f1" not in tags:
        raise FileExistsError(
            f"{path} is not an edit-f1 dataset card; pass --overwrite (overwrite=True) to "
            "replace it"
        )


def write_card(
    name: str,
    output: str | Path,
    *,
    file_format: str = "parquet",
    overwrite: bool = False,
    folder: str | None = None,
) -> Path:
    """Write and return ``output/README.md`` (other files there kept): the card of builder
    ``name`` as known without data, opening with :func:`build_note` for ``folder`` (None:
    ``output``).

    Raises:
        FileExistsError: for a README.md there that is not an edit-f1 card.
    """
    cls = builder_class(name)
    path = Path(output) / "README.md"
    check_card_replaceable(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    card = render_card(
        cls,
        card_configs(cls),
        file_format=file_format,
        registry_name=name,
        card_only=str(output) if folder is None else folder,
    )
    path.write_text(card, encoding="utf-8")
    return path


def write_hub_folder(
    name: str,
    output: str | Path,
    *,
    configs: list[str] | None = None,
    file_format: str = "parquet",
    cache_dir: str | Path | None = None,
    overwrite: bool = False,
    **builder_kwargs,
) -> HubFolder:
    """Prepare every config (or ``configs``) of a set and write its Hub-ready folder.

    Args:
        file_format: one of :data:`FILE_FORMATS`.
        cache_dir: the ``datasets`` cache; default a temporary folder deleted afterwards.
        **builder_kwargs: passed to each builder (``data_dir``, ``column_map``, ...).

    Raises:
        FileExistsError: see :func:`check_export_folder`.
        ValueError: for an unknown name or config, or a config named twice.
    """
    cls = builder_class(name)
    output = Path(output)
    check_export_folder(output, overwrite)
    chosen = configs or [c.name for c in cls.BUILDER_CONFIGS]
    if len(set(chosen)) < len(chosen):
        raise ValueError(f"{name}: a config is named twice in {chosen}")
    if file_format not in FILE_FORMATS:
        raise ValueError(f"file_format must be one of {FILE_FORMATS}, got {file_format!r}")
    with tempfile.TemporaryDirectory(prefix="editf1-export-") as tmp:
        cache = str(cache_dir or tmp)
        builders = [load_builder(name, c, cache_dir=cache, **builder_kwargs) for c in chosen]
        for builder in builders:
            builder.download_and_prepare()
        shutil.rmtree(output / "data", ignore_errors=True)
        written = []
        for builder in builders:
            counts = {}
            for split, rows in builder.as_dataset().items():
                path = output / "data" / builder.config.name / f"{split}.{file_format}"
                path.parent.mkdir(parents=True, exist_ok=True)
                if file_format == "parquet":
                    rows.to_parquet(str(path))
                else:  # readable JSON Lines: UTF-8 text, no escaped slashes
                    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
                    path.write_text("".join(lines), encoding="utf-8")
                counts[split] = rows.num_rows
            config = builder.config
            written.append((config.name, config.kind, config.description, counts))
    card = render_card(cls, written, file_format=file_format, registry_name=name)
    (output / "README.md").write_text(card, encoding="utf-8")
    return HubFolder(output, {config: counts for config, _, _, counts in written})
