"""What the ``evaluate`` module ``metrics/edit_f1/edit_f1.py`` delegates to.

The module itself only adapts evaluate's calling convention; descriptions, argument
checks and scoring live here so they are tested once and cannot drift.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Collection, Iterable, Mapping
from importlib import resources
from pathlib import Path

from editf1.citation import PAPER_CITATION
from editf1.inputs import CheckedRows, check_option, check_pairs, describe
from editf1.scorer import cached_scorer

__all__ = [
    "CITATION",
    "COMPUTE_OPTIONS",
    "DESCRIPTION",
    "INIT_OPTIONS",
    "KWARGS_DESCRIPTION",
    "check_batch",
    "check_compute_options",
    "compute",
    "discard_cache",
    "features",
    "install_metric",
    "metric_path",
    "reference_kind",
    "split_init_options",
]

CITATION = PAPER_CITATION

DESCRIPTION = """\
edit-F1 estimates how much a clinician would edit an LLM-drafted reply to a patient
portal message. The clinician's reply (reference) is split into sentences; a content
judge finds, for each, the verbatim span of the draft (prediction) that says the same
thing or NO MATCH. Matched sentences are expected matches (EM), unmatched ones expected
additions (EA); the draft sentences left once matched spans are removed are expected
deletions (ED). precision = EM/(EM+ED), recall = EM/(EM+EA), F1 their harmonic mean,
micro-averaged over the corpus (Seegmiller et al. 2026, Algorithm 1). A theme judge
labels each sentence with one of eight clinical response themes or Other, and the
draft's themes are scored against the reply's (theme-level edit-F1, §3.2). Every
result carries its alignment.
"""

KWARGS_DESCRIPTION = """
Computes content- and theme-level edit-F1.

Args (evaluate.load):
    content_judge (`str` or `ContentJudge`, default "embedding"): "embedding" (offline
        default: all-MiniLM-L6-v2 similarity and word overlap, fitted on physician
        labels), "exact" (same words only), "cross-encoder" (the embedded judge's top
        spans reranked by a LoRA-tuned cross-encoder that reads both texts), "llm" (a
        causal LM plus an optional LoRA adapter, constrained to verbatim draft spans),
        "server" (an OpenAI-compatible server on this machine), or a judge object.
    judge: shorthand for content_judge.
    theme_judge (`str`, `ThemeJudge` or None, default "embedding"): "embedding", "llm",
        "server", a judge object, or None to skip themes.
    content_judge_options, theme_judge_options (`dict`): constructor options of a named
        judge, e.g. {"threshold": 0.7} for "embedding",
        {"base": "owner/model@revision", "adapter": "owner/adapter@revision", "mode":
        "decision"} for "llm", {"base_url": "http://127.0.0.1:8000/v1"} for "server"
        (a non-loopback host needs "allow_remote": True).
Args (compute / add_batch):
    predictions (`list` of `str`): the LLM drafts. An empty draft scores precision 0.
    references (`list` of `str`): the clinicians' replies, one per draft, non-empty.
        Or `list` of `list` of `str` for several clinicians per message: the top-level
        scores then use each draft's best-matching reply, "all_references" holds the
        scores over every (draft, reply) pair, and each per_pair entry adds
        "best_reference", "n_references" and the means over replies ("mean_f1", ...).
    include_other (`bool`, default False): count the theme Other in theme scores.
    zero_division ("warn", 0.0 or 1.0, default "warn"): value of an undefined ratio;
        "warn" gives 0.0 and one warning naming the rows.
    return_pairs (`bool`, default True): add "per_pair" (scores and alignment of
        every pair).
    batch_size (`int`, default 128): pairs handed to the judges at once.
    ids (`list` of `str`, optional): one id per pair, carried into per_pair.
    gold (`str` or `list` of `dict`, optional): clinicians' gold labels of a uniform
        random sample of the pairs (a JSON Lines file or its rows; editf1.gold.labels),
        naming pairs by id (or by row number, "0", "1", ..., without ids). Adds "gold":
        the judge-only, gold-only and prediction-powered (PPI++) precision, recall and
        F1 with 95% CIs, and the judge's agreement with the labels.
Returns:
    precision, recall, f1 (`float` in [0, 1]): micro-averaged content edit-F1.
    expected_matches, expected_additions, expected_deletions, n_pairs (`int`).
    theme_precision, theme_recall, theme_f1 (`float` in [0, 1]) and per_theme
        (`dict`: per-theme F1, proportions of replies and drafts containing it,
        content recall), unless theme_judge is None.
    unusable_judgements (`int`): judge outputs that could not be used (counted as NO
        MATCH).
    reproducibility (`str`): judges, splitter and library versions.
    per_pair (`list` of `dict`): scores, alignment, expected deletions and themes.
