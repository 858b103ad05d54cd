"""The ``mark-event`` policy: mark the partition ``LOAD_DONE`` in the Hive metastore.

Paimon's ``mark-event`` mark-done action, over
:meth:`~airflow_provider_fscommit.core.catalogs.metastore_table.MetastoreTable.mark_done`.
The event is marked after the ``metastore`` policy added the partition, so a consumer that
sees the event also finds the partition and its statistics; marking again is harmless, so
a rerun after a failure later in the chain is safe. The client comes from the same factory
as the ``metastore`` policy's.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_provider_fscommit.core.catalogs.metastore_table import ClientFactory, MetastoreTable
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.publish.published import CommitContext


class MarkEventCommitPolicy(PartitionCommitPolicy):
    """Marks each partition of a call done in one metastore table, over one connection."""

    kind = PolicyKind.MARK_EVENT

    def __init__(self, client_factory: ClientFactory, database: str, table: str) -> None:
        self.table = MetastoreTable(client_factory, database, table)

    def commit(self, context: CommitContext) -> None:
        self.commit_all([context])

    def commit_all(self, contexts: Sequence[CommitContext]) -> None:
        self.table.mark_done(contexts)
