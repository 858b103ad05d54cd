"""Where the time goes: cProfile of fscommit's own stages, each in a fresh process.

* ``first-read``: ``TableStatusReader.read`` of the synthetic 1M-entry log (first read);
* ``committed-files``: ``StagingTable.committed_files`` of every committable partition of
  that log, the step compaction and discovery take right after the first read;
* ``compaction``: the compaction protocol of workload (a) run in one process
  (``CompactionPublisher.run`` with ``compact_units`` called in-process instead of on
  Spark executors): planning, footers, the pyarrow rewrite, ledger, publishing.

Each report keeps the stage's wall time and the functions with the most own time, so a
before/after of an optimisation is two of these side by side.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench.checkpoint_scale import FULL_ENTRIES, FULL_PARTITIONS
from bench.measure import check, print_result, run_measured
from bench.settings import REPO, BenchSettings, python
from bench.workloads import WORKLOADS, WorkloadInput, prepare
from fscommit_dev.synthetic_log import SyntheticLog

STAGES = ("first-read", "committed-files", "compaction")
_TOP = 15


def run_profiles(settings: BenchSettings) -> dict[str, Any]:
    log = SyntheticLog(
        settings.directory("checkpoint-scale"),
        settings.scaled(FULL_ENTRIES, 2_000),
        settings.scaled(FULL_PARTITIONS, 24),
    )
    log.write()
    staged = prepare(WORKLOADS["a"], settings)
    results = {}
    for stage in STAGES:
        path = settings.directory("logs") / f"profile-{stage}.log"
        command = [python(), "-m", "bench.profiling", stage, str(log.root)]
        command += [str(log.entries), str(log.partitions), str(staged.manifest)]
        command += [str(settings.scratch / "runs" / "profile")]
        env = os.environ | {"PYTHONPATH": str(REPO)}
        results[stage] = check(run_measured(command, path, env=env), stage, path).report()
        print(f"  profiled {stage}: {results[stage]['seconds']:.2f} s", flush=True)
    return results


def _first_read(log: SyntheticLog) -> Any:
    """The action to profile (each builder returns one; its set-up is not profiled)."""
    reader = _reader(log)
    return lambda: reader.read(now_ms=log.now_ms(), find_orphans=False)


def _committed_files(log: SyntheticLog) -> Any:
    from airflow_provider_fscommit.core.status.committable import PartitionState

    reader = _reader(log)
    status = reader.read(now_ms=log.now_ms(), find_orphans=False)
    ready = {p.staged.path for p in status.in_state(PartitionState.COMMITTABLE)}
    return lambda: reader.staging.committed_files(status.snapshot, ready)


def _reader(log: SyntheticLog) -> Any:
    from airflow_provider_fscommit.core.config.table_spec import TableSpec
    from airflow_provider_fscommit.core.status.committable import TableStatusReader

    return TableStatusReader(
        TableSpec.from_options(
            {
                "staging_path": str(log.staging),
                "checkpoint_path": str(log.checkpoint),
                "partition_keys": "dt,hour",
                "timestamp_pattern": "$dt $hour:00:00",
                "delay": "1 h",
            }
        )
    )


def _compaction(staged: WorkloadInput, table: Path) -> Any:
    from airflow_provider_fscommit.core.compaction.compactor import compact_units
    from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher

    shutil.rmtree(table, ignore_errors=True)
    publisher = CompactionPublisher(staged.table_spec(str(table)))
    return lambda: publisher.run(compact_units)


def main() -> None:
    """``python -m bench.profiling STAGE LOG_ROOT ENTRIES PARTITIONS MANIFEST TABLE``."""
    stage, root, entries, partitions, manifest, table = sys.argv[1:7]
    log = SyntheticLog(Path(root), int(entries), int(partitions))
    if stage == "first-read":
        action = _first_read(log)
    elif stage == "committed-files":
        action = _committed_files(log)
    else:
        action = _compaction(WorkloadInput.load(Path(manifest)), Path(table))
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.runcall(action)
    seconds = time.perf_counter() - started
    stats = pstats.Stats(profile)
    top = []
    for (filename, line, function), row in sorted(
        stats.stats.items(), key=lambda item: item[1][2], reverse=True
    )[:_TOP]:
        calls, _, own, cumulative, _ = row
        where = filename.replace(str(REPO) + "/", "").replace(sys.prefix + "/", "")
        top.append(
            {
                "function": f"{where}:{line}({function})",
                "calls": calls,
                "own_s": round(own, 4),
                "cumulative_s": round(cumulative, 4),
            }
        )
    print_result({"seconds": seconds, "top": top})


if __name__ == "__main__":
    main()