Examples:
    >>> import evaluate
    >>> edit_f1 = evaluate.load("metrics/edit_f1", content_judge="exact", theme_judge=None)
    >>> results = edit_f1.compute(
    ...     predictions=["Rest today. Drink water. Call us."],
    ...     references=["Rest today. Take ibuprofen."],
    ... )
    >>> print(round(results["precision"], 4), results["recall"], results["f1"])
    0.3333 0.5 0.4
    >>> results["per_pair"][0]["alignment"][0]["match"]
    {'text': 'Rest today.', 'start': 0, 'end': 11}
"""

#: Options evaluate.load passes to the module's constructor, with their defaults.
INIT_OPTIONS = {
    "content_judge": "embedding",
    "judge": None,
    "theme_judge": "embedding",
    "content_judge_options": None,
    "theme_judge_options": None,
}

#: Options of compute() besides predictions and references, with their defaults.
COMPUTE_OPTIONS = {
    "include_other": False,
    "zero_division": "warn",
    "return_pairs": True,
    "batch_size": 128,
    "ids": None,
    "gold": None,
}


def split_init_options(kwargs: dict, evaluate_parameters) -> tuple[dict, dict]:
    """Separate edit-F1's constructor options from evaluate's own.

    Args:
        kwargs: what evaluate.load passed to the module's constructor.
        evaluate_parameters: names ``evaluate.EvaluationModule.__init__`` accepts.

    Returns:
        (edit-F1 options with defaults filled in, evaluate's options).

    Raises:
        TypeError: naming unknown options (evaluate itself would drop them silently),
            or judge options that are not a dict.
        ValueError: if both ``judge`` and ``content_judge`` are given.
    """
    unknown = sorted(k for k in kwargs if k not in INIT_OPTIONS and k not in evaluate_parameters)
    if unknown:
        raise TypeError(
            f"unknown option(s) {unknown} for edit_f1; it takes {sorted(INIT_OPTIONS)} "
            f"in evaluate.load and {sorted(COMPUTE_OPTIONS)} in compute"
        )
    options = {k: kwargs.get(k, default) for k, default in INIT_OPTIONS.items()}
    for name in ("content_judge_options", "theme_judge_options"):
        check_option(name, options[name], dict, optional=True)
    if options.pop("judge") is not None:
        if "content_judge" in kwargs:
            raise ValueError("pass either judge or content_judge, not both")
        options["content_judge"] = kwargs["judge"]
    rest = {k: v for k, v in kwargs.items() if k not in INIT_OPTIONS}
    return options, rest


def compute(init_options: dict, predictions, references, **kwargs) -> dict:
    """Score and return evaluate's result dict (what ``EditF1.compute`` returns).

    Args:
        init_options: the ``evaluate.load`` options (judges and their options).
        predictions: N drafts (strings).
        references: N clinician replies: strings, or N lists of strings (several
            replies per draft, scored by :meth:`editf1.scorer.EditF1Scorer.score`).
        **kwargs: ``include_other``, ``zero_division``, ``return_pairs``, ``batch_size``,
            ``ids``, ``gold`` (:func:`editf1.gold.apply.score_with_gold`).

    Returns:
        :meth:`editf1.results.CorpusResult.to_dict`: ``precision``, ``recall``, ``f1``
        (fractions in [0, 1], micro-averaged; Seegmiller et al. §3), the counts
        ``expected_matches`` / ``expected_additions`` / ``expected_deletions``, the
        theme-level scores, ``unusable_judgements``, ``reproducibility`` and, with
        ``return_pairs=True``, ``per_pair`` (scores and alignment of each pair). With
        several replies per draft, the multi-reference result (best and mean). With
        ``gold``, ``gold``: :meth:`editf1.gold.report.GoldReport.to_dict`.

    Raises:
        TypeError: naming unknown options, or an option of the wrong type
            (``include_other`` and ``return_pairs`` take a bool, ``batch_size`` an int).
        ValueError: for ``batch_size`` below 1 or a bad ``zero_division``.

    The rows are not checked again: every one passed :func:`check_batch` when it was
    added, and evaluate gives them back unchanged.
    """
    check_compute_options(kwargs)
    options = COMPUTE_OPTIONS | kwargs
    keep_pairs = check_option("return_pairs", options.pop("return_pairs"), bool)
    ids, gold = options.pop("ids"), options.pop("gold")
    scorer = cached_scorer(**init_options, **options)  # checks the scorer's own options
    references = [list(r) if isinstance(r, (list, tuple)) else r for r in references]
    if ids is None:
        rows = CheckedRows((None, p, r) for p, r in zip(predictions, references))
    else:  # the ids are new here: checked with the rows
        rows = check_pairs(list(predictions), references, list(ids))
    if gold is not None:
        from editf1.gold.apply import score_with_gold

        return score_with_gold(scorer, rows, gold, keep_pairs=keep_pairs).to_dict()
    return scorer.score_stream(rows, total=len(rows), keep_pairs=keep_pairs).to_dict()


def check_compute_options(kwargs: dict, process_id: int = 0) -> None:
    """Refuse unknown ``compute`` options on every process, before evaluate gathers the
    pairs; on a process other than 0 in distributed mode, warn that the options given
    there are not used (process 0 scores every process's pairs with its own options;
    ``ids`` and ``gold`` there name the gathered pairs, process 0's first).

    Raises:
        TypeError: naming the unknown options.
    """
    unknown = sorted(set(kwargs) - set(COMPUTE_OPTIONS))
    if unknown:
        raise TypeError(
            f"unknown compute option(s) {unknown} for edit_f1; it takes {sorted(COMPUTE_OPTIONS)}"
        )
    if kwargs and process_id > 0:
        warnings.warn(
            f"compute options {sorted(kwargs)} on process {process_id} are not used: "
            "process 0 scores the pairs of every process with the options given to it",
            stacklevel=3,
        )


def gather_error(error: Exception) -> Exception:
    """The error to raise when process 0 cannot read the processes' Arrow files
    together (pyarrow's type error): their references differ in kind."""
    return TypeError(
        "the processes' pairs cannot be gathered: their references differ in kind (one "
        "reply per draft on some processes, a list of replies on others; every process "
        f"must give the same kind) [{type(error).__name__}: {error}]"
    )


def check_batch(predictions, references, first_row: int = 0) -> tuple[list, list]:
    """Check one batch given to ``add_batch`` / ``compute`` before evaluate stores it:
    evaluate's own checks name neither the row nor the field, quote the text, score a
    bare string as one pair per character and fail on an empty first batch.

    Args:
        predictions, references: the batch: lists (or other sized collections, e.g. a
            ``datasets`` column or a NumPy array) of drafts and of replies (strings,
            or lists of strings for several replies per draft).
        first_row: the number of the batch's first row within the computation.

    Returns:
        ``(predictions, references)`` as lists.

    Raises:
        TypeError: if either is missing, a single string, a generator or another
            collection without a length.
        ValueError: if their lengths differ.
        editf1.inputs.InputError: naming each bad ``predictions[i]``,
            ``references[i]`` or ``references[i][k]`` (see :func:`editf1.inputs.check_pairs`).

    >>> check_batch(["Rest."], [["Rest.", None]])
    Traceback (most recent call last):
    ...
    editf1.inputs.InputError: 1 bad input(s):
      references[0][1] must be a string, got None
    """
    batch = []
    for name, value in (("predictions", predictions), ("references", references)):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Collection):
            hint = (
                "; pass a list (e.g. list(...))"
                if isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))
                else ""
            )
            raise TypeError(
                f"{name} must be a list of strings (one per pair), got {describe(value)}{hint}"
            )
        batch.append(list(value))
    predictions, references = batch
    check_pairs(predictions, references, first_row=first_row)
    return predictions, references


