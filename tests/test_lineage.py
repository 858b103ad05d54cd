"""OpenLineage datasets: named by OpenLineage's naming spec, the Hive table linked."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.lineage import path_dataset
from airflow_provider_fscommit.operators.commit import PartitionCommitOperator
from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

TABLE = {
    "staging_path": "/data/staging/events",
    "checkpoint_path": "/data/checkpoints/events",
    "table_path": "/data/warehouse/events",
    "partition_keys": "dt,hour",
    "timestamp_pattern": "$dt $hour:00:00",
}


@pytest.mark.parametrize(
    ("uri", "namespace", "name"),
    [
        ("/data/warehouse/events", "file", "/data/warehouse/events"),
        ("file:///data/warehouse/events", "file", "/data/warehouse/events"),
        ("s3a://bucket/warehouse/events", "s3://bucket", "warehouse/events"),
        ("s3://bucket/warehouse/events", "s3://bucket", "warehouse/events"),
        ("hdfs://nn:8020/warehouse/events", "hdfs://nn:8020", "/warehouse/events"),
    ],
)
def test_paths_are_named_as_openlineage_names_them(uri, namespace, name):
    dataset = path_dataset(uri)
    assert (dataset.namespace, dataset.name) == (namespace, name)


def test_compaction_reads_the_staging_output_and_writes_the_published_directory():
    lineage = PartitionCompactOperator(
        task_id="compact", table=TABLE
    ).get_openlineage_facets_on_complete(None)
    assert [(d.namespace, d.name) for d in lineage.inputs] == [("file", "/data/staging/events")]
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("file", "/data/warehouse/events")]


def test_the_commit_outputs_the_hive_table_of_the_metastore_connection(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_METASTORE_DEFAULT", "hive-metastore://hms.example:9083")
    table = TABLE | {"policy_kind": "metastore,success-file", "metastore_table": "events"}
    lineage = PartitionCommitOperator(
        task_id="commit", table=table, partitions="dt=2026-11-20/hour=03"
    ).get_openlineage_facets_on_complete(None)
    (directory,) = lineage.inputs
    assert (directory.namespace, directory.name) == ("file", "/data/warehouse/events")
    (symlink,) = directory.facets["symlinks"].identifiers
    assert (symlink.namespace, symlink.name, symlink.type) == (
        "hive://hms.example:9083",
        "default.events",
        "TABLE",
    )
    assert [(d.namespace, d.name) for d in lineage.outputs] == [
        ("hive://hms.example:9083", "default.events")
    ]


def test_without_a_metastore_policy_the_commit_outputs_the_directory():
    lineage = PartitionCommitOperator(
        task_id="commit", table=TABLE | {"policy_kind": "success-file"}, partitions=[]
    ).get_openlineage_facets_on_complete(None)
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("file", "/data/warehouse/events")]
