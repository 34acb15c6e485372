"""Helpers shared by the benchmark scripts (a plain module next to them, not a package).

Every script reuses the library's core (``EditF1Scorer``, the embedded judges, the
readers, ``editf1.stats.bootstrap``); what lives here is only measurement: the
machine's state, a timer around the encoder's forward passes, cache-defeating text
variants, peak memory of a child process and writing the results.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

from editf1.versions import installed_versions

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the scripts import research/ (never installed) from the root
    sys.path.append(str(ROOT))
#: Where the scripts write their latest output (small JSON, Markdown and PNG files).
RESULTS = Path(__file__).resolve().parent / "results"
#: ``../shared/data/oncqa`` next to the repository, as in the tests.
DEFAULT_ONCQA = ROOT.parent / "shared" / "data" / "oncqa"
MB = 1e6  #: memory figures are in megabytes (10^6 bytes); the target 1.5 GB = 1,500 MB


def oncqa_rows_or_exit(data_dir: str | Path, setting: str) -> list[dict]:
    """OncQA rows (:func:`editf1.builders.readers.oncqa_rows`), or exit with a clear message when
    the data folder is absent (a fresh clone outside this workplace)."""
    from editf1.builders.readers import oncqa_rows

    data_dir = Path(data_dir)
    needed = ["Master2.csv", "stage1.csv", "stage2.csv"]
    missing = [name for name in needed if not (data_dir / name).is_file()]
    if missing:
        sys.exit(
            f"OncQA data not found: {data_dir} lacks {', '.join(missing)}. Pass --data-dir "
            "with the folder of Master2.csv, stage1.csv and stage2.csv (AIM-Harvard/OncQA; "
            "in this workplace ../shared/data/oncqa)."
        )
    return oncqa_rows(data_dir, setting)


def busy_processes(threshold: float = 20.0, sample_s: float = 1.0) -> list[dict]:
    """Other processes using more than ``threshold`` % of one core over ``sample_s``."""
    import psutil

    me = os.getpid()
    procs = [p for p in psutil.process_iter(["pid", "name", "cmdline"]) if p.pid != me]
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.cpu_percent(None)
    time.sleep(sample_s)
    busy = []
    for p in procs:
        try:
            cpu = p.cpu_percent(None)
        except psutil.Error:
            continue
        if cpu > threshold:
            command = " ".join(p.info["cmdline"] or [p.info["name"] or "?"])
            busy.append({"pid": p.pid, "cpu_percent": round(cpu, 1), "command": command[:120]})
    return busy


class ContentionMonitor:
    """Samples, in a background thread, the other processes' CPU use while a measurement
    runs (this process and ``exclude`` pids and their children are left out).

    Use as a context manager; :meth:`report` then says how often another process used
    more than ``threshold`` % of a core, so contaminated figures can be told apart.
    """

    def __init__(self, interval_s: float = 2.0, threshold: float = 20.0) -> None:
        self.interval_s = interval_s
        self.threshold = threshold
        self.exclude: set[int] = set()
        self.samples = 0
        self.busy_samples = 0
        self.max_other_cpu_percent = 0.0
        self.busy_commands: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _mine(self, proc) -> bool:
        import psutil

        try:
            chain = [proc, *proc.parents()]
        except psutil.Error:
            return False
        return any(p.pid in self.exclude or p.pid == os.getpid() for p in chain)

    def _run(self) -> None:
        import psutil

        seen: dict[int, psutil.Process] = {}
        while not self._stop.wait(self.interval_s):
            busy = []
            for proc in psutil.process_iter(["pid", "cmdline", "name"]):
                known = seen.setdefault(proc.pid, proc)
                try:
                    cpu = known.cpu_percent(None)
                except psutil.Error:
                    continue
                if cpu > self.threshold and not self._mine(known):
                    busy.append((cpu, " ".join(proc.info["cmdline"] or [proc.info["name"]])))
            self.samples += 1
            if busy:
                self.busy_samples += 1
                self.max_other_cpu_percent = max(self.max_other_cpu_percent, *(c for c, _ in busy))
                self.busy_commands.update(command[:100] for _, command in busy)

    def __enter__(self) -> ContentionMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def report(self) -> dict:
        """``{"samples", "busy_share", "max_other_cpu_percent", "busy_commands"}``."""
        return {
            "samples": self.samples,
            "busy_share": self.busy_samples / self.samples if self.samples else 0.0,
            "max_other_cpu_percent": round(self.max_other_cpu_percent, 1),
            "busy_commands": sorted(self.busy_commands),
        }


def machine_state() -> dict:
    """The machine and its load right now: report it with every timed figure."""
    import torch

    return {
        "time": datetime.datetime.now().isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "other_busy_processes": busy_processes(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": installed_versions(
            "edit-f1", "torch", "transformers", "sentence-transformers", "bert-score"
        ),
    }


def load_line(state: dict) -> str:
    """``"load average 1.02 / 0.98 / 0.75 (1/5/15 min), 2 CPUs"`` for a Markdown table."""
    one, five, fifteen = state["load_average_1_5_15"]
    return f"load average {one} / {five} / {fifteen} (1/5/15 min), {state['cpu_count']} CPUs"


class TimedModel:
    """Wraps a ``SentenceTransformer``: counts the seconds spent in its ``encode``
    (tokenizing, the forward passes, pooling) and lists the texts encoded, and the texts
    of each call (``batches``: the encoder calls it once per batch); everything else is
    delegated. Give it to :class:`editf1.judges.encoder.SentenceEncoder` as ``model``."""

    def __init__(self, model) -> None:
        self.model = model
        self.seconds = 0.0
        self.texts: list[str] = []
        self.batches: list[list[str]] = []

    def encode(self, texts, **kwargs):
        start = time.perf_counter()
        try:
            return self.model.encode(texts, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.texts.extend(texts)
            self.batches.append(list(texts))

    def __getattr__(self, name):
        return getattr(self.model, name)


def timed_judge(judge):
    """A judge that answers as ``judge`` (content or theme) and keeps ``seconds`` (time
    spent in it) and, for a theme judge, ``classified`` (every sentence it was asked)."""
    from editf1.judges import ContentJudge, ThemeJudge

    class Timed:
        def __init__(self) -> None:
            self.seconds = 0.0
            self.classified: list[str] = []

        @property
        def fingerprint(self) -> str:
            return judge.fingerprint

        def _call(self, method, items):
            start = time.perf_counter()
            try:
                return getattr(judge, method)(items)
            finally:
                self.seconds += time.perf_counter() - start

    if isinstance(judge, ContentJudge):

        class TimedContentJudge(Timed, ContentJudge):
            def match(self, requests):
                return self._call("match", requests)

        return TimedContentJudge()

    class TimedThemeJudge(Timed, ThemeJudge):
        def classify(self, sentences):
            self.classified.extend(sentences)
            return self._call("classify", sentences)

    return TimedThemeJudge()


def fresh_scorer(
    model,
    content_judge_options: dict | None = None,
    count_themes: bool = False,
    content_judge=None,
):
    """An :class:`~editf1.scorer.EditF1Scorer` with the embedded judges on an already
    loaded encoder model, with empty caches: ``(scorer, timed_model)``.

    The judges are the library's own classes (nothing re-implemented); the encoder
    cache and the scorer's theme cache are new, so every scorer starts cold.
    ``count_themes`` wraps the theme judge in :func:`timed_judge` (``classified``).
    ``content_judge``: a callable from the new encoder to another content judge (e.g.
    the cross-encoder judge around an already loaded cross-encoder)."""
    from editf1.judges.embedding import EmbeddingContentJudge, EmbeddingThemeJudge
    from editf1.judges.encoder import DEFAULT_ENCODER, SentenceEncoder
    from editf1.scorer import EditF1Scorer

    timed = TimedModel(model)
    encoder = SentenceEncoder(timed, DEFAULT_ENCODER)
    if content_judge is None:
        content = EmbeddingContentJudge(encoder=encoder, **(content_judge_options or {}))
    else:
        content = content_judge(encoder)
    theme = EmbeddingThemeJudge(encoder=encoder)
    if count_themes:
        theme = timed_judge(theme)
    return EditF1Scorer(content_judge=content, theme_judge=theme), timed


def whitespace_variant(text: str, k: int, splitter) -> str:
    """``text`` with the first space of every sentence widened to ``k + 1`` spaces.

    A distinct copy of a real text for repeat ``k`` (``k = 0`` returns it unchanged):
    the encoder's tokenizer drops whitespace, so the model does exactly the work of the
    original, while the string-keyed caches (embeddings, themes) miss as they would for
    a new text. Sentences without a space (rare: "Hi," or "Thanks!") stay as they are.

    Args:
        text: a draft or reply.
        k: the repeat index, >= 0.
        splitter: the :class:`editf1.segment.SentenceSplitter` the scorer uses.

    >>> from editf1.segment import SentenceSplitter
    >>> whitespace_variant("Rest today. Drink water.", 2, SentenceSplitter())
    'Rest   today. Drink   water.'
    """
    if k == 0:
        return text
    pieces, last = [], 0
    for sentence in splitter.split(text):
        gap = sentence.text.find(" ")
        if gap < 0:
            continue
        pieces += [text[last : sentence.start + gap], " " * (k + 1)]
        last = sentence.start + gap + 1
    pieces.append(text[last:])
    return "".join(pieces)


def run_measured(command: list[str], log: Path, env: dict | None = None) -> dict:
    """Run ``command`` as a child process; its wall time and peak memory.

    Returns:
        ``{"contention", "returncode", "wall_s", "cpu_user_s", "cpu_system_s",
        "peak_rss_mb"}``: peak resident set size of that child (``ru_maxrss`` from
        ``wait4``), in MB (10^6 bytes); ``contention``: :class:`ContentionMonitor`'s
        report on other processes meanwhile. The child's output goes to ``log``.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as handle, ContentionMonitor() as monitor:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
        monitor.exclude.add(child.pid)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = returncode = os.waitstatus_to_exitcode(status)
    return {
        "contention": monitor.report(),
        "returncode": returncode,
        "wall_s": wall,
        "cpu_user_s": usage.ru_utime,
        "cpu_system_s": usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss * 1024 / MB,  # ru_maxrss is in KiB on Linux
    }


def rss_mb() -> dict:
    """This process's current and peak resident set size in MB (Linux /proc)."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024 / MB
    return {"rss_mb": fields.get("VmRSS"), "peak_rss_mb": fields.get("VmHWM")}


def write_results(name: str, payload: dict, markdown: str, folder: Path = RESULTS) -> None:
    """Write ``<name>.json`` and ``<name>.md`` into ``folder`` and print the Markdown."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (folder / f"{name}.md").write_text(markdown.rstrip() + "\n", encoding="utf-8")
    print(markdown)
    print(f"wrote {folder / name}.json and .md")