def discard_cache(module) -> None:
    """End a failed computation of the evaluate module and delete what it stored.

    In one process the module keeps the pairs in memory (``keep_in_memory``): nothing
    reaches the disk. In evaluate's distributed mode (``num_process`` > 1) each
    process writes its pairs to an Arrow file in ``cache_dir`` and evaluate deletes
    those files only after a successful ``compute``; this deletes them (every
    process's, on process 0, also when evaluate failed before it listed them) and
    releases their locks after a failure, so that no draft or reply is left behind. The
    next ``add``, ``add_batch`` or ``compute`` starts a new computation.

    Args:
        module: an ``evaluate.EvaluationModule`` (the edit_f1 module).
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
    """``"multi"`` if every reference is a list of replies, ``"single"`` if none is.

    evaluate picks one input format from the first example and would turn a list that
    comes later into its string form (``"['a', 'b']"``) and score that as a reply; the
    module calls this on every batch to refuse mixed input instead.

    Args:
        references: a batch of references (``None``: nothing to check).
        expected: the kind of earlier batches of the same computation, if any.

    Returns:
        The batch's kind (``expected`` for an empty batch).

    Raises:
        TypeError: naming the first reference whose kind differs.

    >>> reference_kind(["a.", "b."]), reference_kind([["a.", "b."]], "multi")
    ('single', 'multi')
    """
    kind = expected
    for i, reference in enumerate(references or ()):
        this = "multi" if isinstance(reference, (list, tuple)) else "single"
        if kind is not None and this != kind:
            want = "a list of replies" if kind == "multi" else "one reply (a string)"
            raise TypeError(
                f"references[{i}] is {type(reference).__name__}, but earlier references "
                f"are {want}: give every draft one reply, or every draft a list of replies"
            )
        kind = this
    return kind


def features() -> list:
    """The input formats the evaluate module accepts, tried in order by evaluate: one
    reply per draft, or a list of replies per draft (several clinicians)."""
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
    """Make ``evaluate.load("edit_f1")`` work offline by the bare name.

    evaluate looks for a bare name in ``./edit_f1/edit_f1.py``, then on the Hub as
    ``evaluate-metric/edit_f1``, then in its module cache under
    ``<HF_MODULES_CACHE>/evaluate_modules/metrics/evaluate-metric--edit_f1/<hash>/``.
    This writes the installed module there, as evaluate itself would after a download.

    Args:
        modules_cache: default: evaluate's ``HF_MODULES_CACHE``.

    Returns:
        The folder written.
    """
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
