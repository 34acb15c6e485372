"""Builders for portal-message exports: a hospital's own data (IPPM / SoCPPM style) and
SyPPM, the paper's public semi-synthetic set (Seegmiller et al., arXiv 2601.11344, §2).

Privacy: an export is read from local files only, and the prepared Arrow cache is a copy of
the data: keep ``cache_dir`` on storage approved for it (the CLI uses a temporary folder).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from editf1.builders import SYPPM_COLLECTION
from editf1.builders.base import EditF1Builder, EditF1Config
from editf1.builders.exports import (
    CASE_EXPORT_FIELDS,
    PARQUET_SUFFIXES,
    ExportError,
    ExportRow,
    age_value,
    assign_splits,
    attributes_value,
    check_split_fractions,
    encounters_value,
    id_value,
    list_value,
    map_columns,
    split_value,
    text_value,
)
from editf1.builders.schema import (
    CASE_FEATURES,
    PAIR_ATTRIBUTES,
    case_pairs,
    ehr_text,
    new_case,
    new_response,
    pair_features,
)
from editf1.citation import PAPER_URL

__all__ = [
    "SYPPM_COLLECTION",
    "ExportBuilder",
    "ExportConfig",
    "HospitalExportBuilder",
    "IPPMBuilder",
    "SoCPPMBuilder",
    "SyPPMBuilder",
]

DATA_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".ndjson", *PARQUET_SUFFIXES)
_EHR_FIELDS = ("age", "sex", "problems", "medications", "encounters")


@dataclass
class ExportConfig(EditF1Config):
    """Configuration of an export builder.

    Attributes:
        export_files: files relative to ``data_dir``; None: every data file
            (:data:`DATA_SUFFIXES`) directly in ``data_dir``, sorted by name.
        column_map: standard field -> export column (:func:`~editf1.builders.exports.map_columns`).
        keep_columns: export columns carried as response ``attributes``.
        list_separator: separator of ``problems`` / ``medications`` in a text cell.
        split_fractions: split -> fraction of cases (None: the builder's default); ignored
            when the export has a ``split`` column.
        seed: seed of :func:`~editf1.builders.exports.assign_splits`.
    """

    export_files: tuple[str, ...] | None = None
    column_map: dict | None = None
    keep_columns: tuple[str, ...] = ()
    file_format: str = "auto"
    list_separator: str = ";"
    split_fractions: dict | None = None
    seed: int = 0


class ExportBuilder(EditF1Builder):
    """Builders of local tabular exports (subclasses set :attr:`EXPORT_FIELDS`, implement
    :meth:`_items`); splits: a ``split`` column, else :func:`.exports.assign_splits`."""

    BUILDER_CONFIG_CLASS = ExportConfig
    EXPORT_FIELDS: ClassVar[dict[str, bool]] = {}
    DEFAULT_SPLITS: ClassVar[Mapping[str, float]] = {"train": 0.8, "validation": 0.1, "test": 0.1}
    HOMEPAGE = PAPER_URL
    LICENSE = "other"
    CONTAINS_PATIENT_DATA = True
    PUSHABLE = True
    KEEPS_COLUMNS: ClassVar[bool] = False

    def _export_paths(self, source: Path) -> list[Path]:
        if self.config.export_files is None:
            files = sorted(p for p in source.iterdir() if p.suffix.lower() in DATA_SUFFIXES)
            if not files:
                raise FileNotFoundError(
                    f"{self.DATASET_NAME}: no {'/'.join(DATA_SUFFIXES)} file in {source}"
                )
            return files
        if isinstance(self.config.export_files, str):
            raise ValueError("export_files must be a list of file names, not one string")
        return [source / name for name in self.config.export_files]

    def _source_paths(self) -> list[Path]:
        if self.config.data_dir is not None and Path(self.config.data_dir).is_dir():
            with suppress(FileNotFoundError):  # no export file yet: the build names it
                return self._export_paths(Path(self.config.data_dir))
        return []

    def _download(self, dl_manager) -> Path:
        raise ValueError(
            f"{self.DATASET_NAME} reads a local export and never downloads: pass data_dir="
        )

    def _items(self, rows: list[ExportRow], errors: list[str]) -> tuple[list, dict]:
        """``[(item id, example)]`` and :meth:`_first_row`'s record; problems to ``errors``."""
        raise NotImplementedError

    @staticmethod
    def _first_row(firsts: dict, key: str, row: ExportRow, values: dict, errors, what) -> bool:
        """Whether ``row`` is item ``key``'s first (recorded); else differing values are errors."""
        if key not in firsts:
            firsts[key] = (row, values)
            return True
        first, first_values = firsts[key]
        errors += [
            f"{row.where}: field {field!r} differs from {first.where} (same {what} {key!r})"
            for field, value in values.items()
            if value != first_values[field]
        ]
        return False

    def _split_examples(self, items, assignment, names) -> dict[str, list[dict]]:
        examples: dict[str, list[dict]] = {name: [] for name in names}
        for item_id, example in items:
            examples[assignment[item_id]].append(example)
        return examples

    def _examples_by_split(self, source: Path) -> dict[str, list[dict]]:
        config = self.config
        fractions = check_split_fractions(config.split_fractions or self.DEFAULT_SPLITS)
        if config.list_separator == "":
            raise ValueError("list_separator must not be empty")
        if config.keep_columns and not self.KEEPS_COLUMNS:
            raise ValueError(f"{self.DATASET_NAME} carries no extra columns: drop keep_columns")
        rows, errors = map_columns(
            self._export_paths(source),
            self.EXPORT_FIELDS,
            config.column_map,
            config.keep_columns,
            config.file_format,
        )
        if errors:  # a missing column would repeat once per row below
            raise ExportError(errors)
        items, firsts = self._items(rows, errors)
        if errors:
            raise ExportError(errors)
        splits = {item_id: values["split"] for item_id, (_, values) in firsts.items()}
        if any(splits.values()):
            missing = [firsts[item_id][0].where for item_id, s in splits.items() if s is None]
            if missing:
                raise ExportError(
                    [f"{where}: field 'split' is empty (other rows give one)" for where in missing]
                )
            assignment, names = splits, list(dict.fromkeys(splits.values()))
        else:
            assignment, names = assign_splits(splits, fractions, config.seed), list(fractions)
        return self._split_examples(items, assignment, names)


class HospitalExportBuilder(ExportBuilder):
    """A hospital's export: one row per (patient message, clinician response), an optional
    LLM draft, columns named by ``column_map`` (fields: :data:`CASE_EXPORT_FIELDS`).

    Configs ``cases`` (default) and ``pairs`` (every draft against every reply of its
    message; needs a ``draft`` column). Splits: the ``split`` column, or a seeded split of
    the messages (default train 0.8 / validation 0.1 / test 0.1). Rules: required fields are
    non-empty text; rows of one message agree on message, chart and split; a clinician
    replies once per message (further rows of that reply only add drafts and agree on the
    kept columns). Example: ``HospitalExportBuilder(config_name="pairs", data_dir=...,
    column_map={"message": "PATIENT_TEXT", ...}, cache_dir=...)``.

    Raises (at ``download_and_prepare``):
        FileNotFoundError: if ``data_dir`` or an export file is missing.
        ExportError: listing every bad file, row and field.
        ValueError: for bad config values, a split that would be empty, or a ``pairs``
            config on an export without drafts.
    """

    DATASET_NAME = "hospital_export"
    PRETTY_NAME = "Patient portal messages with clinician replies (hospital export)"
    LICENSE_NAME = "institutional-data-use-agreement"
    BUILDER_CONFIGS: ClassVar[list] = [
        ExportConfig(name="cases", kind="cases", description="one row per message"),
        ExportConfig(name="pairs", kind="pairs_reply", description="draft vs clinician reply"),
    ]
    DEFAULT_CONFIG_NAME = "cases"
    KIND_FEATURES: ClassVar[dict] = {
        "cases": CASE_FEATURES,
        "pairs_reply": pair_features(attributes=PAIR_ATTRIBUTES),
    }
    EXPORT_FIELDS = CASE_EXPORT_FIELDS
    KEEPS_COLUMNS = True

    def _split_examples(self, items, assignment, names) -> dict[str, list[dict]]:
        if self.config.kind == "cases":
            return super()._split_examples(items, assignment, names)
        without = [case_id for case_id, case in items if not case["drafts"]]
        if len(without) == len(items):
            raise ValueError(
                f"{self.DATASET_NAME}: config {self.config.name!r} pairs drafts with replies, "
                "but the export has no draft (map the 'draft' field); see config 'cases'"
            )
        if without:
            warnings.warn(
                f"{self.DATASET_NAME}: {len(without)} message(s) have no draft and give no "
                f"pair (they are in config 'cases'): {without[:10]}",
                stacklevel=2,
            )
        pairs = [(i, p) for i, c in items for p in case_pairs(c, "reply", with_attributes=True)]
        return super()._split_examples(pairs, assignment, names)

    def _items(self, rows: list[ExportRow], errors: list[str]) -> tuple[list, dict]:
        cases: dict[str, dict] = {}
        firsts: dict[str, tuple[ExportRow, dict]] = {}
        seen: dict[tuple[str, str | None], tuple[ExportRow, dict]] = {}
        for row in rows:
            n_errors = len(errors)
            message_id = id_value(row, "message_id", errors)
            values = {
                "message": text_value(row, "message", errors),
                "ehr_summary": text_value(row, "ehr_summary", errors, required=False),
                "age": age_value(row, errors),
                "sex": text_value(row, "sex", errors, required=False),
                "problems": list_value(row, "problems", errors, self.config.list_separator),
                "medications": list_value(row, "medications", errors, self.config.list_separator),
                "encounters": encounters_value(row, errors),
            }
            response = text_value(row, "response", errors)
            annotator = id_value(row, "annotator_id", errors, required=False)
            draft = text_value(row, "draft", errors, required=False)
            system = text_value(row, "draft_system", errors, required=False)
            if system is not None and draft is None:
                errors.append(f"{row.where}: field 'draft' is empty but draft_system is {system!r}")
            values["split"] = split_value(row, errors)
            attributes = attributes_value(row, errors)
            if len(errors) > n_errors:
                continue
            if self._first_row(firsts, message_id, row, values, errors, "message_id"):
                ehr = {key: values[key] for key in _EHR_FIELDS} | {"other": []}
                summary = values["ehr_summary"] or ehr_text(ehr)
                cases[message_id] = new_case(message_id, values["message"], summary, ehr=ehr)
            case = cases[message_id]
            drafted = {"system": system, "text": draft}
            new_draft = draft is not None and drafted not in case["drafts"]
            if new_draft:
                case["drafts"].append(drafted)
            key = (message_id, annotator)
            if key in seen:
                earlier, response_entry = seen[key]
                who = "annotator_id " + repr(annotator) if annotator else "no annotator_id"
                if response_entry["text"] != response:
                    errors.append(
                        f"{row.where}: duplicate reply to message_id {message_id!r} by {who} "
                        f"(first at {earlier.where}); map annotator_id to tell clinicians apart"
                    )
                elif not new_draft:
                    errors.append(
                        f"{row.where}: duplicate row: message_id {message_id!r}, {who} and "
                        f"reply as {earlier.where}, adding no new draft"
                    )
                elif attributes != response_entry["attributes"]:
                    differing = [
                        a["name"] for a in attributes if a not in response_entry["attributes"]
                    ]
                    errors.append(
                        f"{row.where}: kept column(s) {', '.join(map(repr, differing))} "
                        f"differ from {earlier.where} (same reply to message_id "
                        f"{message_id!r} by {who}); a reply carries one value of each"
                    )
                continue
            entry = new_response(response, annotator, None, attributes)
            case["responses"].append(entry)
            seen[key] = (row, entry)
        return list(cases.items()), firsts


class IPPMBuilder(HospitalExportBuilder):
    """The paper's IPPM set (§2) as a hospital exports it (:class:`HospitalExportBuilder`)."""

    DATASET_NAME = "ippm"
    PRETTY_NAME = "IPPM-style patient portal messages (private hospital export)"


class SoCPPMBuilder(HospitalExportBuilder):
    """The paper's SoCPPM set (§2) as a hospital exports it (:class:`HospitalExportBuilder`)."""

    DATASET_NAME = "socppm"
    PRETTY_NAME = "SoCPPM-style patient portal messages (private hospital export)"


@dataclass
class SyPPMConfig(ExportConfig):
    """:class:`ExportConfig` plus ``hub_repo``, SyPPM's Hub dataset repository."""

    hub_repo: str | None = None


class SyPPMBuilder(HospitalExportBuilder):
    """SyPPM, the paper's 100 semi-synthetic portal messages (§2, Appendix A), from
    ``data_dir`` or ``hub_repo`` (in :data:`SYPPM_COLLECTION`) at ``revision``, read as
    :class:`HospitalExportBuilder` reads an export. One split, ``test``, by default.

    Raises:
        ValueError: when downloading without ``hub_repo`` or ``revision``.
    """

    DATASET_NAME = "syppm"
    PRETTY_NAME = "SyPPM: semi-synthetic patient portal messages with clinician replies"
    CARD_VARIABLES: ClassVar[dict] = {"syppm_collection": SYPPM_COLLECTION}
    LICENSE = "unknown"
    BUILDER_CONFIG_CLASS = SyPPMConfig
    BUILDER_CONFIGS: ClassVar[list] = [
        SyPPMConfig(name="cases", kind="cases", description="one row per message"),
        SyPPMConfig(name="pairs", kind="pairs_reply", description="draft vs clinician reply"),
    ]
    DEFAULT_SPLITS: ClassVar[dict] = {"test": 1.0}
    CONTAINS_PATIENT_DATA = False
    PUSHABLE = False

    def _upstream_identity(self) -> str:
        return f"hf://datasets/{self.config.hub_repo}@{self.config.revision}"

    def _download(self, dl_manager) -> Path:
        if not self.config.hub_repo or not self.config.revision:
            raise ValueError(
                "SyPPM: pass data_dir= (a local copy), or hub_repo= and revision= (a commit "
                "sha) of the Hub release to download it"
            )
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        patterns = list(self.config.export_files or [f"*{s}" for s in DATA_SUFFIXES])
        repo, revision = self.config.hub_repo, self.config.revision
        cache = Path(self._cache_downloaded_dir) / "editf1" / "syppm"
        try:
            folder = snapshot_download(
                repo,
                repo_type="dataset",
                revision=revision,
                allow_patterns=patterns,
                cache_dir=cache,
            )
        except LocalEntryNotFoundError as error:  # offline, or no network, and not cached
            raise ConnectionError(
                f"SyPPM {repo} at revision {revision} is not in the download cache {cache} "
                "and the Hub cannot be reached (offline mode or no network). Next: where "
                f"the Hub is reachable, `hf download {repo} --repo-type dataset --revision "
                f"{revision} --local-dir DIR`, then read that copy with data_dir=DIR "
                "(edit-f1: --data-dir DIR, no --download); or download once online into a "
                "cache you keep (edit-f1: --cache-dir DIR) and use the same cache offline"
            ) from error
        return Path(folder)
