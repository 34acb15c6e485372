"""Builders of the judges' annotation sets, content matches (§3.1) and themes (§3.2), from
long-format exports (one row per (item, annotator)) to one row per item."""

from __future__ import annotations

from statistics import multimode
from typing import ClassVar

from editf1.builders.exports import ExportRow, id_value, split_value, text_value
from editf1.builders.hospital import ExportBuilder, ExportConfig
from editf1.builders.schema import CONTENT_MATCH_FEATURES, NO_MATCH, THEME_ANNOTATION_FEATURES
from editf1.inputs import describe
from editf1.themes import THEMES

__all__ = [
    "CONTENT_MATCH_EXPORT_FIELDS",
    "THEME_EXPORT_FIELDS",
    "ContentMatchBuilder",
    "ThemeAnnotationBuilder",
    "majority",
]

#: Standard fields of an annotation export -> required.
CONTENT_MATCH_EXPORT_FIELDS = {
    **dict.fromkeys(("reference_sentence", "prediction", "matched_span", "annotator_id"), True),
    **dict.fromkeys(("item_id", "context", "system", "split"), False),
}
THEME_EXPORT_FIELDS = {
    **dict.fromkeys(("sentence", "theme", "annotator_id"), True),
    **dict.fromkeys(("item_id", "context", "split"), False),
}


def majority(values: list) -> object | None:
    """The value most annotators gave; None on a tie for the most (or no value)."""
    modes = multimode(values)
    return modes[0] if len(modes) == 1 else None


class _AnnotationBuilder(ExportBuilder):
    """Grouping of (item, annotator) rows (without ``item_id``, an item is the rows with the
    same :attr:`ITEM_FIELDS`; one answer per annotator), for subclasses that give
    ``_annotation(row, values, errors)`` (None when bad) and ``_example``."""

    ITEM_FIELDS: ClassVar[tuple[str, ...]] = ()
    LICENSE_NAME = "annotator-institution-terms"

    def _items(self, rows, errors):
        items: dict[str, list[dict]] = {}
        firsts: dict[str, tuple[ExportRow, dict]] = {}
        keys: dict[tuple, str] = {}
        annotators: dict[tuple[str, str], ExportRow] = {}
        for row in rows:
            n_errors = len(errors)
            values = {
                field: text_value(row, field, errors, required=self.EXPORT_FIELDS[field])
                for field in self.ITEM_FIELDS
            }
            annotator = id_value(row, "annotator_id", errors)
            item_id = id_value(row, "item_id", errors, required=False)
            values["split"] = split_value(row, errors)
            answer = self._annotation(row, values, errors)
            if len(errors) > n_errors:
                continue
            if item_id is None:
                key = tuple(values[field] for field in self.ITEM_FIELDS)
                item_id = keys.setdefault(key, str(len(keys)))
            if self._first_row(firsts, item_id, row, values, errors, "item"):
                items[item_id] = []
            if (item_id, annotator) in annotators:
                errors.append(
                    f"{row.where}: field 'annotator_id': {annotator!r} already annotated item "
                    f"{item_id!r} at {annotators[item_id, annotator].where}"
                )
                continue
            annotators[item_id, annotator] = row
            items[item_id].append({"annotator_id": annotator, **answer})
        return [(k, self._example(k, firsts[k][1], v)) for k, v in items.items()], firsts


class ContentMatchBuilder(_AnnotationBuilder):
    """Content-match annotations (:data:`~editf1.builders.schema.CONTENT_MATCH_FEATURES`;
    offsets of the span's first occurrence in the draft), one config, ``default``."""

    DATASET_NAME = "content_matches"
    PRETTY_NAME = "Content-match annotations: reference sentence vs draft span"
    BUILDER_CONFIGS: ClassVar[list] = [ExportConfig(name="default", kind="content_matches")]
    KIND_FEATURES: ClassVar[dict] = {"content_matches": CONTENT_MATCH_FEATURES}
    EXPORT_FIELDS = CONTENT_MATCH_EXPORT_FIELDS
    ITEM_FIELDS = ("reference_sentence", "prediction", "context", "system")

    def _annotation(self, row, values, errors):
        span = text_value(row, "matched_span", errors)
        if span is None or values["prediction"] is None:
            return None
        if span.strip().upper() == NO_MATCH:
            return {"match": False, "matched_span": None, "span_start": None, "span_end": None}
        start = values["prediction"].find(span)
        if start < 0:
            errors.append(
                f"{row.where}: field 'matched_span' is not a verbatim span of the draft "
                f"(field 'prediction'), nor {NO_MATCH!r} ({describe(span)})"
            )
            return None
        end = start + len(span)
        return {"match": True, "matched_span": span, "span_start": start, "span_end": end}

    def _example(self, item_id, values, annotations):
        return {
            "id": item_id,
            "context": values["context"],
            "system": values["system"],
            "prediction": values["prediction"],
            "reference_sentence": values["reference_sentence"],
            "annotations": [{**a, "label": None} for a in annotations],
            "majority_match": majority([a["match"] for a in annotations]),
            "attributes": [],
        }


class ThemeAnnotationBuilder(_AnnotationBuilder):
    """Theme annotations (:data:`~editf1.builders.schema.THEME_ANNOTATION_FEATURES`), one
    config, ``default``."""

    DATASET_NAME = "theme_annotations"
    PRETTY_NAME = "Theme annotations of clinician reply sentences"
    CARD_VARIABLES: ClassVar[dict] = {"themes": THEMES}
    BUILDER_CONFIGS: ClassVar[list] = [ExportConfig(name="default", kind="themes")]
    KIND_FEATURES: ClassVar[dict] = {"themes": THEME_ANNOTATION_FEATURES}
    EXPORT_FIELDS = THEME_EXPORT_FIELDS
    ITEM_FIELDS = ("sentence", "context")

    def _annotation(self, row, values, errors):
        theme = text_value(row, "theme", errors)
        if theme is None:
            return None
        if theme.strip() not in THEMES:
            errors.append(
                f"{row.where}: field 'theme' is not a theme ({describe(theme)}); expected one of "
                f"{list(THEMES)}"
            )
            return None
        return {"theme": theme.strip()}

    def _example(self, item_id, values, annotations):
        return {
            "id": item_id,
            "sentence": values["sentence"],
            "context": values["context"],
            "annotations": annotations,
            "majority_theme": majority([a["theme"] for a in annotations]),
        }
