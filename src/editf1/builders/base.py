"""The base class of every edit-F1 dataset builder (a :class:`datasets.GeneratorBasedBuilder`
used directly) and the card templates' rendering (jinja2)."""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import ClassVar

import datasets

from editf1.citation import PAPER_CITATION

__all__ = ["EditF1Builder", "EditF1Config", "UpstreamFile", "render_template", "template_sections"]


def render_template(template: str, **variables) -> str:
    """``editf1/builders/templates/<template>`` rendered with ``variables``.

    Raises:
        jinja2.TemplateNotFound: for a name not in ``templates/``.
        jinja2.UndefinedError: for a value the template reads that is not given.
    """
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("editf1.builders", "templates"),
        undefined=jinja2.StrictUndefined,  # a missing value is an error, not ""
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return environment.get_template(template).render(**variables)


def template_sections(name: str, **variables) -> dict[str, str]:
    """``{heading: text}`` of the ``## `` sections of a Markdown template, each stripped."""
    parts = re.split(r"^## (.+)\n", render_template(name, **variables), flags=re.MULTILINE)
    return {heading: text.strip() for heading, text in zip(parts[1::2], parts[2::2])}


def bullets(text: str) -> list[str]:
    """The items of a Markdown ``- `` list, continuation lines joined with a space."""
    return [item.strip().replace("\n  ", " ") for item in re.split(r"^- ", text, flags=re.M)[1:]]


def field_docs(text: str) -> dict[str, str]:
    """``{field: description}`` of a Markdown list of ``- `field`: description`` items."""
    return dict(item.removeprefix("`").split("`: ", 1) for item in bullets(text))


@dataclass
class EditF1Config(datasets.BuilderConfig):
    """A builder's configuration: ``kind``, what one row is (a key of ``KIND_FEATURES``),
    and ``revision``, the upstream revision to download (None: the pinned one)."""

    kind: str = "cases"
    revision: str | None = None


@dataclass(frozen=True)
class UpstreamFile:
    """One upstream file: ``url`` with ``{revision}`` in it, and its pinned revision."""

    url: str
    revision: str

    def resolve(self, revision: str | None = None) -> str:
        return self.url.format(revision=revision or self.revision)


