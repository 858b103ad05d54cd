"""Checkpoint scale: the committable partitions of a 1,000,000-entry sink log.

Each repetition runs each reader in a fresh process (``python -m bench.checkpoint_scale
READER ROOT ENTRIES PARTITIONS``), so the first read is really first and the peak RSS is
the reader's own:

1. first read: checkpoint, sink log (compact file + deltas), partitions, commit trigger;
   fscommit through ``TableStatusReader.read`` (what ``fscommit status``, the sensor and
   every compaction start with), the baseline through ``baseline_reader``;
2. incremental re-read after one new batch (a delta) with the same reader object;
3. re-read after the next batch, which is a new compact file (the old one plus ~1,000
   lines), the other thing a live log does every ten batches.

fscommit's process then times its stages one by one on fresh objects: the sink log
alone, grouping by partition, and the committed files of every committable partition
(``StagingTable.committed_files``, which compaction and discovery call next).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from bench.measure import check, print_result, run_measured, summarize
from bench.settings import REPO, BenchSettings, python
from fscommit_dev.synthetic_log import SyntheticLog

READERS = ("fscommit", "baseline")
DELAY_MS = 3_600_000
FULL_ENTRIES = 1_000_000
FULL_PARTITIONS = 10_000


def run_checkpoint_scale(settings: BenchSettings) -> dict[str, Any]:
    log = SyntheticLog(
        settings.directory("checkpoint-scale"),
        settings.scaled(FULL_ENTRIES, 2_000),
        settings.scaled(FULL_PARTITIONS, 24),
    )
    print(f"checkpoint scale: {log.entries} entries, {log.partitions} partitions", flush=True)
    log.write()
    log.reset()
    samples: dict[str, list[dict[str, Any]]] = {r: [] for r in READERS}
    for rep in range(settings.reps):
        for reader in READERS if rep % 2 == 0 else READERS[::-1]:
            path = settings.directory("logs") / f"checkpoint-{reader}-{rep}.log"
            command = [python(), "-m", "bench.checkpoint_scale", reader, str(log.root)]
            command += [str(log.entries), str(log.partitions)]
            env = os.environ | {"PYTHONPATH": str(REPO)}
            measurement = check(run_measured(command, path, env=env), reader, path)
            report = measurement.report()
            samples[reader].append(report)
            print(
                f"  rep {rep + 1}/{settings.reps} {reader:<9} first {report['first_s']:.3f} s  "
                f"incremental {report['incremental_s'] * 1000:.1f} ms  "
                f"peak {report['peak_rss'] / 2**20:.0f} MiB",
                flush=True,
            )
    log_bytes = sum(p.stat().st_size for p in log.log_dir.iterdir())
    return {
        "entries": log.entries,
        "partitions": log.partitions,
        "log_bytes": log_bytes,
        "readers": {reader: _summary(runs) for reader, runs in samples.items()},
    }


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    timed = [k for k in runs[0] if k.endswith("_s")]
    summary: dict[str, Any] = {key: summarize([r[key] for r in runs]) for key in timed}
    for key in ("peak_rss", "base_rss"):
        summary[key] = max(r[key] for r in runs)
    summary["committable"] = runs[0]["committable"]
    return summary


def _high_water_rss() -> int:
    """This process's peak RSS so far (``VmHWM``).

    Not ``getrusage``: Linux carries ``ru_maxrss`` across ``execve``, so a child would
    start with the RSS of the parent that forked it.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def _fscommit_reads(log: SyntheticLog) -> dict[str, Any]:
    from airflow_provider_fscommit.core.config.table_spec import TableSpec
    from airflow_provider_fscommit.core.status.committable import PartitionState, TableStatusReader

    spec = TableSpec.from_options(
        {
            "staging_path": str(log.staging),
            "checkpoint_path": str(log.checkpoint),
            "partition_keys": "dt,hour",
            "timestamp_pattern": "$dt $hour:00:00",
            "delay": "1 h",
        }
    )
    now = log.now_ms()

    def committable(reader: TableStatusReader) -> list[str]:
        status = reader.read(now_ms=now, find_orphans=False)
        return [p.staged.path for p in status.in_state(PartitionState.COMMITTABLE)]

    base_rss = psutil.Process().memory_info().rss
    reader = TableStatusReader(spec)
    first_s, ready = _timed(lambda: committable(reader))
    peak_rss = _high_water_rss()
    try:
        log.add_batch()
        incremental_s, _ = _timed(lambda: committable(reader))
        log.add_compact()
        after_compact_s, _ = _timed(lambda: committable(reader))
    finally:
        log.reset()
    fresh = TableStatusReader(spec)
    sink_log_s, snapshot = _timed(fresh.staging.snapshot)
    partitions_s, _ = _timed(lambda: fresh.staging.partitions(snapshot))
    committed_files_s, _ = _timed(lambda: fresh.staging.committed_files(snapshot, set(ready)))
    return {
        "first_s": first_s,
        "incremental_s": incremental_s,
        "after_compact_s": after_compact_s,
        "stage_sink_log_s": sink_log_s,
        "stage_partitions_s": partitions_s,
        "stage_committed_files_s": committed_files_s,
        "committable": len(ready),
        "base_rss": base_rss,
        "peak_rss": peak_rss,
    }


def _baseline_reads(log: SyntheticLog) -> dict[str, Any]:
    from bench.baseline_reader import committable_partitions

    def read() -> dict[str, tuple[int, int]]:
        return committable_partitions(str(log.staging), str(log.checkpoint), DELAY_MS)

    base_rss = psutil.Process().memory_info().rss
    first_s, ready = _timed(read)
    peak_rss = _high_water_rss()
    try:
        log.add_batch()
        incremental_s, _ = _timed(read)
        log.add_compact()
        after_compact_s, _ = _timed(read)
    finally:
        log.reset()
    return {
        "first_s": first_s,
        "incremental_s": incremental_s,
        "after_compact_s": after_compact_s,
        "committable": len(ready),
        "base_rss": base_rss,
        "peak_rss": peak_rss,
    }


def main() -> None:
    """``python -m bench.checkpoint_scale READER ROOT ENTRIES PARTITIONS``."""
    reader, root, entries, partitions = sys.argv[1:5]
    log = SyntheticLog(Path(root), int(entries), int(partitions))
    reads = _fscommit_reads if reader == "fscommit" else _baseline_reads
    print_result(reads(log))


if __name__ == "__main__":
    main()
