"""OpenLineage datasets of the compaction and commit tasks.

Named by OpenLineage's naming spec: a local path is namespace ``file``, an HDFS path
``hdfs://namenode:port``, an S3 path ``s3://bucket`` with the key as name; a Hive table is
``hive://host:port`` with ``database.table``. The published directory carries a symlink
to its Hive table, so lineage tools join the file view and the table view.

OpenLineage is imported lazily: the provider works without the OpenLineage provider, and
Airflow only calls these methods when it is installed and enabled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.storage.filesystem import normalize_uri

if TYPE_CHECKING:
    from airflow.providers.common.compat.openlineage.facet import Dataset
    from airflow.providers.openlineage.extractors import OperatorLineage


def path_dataset(uri: str, hive_table: tuple[str, str] | None = None) -> Dataset:
    """The dataset of a directory; ``hive_table`` is ``(namespace, "db.table")``."""
    from airflow.providers.common.compat.openlineage.facet import (
        Dataset,
        Identifier,
        SymlinksDatasetFacet,
    )

    location = normalize_uri(uri)
    if location.scheme in (None, "file"):
        namespace, name = "file", location.path
    elif location.scheme == "s3":
        namespace, name = f"s3://{location.authority}", location.path.lstrip("/")
    else:
        namespace, name = f"{location.scheme}://{location.authority}", location.path
    facets = {}
    if hive_table is not None:
        facets["symlinks"] = SymlinksDatasetFacet(
            identifiers=[Identifier(namespace=hive_table[0], name=hive_table[1], type="TABLE")]
        )
    return Dataset(namespace=namespace, name=name, facets=facets)


def hive_dataset(spec: TableSpec, metastore_conn_id: str) -> tuple[str, str] | None:
    """``(hive://host:port, db.table)`` when the table is committed to a metastore."""
    if PolicyKind.METASTORE not in spec.policy_kind or not spec.metastore_table:
        return None
    from airflow_provider_fscommit.version_compat import BaseHook

    conn = BaseHook.get_connection(metastore_conn_id)
    return f"hive://{conn.host}:{conn.port or 9083}", (
        f"{spec.metastore_database}.{spec.metastore_table}"
    )


def compaction_lineage(spec: TableSpec) -> OperatorLineage:
    """Compaction reads the streaming query's output and writes the published directory."""
    from airflow.providers.openlineage.extractors import OperatorLineage

    return OperatorLineage(
        inputs=[path_dataset(spec.staging_path)],
        outputs=[path_dataset(spec.require_table_path())],
    )


def commit_lineage(spec: TableSpec, hive: tuple[str, str] | None) -> OperatorLineage:
    """The commit makes the published directory's partitions visible as the Hive table."""
    from airflow.providers.common.compat.openlineage.facet import Dataset
    from airflow.providers.openlineage.extractors import OperatorLineage

    table = path_dataset(spec.require_table_path(), hive)
    output = Dataset(namespace=hive[0], name=hive[1]) if hive else table
    return OperatorLineage(inputs=[table], outputs=[output])


def expiration_lineage(spec: TableSpec, hive: tuple[str, str] | None) -> OperatorLineage:
    """Expiration alters the published directory and its Hive table: partitions dropped."""
    from airflow.providers.common.compat.openlineage.facet import (
        Dataset,
        LifecycleStateChange,
        LifecycleStateChangeDatasetFacet,
    )
    from airflow.providers.openlineage.extractors import OperatorLineage

    altered = {"lifecycleStateChange": LifecycleStateChangeDatasetFacet(LifecycleStateChange.ALTER)}
    table = path_dataset(spec.require_table_path(), hive)
    table.facets.update(altered)
    outputs = [table]
    if hive:
        outputs.append(Dataset(namespace=hive[0], name=hive[1], facets=dict(altered)))
    return OperatorLineage(outputs=outputs)
