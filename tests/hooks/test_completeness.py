"""``CompletenessTable``: the catalog a completeness sensor waits on, chosen by its catalog
policy's kind and reached through that catalog's hook and connection, reads the
``fscommit.complete-through`` a commit run published there: the loopback Hive metastore,
the Glue API of the S3 test server, an Iceberg table of pyiceberg's SQL catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from airflow_provider_fscommit.core.catalogs.catalog_table import CatalogTable
from airflow_provider_fscommit.core.catalogs.glue_table import GlueTable
from airflow_provider_fscommit.core.catalogs.iceberg_table import IcebergTable
from airflow_provider_fscommit.core.catalogs.metastore_table import MetastoreTable
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.quantities import epoch_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.completeness import Completeness
from airflow_provider_fscommit.hooks.completeness import CompletenessTable, catalog_kind
from fscommit_dev.metastore.client import create_table, thrift_client
from fscommit_dev.s3_server import aws_connection_env
from fscommit_dev.tables import hourly_table
from tests.support.glue import create_glue_table
from tests.support.iceberg_catalog import catalog

THROUGH_MS = epoch_ms("2026-11-20T03:00:00+00:00")


def test_a_name_that_is_no_catalog_is_refused_naming_the_catalogs():
    assert catalog_kind("glue") is PolicyKind.GLUE
    for name in ("hive", "success-file"):  # not a catalog policy's
        with pytest.raises(ValueError, match=f"catalog='{name}': name the catalog, 'metastore'"):
            CompletenessTable(name, "fscommit", "events")


def metastore_table(request, monkeypatch, tmp_path: Path) -> tuple[CompletenessTable, Any]:
    metastore = request.getfixturevalue("metastore")
    monkeypatch.setenv(
        "AIRFLOW_CONN_METASTORE_WAITED", f"hive-metastore://127.0.0.1:{metastore.port}"
    )
    create_table(metastore, "hook_waited", tmp_path / "table")
    writer = MetastoreTable(lambda: thrift_client(metastore), "fscommit", "hook_waited")
    table = CompletenessTable(
        "metastore", "fscommit", "hook_waited", metastore_conn_id="metastore_waited"
    )
    return table, writer


def glue_table(request, monkeypatch, tmp_path: Path) -> tuple[CompletenessTable, Any]:
    s3_server = request.getfixturevalue("s3_server")
    for key, value in aws_connection_env(s3_server, "aws_waited").items():
        monkeypatch.setenv(key, value)
    create_glue_table(s3_server.client("glue"), "fscommit", "hook_waited", tmp_path / "table")
    writer = GlueTable(lambda: s3_server.client("glue"), "fscommit", "hook_waited")
    return CompletenessTable("glue", "fscommit", "hook_waited", aws_conn_id="aws_waited"), writer


def iceberg_table(request, monkeypatch, tmp_path: Path) -> tuple[CompletenessTable, Any]:
    lake = catalog(tmp_path)
    lake.create_namespace("lake")
    lake.create_table("lake.waited", schema=Schema(NestedField(1, "id", LongType())))
    writer = IcebergTable(lambda: catalog(tmp_path), "lake", "waited")
    properties = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"file://{tmp_path}/warehouse",
    }
    return CompletenessTable("iceberg", "lake", "waited", iceberg_catalog=properties), writer


@pytest.mark.parametrize(
    ("setup", "kind"),
    [(metastore_table, MetastoreTable), (glue_table, GlueTable), (iceberg_table, IcebergTable)],
    ids=["metastore", "glue", "iceberg"],
)
def test_the_catalog_of_its_kind_reads_the_complete_through_a_commit_run_published(
    request, monkeypatch, tmp_path, setup, kind: type[CatalogTable]
):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    table, writer = setup(request, monkeypatch, tmp_path)
    assert type(table.catalog_table()) is kind and table.catalog_table().kind is table.catalog
    assert table.read_completeness().complete_through_ms is None  # nothing published yet
    spec = TableSpec.from_options(hourly_table(str(tmp_path / "s"), str(tmp_path / "c")))
    published = Completeness(THROUGH_MS + 3_600_000, THROUGH_MS, THROUGH_MS)
    assert writer.set_table_parameters(spec, published.table_parameters())
    assert table.read_completeness() == published
    # What a deferred trigger stores and reads back: the same table, the catalog by name.
    stored = table.to_kwargs()
    assert type(stored["catalog"]) is str and CompletenessTable(**stored) == table
