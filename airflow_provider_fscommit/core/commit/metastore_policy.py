"""The ``metastore`` policy: add or alter the partition in a Hive metastore.

An adapter over :class:`~airflow_provider_fscommit.core.catalogs.metastore_table.MetastoreTable`,
which says how (one batch call to add, one to alter, column statistics after).
"""

from __future__ import annotations

from airflow_provider_fscommit.core.catalogs.metastore_table import ClientFactory, MetastoreTable
from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy


class MetastoreCommitPolicy(CatalogPolicy):
    """Commits all partitions of a call to one metastore table, batched."""

    def __init__(self, client_factory: ClientFactory, database: str, table: str) -> None:
        super().__init__(MetastoreTable(client_factory, database, table))
