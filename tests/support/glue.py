"""Glue Data Catalog tables on the test server (moto's Glue API), as a user creates them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_provider_fscommit.core.config.table_spec import TableSpec

PARQUET = {
    "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "SerdeInfo": {
        "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        "Parameters": {"serialization.format": "1"},
    },
}
ORC = {
    "InputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
    "OutputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
    "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.orc.OrcSerde"},
}
COLUMNS = [
    {"Name": "id", "Type": "bigint"},
    {"Name": "ts", "Type": "timestamp"},
    {"Name": "k", "Type": "string"},
    {"Name": "v", "Type": "double"},
]


def create_glue_table(
    glue: Any,
    database: str,
    name: str,
    location: Path | str,
    keys: tuple[str, ...] = ("dt", "hour"),
    storage: dict[str, Any] = PARQUET,
) -> None:
    """An external table as Athena's CREATE EXTERNAL TABLE makes it (the database too)."""
    if database not in {d["Name"] for d in glue.get_databases()["DatabaseList"]}:
        glue.create_database(DatabaseInput={"Name": database})
    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": name,
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {"EXTERNAL": "TRUE"},
            "PartitionKeys": [{"Name": k, "Type": "string"} for k in keys],
            "StorageDescriptor": {"Columns": COLUMNS, "Location": str(location), **storage},
        },
    )


def glue_partitions(glue: Any, database: str, name: str) -> dict[tuple[str, ...], dict[str, Any]]:
    """Every partition of the table, by its values."""
    pages = glue.get_paginator("get_partitions").paginate(DatabaseName=database, TableName=name)
    return {tuple(p["Values"]): p for page in pages for p in page["Partitions"]}


def glue_table_spec(table: Path, name: str, **extra: Any) -> TableSpec:
    """An hourly table at ``table`` committed to ``fscommit.<name>`` in Glue (no stream)."""
    return TableSpec.from_options(
        {
            "staging_path": str(table.parent / "staging"),
            "checkpoint_path": str(table.parent / "c"),
            "partition_keys": "dt,hour",
            "table_path": str(table),
            "metastore_database": "fscommit",
            "metastore_table": name,
            "policy_kind": "glue",
        }
        | extra
    )
