"""What the ``evaluate`` module ``metrics/edit_f1/edit_f1.py`` delegates to: its card
text, its checks (each batch by row and field before evaluate stores it; a failed
computation leaves none of its pairs on disk) and its ``compute``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import shutil
import string
import warnings
from collections.abc import Collection, Iterable, Mapping
from importlib import resources
from pathlib import Path

from editf1.citation import PAPER_CITATION
from editf1.inputs import CheckedRows, check_option, check_pairs, describe
from editf1.integrations import static_text
from editf1.judges import CONTENT_JUDGES, THEME_JUDGES
from editf1.options import ScoringOptions
from editf1.scorer import EditF1Scorer

__all__ = [
    "CITATION",
    "COMPUTE_OPTIONS",
    "DESCRIPTION",
    "KWARGS_DESCRIPTION",
    "MODULE_OPTIONS",
    "check_added",
    "check_batch",
    "check_init_options",
    "computation",
    "compute",
    "discard_cache",
    "features",
    "install_metric",
    "judges_of",
    "keep_in_memory",
    "metric_path",
    "reference_kind",
]

CITATION = PAPER_CITATION

#: The module card's description (evaluate's MetricInfo).
DESCRIPTION = static_text("metric_description.md")

#: ``compute``'s options besides :class:`~editf1.options.ScoringOptions`' fields:
#: name -> (default, type, help).
MODULE_OPTIONS: dict[str, tuple[object, str, str]] = {
    "return_pairs": (True, "bool", 'add "per_pair" (scores and alignment of every pair)'),
    "ids": (None, "list of str", "one id per pair, carried into per_pair"),
    "gold": (
        None,
        "str or list of dict",
        "clinicians' gold labels of a uniform random sample of the pairs (a JSON Lines "
        "file or its rows; editf1.gold.labels), naming pairs by id (or by row number, "
        '"0", "1", ..., without ids). Adds "gold": the judge-only, gold-only and '
        "prediction-powered (PPI++) precision, recall and F1 with 95% CIs, and the "
        "judge's agreement with the labels",
    ),
}

#: Every option ``compute`` takes besides predictions and references.
COMPUTE_OPTIONS: tuple[str, ...] = (
    *(f.name for f in dataclasses.fields(ScoringOptions)),
    *MODULE_OPTIONS,
)


def _compute_args() -> str:
    import textwrap

    specs = [
        (f.name, f.type, f.default, f.metadata["help"]) for f in dataclasses.fields(ScoringOptions)
    ]
    specs += [(name, kind, default, text) for name, (default, kind, text) in MODULE_OPTIONS.items()]
    wrapper = textwrap.TextWrapper(88, initial_indent="    ", subsequent_indent="        ")
    return "\n".join(
        wrapper.fill(f"{name} (`{kind}`, default {default!r}): {text}.")
        for name, kind, default, text in specs
    )


KWARGS_DESCRIPTION = string.Template(static_text("metric_inputs.txt")).substitute(
    content_judges=", ".join(CONTENT_JUDGES),
    theme_judges=", ".join(THEME_JUDGES),
    compute_args=_compute_args(),
)


def check_init_options(options: dict) -> None:
    """Refuse keywords of ``evaluate.load`` that evaluate's module would drop silently.

    Raises:
        ValueError: for any keyword that is not one of ``evaluate.EvaluationModule``'s.
    """
    import evaluate

    known = inspect.signature(evaluate.EvaluationModule.__init__).parameters
    if unknown := sorted(set(options) - set(known) - {"self", "kwargs"}):
        raise ValueError(
            f"evaluate.load(...) does not take {unknown}: choose the judges by the config "
            'name (evaluate.load("edit_f1", "exact+none")) or by compute\'s keywords '
            '(compute(..., content_judge="exact"))'
        )


def judges_of(config_name: str) -> dict:
    """The judges a config name chooses: ``"default"``, ``"CONTENT"`` or
    ``"CONTENT+THEME"`` (``"none"``: no theme judge).

    Raises:
        ValueError: naming the config name and the judges known.

    >>> judges_of("exact+none"), judges_of("default")
    ({'content_judge': 'exact', 'theme_judge': None}, {})
    """
    if config_name == "default":
        return {}
    content, plus, theme = config_name.partition("+")
    if content not in CONTENT_JUDGES or (plus and theme not in (*THEME_JUDGES, "none")):
        raise ValueError(
            f"config name {config_name!r}: give 'default', a content judge "
            f"({', '.join(CONTENT_JUDGES)}), or CONTENT+THEME with a theme judge "
            f"({', '.join(THEME_JUDGES)}) or none"
        )
    chosen = {"content_judge": content}
    if plus:
        chosen["theme_judge"] = None if theme == "none" else theme
    return chosen


def keep_in_memory(module) -> None:
    """In one process, keep the pairs in memory (evaluate's ``keep_in_memory``): no draft
    or reply is written to evaluate's cache folder."""
    if module.num_process == 1:
        module.keep_in_memory = True


def compute(config_name: str, predictions, references, **kwargs) -> dict:
    """Score the rows :func:`computation` checked and return what ``EditF1.compute``
    returns: :meth:`editf1.results.CorpusResult.to_dict` (with ``gold``,
    :meth:`editf1.gold.report.GoldReport.to_dict` under ``gold``).

    Args:
        references: N replies, or N lists of replies (several per draft).
        **kwargs: the fields of :class:`~editf1.options.ScoringOptions` and
            :data:`MODULE_OPTIONS`.

    Raises:
        TypeError: naming unknown options, or an option of the wrong type.
        ValueError: for a bad option value, or a judge chosen both by the config name
            and by ``content_judge`` / ``theme_judge``.
    """
    chosen = judges_of(config_name)
    if twice := sorted(set(chosen) & set(kwargs)):
        raise ValueError(
            f"{' and '.join(twice)} chosen by the config name {config_name!r} and given to "
            "compute: give each judge one way"
        )
    options = {name: kwargs.pop(name, default) for name, (default, _, _) in MODULE_OPTIONS.items()}
    keep_pairs = check_option("return_pairs", options["return_pairs"], bool)
    scorer = EditF1Scorer(**chosen, **kwargs)  # checks the scoring options
    references = [list(r) if isinstance(r, (list, tuple)) else r for r in references]
    if options["ids"] is None:
        rows = CheckedRows((None, p, r) for p, r in zip(predictions, references))
    else:  # the ids are new here: checked with the rows
        rows = check_pairs(list(predictions), references, list(options["ids"]))
    if options["gold"] is not None:
        from editf1.gold.apply import score_with_gold

        return score_with_gold(scorer, rows, options["gold"], keep_pairs=keep_pairs).to_dict()
    return scorer.score_stream(rows, total=len(rows), keep_pairs=keep_pairs).to_dict()


@contextlib.contextmanager
def computation(module, predictions, references, options: dict):
    """One ``compute`` of the module (its body: evaluate's ``compute``): options checked
    on every process before evaluate gathers the pairs, the pairs given added; a failure
    leaves no pair in evaluate's cache.

    Raises:
        TypeError: for unknown options, or processes whose references differ in kind.
        ValueError: when there is no pair to score.
    """
    import pyarrow

    try:
        if unknown := sorted(set(options) - set(COMPUTE_OPTIONS)):
            raise TypeError(
                f"unknown compute option(s) {unknown} for edit_f1; "
                f"it takes {sorted(COMPUTE_OPTIONS)}"
            )
        if options and module.process_id > 0:
            warnings.warn(
                f"compute options {sorted(options)} on process {module.process_id} are not "
                "used: process 0 scores the pairs of every process with the options given to it",
                stacklevel=4,  # the caller of the module's compute
            )
        if predictions is not None or references is not None:
            module.add_batch(predictions=predictions, references=references)
        if not len(module):
            raise ValueError(
                "no pairs to score: predictions and references are empty, or were not "
                "given and nothing was added with add or add_batch"
            )
        yield
    except pyarrow.ArrowException as error:  # gathering the processes' files
        discard_cache(module)
        raise TypeError(
            "the processes' pairs cannot be gathered: their references differ in kind (one "
            "reply per draft on some processes, a list of replies on others; every process "
            f"must give the same kind) [{type(error).__name__}: {error}]"
        ) from None
    except BaseException:
        discard_cache(module)
        raise


def check_batch(predictions, references, first_row: int = 0) -> tuple[list, list]:
    """Check one batch given to ``add_batch`` / ``compute`` before evaluate stores it
    (evaluate's own checks quote the text and read a bare string as one pair per
    character); returns it as ``(predictions, references)`` lists.

    Args:
        predictions, references: sized collections (lists, a ``datasets`` column, a
            NumPy array) of drafts and of replies (strings, or lists of strings).
        first_row: the batch's first row number within the computation.

    Raises:
        TypeError: if either is missing, a string, or a collection without a length.
        ValueError: if their lengths differ.
        editf1.inputs.InputError: naming each bad ``predictions[i]``,
            ``references[i]`` or ``references[i][k]``.
    """
    batch = []
    for name, value in (("predictions", predictions), ("references", references)):
        text = isinstance(value, (str, bytes, Mapping))
        if text or not isinstance(value, Collection):
            hint = (
                "" if text or not isinstance(value, Iterable) else "; pass a list (e.g. list(...))"
            )
            raise TypeError(
                f"{name} must be a list of strings (one per pair), got {describe(value)}{hint}"
            )
        batch.append(list(value))
    predictions, references = batch
    check_pairs(predictions, references, first_row=first_row)
    return predictions, references


def check_added(module, predictions, references) -> tuple[list, list]:
    """:func:`check_batch` of a batch given to ``add_batch`` / ``add``, its rows numbered
    after the pairs held, its references of their kind (:func:`reference_kind`)."""
    predictions, references = check_batch(predictions, references, len(module))
    earlier = module.edit_f1_references if len(module) else None
    module.edit_f1_references = reference_kind(references, earlier)
    return predictions, references


def discard_cache(module) -> None:
    """End a failed computation of an ``evaluate.EvaluationModule``: delete the Arrow
    files it stored (every process's, on process 0, which evaluate deletes only after a
    successful ``compute``) and release their locks. The next ``add``, ``add_batch`` or
    ``compute`` starts a new computation.
    """
    if module.writer is not None:
        module.writer.close()
    paths = [*(module.file_paths or ()), module.cache_file_name]
    if module.num_process > 1 and module.process_id == 0 and not module.keep_in_memory:
        # the names evaluate gives the processes' files (EvaluationModule._get_all_cache_files)
        paths += [
            os.path.join(module.data_dir, f"{module.experiment_id}-{module.num_process}-{k}.arrow")
            for k in range(module.num_process)
        ]
    locks = [*(module.filelocks or ()), module.filelock]
    module.writer = module.buf_writer = module.data = None
    module.selected_feature_format = module.cache_file_name = module.filelock = None
    module.file_paths = module.filelocks = None
    for path in dict.fromkeys(p for p in paths if p is not None):
        Path(path).unlink(missing_ok=True)
    for lock in dict.fromkeys(lock for lock in locks if lock is not None):
        lock.release()


def reference_kind(references, expected: str | None = None) -> str | None:
    """``"multi"`` if every reference is a list of replies, ``"single"`` if none is
    (``expected``, the earlier batches' kind, for an empty batch). evaluate would store a
    later list as its string form, so mixed input is refused.

    Raises:
        TypeError: naming the first reference whose kind differs.
    """
    kinds = ["multi" if isinstance(r, (list, tuple)) else "single" for r in references or ()]
    kind = expected or next(iter(kinds), None)
    for i, this in enumerate(kinds):
        if this != kind:
            want = "a list of replies" if kind == "multi" else "one reply (a string)"
            raise TypeError(
                f"references[{i}] is {type(references[i]).__name__}, but earlier references "
                f"are {want}: give every draft one reply, or every draft a list of replies"
            )
    return kind


def features() -> list:
    """The input formats evaluate tries in order: one reply per draft, or a list."""
    import datasets

    string = datasets.Value("string")
    return [
        datasets.Features({"predictions": string, "references": string}),
        datasets.Features({"predictions": string, "references": datasets.Sequence(string)}),
    ]


def metric_path() -> Path:
    """The folder of the installed ``evaluate`` module: ``evaluate.load(str(metric_path()))``."""
    return Path(str(resources.files("editf1.edit_f1")))


def install_metric(modules_cache: str | Path | None = None) -> Path:
    """Make ``evaluate.load("edit_f1")`` work offline by the bare name: write the module
    where evaluate caches a downloaded one, under ``modules_cache`` (default: evaluate's
    ``HF_MODULES_CACHE``); returns the folder written."""
    import hashlib

    from evaluate import config

    source = metric_path()
    script = (source / "edit_f1.py").read_bytes()
    digest = hashlib.sha256(script).hexdigest()
    root = Path(modules_cache or config.HF_MODULES_CACHE) / "evaluate_modules"
    target = root / "metrics" / "evaluate-metric--edit_f1" / digest
    target.mkdir(parents=True, exist_ok=True)
    for folder in (root, root / "metrics", target.parent, target):
        (folder / "__init__.py").touch()
    for name in ("edit_f1.py", "README.md", "requirements.txt"):  # the card is optional
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    return target
