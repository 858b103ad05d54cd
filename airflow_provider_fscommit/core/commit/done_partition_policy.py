"""The ``done-partition`` policy: Paimon's done partition, in the chain's catalogs that hold one.

Paimon's ``AddDonePartitionAction`` marks a partition done by adding, to the catalog, the
same partition with its last value suffixed ``.done`` (``dt=2026-11-20/hour=03.done``).
It is an ordinary string partition, so any Hive-style catalog holds it and any scheduler
that waits for a named partition (the Hive provider's ``NamedHivePartitionSensor``, the
Amazon provider's ``GlueCatalogPartitionSensor``) waits for it. It is added after the
catalog policies added the partition itself, so a consumer that sees it finds the
partition complete; where it points, and why, is :mod:`hive_partition`'s.

A catalog without done partitions (``holds_done_partitions`` false: an Iceberg table,
whose completeness is in its properties) is skipped; the spec's validation refuses a chain
in which no catalog holds them.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.publish.published import CommitContext


class DonePartitionCommitPolicy(PartitionCommitPolicy):
    """Adds the done partitions to the chain's catalogs that hold them, in chain order."""

    kind = PolicyKind.DONE_PARTITION

    def __init__(self, catalogs: Sequence[CatalogPolicy]) -> None:
        self.catalogs = [c for c in catalogs if c.table.holds_done_partitions]

    def commit(self, context: CommitContext) -> None:
        self.commit_all([context])

    def commit_all(self, contexts: Sequence[CommitContext]) -> None:
        for catalog in self.catalogs:
            catalog.add_done_partitions(contexts)
