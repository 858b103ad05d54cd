"""Timing and memory of one benchmarked process, and the statistics over repetitions.

Every engine runs in a process of its own, so each starts equally cold (no JIT or import
left over from another engine) and its memory can be attributed: a sampler follows the
whole process tree (spark-submit's JVM and its Python workers included) and keeps the
peak of the summed RSS and the peak of the largest Python process: where fscommit's
compactor, pyarrow and DuckDB do their work, apart from Spark's JVM heap. Wall time is taken
around the process; an engine also reports the time of its work alone, without
interpreter or JVM start, on one ``BENCH_RESULT <json>`` line.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

RESULT_PREFIX = "BENCH_RESULT "
_SAMPLE_SECONDS = 0.02


@dataclass(frozen=True)
class Measurement:
    """One process run: wall time, memory peaks and what it printed."""

    wall_s: float
    peak_tree_rss: int
    peak_python_rss: int
    returncode: int
    stdout: str

    def report(self) -> dict[str, Any]:
        """The process's ``BENCH_RESULT`` document (the last one), or {} if none."""
        lines = [x for x in self.stdout.splitlines() if x.startswith(RESULT_PREFIX)]
        return json.loads(lines[-1][len(RESULT_PREFIX) :]) if lines else {}


class TreeSampler(threading.Thread):
    """Samples a process and all its descendants until it exits (or ``done`` is set):
    the peak of their summed RSS, of the largest Python process, and their CPU seconds
    (user + system, exited descendants kept at their last sample)."""

    def __init__(self, pid: int, interval_s: float = _SAMPLE_SECONDS) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.interval_s = interval_s
        self.peak_tree = 0
        self.peak_python = 0
        self.done = threading.Event()
        self._python: dict[int, bool] = {}
        self._cpu: dict[int, float] = {}
        self._lock = threading.Lock()

    def cpu_s(self) -> float:
        """CPU seconds of the tree so far, sampled now."""
        self._sample()
        with self._lock:
            return sum(self._cpu.values())

    def run(self) -> None:
        while not self.done.is_set() and self._sample():
            self.done.wait(self.interval_s)

    def _sample(self) -> bool:
        try:
            processes = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return False
        total = 0
        for process in processes:
            try:
                with process.oneshot():
                    rss, times = process.memory_info().rss, process.cpu_times()
                    if process.pid not in self._python:
                        self._python[process.pid] = "python" in process.name()
            except psutil.NoSuchProcess:
                continue
            total += rss
            with self._lock:
                self._cpu[process.pid] = times.user + times.system
                if self._python[process.pid]:
                    self.peak_python = max(self.peak_python, rss)
        with self._lock:
            self.peak_tree = max(self.peak_tree, total)
        return True


def run_measured(
    command: Sequence[str],
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 3600,
) -> Measurement:
    """Run ``command`` to completion; stderr goes to ``log`` (kept for post-mortems)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as stderr:
        started = time.monotonic()
        process = subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
        )
        sampler = TreeSampler(process.pid)
        sampler.start()
        try:
            stdout, _ = process.communicate(timeout=timeout)
        finally:
            wall = time.monotonic() - started
            sampler.done.set()
            sampler.join()
    return Measurement(
        wall, sampler.peak_tree, sampler.peak_python, process.returncode, stdout or ""
    )


def check(measurement: Measurement, what: str, log: Path) -> Measurement:
    """The measurement, or an error naming the failed run and its log."""
    if measurement.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise RuntimeError(f"{what} exited with {measurement.returncode}; see {log}:\n{tail}")
    return measurement


def summarize(values: Sequence[float]) -> dict[str, Any]:
    """Min (the least disturbed run), median, and every run in order."""
    return {
        "min": round(min(values), 4),
        "median": round(statistics.median(values), 4),
        "runs": [round(v, 4) for v in values],
    }


def print_result(document: Mapping[str, Any]) -> None:
    """What a benchmarked child process prints for its parent to read."""
    print(RESULT_PREFIX + json.dumps(document), flush=True)
