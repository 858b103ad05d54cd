"""pyiceberg's SQL catalog on SQLite in a test's folder, and a stream's table spec that
commits to ``lake.events`` in it (the iceberg policy and ``IcebergTable`` tests)."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.catalog import load_catalog

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from tests.support.compaction import table_options


def catalog_options(directory: Path) -> dict[str, str]:
    """A spec's ``iceberg.catalog.*`` options of the SQL catalog in ``directory``."""
    return {
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": f"sqlite:///{directory}/catalog.db",
        "iceberg.catalog.warehouse": f"file://{directory}/warehouse",
    }


def iceberg_spec(stream, directory: Path, **extra: str) -> TableSpec:
    """``stream``'s hourly table, published under ``directory``, committed to
    ``lake.events`` of the catalog there (created on the first commit)."""
    return TableSpec.from_options(
        table_options(stream, str(directory / "table"))
        | catalog_options(directory)
        | {
            "sink.partition-commit.policy.kind": "iceberg",
            "metastore_database": "lake",
            "metastore_table": "events",
            "iceberg.create-table": "true",
        }
        | extra
    )


def catalog(directory: Path):
    """A client of the SQL catalog in ``directory``, as another reader or writer opens it."""
    return load_catalog(  # the policy's default name: the SQL catalog keeps it with each table
        "default",
        type="sql",
        uri=f"sqlite:///{directory}/catalog.db",
        warehouse=f"file://{directory}/warehouse",
    )
