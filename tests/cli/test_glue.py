"""``fscommit commit --policy glue`` on a real stream, seen by the Amazon provider's own
Glue sensor (poke and deferrable), then late rows, a rerun, and expiry out of Glue."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.status.completeness import published_completeness
from fscommit_dev.s3_server import aws_connection_env
from fscommit_dev.streams import row
from fscommit_dev.tables import hourly_table, table_flags
from tests.support.compaction import FSCOMMIT, committable, compact, ids_by_partition
from tests.support.glue import create_glue_table, glue_partitions

GLUE = {
    "policy_kind": "glue,done-partition,success-file",
    "metastore_database": "fscommit",
    "metastore_table": "stream",
}
WRITES = {"BatchCreatePartition", "BatchUpdatePartition", "BatchDeletePartition", "UpdateTable"}


def commit(stream, table, *extra: str):
    return compact(
        stream.staging, stream.checkpoint, str(table), *table_flags(GLUE), *extra, command="commit"
    )


def glue_writes(server, since: int) -> list[str]:
    return [c for c in server.glue_calls()[since:] if c in WRITES]


def sensor_sees(partition: tuple[str, str], deferrable: bool) -> bool:
    """Whether the Amazon provider's GlueCatalogPartitionSensor finds the partition.

    Poke mode asks once; deferrable mode runs the sensor's own trigger, which waits until
    the partition is there: a partition it still waits for after 3 s is not seen.
    """
    from airflow.providers.amazon.aws.sensors.glue_catalog_partition import (
        GlueCatalogPartitionSensor,
    )
    from airflow.providers.amazon.aws.triggers.glue import GlueCatalogPartitionTrigger

    expression = f"dt='{partition[0]}' AND hour='{partition[1]}'"
    if not deferrable:
        sensor = GlueCatalogPartitionSensor(
            task_id="wait",
            database_name="fscommit",
            table_name="stream",
            expression=expression,
            aws_conn_id="glue_catalog",
        )
        return sensor.poke({})
    trigger = GlueCatalogPartitionTrigger(
        database_name="fscommit",
        table_name="stream",
        expression=expression,
        aws_conn_id="glue_catalog",
        waiter_delay=1,
    )

    async def first_event():
        async for event in trigger.run():
            return event

    try:
        event = asyncio.run(asyncio.wait_for(first_event(), timeout=3))
    except TimeoutError:
        return False
    return event.payload["status"] == "success"


def complete_through_seen_by_airflow() -> int:
    """The table's complete-through as the README's downstream sensor reads it."""
    import pendulum
    from airflow.providers.amazon.aws.hooks.glue_catalog import GlueCatalogHook

    table = GlueCatalogHook(aws_conn_id="glue_catalog").get_table("fscommit", "stream")
    return int(pendulum.parse(table["Parameters"]["fscommit.complete-through"]).timestamp() * 1000)


@pytest.mark.slow
def test_glue_holds_what_was_published_and_the_amazon_sensors_see_it(
    spark, hourly_stream, s3_env, monkeypatch, tmp_path
):
    server = s3_env
    for key, value in aws_connection_env(server, "glue_catalog").items():
        monkeypatch.setenv(key, value)
    table = tmp_path / "table"
    create_glue_table(server.client("glue"), "fscommit", "stream", table)

    first = commit(hourly_stream, table)
    assert first.returncode == 0, first.stderr
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert {c["state"] for c in json.loads(first.stdout)["commits"]} == {"committed"}
    glue = server.client("glue")
    partitions = glue_partitions(glue, "fscommit", "stream")
    assert set(partitions) == set(ready) | {(dt, f"{hour}.done") for dt, hour in ready}
    staged = ids_by_partition(spark, hourly_stream.staging)
    for dt, hour in ready:
        held = partitions[(dt, hour)]
        assert held["StorageDescriptor"]["Location"] == f"{table}/dt={dt}/hour={hour}"
        assert held["Parameters"]["numRows"] == str(sum(staged[(dt, hour)].values()))
        assert sensor_sees((dt, hour), deferrable=False)
        assert sensor_sees((dt, f"{hour}.done"), deferrable=True)
    # The table says how far it is complete: the ledger's published completeness.
    published = published_completeness(CommitLedger(str(table)))
    held = glue.get_table(DatabaseName="fscommit", Name="stream")["Table"]["Parameters"]
    assert published.complete_through_ms is not None
    assert {k: held[k] for k in published.table_parameters()} == published.table_parameters()
    assert complete_through_seen_by_airflow() == published.complete_through_ms  # README's way
    waiting = ("2026-11-20", "03")  # staged, but the watermark has not passed it
    assert waiting not in ready
    assert not sensor_sees(waiting, deferrable=False)
    assert not sensor_sees(waiting, deferrable=True)

    start = len(server.glue_calls())
    again = json.loads(commit(hourly_stream, table).stdout)
    assert (again["commits"], again["compaction"]["unchanged"]) == ([], len(ready))
    assert glue_writes(server, start) == []

    hourly_stream.add_batches([row(4242, "2026-11-20T00:30:00Z")])  # late data
    hourly_stream.run(spark)
    start = len(server.glue_calls())
    late = commit(hourly_stream, table, "dt=2026-11-20/hour=00")
    assert [c["state"] for c in json.loads(late.stdout)["commits"]] == ["committed"]
    moved = published_completeness(CommitLedger(str(table))) != published
    # The done partition stays; the table's parameters change only if completeness moved.
    assert glue_writes(server, start) == ["BatchUpdatePartition", *["UpdateTable"][: int(moved)]]
    after = glue_partitions(glue, "fscommit", "stream")[("2026-11-20", "00")]
    before = partitions[("2026-11-20", "00")]
    assert int(after["Parameters"]["numRows"]) == int(before["Parameters"]["numRows"]) + 1

    options = hourly_table(
        hourly_stream.staging, hourly_stream.checkpoint, table_path=str(table), **GLUE
    )
    expire = [FSCOMMIT, "expire", *table_flags(options), "--expiration-time", "1 d"]
    expired = subprocess.run(
        [*expire, "--apply", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert expired.returncode == 0, expired.stderr
    assert len(json.loads(expired.stdout)["partitions"]) == len(ready)
    assert glue_partitions(glue, "fscommit", "stream") == {}
    assert not (table / "dt=2026-11-20" / "hour=00").exists()
