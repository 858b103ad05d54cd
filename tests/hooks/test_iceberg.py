"""``IcebergCatalogHook``: the iceberg policy's catalog with credentials from Airflow
connections, never from the spec: a Glue catalog (moto's Glue API) through an AWS
connection, a Hive catalog (the loopback metastore) through the metastore connection, any
catalog through the Iceberg provider's connection. Each commits a real stream's compacted
partitions through the commit hook, read back by a client of that catalog."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest
from pyiceberg.catalog import load_catalog

from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import IcebergError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.hooks.commit import PartitionCommitHook
from airflow_provider_fscommit.hooks.iceberg import IcebergCatalogHook
from fscommit_dev.s3_server import ACCESS_KEY, REGION, aws_connection_env
from tests.support.compaction import ids_by_partition, table_options
from tests.support.iceberg import iceberg_ids

PARTITIONS = [f"dt=2026-11-20/hour={h:02d}" for h in range(2)]
SECRET = "iceberg-connection-secret-3Fw"


def committed_spec(stream, tmp_path: Path, catalog: dict[str, str]) -> TableSpec:
    """The stream's table with the iceberg policy on ``catalog``, its partitions published."""
    spec = TableSpec.from_options(
        table_options(stream, str(tmp_path / "table"))
        | {f"iceberg.catalog.{k}": v for k, v in catalog.items()}
        | {
            "sink.partition-commit.policy.kind": "iceberg",
            "metastore_database": "lake",
            "metastore_table": "events",
            "iceberg.create-table": "true",
        }
    )
    CompactionPublisher(spec).run(compact_units, PARTITIONS)
    return spec


def assert_committed(spark, stream, table) -> None:
    staged = ids_by_partition(spark, stream.staging)
    hours = (("2026-11-20", "00"), ("2026-11-20", "01"))
    assert iceberg_ids(table) == {p: staged[p] for p in hours}
    assert len(table.metadata.snapshots) == 1


def test_a_glue_catalog_takes_the_aws_connections_keys_endpoint_and_region(
    spark, compacted_stream, s3_server, monkeypatch, tmp_path, caplog, capfd
):
    # The connection is all this process has: no AWS variable, so boto3 alone finds nothing.
    for key, value in aws_connection_env(s3_server, "aws_lake", SECRET).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    warehouse = f"file://{tmp_path}/warehouse"
    spec = committed_spec(compacted_stream, tmp_path, {"type": "glue", "warehouse": warehouse})
    hook = IcebergCatalogHook(aws_conn_id="aws_lake")
    assert hook.catalog_properties(spec.iceberg_catalog) == {
        "type": "glue",
        "warehouse": warehouse,
        "client.access-key-id": ACCESS_KEY,
        "client.secret-access-key": SECRET,
        "client.region": REGION,
        "glue.endpoint": s3_server.endpoint,
        "s3.endpoint": s3_server.endpoint,
    }
    caplog.set_level(logging.DEBUG)
    outcomes = PartitionCommitHook(aws_conn_id="aws_lake").commit(spec, PARTITIONS)
    assert [o.state for o in outcomes] == ["committed", "committed"]
    glue = load_catalog(
        "reader",
        type="glue",
        **{
            "glue.endpoint": s3_server.endpoint,
            "client.access-key-id": ACCESS_KEY,
            "client.secret-access-key": SECRET,
            "client.region": REGION,
        },
    )
    table = glue.load_table("lake.events")
    assert_committed(spark, compacted_stream, table)
    stored = s3_server.client("glue").get_table(DatabaseName="lake", Name="events")["Table"]
    assert stored["Parameters"]["table_type"] == "ICEBERG"
    assert stored["Parameters"]["metadata_location"] == table.metadata_location
    ledger = CommitLedger(spec.table_path).read(PARTITIONS[0])
    out, err = capfd.readouterr()
    for shown in (caplog.text, out, err, json.dumps(ledger.policy_commits, default=str)):
        assert SECRET not in shown


def test_a_hive_catalog_without_a_uri_takes_the_metastore_connection(
    spark, compacted_stream, metastore_connection, tmp_path
):
    catalog = {"type": "hive", "warehouse": f"file://{tmp_path}/warehouse"}
    spec = committed_spec(compacted_stream, tmp_path, catalog)
    # The test metastore is Hive 2.3's, which has no column type for Iceberg's timestamptz
    # (and keeps the table it refused: another name for the one that commits).
    with pytest.raises(IcebergError) as refused:
        PartitionCommitHook().commit(replace(spec, metastore_table="refused"), PARTITIONS)
    assert "needs iceberg.catalog.hive.hive2-compatible: true" in str(refused.value)
    assert not CommitLedger(spec.table_path).read(PARTITIONS[0]).policies_current
    spec = replace(spec, iceberg_catalog=catalog | {"hive.hive2-compatible": "true"})
    outcomes = PartitionCommitHook().commit(spec, PARTITIONS)  # metastore_default
    assert [o.state for o in outcomes] == ["committed", "committed"]
    hive = load_catalog("reader", type="hive", uri=metastore_connection.uri)
    table = hive.load_table("lake.events")
    assert_committed(spark, compacted_stream, table)
    # A rerun (the task retried) finds its commit in the table: nothing more.
    PartitionCommitHook().commit(spec, PARTITIONS)
    assert len(hive.load_table("lake.events").metadata.snapshots) == 1


def test_the_iceberg_providers_connection_replaces_the_specs_catalog(
    spark, compacted_stream, monkeypatch, tmp_path
):
    catalog = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"file://{tmp_path}/warehouse",
    }
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    monkeypatch.setenv(
        "AIRFLOW_CONN_ICEBERG_LAKE", json.dumps({"conn_type": "iceberg", "extra": catalog})
    )
    # The spec's own catalog points nowhere: the connection's is the one used.
    spec = committed_spec(
        compacted_stream, tmp_path, {"type": "sql", "uri": "sqlite:////nonexistent/x"}
    )
    hook = PartitionCommitHook(iceberg_conn_id="iceberg_lake")
    outcomes = hook.commit(spec, PARTITIONS)
    assert [o.state for o in outcomes] == ["committed", "committed"]
    table = load_catalog("iceberg_lake", **catalog).load_table("lake.events")
    assert_committed(spark, compacted_stream, table)
