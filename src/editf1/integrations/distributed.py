"""Scoring across processes (``accelerate launch``, ``torchrun``; gloo on CPUs, nccl on
GPUs): each judges a contiguous share of the rows, merged back in input order, so the
result is one process's. accelerate is imported only when several run
(``docs/serving.md``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from editf1.inputs import CheckedRows, Row, check_rows
from editf1.io import JsonlWriter, atomic_output, warn_leftovers
from editf1.results import CorpusResult, PairResult
from editf1.scorer import EditF1Scorer

__all__ = [
    "ShardedRun",
    "process_state",
    "renumbered",
    "score_across_processes",
    "several_processes",
    "share_of",
]


def several_processes() -> bool:
    """Whether this process is one of several started together: ``torchrun`` and
    ``accelerate launch`` set ``WORLD_SIZE``, or a ``torch.distributed`` process group of
    more than one process is up."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return True
    distributed = sys.modules.get("torch.distributed")
    return bool(
        distributed is not None
        and distributed.is_available()
        and distributed.is_initialized()
        and distributed.get_world_size() > 1
    )


def process_state():
    """accelerate's ``PartialState`` of this launch.

    Raises:
        ModuleNotFoundError: without accelerate (``pip install 'edit-f1[llm]'``).
    """
    import torch
    from accelerate import PartialState

    return PartialState(cpu=not torch.accelerator.is_available())


def share_of(state, n_rows: int) -> range:
    """The contiguous row indices process k of N judges out of ``n_rows``
    (``split_between_processes``: the first ``n_rows % N`` shares have one row more; 5
    rows on 2 processes: ``range(0, 3)``, ``range(3, 5)``)."""
    with state.split_between_processes(list(range(n_rows))) as mine:
        return range(mine[0], mine[-1] + 1) if mine else range(0)


def renumbered(pair: PairResult, first_row: int) -> PairResult:
    """``pair`` (and its per-reply pairs) with ``row`` shifted by ``first_row``."""
    return dataclasses.replace(
        pair,
        row=pair.row + first_row,
        per_reference=tuple(
            dataclasses.replace(p, row=p.row + first_row) for p in pair.per_reference
        ),
    )


@dataclass(frozen=True)
class ShardedRun:
    """What the main process of :func:`score_across_processes` returns: the result
    (``pairs`` not kept: they are in the output file) and the pairs each process judged,
    in process order."""

    result: CorpusResult
    pairs_per_process: tuple[int, ...]


def _read_shard(path: Path, counts: list[int]) -> Iterator[PairResult]:
    """The pairs of one shard, in order; appends their number to ``counts``."""
    n = 0
    with open(path, "rb") as handle, contextlib.suppress(EOFError):
        while True:
            yield pickle.load(handle)  # written by this run's own processes
            n += 1
    counts.append(n)


def score_across_processes(
    scorer: EditF1Scorer,
    rows: Sequence[Row],
    output: str | os.PathLike,
    *,
    state=None,
    run_record: dict | None = None,
) -> ShardedRun | None:
    """Judge ``rows`` with every process, each its own share (:func:`share_of`), and
    write the per-pair JSONL once, in input order, from the main process.

    Every process calls this with the same rows and scorer settings and writes its
    pairs to a shard file in a hidden folder beside ``output`` (removed whatever
    happens); the main process streams them into ``output`` atomically and aggregates
    them. Returns a :class:`ShardedRun` on the main process, ``None`` on the others.

    Args:
        rows: ``(id or None, prediction, reference)`` rows (a reference may be a list).
        output: the per-pair JSONL file (not ``-``), on a file system every process sees.
        state: the ``accelerate.PartialState`` (default :func:`process_state`).
        run_record: written as the ``run`` object of every line (``None``: none).

    Raises:
        InputError: naming every bad row and field (on every process).
        ValueError: for ``output`` ``"-"``, no rows, or a process's shard missing (its
            folder not shared).
        OSError: from writing the shards or the output.
    """
    if os.fspath(output) == "-":
        raise ValueError("several processes write the per-pair results to a file, not to -")
    if not isinstance(rows, CheckedRows):
        rows = check_rows(rows)
    if not rows:  # the scorer's own message, on every process
        raise ValueError("no pairs to score: predictions and references are empty")
    state = state or process_state()
    from accelerate.utils import broadcast_object_list

    folder = [None]
    if state.is_main_process:
        target = Path(os.path.realpath(output))
        target.parent.mkdir(parents=True, exist_ok=True)
        warn_leftovers(target, suffixes=(".tmp", ".shards"))
        folder[0] = tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".shards", dir=target.parent)
    try:
        if state.num_processes > 1:
            broadcast_object_list(folder)
        shards = Path(folder[0])
        share = share_of(state, len(rows))
        judged = scorer.iter_pairs(rows[share.start : share.stop], total=len(share))
        with atomic_output(shards / f"process-{state.process_index}.pickle", binary=True) as handle:
            for pair in judged:
                pickle.dump(renumbered(pair, share.start), handle, pickle.HIGHEST_PROTOCOL)
        state.wait_for_everyone()
        if not state.is_main_process:
            return None
        paths = [shards / f"process-{k}.pickle" for k in range(state.num_processes)]
        if missing := [k for k, path in enumerate(paths) if not path.is_file()]:
            raise ValueError(
                f"the results of process(es) {missing} are missing from {folder[0]}: the "
                "output's folder must be on a file system every process sees"
            )
        counts: list[int] = []
        pairs = (pair for path in paths for pair in _read_shard(path, counts))
        extra = {} if run_record is None else {"run": run_record}
        with JsonlWriter(output) as write:
            result = scorer.aggregate(pairs, sink=lambda pair: write(pair.to_dict() | extra))
        return ShardedRun(result, tuple(counts))
    finally:
        if state.is_main_process and folder[0] is not None:
            shutil.rmtree(folder[0], ignore_errors=True)