class EditF1Builder(datasets.GeneratorBasedBuilder):
    """A builder of a local ``data_dir`` or (None) its upstream files at a pinned revision,
    cached under a SHA-256 fingerprint of the files read (an edited file is never served
    stale). Subclasses set the class attributes and implement :meth:`_examples_by_split`.

    Attributes:
        DATASET_NAME: the cache folder's name and the card's prose template (:meth:`card_prose`).
        LICENSE: a Hub licence id; LICENSE_NAME: a slug for ``"other"``.
        SOURCE_FILES: file names read from ``data_dir`` (default: those of ``UPSTREAM``).
        UPSTREAM: local file name -> :class:`UpstreamFile` (empty: no download).
        PUBLISHED_ROWS: config -> rows of its ``test`` split from the pinned upstream files.
        CARD_VARIABLES: the values the card's prose template reads.
        CONTAINS_PATIENT_DATA: private data (private repositories only).
        PUSHABLE: whether :func:`editf1.builders.push.push_to_hub` accepts this set.
    """

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = EditF1Config

    DATASET_NAME: ClassVar[str] = ""
    PRETTY_NAME: ClassVar[str] = ""
    HOMEPAGE: ClassVar[str] = ""
    LICENSE: ClassVar[str] = "unknown"
    LICENSE_NAME: ClassVar[str] = ""
    SOURCE_FILES: ClassVar[tuple[str, ...]] = ()
    UPSTREAM: ClassVar[dict[str, UpstreamFile]] = {}
    PUBLISHED_ROWS: ClassVar[dict[str, int]] = {}
    KIND_FEATURES: ClassVar[dict[str, datasets.Features]] = {}
    CARD_VARIABLES: ClassVar[dict] = {}
    CONTAINS_PATIENT_DATA: ClassVar[bool] = False
    PUSHABLE: ClassVar[bool] = False

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("dataset_name", self.DATASET_NAME)
        # the config is known only now: fingerprint and cache folder follow it
        super().__init__(*args, **kwargs)
        self.hash = self._fingerprint()
        self._cache_dir = self._build_cache_dir()
        self._output_dir = self._cache_dir
        self._examples: dict[str, list[dict]] | None = None

    @classmethod
    def card_prose(cls) -> dict:
        """The card's prose from ``templates/<DATASET_NAME>.md`` (or the nearest parent's):
        ``description``, ``source`` (or None), ``licence`` (in words), ``caveats`` (list),
        ``fields`` (field -> description, beyond the shared ones) and ``citation`` (BibTeX,
        the paper's entry last)."""
        folder = resources.files("editf1.builders") / "templates"
        names = (getattr(k, "DATASET_NAME", "") for k in cls.__mro__)
        name = next((n for n in names if n and (folder / f"{n}.md").is_file()), None)
        sections = template_sections(f"{name}.md", **cls.CARD_VARIABLES) if name else {}
        own_citation = sections["Citation"] + "\n" if "Citation" in sections else ""
        return {
            "description": sections.get("Description", "").replace("\n", " "),
            "source": sections.get("Source", "").replace("\n", " ") or None,
            "licence": sections.get("Licence", "").replace("\n", " "),
            "caveats": bullets(sections.get("Caveats", "")),
            "fields": field_docs(sections.get("Fields", "")),
            "citation": own_citation + PAPER_CITATION,
        }

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        """``{split: [example, ...]}`` for the config, read from ``source``."""
        raise NotImplementedError

    def _source_paths(self) -> list[Path]:
        """The local files fingerprinted."""
        if self.config.data_dir is None:
            return []
        return [Path(self.config.data_dir) / name for name in self.SOURCE_FILES or self.UPSTREAM]

    def _upstream_identity(self) -> str:
        """What is downloaded when ``data_dir`` is None."""
        return repr(sorted((n, f.resolve(self.config.revision)) for n, f in self.UPSTREAM.items()))

    def _download(self, dl_manager) -> Path:
        """Fetch :attr:`UPSTREAM` into a folder laid out like ``data_dir``."""
        urls = {name: f.resolve(self.config.revision) for name, f in self.UPSTREAM.items()}
        paths = dl_manager.download(urls)
        tag = hashlib.sha256(repr(sorted(urls.items())).encode()).hexdigest()[:16]
        folder = Path(self._cache_downloaded_dir) / "editf1" / self.DATASET_NAME / tag
        folder.mkdir(parents=True, exist_ok=True)
        for name, path in paths.items():
            shutil.copyfile(path, folder / name)
        return folder

    def _info(self) -> datasets.DatasetInfo:
        if self.config.kind not in self.KIND_FEATURES:
            raise ValueError(
                f"{self.DATASET_NAME}: config {self.config.name!r} has unknown kind "
                f"{self.config.kind!r}; kinds are {sorted(self.KIND_FEATURES)}"
            )
        prose = self.card_prose()
        return datasets.DatasetInfo(
            description=prose["description"],
            features=self.KIND_FEATURES[self.config.kind],
            homepage=self.HOMEPAGE,
            license=self.LICENSE,
            citation=prose["citation"],
        )

    def _fingerprint(self) -> str:
        """SHA-256 over the config, the source files' bytes and the upstream URLs."""
        digest = hashlib.sha256(self.config.kind.encode())
        digest.update(repr(sorted(vars(self.config).items(), key=str)).encode())
        if self.config.data_dir is None:
            digest.update(self._upstream_identity().encode())
        for path in self._source_paths():
            digest.update(str(path.name).encode())
            if not path.is_file():
                digest.update(b"<missing>")
                continue
            with open(path, "rb") as handle:  # in blocks: an export may be larger than memory
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()[:32]

    def _split_generators(self, dl_manager):
        if self.config.data_dir is not None:
            source = Path(self.config.data_dir)
            if not source.is_dir():
                raise FileNotFoundError(f"{self.DATASET_NAME}: data_dir {source} is not a folder")
        else:
            source = self._download(dl_manager)
        self._examples = self._examples_by_split(source)
        for split, rows in self._examples.items():
            if not rows:
                raise ValueError(
                    f"{self.DATASET_NAME}: split {split!r} of config {self.config.name!r} "
                    "would be empty; give fewer splits or larger fractions"
                )
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"split": split})
            for split in self._examples
        ]

    def _generate_examples(self, split: str):
        yield from enumerate(self._examples[split])
