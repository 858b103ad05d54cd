"""The ``iceberg`` policy: register committed partitions' files in an Apache Iceberg table.

An adapter over :class:`~airflow_provider_fscommit.core.catalogs.iceberg_table.IcebergTable`,
which says how (one snapshot a run, exactly once, the completeness in the same
transaction). The policy adds what the ledger keeps of each committed partition: the
snapshot its files are in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_provider_fscommit.core.catalogs.iceberg_table import IcebergTable
from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.publish.published import CommitContext, Receipts, as_batch

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

# What the ledger keeps of each committed partition: the snapshot its files are in.
SNAPSHOT_RECEIPT = "iceberg_snapshot_id"


def snapshot_of(receipts: Mapping[str, Mapping[str, Any]]) -> int | None:
    """The snapshot an Iceberg table holds a partition's latest commit in, from the receipts
    the ledger keeps by policy kind (None: that commit had no iceberg policy)."""
    return receipts.get(PolicyKind.ICEBERG, {}).get(SNAPSHOT_RECEIPT)


class IcebergCommitPolicy(CatalogPolicy):
    """Commits partitions to one Iceberg table of a pyiceberg catalog, one snapshot a run.

    :param catalog_factory: loads the pyiceberg catalog (properties and credentials).
    :param namespace: the Iceberg namespace (``metastore_database``).
    :param table: the table's name in it (``metastore_table``).
    :param create_table: create the table on the first commit (``iceberg.create-table``).
    """

    def __init__(
        self,
        catalog_factory: Callable[[], Catalog],
        namespace: str,
        table: str,
        create_table: bool = False,
    ) -> None:
        super().__init__(IcebergTable(catalog_factory, namespace, table, create_table))

    def commit_all(self, contexts: Sequence[CommitContext]) -> Receipts:
        """Register the partitions' published files in one snapshot, or nothing if the
        table already holds them; the batch's completeness, the table's once they are
        committed, goes into the same transaction. Says, of each partition with files, the
        snapshot its files are in (``iceberg_snapshot_id``)."""
        batch = as_batch(contexts)
        snapshot_id = self.table.add_partitions(batch, batch.completeness)
        if snapshot_id is None:
            return {}
        return {c.path: {SNAPSHOT_RECEIPT: snapshot_id} for c in batch if c.files}
