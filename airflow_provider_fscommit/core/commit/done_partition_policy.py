"""The ``done-partition`` policy: Paimon's done partition, in every catalog of the chain.

Paimon's ``AddDonePartitionAction`` marks a partition done by adding, to the catalog, the
same partition with its last value suffixed ``.done`` (``dt=2026-11-20/hour=03.done``).
It is an ordinary string partition, so any Hive-style catalog holds it and any scheduler
that waits for a named partition (the Hive provider's ``NamedHivePartitionSensor``, the
Amazon provider's ``GlueCatalogPartitionSensor``) waits for it. It is added after the
catalog policies added the partition itself, so a consumer that sees it finds the
partition complete; where it points, and why, is :mod:`catalog`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy
from airflow_provider_fscommit.core.commit.policy import CommitContext, PartitionCommitPolicy


class DonePartitionCommitPolicy(PartitionCommitPolicy):
    """Adds the done partitions to the catalogs the chain commits to, in chain order."""

    def __init__(self, catalogs: Sequence[CatalogPolicy]) -> None:
        self.catalogs = list(catalogs)

    def commit(self, context: CommitContext) -> None:
        self.commit_all([context])

    def commit_all(self, contexts: Sequence[CommitContext]) -> None:
        for catalog in self.catalogs:
            catalog.add_done_partitions(contexts)
