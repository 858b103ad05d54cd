"""``GlueTable`` against a real Glue Data Catalog API (moto's server): partitions created
in Glue's chunks with the table's storage, only changed partitions updated (a rerun
writes nothing), throttling of a call and of a batch entry retried, and the completeness
added to the table's parameters once, the rest of the table kept."""

from __future__ import annotations

from airflow_provider_fscommit.core.catalogs.glue_table import GlueTable
from tests.support.glue import create_glue_table, glue_partitions, glue_table_spec
from tests.support.metastore_calls import context

WRITES = {"BatchCreatePartition", "BatchUpdatePartition", "BatchDeletePartition", "UpdateTable"}


def glue_table(s3_server, name: str) -> GlueTable:
    return GlueTable(lambda: s3_server.client("glue"), "fscommit", name)


def writes(s3_server, since: int) -> list[str]:
    return [c for c in s3_server.glue_calls()[since:] if c in WRITES]


def test_250_partitions_are_created_in_glues_chunks_with_the_tables_storage(s3_server, tmp_path):
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "chunks", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "chunks")
    contexts = [context(spec, f"2026-11-{1 + i // 24:02d}", f"{i % 24:02d}") for i in range(250)]
    before = len(s3_server.glue_calls())
    glue_table(s3_server, "chunks").add_partitions(contexts)
    calls = s3_server.glue_calls()[before:]
    assert calls.count("BatchCreatePartition") == 3 and calls.count("BatchGetPartition") == 1
    partitions = glue_partitions(glue, "fscommit", "chunks")
    assert len(partitions) == 250
    one = partitions[("2026-11-03", "07")]
    table = glue.get_table(DatabaseName="fscommit", Name="chunks")["Table"]["StorageDescriptor"]
    storage = one["StorageDescriptor"]
    assert storage["Location"] == f"{tmp_path}/table/dt=2026-11-03/hour=07"
    assert {k: storage[k] for k in ("Columns", "InputFormat", "SerdeInfo")} == {
        k: table[k] for k in ("Columns", "InputFormat", "SerdeInfo")
    }
    assert one["Parameters"] == {
        "numFiles": "1",
        "totalSize": "100",
        "numRows": "10",
        "fscommit.watermark": "5",
        "fscommit.max-batch-id": "7",
        "fscommit.committed-at": "9",
    }


def test_only_changed_partitions_are_updated_and_a_rerun_writes_nothing(s3_server, tmp_path):
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "late", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "late")
    table = glue_table(s3_server, "late")
    table.add_partitions([context(spec, "2026-11-20", h) for h in ("00", "01", "02")])
    held = glue_partitions(glue, "fscommit", "late")[("2026-11-20", "01")]
    glue.update_partition(  # a parameter of the user's own survives our updates
        DatabaseName="fscommit",
        TableName="late",
        PartitionValueList=held["Values"],
        PartitionInput={
            "Values": held["Values"],
            "StorageDescriptor": held["StorageDescriptor"],
            "Parameters": held["Parameters"] | {"owner": "ads"},
        },
    )
    start = len(s3_server.glue_calls())
    table.add_partitions([context(spec, "2026-11-20", h) for h in ("00", "01", "02")])
    assert writes(s3_server, start) == []  # the same facts: nothing to write

    start = len(s3_server.glue_calls())
    late = [context(spec, "2026-11-20", "00"), context(spec, "2026-11-20", "01", rows=12)]
    table.add_partitions(late)
    assert writes(s3_server, start) == ["BatchUpdatePartition"]
    partitions = glue_partitions(glue, "fscommit", "late")
    assert partitions[("2026-11-20", "01")]["Parameters"]["numRows"] == "12"
    assert partitions[("2026-11-20", "01")]["Parameters"]["owner"] == "ads"
    assert partitions[("2026-11-20", "00")]["Parameters"]["numRows"] == "10"


def test_throttling_of_a_call_and_of_a_batch_entry_is_retried(s3_server, tmp_path):
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "throttled", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "throttled")
    s3_server.inject_glue_fault("GetTable", "ThrottlingException", times=2)
    s3_server.inject_glue_fault(
        "BatchCreatePartition", "ThrottlingException", times=2, values=["2026-11-20", "01"]
    )
    glue_table(s3_server, "throttled").add_partitions(
        [context(spec, "2026-11-20", h) for h in ("00", "01")]
    )
    assert set(glue_partitions(glue, "fscommit", "throttled")) == {
        ("2026-11-20", "00"),
        ("2026-11-20", "01"),
    }


def test_table_parameters_are_added_to_the_table_once_and_its_storage_is_kept(s3_server, tmp_path):
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "params", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "params")
    before = glue.get_table(DatabaseName="fscommit", Name="params")["Table"]
    facts = {"fscommit.complete-through": "2026-11-20T03:00:00Z"}
    table = glue_table(s3_server, "params")
    start = len(s3_server.glue_calls())
    assert table.set_table_parameters(spec, facts)
    assert not table.set_table_parameters(spec, facts)  # held
    assert writes(s3_server, start) == ["UpdateTable"]
    after = glue.get_table(DatabaseName="fscommit", Name="params")["Table"]
    assert after["Parameters"] == {"EXTERNAL": "TRUE", **facts}
    assert table.read_table_parameters() == after["Parameters"]
    for field in ("StorageDescriptor", "PartitionKeys", "TableType"):
        assert after[field] == before[field]
