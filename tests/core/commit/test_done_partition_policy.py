"""Paimon's done partition in a real Hive metastore, as the Hive provider's
``NamedHivePartitionSensor`` waits for it, and gone with its partition on expiry."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from airflow_provider_fscommit.core.commit.policy_factory import catalog_policies
from airflow_provider_fscommit.core.maintenance.expiration import expire_partitions
from airflow_provider_fscommit.hooks.metastore import connection_metastore_client
from fscommit_dev.metastore.client import (
    create_table,
    metastore_committer,
    metastore_table_spec,
    thrift_client,
)
from tests.support.compaction import published_ledger

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
