"""Do the provider's metrics say what the soak measured? (rule ``metrics-agree``)

A platform team alerts on the ``fscommit.*`` metrics the tasks and triggers send, so they
must tell the truth the soak checks independently:

- ``compaction.rows``, summed per table, equals the rows its committed compactions wrote:
  the rows it published (read back from its files), plus what rewrites wrote again (late
  rows merged into a fragmented partition's published files), which the ledger records.
  A compaction killed after it published and before it sent its figures (a killed task,
  scheduler or Connect server) leaves the metric short, never over: short is explained
  when such a fault struck, over never is.
- ``partition.freshness`` (one timer per partition committed for the first time) agrees
  with the soak's own freshness of the table's partitions (committable until the
  metastore's reader saw it): their medians within :data:`FRESHNESS_TOLERANCE_S`. A
  commit killed after its policies and before its ledger record is committed again by its
  retry, which measures the freshness at its own, later, commit (the partition was visible
  since the first): the metric over is explained when the table's commit task was killed
(or the scheduler, with its tasks), short never is.

What the metrics said is returned beside the violations, for the results.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from fscommit_dev.soak.checks import Violation
from fscommit_dev.soak.faults import FaultRecord
from fscommit_dev.soak.freshness import PartitionTimes
from fscommit_dev.statsd import PREFIX, Metric

FRESHNESS_TOLERANCE_S = 5.0
# The faults that can kill a compaction between its publication and its metrics.
_KILL_COMPACTIONS = ("task", "scheduler", "connect")


def compare(
    metrics: Sequence[Metric],
    compacted_rows: dict[str, int],
    times: Sequence[PartitionTimes],
    faults: Sequence[FaultRecord],
) -> tuple[list[Violation], dict[str, Any]]:
    rows: dict[str, float] = defaultdict(float)
    freshness: dict[str, list[float]] = defaultdict(list)
    names: set[str] = set()
    for m in metrics:
        names.add(m.name.removeprefix(f"{PREFIX}."))
        table = m.tags.get("table")
        if table is None:
            continue
        if m.name == f"{PREFIX}.fscommit.compaction.rows":
            rows[table] += m.value
        elif m.name == f"{PREFIX}.fscommit.partition.freshness":
            freshness[table].append(m.value / 1000)  # a timer's milliseconds
    struck = [f.kind for f in faults if f.killed_ms is not None and f.kind in _KILL_COMPACTIONS]
    found: list[Violation] = []
    report: dict[str, Any] = {"names": sorted(names), "tables": {}}
    for table, written in sorted(compacted_rows.items()):
        measured = sorted(t.freshness_s for t in times if t.table == table and t.freshness_s)
        said = sorted(freshness.get(table, []))
        report["tables"][table] = {
            "compaction_rows": int(rows.get(table, 0)),
            "compacted_rows": written,
            "freshness_count": len(said),
            "freshness_median_s": round(statistics.median(said), 1) if said else None,
            "measured_count": len(measured),
            "measured_median_s": round(statistics.median(measured), 1) if measured else None,
        }
        metric_rows = int(rows.get(table, 0))
        if metric_rows > written or (metric_rows < written and not struck):
            found.append(
                Violation(
                    "metrics-agree",
                    table,
                    "compaction.rows",
                    f"the metric counted {metric_rows} rows, the compactions wrote {written}",
                )
            )
        if said and measured:
            gap = statistics.median(said) - statistics.median(measured)
            retried = _commit_killed(faults, table)
            if gap < -FRESHNESS_TOLERANCE_S or (gap > FRESHNESS_TOLERANCE_S and not retried):
                found.append(
                    Violation(
                        "metrics-agree",
                        table,
                        "partition.freshness",
                        f"the metric's median {statistics.median(said):.1f} s, the soak's "
                        f"{statistics.median(measured):.1f} s",
                    )
                )
        elif measured and not said:
            found.append(
                Violation("metrics-agree", table, "partition.freshness", "no metric received")
            )
    return found, report


def _commit_killed(faults: Sequence[FaultRecord], table: str) -> bool:
    """Whether a fault killed a commit task of ``table`` (its DAG's), or every running task."""
    for fault in faults:
        if fault.killed_ms is None:
            continue
        if fault.kind == "scheduler":
            return True
        if (
            fault.kind == "task"
            and (fault.dag_id or "").endswith(table)
            and (fault.task_id or "").endswith(".commit")
        ):
            return True
    return False
