"""Paimon's done partition in a real Hive metastore, as the Hive provider's
``NamedHivePartitionSensor`` waits for it, and gone with its partition on expiry; in a
chain with an Iceberg table too, only the catalogs that hold done partitions get one."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

import pytest
from pyiceberg.catalog import load_catalog

from airflow_provider_fscommit.core.commit.policy_factory import catalog_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.maintenance.expiration import expire_partitions
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.hooks.metastore import connection_metastore_client
from fscommit_dev.metastore.client import (
    create_table,
    metastore_committer,
    metastore_table_spec,
    thrift_client,
)
from tests.support.compaction import published_ledger, table_options
from tests.support.iceberg import iceberg_ids

HOURS = ["dt=2026-11-20/hour=00", "dt=2026-11-20/hour=01"]


def sensor_sees(partition: str) -> bool:
    from airflow.providers.apache.hive.sensors.named_hive_partition import (
        NamedHivePartitionSensor,
    )

    sensor = NamedHivePartitionSensor(task_id="wait", partition_names=[partition])
    return sensor.poke({})


def test_the_done_partition_is_added_once_after_the_partition_and_expires_with_it(
    metastore_connection, tmp_path
):
    metastore = metastore_connection
    create_table(metastore, "donetable", tmp_path / "table")
    spec = metastore_table_spec(
        tmp_path / "table",
        "donetable",
        policy_kind="metastore,done-partition",
        timestamp_pattern="$dt $hour:00:00",
    )
    for hour in HOURS:
        published_ledger(spec, hour, rows=3)
    committer = metastore_committer(spec)
    assert {o.state for o in committer.commit(HOURS[:1])} == {"committed"}
    with thrift_client(metastore) as client:
        names = client.get_partition_names("fscommit", "donetable", -1)
        done = client.get_partition_by_name("fscommit", "donetable", "dt=2026-11-20/hour=00.done")
    assert sorted(names) == ["dt=2026-11-20/hour=00", "dt=2026-11-20/hour=00.done"]
    assert done.sd.location.endswith("table/_fscommit/done/dt=2026-11-20/hour=00.done")
    assert sensor_sees("fscommit.donetable/dt=2026-11-20/hour=00.done")
    assert not sensor_sees("fscommit.donetable/dt=2026-11-20/hour=01.done")  # not committed

    published_ledger(spec, HOURS[0], rows=2)  # late data: committed again, done stays one
    assert {o.state for o in committer.commit(HOURS)} == {"committed"}
    assert sensor_sees("fscommit.donetable/dt=2026-11-20/hour=01.done")
    with thrift_client(metastore) as client:
        assert len(client.get_partition_names("fscommit", "donetable", -1)) == 4

    catalogs = catalog_policies(spec, connection_metastore_client("metastore_default"), None)
    expiring = replace(spec, expiration_time=timedelta(days=1))
    report = expire_partitions(expiring, dry_run=False, catalogs=catalogs)
    assert len(report.partitions) == 2
    with thrift_client(metastore) as client:
        assert client.get_partition_names("fscommit", "donetable", -1) == []


def test_a_chain_without_a_catalog_holding_done_partitions_is_refused_with_advice_that_works(
    compacted_stream, metastore_connection, tmp_path
):
    """``iceberg,done-partition`` is refused (an Iceberg table holds no done partitions);
    the chain the message suggests is accepted, its done partition is in the metastore,
    and the Iceberg table, skipped by done-partition, has the partition's rows."""
    metastore = metastore_connection
    create_table(metastore, "advised", tmp_path / "table")
    iceberg = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"file://{tmp_path}/warehouse",
    }
    options = table_options(compacted_stream, str(tmp_path / "table")) | {
        "metastore_database": "fscommit",
        "metastore_table": "advised",
        "iceberg.create-table": "true",
        **{f"iceberg.catalog.{key}": value for key, value in iceberg.items()},
    }
    with pytest.raises(ConfigError) as refused:
        TableSpec.from_options(
            options | {"sink.partition-commit.policy.kind": "iceberg,done-partition"}
        )
    assert "no catalog that holds done partitions" in str(refused.value)
    advised = re.search(r"e\.g\. '([^']+)'", str(refused.value)).group(1)
    assert advised == "iceberg,metastore,done-partition"

    spec = TableSpec.from_options(options | {"sink.partition-commit.policy.kind": advised})
    CompactionPublisher(spec).run(compact_units, HOURS[:1])
    assert {o.state for o in metastore_committer(spec).commit(HOURS[:1])} == {"committed"}
    with thrift_client(metastore) as client:
        names = client.get_partition_names("fscommit", "advised", -1)
    assert sorted(names) == [HOURS[0], f"{HOURS[0]}.done"]
    table = load_catalog("default", **iceberg).load_table("fscommit.advised")
    assert set(iceberg_ids(table)) == {("2026-11-20", "00")}
