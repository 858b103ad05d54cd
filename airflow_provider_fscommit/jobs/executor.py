"""What the compaction's Spark tasks run: groups of units, on the executors or on a Spark
Connect server's Python workers.

Spark ships a task's function by reference: a Python worker imports the module that
defines it before its first unit. A worker starts cold often: each spark-submit
application starts its own, and Spark stops a worker idle for a minute, so an hourly
Connect run finds none. The package reaches the workers as a zip of sources, which Python
compiles on every import. So the functions the workers run live here, in a module that
imports the compactor and nothing of the driver's (its plans, ledger, commit and
publisher): a cold worker imports 31 of the provider's modules, not the 69 that
``jobs.connect`` brings (on the maintainers' 2-core host, from the zip: 0.19 s a worker
instead of 0.47 s, before its first unit).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING

from airflow_provider_fscommit.core.compaction.compactor import (
    UnitResult,
    UnitTask,
    compact_units,
)

if TYPE_CHECKING:
    import pyarrow as pa


def run_group(group: list[UnitTask]) -> list[UnitResult]:
    """One Spark task's work: its units, one after the other."""
    return compact_units(group)


def run_payload(payload: bytes, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One task of a Connect run's ``mapInArrow``: the groups (``payload``, pickled) whose
    indexes its rows hold, their results pickled, a row each."""
    import pyarrow as pa

    groups: list[list[UnitTask]] = pickle.loads(payload)
    for batch in batches:
        results = [pickle.dumps(run_group(groups[i])) for i in batch.column(0).to_pylist()]
        yield pa.RecordBatch.from_pydict({"results": pa.array(results, pa.binary())})


def report_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A Connect warm-up task: its worker has this module, so the compactor, imported; its
    partition's number, one row (the rows of the task's range are only read)."""
    import pyarrow as pa
    from pyspark import TaskContext

    for _ in batches:
        pass
    partition = TaskContext.get().partitionId()  # type: ignore[union-attr]
    yield pa.RecordBatch.from_pydict({"partition": pa.array([partition], pa.int32())})
