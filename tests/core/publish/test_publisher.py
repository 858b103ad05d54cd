"""Footers read ahead while the executors start: nothing written, nothing read twice."""

from __future__ import annotations

from pathlib import Path

from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.publish import publisher as publisher_module
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from fscommit_dev.streams import row
from tests.support.compaction import check_exactly_once, committable, table_options


def in_process(tasks):
    return compact_units(tasks)


def footer_reads(monkeypatch, staging: str) -> list[str]:
    """The partitions whose footers the run reads itself (a spy on the real function)."""
    read = publisher_module.read_plan_schema
    partitions: list[str] = []

    def spy(uris, file_format):
        directory = Path(uris[0].removeprefix("file://")).parent
        partitions.append(str(directory.relative_to(staging)))
        return read(uris, file_format)

    monkeypatch.setattr(publisher_module, "read_plan_schema", spy)
    return partitions


def test_the_read_ahead_writes_nothing_and_the_run_reads_no_footer_again(
    spark, hourly_stream, tmp_path, monkeypatch
):
    table = str(tmp_path / "table")
    publisher = CompactionPublisher(TableSpec.from_options(table_options(hourly_stream, table)))
    publisher.read_ahead(None)
    assert not Path(table).exists()  # no plan, no ledger, no lock: Spark may never start
    reads = footer_reads(monkeypatch, hourly_stream.staging)
    summary = publisher.run(in_process)
    assert reads == [] and summary.read_ahead_seconds > 0
    assert {o.state for o in summary.outcomes} == {"published"}
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    check_exactly_once(spark, hourly_stream.staging, table, complete=ready)


def test_late_rows_after_the_read_ahead_are_published_once_with_their_partition(
    spark, hourly_stream, tmp_path, monkeypatch
):
    table = str(tmp_path / "table")
    publisher = CompactionPublisher(TableSpec.from_options(table_options(hourly_stream, table)))
    publisher.read_ahead(None)
    hourly_stream.add_batches([row(900, "2026-11-20T00:40:00Z")])  # late for hour 00
    hourly_stream.run(spark)
    reads = footer_reads(monkeypatch, hourly_stream.staging)
    publisher.run(in_process)
    assert reads == ["dt=2026-11-20/hour=00"]  # its plan changed: it reads its own footers
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert ("2026-11-20", "00") in ready
    check_exactly_once(spark, hourly_stream.staging, table, complete=ready)
