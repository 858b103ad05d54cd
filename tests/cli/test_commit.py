"""``fscommit commit``: compaction, then the metastore and the success file, for real."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.status.completeness import published_completeness
from fscommit_dev.metastore.client import hive_sql, thrift_client
from fscommit_dev.streams import row
from tests.support.compaction import commit, committable, ids_by_partition


@pytest.mark.slow
def test_committed_partitions_are_read_through_the_metastore(
    spark, hourly_stream, metastore, tmp_path
):
    table = tmp_path / "table"
    hive_sql(
        metastore,
        "CREATE DATABASE IF NOT EXISTS fscommit",
        "CREATE TABLE fscommit.events (id BIGINT, ts TIMESTAMP, k STRING, v DOUBLE) "
        f"PARTITIONED BY (dt STRING, hour STRING) STORED AS PARQUET LOCATION '{table}'",
    )
    first = commit(hourly_stream, table, metastore.uri)
    assert first.returncode == 0, first.stderr
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    states = {c["partition"]: c["state"] for c in json.loads(first.stdout)["commits"]}
    assert states == {f"dt={d}/hour={h}": "committed" for d, h in ready}

    rows = hive_sql(metastore, "SELECT dt, hour, id FROM fscommit.events")
    seen: dict[tuple, Counter] = {}
    for r in rows:
        seen.setdefault((r["dt"], r["hour"]), Counter())[r["id"]] += 1
    staged = ids_by_partition(spark, hourly_stream.staging)
    assert seen == {p: staged[p] for p in ready}

    with thrift_client(metastore) as client:
        before = client.get_partition_by_name("fscommit", "events", "dt=2026-11-20/hour=00")
    assert before.parameters["numRows"] == str(sum(staged[("2026-11-20", "00")].values()))
    assert before.parameters["fscommit.watermark"] and before.parameters["fscommit.committed-at"]
    success = table / "dt=2026-11-20" / "hour=00" / "_SUCCESS"
    assert json.loads(success.read_text())["rows"] == int(before.parameters["numRows"])

    published = published_completeness(CommitLedger(str(table))).table_parameters()
    with thrift_client(metastore) as client:
        held = client.get_table("fscommit", "events").parameters
    assert "fscommit.complete-through" in published
    assert {key: held[key] for key in published} == published  # how far it is complete
    (shown,) = hive_sql(
        metastore, "SHOW TBLPROPERTIES fscommit.events ('fscommit.complete-through')"
    )
    assert shown["value"] == published["fscommit.complete-through"]  # the README's query

    # A rerun counts the partitions as unchanged: nothing of them is listed or committed.
    again = json.loads(commit(hourly_stream, table, metastore.uri).stdout)
    assert (again["commits"], again["compaction"]["unchanged"]) == ([], len(ready))
    with thrift_client(metastore) as client:
        unchanged = client.get_partition_by_name("fscommit", "events", "dt=2026-11-20/hour=00")
    assert unchanged.parameters == before.parameters

    hourly_stream.add_batches([row(4242, "2026-11-20T00:30:00Z")])  # late data
    hourly_stream.run(spark)
    late = commit(hourly_stream, table, metastore.uri, "dt=2026-11-20/hour=00")
    assert [c["state"] for c in json.loads(late.stdout)["commits"]] == ["committed"]
    with thrift_client(metastore) as client:
        after = client.get_partition_by_name("fscommit", "events", "dt=2026-11-20/hour=00")
    assert int(after.parameters["numRows"]) == int(before.parameters["numRows"]) + 1
    assert json.loads(success.read_text())["rows"] == int(after.parameters["numRows"])
