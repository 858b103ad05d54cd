"""Catalog policies: the commit policies that register partitions in a table catalog.

Each is a thin adapter over one ``CatalogTable`` (``core.catalogs.catalog_table``: a Hive
metastore's, Glue's, an Iceberg table's): the table decides how partitions, done
partitions and the table's parameters are written, and says what it can do (its
capability flags); the policy only puts it in the chain, as Flink's
``MetastoreCommitPolicy`` puts its ``TableMetaStore`` there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from airflow_provider_fscommit.core.catalogs.catalog_table import CatalogTable
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.publish.published import (
    CommitBatch,
    CommitContext,
    Receipts,
    as_batch,
)


class CatalogPolicy(PartitionCommitPolicy):
    """A policy that adds a table's partitions to a catalog, and can take them out again.

    ``name`` says which table of which catalog, for messages; ``kind`` is the policy.
    """

    def __init__(self, table: CatalogTable) -> None:
        self.table = table
        self.name: str = table.name
        self.kind: PolicyKind = table.kind

    def commit(self, context: CommitContext) -> None:
        self.commit_all(CommitBatch((context,)))

    def commit_all(self, contexts: Sequence[CommitContext]) -> Receipts | None:
        """Add or alter the batch's partitions in one go; a catalog that commits the
        completeness with the data gets the batch's too."""
        batch = as_batch(contexts)
        self.table.add_partitions(batch, batch.completeness)
        return None

    def add_done_partitions(self, contexts: Sequence[CommitContext]) -> None:
        """Add each partition's done partition (the table ``holds_done_partitions``)."""
        self.table.add_done_partitions(contexts)

    def update_table_parameters(self, spec: TableSpec, parameters: Mapping[str, str]) -> bool:
        """Set these table parameters (the completeness), forward only, keeping the others;
        write nothing when the table already holds them. Returns whether it wrote."""
        return self.table.set_table_parameters(spec, parameters)

    def read_table_parameters(self) -> dict[str, str]:
        """The table's parameters, as readers of its published completeness see them."""
        return self.table.read_table_parameters()

    def drop(self, spec: TableSpec, partitions: Sequence[Sequence[str | None]]) -> int:
        """Drop partitions given by their values, and their done partitions when the chain
        adds them; files stay (expiration deletes them after the drop). Returns how many of
        the partitions existed; one already gone is dropped already (a rerun)."""
        return self.table.drop_partitions(spec, partitions)
