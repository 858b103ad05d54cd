"""Each input's footer read once per run, by its unit; a partition's units agree on one
schema before its commit point."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compaction import readers as readers_module
from airflow_provider_fscommit.core.compaction.compactor import compact_units, hidden_name
from airflow_provider_fscommit.core.compaction.plan import CompactionPlan, CompactionUnit
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.formats.spark_metadata import SPARK_SCHEMA_KEY
from airflow_provider_fscommit.core.publish import publisher as publisher_module
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.spark.staging import StagedFile
from fscommit_dev.streams import row
from tests.support.compaction import check_exactly_once, committable, table_options


def in_process(tasks):
    return compact_units(tasks)


def footer_reads(monkeypatch) -> Counter[str]:
    """How many times each input's footer is decoded: by a unit's footer pass (spies on
    the real functions; the readers that pass opens count in it), by a Parquet reader
    opened without it, or on the driver."""
    decoded: Counter[str] = Counter()
    read_footers = readers_module.UnitInputs.read_footers
    reader = readers_module._reader
    read_plan_schema = publisher_module.read_plan_schema
    in_footer_pass = [False]

    def unit_footers(self, add):
        decoded.update(self.uris)
        in_footer_pass[0] = True
        try:
            return read_footers(self, add)
        finally:
            in_footer_pass[0] = False

    def opened(source, uri, file_format, footer):
        if footer is None and not in_footer_pass[0]:
            decoded[uri] += 1
        return reader(source, uri, file_format, footer)

    def driver(uris, file_format):
        decoded.update(uris)
        return read_plan_schema(uris, file_format)

    monkeypatch.setattr(readers_module.UnitInputs, "read_footers", unit_footers)
    monkeypatch.setattr(readers_module, "_reader", opened)
    monkeypatch.setattr(publisher_module, "read_plan_schema", driver)
    return decoded


def test_the_read_ahead_writes_nothing_and_the_run_decodes_each_footer_once(
    spark, hourly_stream, tmp_path, monkeypatch
):
    table = str(tmp_path / "table")
    publisher = CompactionPublisher(TableSpec.from_options(table_options(hourly_stream, table)))
    decoded = footer_reads(monkeypatch)
    publisher.read_ahead(None)
    assert not Path(table).exists()  # no plan, no ledger, no lock: Spark may never start
    assert not decoded  # the footers are the units' to read
    summary = publisher.run(in_process)
    assert summary.read_ahead_seconds > 0
    assert {o.state for o in summary.outcomes} == {"published"}
    assert decoded and set(decoded.values()) == {1}
    assert sum(decoded.values()) == sum(o.files_in for o in summary.outcomes)
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    check_exactly_once(spark, hourly_stream.staging, table, complete=ready)


def test_late_rows_after_the_read_ahead_are_published_once_with_their_partition(
    spark, hourly_stream, tmp_path
):
    table = str(tmp_path / "table")
    publisher = CompactionPublisher(TableSpec.from_options(table_options(hourly_stream, table)))
    publisher.read_ahead(None)
    hourly_stream.add_batches([row(900, "2026-11-20T00:40:00Z")])  # late for hour 00
    hourly_stream.run(spark)
    publisher.run(in_process)
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert ("2026-11-20", "00") in ready
    check_exactly_once(spark, hourly_stream.staging, table, complete=ready)


def _spark_file(spark, directory: Path, sql: str) -> StagedFile:
    spark.sql(sql).coalesce(1).write.parquet(str(directory))
    path = next(directory.glob("part-*.parquet"))
    return StagedFile(path.as_uri(), path.stat().st_size)


def test_units_that_disagree_on_the_schema_are_written_again_with_the_partitions(
    spark, hourly_stream, tmp_path
):
    """A column added mid-stream (by Spark a required one), in the second unit's inputs
    only: both outputs are written again, the first with the column (nulls), the second
    with it nullable, so both have the partition's schema, as when one place read every
    footer."""
    old = _spark_file(spark, tmp_path / "a", "SELECT 1L AS id, timestamp'2026-11-20 01:00' AS ts")
    new = _spark_file(
        spark, tmp_path / "b", "SELECT 2L AS id, timestamp'2026-11-20 02:00' AS ts, 'x' AS extra"
    )
    table = tmp_path / "table"
    publisher = CompactionPublisher(
        TableSpec.from_options(table_options(hourly_stream, str(table)))
    )
    outputs = ("part-0.c000.snappy.parquet", "part-1.c000.snappy.parquet")
    plan = CompactionPlan(
        partition="dt=1",
        seq=0,
        plan_id="p",
        units=(CompactionUnit(0, (old,), outputs[0]), CompactionUnit(1, (new,), outputs[1])),
        codec="snappy",
        sink_latest_batch=None,
        watermark_ms=None,
        created_ms=0,
    )
    tasks = publisher.tasks(plan)
    first = compact_units(tasks)
    assert [r.copied for r in first] == [True, True] and first[0].schema != first[1].schema
    again = publisher._agreed(plan, first, tasks)
    assert [t.unit for t in again] == [0, 1]
    rewritten = compact_units(again)
    assert not any(r.copied for r in rewritten) and rewritten[0].schema == rewritten[1].schema
    assert [r.input_rows for r in rewritten] == [1, 1]
    assert publisher._agreed(plan, rewritten, tasks) == []
    files = [table / "dt=1" / hidden_name(name) for name in outputs]
    schemas = [pq.read_schema(f) for f in files]
    assert schemas[0].equals(schemas[1], check_metadata=False)
    assert schemas[0].field("extra").nullable
    assert b'"nullable":true' in schemas[0].metadata[SPARK_SCHEMA_KEY]
    visible = tmp_path / "visible"  # Spark will not read hidden names
    visible.mkdir()
    for index, source in enumerate(files):
        (visible / f"{index}.parquet").write_bytes(source.read_bytes())
    read = spark.read.parquet(str(visible))
    assert [(r.id, r.extra) for r in read.orderBy("id").collect()] == [(1, None), (2, "x")]
    assert dict(read.dtypes) == {"id": "bigint", "ts": "timestamp", "extra": "string"}
