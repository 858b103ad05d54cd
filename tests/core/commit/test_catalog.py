"""``CatalogPolicy`` puts any ``CatalogTable`` in the chain: a real Iceberg table (SQL
catalog on SQLite) gets a run's completeness with its partitions' data, in one commit; a
real Hive metastore table gets its partitions, its completeness forward only and its
drops through the policy."""

from __future__ import annotations

from airflow_provider_fscommit.core.catalogs.iceberg_table import IcebergTable
from airflow_provider_fscommit.core.catalogs.metastore_table import MetastoreTable
from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.quantities import epoch_ms
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.completeness import Completeness
from fscommit_dev.metastore.client import create_table, metastore_table_spec, thrift_client
from tests.support.iceberg import iceberg_ids
from tests.support.iceberg_catalog import catalog, iceberg_spec
from tests.support.metastore_calls import context

HOUR = "dt=2026-11-20/hour=00"
THROUGH = "fscommit.complete-through"


def through(hour: int) -> dict[str, str]:
    """The completeness parameters of a table complete through ``hour`` of 2026-11-20."""
    at = epoch_ms(f"2026-11-20T{hour:02d}:00:00+00:00")
    return Completeness(at + 3_600_000, at, at).table_parameters()


def test_a_table_that_commits_completeness_with_the_data_gets_the_batchs_in_one_commit(
    compacted_stream, tmp_path
):
    spec = iceberg_spec(compacted_stream, tmp_path)
    CompactionPublisher(spec).run(compact_units, [HOUR])
    policy = CatalogPolicy(IcebergTable(lambda: catalog(tmp_path), "lake", "events", True))
    assert (policy.name, policy.kind) == ("lake.events", PolicyKind.ICEBERG)
    committer = PartitionCommitter(spec, [policy])
    assert [o.state for o in committer.commit([HOUR])] == ["committed"]
    published = committer.completeness.published.table_parameters()
    assert published[THROUGH].startswith("2026-11-20T")  # the batch had a completeness
    table = catalog(tmp_path).load_table("lake.events")
    assert set(iceberg_ids(table)) == {("2026-11-20", "00")}
    assert {key: table.properties[key] for key in published} == published
    # The data and the completeness in one commit after the table's creation: no
    # metadata-only commit of the completeness after the data.
    assert len(table.metadata.metadata_log) == 1


def test_a_metastore_table_gets_partitions_completeness_forward_only_and_drops(metastore, tmp_path):
    create_table(metastore, "adapted", tmp_path / "table")
    spec = metastore_table_spec(tmp_path / "table", "adapted")
    policy = CatalogPolicy(MetastoreTable(lambda: thrift_client(metastore), "fscommit", "adapted"))
    assert (policy.name, policy.kind) == ("fscommit.adapted", PolicyKind.METASTORE)
    policy.commit(context(spec, "2026-11-20", "00"))
    policy.commit_all([context(spec, "2026-11-20", h) for h in ("01", "02")])
    assert policy.update_table_parameters(spec, through(3))
    assert not policy.update_table_parameters(spec, through(3))  # held: nothing written
    assert not policy.update_table_parameters(spec, through(1))  # earlier: never back
    assert policy.read_table_parameters()[THROUGH] == through(3)[THROUGH]
    with thrift_client(metastore) as client:
        assert client.get_table("fscommit", "adapted").parameters[THROUGH] == through(3)[THROUGH]
    assert policy.drop(spec, [("2026-11-20", "00"), ("2026-11-20", "07")]) == 1  # 07: never
    with thrift_client(metastore) as client:
        names = client.get_partition_names("fscommit", "adapted", -1)
    assert sorted(names) == ["dt=2026-11-20/hour=01", "dt=2026-11-20/hour=02"]
