"""How long a complete partition took to become visible, and where the time went.

Flink commits a partition at the checkpoint after its watermark passes the partition's
time plus the delay: its commit latency is the checkpoint interval. Here a partition
becomes *committable* when the streaming query commits the batch whose (safe) watermark
first passes ``t(P) + delay``: the time of ``commits/N`` of the first batch ``N`` whose
``offsets/N`` carries such a ``batchWatermarkMs`` (the checkpoint keeps every batch's
files for this). It is *visible* when the harness's reader of the metastore first lists
it. Freshness is the seconds between the two, and, as a reader counts it, from the
partition's last on-time row's arrival.

Where the time goes is read from the partition's commit DAG run: the sensor's poll
(committable until the ``wait`` task ended), scheduling (the gaps before ``compact`` and
``commit`` started), compaction and commit (their durations), and the reader's lag (the
commit's end until it was listed).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.soak.faults import FaultRecord
from fscommit_dev.soak.generator import WrittenRow, partition_start_ms
from fscommit_dev.soak.tables import SoakTable

# How long after a part's restart a partition is still counted as hit by its fault: a
# restarted triggerer or scheduler takes up the lost work within the health-check
# threshold and a retry delay.
FAULT_REACH_MS = 60_000


@dataclass(frozen=True)
class Batch:
    batch_id: int
    watermark_ms: int
    committed_ms: int  # the commits file's modification time


def checkpoint_batches(checkpoint: Path) -> list[Batch]:
    """Every committed batch the checkpoint kept: its watermark and when it committed."""
    batches = []
    commits = checkpoint / "commits"
    for path in sorted(commits.glob("*"), key=lambda p: p.name):
        if not path.name.isdigit():
            continue
        offsets = checkpoint / "offsets" / path.name
        if not offsets.exists():
            continue
        metadata = json.loads(offsets.read_text().splitlines()[1])
        batches.append(
            Batch(
                int(path.name),
                int(metadata.get("batchWatermarkMs", 0)),
                int(path.stat().st_mtime * 1000),
            )
        )
    return sorted(batches, key=lambda b: b.batch_id)


def committable_ms(batches: Sequence[Batch], partition: str, delay_ms: int) -> int | None:
    """When the partition became committable (None: not before the run ended)."""
    bound = partition_start_ms(partition) + delay_ms
    return next((b.committed_ms for b in batches if b.watermark_ms > bound), None)


@dataclass
class PartitionTimes:
    table: str
    partition: str
    committable_ms: int | None
    last_row_ms: int | None  # the last on-time row's arrival (None: late rows only)
    visible_ms: int | None
    faulted: bool  # its wait for visibility overlapped a fault
    phases: dict[str, float] | None  # seconds: poll, scheduling, compaction, commit, reader

    @property
    def late_only(self) -> bool:
        """A partition of late rows only: it was committable before its first row came
        (the sweep publishes it), so its freshness says nothing of the commit path; the
        figures leave it out, the comparison with the metrics (which count it) keeps it."""
        return self.last_row_ms is None

    @property
    def freshness_s(self) -> float | None:
        if self.committable_ms is None or self.visible_ms is None:
            return None
        return (self.visible_ms - self.committable_ms) / 1000

    @property
    def since_last_row_s(self) -> float | None:
        if self.last_row_ms is None or self.visible_ms is None:
            return None
        return (self.visible_ms - self.last_row_ms) / 1000

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "late_only": self.late_only,
            "freshness_s": self.freshness_s,
            "since_last_row_s": self.since_last_row_s,
        }


def partition_times(
    table: SoakTable,
    delay_ms: int,
    rows: Iterable[WrittenRow],
    visible: dict[str, int],
    faults: Sequence[FaultRecord],
    airflow: AirflowEnv,
) -> list[PartitionTimes]:
    """The times of every partition of ``table`` that became committable in the run."""
    batches = checkpoint_batches(table.checkpoint)
    last_row: dict[str, int] = {}
    partitions: set[str] = set()
    for r in rows:
        if r.table == table.name:
            partitions.add(r.partition)
            if not r.late:
                last_row[r.partition] = max(last_row.get(r.partition, 0), r.written_ms)
    phases = _run_phases(airflow, table.dag_id)
    out = []
    for partition in sorted(partitions):
        ready = committable_ms(batches, partition, delay_ms)
        if ready is None:
            continue
        seen = visible.get(partition)
        end = seen if seen is not None else 2**62
        faulted = any(
            f.killed_ms is not None
            and f.killed_ms <= end
            and ready <= (f.restarted_ms or f.killed_ms) + FAULT_REACH_MS
            for f in faults
        )
        run = phases.get(_key(partition))
        out.append(
            PartitionTimes(
                table.name,
                partition,
                ready,
                last_row.get(partition),
                seen,
                faulted,
                _split(ready, seen, run) if run else None,
            )
        )
    return out


def _key(partition: str) -> str:
    """The partition key of the DAG run that commits ``partition``."""
    values = dict(part.split("=", 1) for part in partition.split("/"))
    return f"{values['dt']}T{values['hour']}:{values['minute']}:00"


def _run_phases(airflow: AirflowEnv, dag_id: str) -> dict[str, dict[str, tuple[int, int]]]:
    """Each partition key's last try of ``wait``, ``compact`` and ``commit``: start and end
    (epoch ms), from the metadata database."""
    rows = airflow.query(
        "SELECT r.partition_key, ti.task_id, ti.start_date, ti.end_date FROM task_instance ti "
        "JOIN dag_run r ON ti.dag_id = r.dag_id AND ti.run_id = r.run_id "
        f"WHERE ti.dag_id = '{dag_id}' AND ti.start_date IS NOT NULL "
        "AND ti.end_date IS NOT NULL"
    )
    runs: dict[str, dict[str, tuple[int, int]]] = {}
    for key, task_id, start, end in rows:
        if key is None:
            continue
        step = task_id.rsplit(".", 1)[-1]
        runs.setdefault(key, {})[step] = (_ms(start), _ms(end))
    return runs


def _ms(moment) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _split(
    ready: int, seen: int | None, run: dict[str, tuple[int, int]]
) -> dict[str, float] | None:
    """The seconds of each phase between committable and visible (None: a step missing)."""
    if not {"wait", "compact", "commit"} <= run.keys() or seen is None:
        return None
    wait_end = run["wait"][1]
    compact_start, compact_end = run["compact"]
    commit_start, commit_end = run["commit"]
    return {
        "poll": (wait_end - ready) / 1000,
        "scheduling": ((compact_start - wait_end) + (commit_start - compact_end)) / 1000,
        "compaction": (compact_end - compact_start) / 1000,
        "commit": (commit_end - commit_start) / 1000,
        "reader": (seen - commit_end) / 1000,
    }


def percentiles(values: Sequence[float]) -> dict[str, float | int | None]:
    """p50, p95 and max (nearest rank) of ``values``, and how many."""
    ordered = sorted(values)
    if not ordered:
        return {"count": 0, "p50": None, "p95": None, "max": None}

    def rank(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]

    return {
        "count": len(ordered),
        "p50": round(rank(0.5), 1),
        "p95": round(rank(0.95), 1),
        "max": round(ordered[-1], 1),
    }


def summarize(times: Sequence[PartitionTimes]) -> dict[str, Any]:
    """The run's freshness figures: all partitions, without and with faults; the phases."""

    times = [t for t in times if not t.late_only]

    def of(selected: Sequence[PartitionTimes]) -> dict[str, Any]:
        return {
            "freshness_s": percentiles(
                [t.freshness_s for t in selected if t.freshness_s is not None]
            ),
            "since_last_row_s": percentiles(
                [t.since_last_row_s for t in selected if t.since_last_row_s is not None]
            ),
        }

    split = [t.phases for t in times if t.phases is not None and not t.faulted]
    phases = (
        {
            name: {
                "median_s": round(statistics.median(p[name] for p in split), 1),
                "p95_s": percentiles([p[name] for p in split])["p95"],
            }
            for name in ("poll", "scheduling", "compaction", "commit", "reader")
        }
        if split
        else {}
    )
    return {
        "all": of(times),
        "without_faults": of([t for t in times if not t.faulted]),
        "with_faults": of([t for t in times if t.faulted]),
        "phases": phases,
        "phases_count": len(split),
    }
