"""The external sort: the order of an in-memory sort, in bounded memory, whatever the skew."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.core.compaction.external_sort import sorted_tables
from airflow_provider_fscommit.core.compaction.sort_order import SortOrder
from tests.core.compaction.test_sort_order import rows

BATCH = 1000


def batches(table: pa.Table) -> Iterator[pa.RecordBatch]:
    """The table's rows as a stream of fresh batches, as input files give them."""
    for start in range(0, len(table), BATCH):
        yield pa.RecordBatch.from_pylist(table.slice(start, BATCH).to_pylist(), table.schema)


@pytest.mark.parametrize(
    "order",
    [
        SortOrder(("country", "score", "id")),  # 3 in 8 rows are 'US': ranges cut again
        SortOrder(("flag", "amount")),  # three values first: the next column cuts
        SortOrder(("score", "at"), z_order=True),
    ],
    ids=str,
)
def test_a_partition_larger_than_memory_comes_out_in_the_in_memory_order(
    order, monkeypatch, tmp_path
):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    table = rows(60_000)
    memory = 96 * 1024
    assert table.nbytes > 25 * memory
    before = pa.total_allocated_bytes()
    held, spilled, pieces = 0, 0, []
    for piece in sorted_tables(batches(table), order, memory):
        held = max(held, pa.total_allocated_bytes() - before)
        spilled = max(spilled, len(list(tmp_path.glob("fscommit-sort-*/*"))))
        pieces.append(piece.to_pylist())  # kept as Python values, outside Arrow's pool
    assert spilled > 0 and not list(tmp_path.iterdir())  # it spilled, then cleaned up
    result = pa.Table.from_pylist([r for piece in pieces for r in piece], table.schema)
    assert sorted(result.column("id").to_pylist()) == list(range(60_000))
    # The order of one sort in memory: the same keys in the same sequence (ties aside).
    key = order.keyed(_head(table, memory) if order.z_order else table)
    assert _sequence(result, order, key) == _sequence(key.sort(table), order, key)
    # Bounded: a few times ``memory`` (one range sorted at a time), never the partition.
    assert held < 8 * memory < table.nbytes / 2, held


def _head(table: pa.Table, memory: int) -> pa.Table:
    """The first rows past ``memory``: what the sort cuts its Z-order ranges by."""
    head, size = [], 0
    for batch in batches(table):
        head.append(batch)
        size += batch.nbytes
        if size > memory:
            break
    return pa.Table.from_batches(head)


def _sequence(table: pa.Table, order: SortOrder, key) -> list:
    if order.z_order:
        return key.route(table, 0).to_pylist()
    values = table.select(list(order.columns)).to_pylist()
    return [tuple("NaN" if v != v else v for v in row.values()) for row in values]


SPILLING_SORT = """
import sys
import pyarrow.parquet as pq
from airflow_provider_fscommit.core.compaction.external_sort import sorted_tables
from airflow_provider_fscommit.core.compaction.sort_order import SortOrder
for columns, z_order in ((("score", "at"), True), (("country", "amount", "score"), False)):
    batches = pq.ParquetFile(sys.argv[1]).iter_batches(batch_size=1000)
    rows = sum(len(t) for t in sorted_tables(batches, SortOrder(columns, z_order), 96 * 1024))
    print(rows, sorted(name for name in sys.modules if name.split(".")[0] == "pandas"))
"""


def test_a_spilling_sort_in_a_fresh_process_does_not_import_pandas(tmp_path):
    """A Python worker that sorts (Z-order and linear, past its memory) never imports
    pandas: 0.2-0.3 s and ~60 MB per worker (:mod:`...formats.arrow_arrays`)."""
    pq.write_table(rows(60_000), tmp_path / "rows.parquet")
    ran = subprocess.run(
        [sys.executable, "-c", SPILLING_SORT, str(tmp_path / "rows.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[3],  # the checkout
        env={**os.environ, "SPARK_LOCAL_DIRS": str(tmp_path)},
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["60000 []", "60000 []"]
