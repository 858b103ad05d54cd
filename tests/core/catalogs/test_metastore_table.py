"""``MetastoreTable`` against a real Hive metastore Thrift server: partitions added in one
batch call, an existing one altered to its new location and statistics, escaped values
and nulls as values, the completeness set once with the rest of the table kept, and the
errors that name the fix."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.catalogs.metastore_table import MetastoreTable
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import MetastoreError
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.publish.published import CommitContext, CommitSummary
from fscommit_dev.metastore.client import create_table, metastore_table_spec, thrift_client
from tests.support.metastore_calls import CountingClient, context, counting_factory


def test_500_partitions_commit_in_one_batch_call(metastore, tmp_path):
    create_table(metastore, "batch500", tmp_path / "table")
    spec = metastore_table_spec(tmp_path / "table", "batch500")
    contexts = [context(spec, f"2026-11-{1 + i // 24:02d}", f"{i % 24:02d}") for i in range(500)]
    CountingClient.calls.clear()
    MetastoreTable(counting_factory(metastore), "fscommit", "batch500").add_partitions(contexts)
    assert CountingClient.calls.count("add_partitions_req") == 1
    with thrift_client(metastore) as client:
        names = client.get_partition_names("fscommit", "batch500", -1)
        assert len(names) == 500 and "dt=2026-11-01/hour=00" in names
        partition = client.get_partition_by_name("fscommit", "batch500", "dt=2026-11-03/hour=07")
    assert partition.sd.location.endswith("table/dt=2026-11-03/hour=07")
    assert partition.parameters["numRows"] == "10"
    assert partition.parameters["fscommit.max-batch-id"] == "7"


def test_an_existing_partition_is_altered_to_the_new_location_and_stats(metastore, tmp_path):
    create_table(metastore, "alter", tmp_path / "table")
    spec = metastore_table_spec(tmp_path / "table", "alter")
    table = MetastoreTable(counting_factory(metastore), "fscommit", "alter")
    table.add_partitions([context(spec, "2026-11-20", "03", rows=10)])
    moved = metastore_table_spec(tmp_path / "elsewhere", "alter")
    CountingClient.calls.clear()
    table.add_partitions([context(moved, "2026-11-20", "03", rows=12)])
    assert "alter_partitions_with_environment_context" in CountingClient.calls
    with thrift_client(metastore) as client:
        partition = client.get_partition_by_name("fscommit", "alter", "dt=2026-11-20/hour=03")
    assert partition.sd.location.endswith("elsewhere/dt=2026-11-20/hour=03")
    assert partition.parameters["numRows"] == "12"


def test_values_that_need_escaping_and_nulls_travel_as_values(metastore, tmp_path):
    create_table(metastore, "awkward", tmp_path / "table", keys=("dt", "k"))
    spec = TableSpec.from_options(
        {
            "staging_path": "/s",
            "checkpoint_path": "/c",
            "partition_keys": "dt,k",
            "table_path": str(tmp_path / "table"),
        }
    )
    contexts = []
    for value in ("a b:c/d%e=f#g", None, "x'); DROP TABLE t; --"):
        partition = PartitionSpec(("dt", "k"), ("2026-11-20", value))
        contexts.append(
            CommitContext(
                spec,
                partition,
                partition.path(),
                f"{spec.table_path}/{partition.path()}",
                CommitSummary(
                    files=0,
                    bytes=0,
                    rows=0,
                    watermark_ms=0,
                    max_batch_id=0,
                    compaction_seq=None,
                    committed_at_ms=0,
                    format=None,
                ),
            )
        )
    MetastoreTable(counting_factory(metastore), "fscommit", "awkward").add_partitions(contexts)
    with thrift_client(metastore) as client:
        values = {tuple(p.values) for p in client.get_partitions("fscommit", "awkward", -1)}
    assert values == {
        ("2026-11-20", "a b:c/d%e=f#g"),
        ("2026-11-20", "__HIVE_DEFAULT_PARTITION__"),
        ("2026-11-20", "x'); DROP TABLE t; --"),
    }


def test_a_missing_table_or_other_partition_keys_are_clear_errors(metastore, tmp_path):
    spec = metastore_table_spec(tmp_path / "table", "nope")
    with pytest.raises(MetastoreError, match=r"table fscommit.nope does not exist"):
        MetastoreTable(counting_factory(metastore), "fscommit", "nope").add_partitions(
            [context(spec, "2026-11-20", "00")]
        )
    create_table(metastore, "daily", tmp_path / "daily", keys=("dt",))
    with pytest.raises(MetastoreError, match=r"partitioned by \['dt'\]"):
        MetastoreTable(counting_factory(metastore), "fscommit", "daily").add_partitions(
            [context(spec, "2026-11-20", "00")]
        )


def test_table_parameters_are_set_once_and_the_rest_of_the_table_is_kept(metastore, tmp_path):
    create_table(metastore, "params", tmp_path / "table")
    spec = metastore_table_spec(tmp_path / "table", "params")
    table = MetastoreTable(counting_factory(metastore), "fscommit", "params")
    facts = {"fscommit.complete-through": "2026-11-20T03:00:00Z"}
    CountingClient.calls.clear()
    assert table.set_table_parameters(spec, facts)
    assert not table.set_table_parameters(spec, facts)  # held: nothing written
    assert CountingClient.calls.count("alter_table_with_environment_context") == 1
    with thrift_client(metastore) as client:
        held = client.get_table("fscommit", "params")
    assert held.parameters["fscommit.complete-through"] == "2026-11-20T03:00:00Z"
    assert held.parameters["EXTERNAL"] == "TRUE"
    assert held.sd.location.endswith(f"{tmp_path}/table")
    assert table.read_table_parameters() == held.parameters
