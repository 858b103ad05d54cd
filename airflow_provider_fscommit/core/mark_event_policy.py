"""The ``mark-event`` policy: mark the partition ``LOAD_DONE`` in the Hive metastore.

Paimon's ``mark-event`` mark-done action. Hive-world consumers (Hive's own
``isPartitionMarkedForEvent`` pollers, schedulers that wait on it) learn that a partition
is complete from a partition event rather than from the partition's existence, because a
partition exists in the metastore from its first file on in most pipelines. The event is
marked after the ``metastore`` policy added the partition, so a consumer that sees the
event also finds the partition and its statistics.

Marking again is harmless (the metastore keeps one more event row, and the partition
stays marked), so a rerun after a failure later in the chain is safe. The client comes
from the same factory as the ``metastore`` policy's.
"""

from __future__ import annotations

from collections.abc import Sequence

from hmsclient.genthrift.hive_metastore import ttypes
from thrift.Thrift import TException

from airflow_provider_fscommit.core.metastore_policy import ClientFactory, MetastoreError
from airflow_provider_fscommit.core.policy import CommitContext, PartitionCommitPolicy

LOAD_DONE = ttypes.PartitionEventType.LOAD_DONE


class MarkEventCommitPolicy(PartitionCommitPolicy):
    def __init__(self, client_factory: ClientFactory, database: str, table: str) -> None:
        self.client_factory = client_factory
        self.database = database
        self.table = table

    def commit(self, context: CommitContext) -> None:
        self.commit_all([context])

    def commit_all(self, contexts: Sequence[CommitContext]) -> None:
        """One connection for all partitions; one event each (Thrift has no batch call)."""
        if not contexts:
            return
        name = f"{self.database}.{self.table}"
        try:
            connection = self.client_factory()
        except Exception as exc:  # the hook raises its own types for an unreachable server
            raise MetastoreError(
                f"cannot reach the metastore to mark partitions of {name} done ({exc}); check "
                "that it runs and the connection points at it; a retry is safe"
            ) from exc
        try:
            with connection as client:
                for context in contexts:
                    client.markPartitionForEvent(
                        self.database, self.table, event_values(context), LOAD_DONE
                    )
        except ttypes.UnknownTableException:
            raise MetastoreError(
                f"table {name} does not exist in the metastore, so no partition of it can be "
                "marked done; create it or fix the database/table name"
            ) from None
        except (TException, OSError) as exc:
            raise MetastoreError(
                f"marking {len(contexts)} partition(s) of {name} done in the metastore failed "
                f"({type(exc).__name__}: {exc}); nothing after the mark-event policy ran, and "
                "a retry marks them again safely"
            ) from exc


def event_values(context: CommitContext) -> dict[str, str]:
    """The partition's values by key, as the metastore names the partition of an event."""
    return {
        key: value if value is not None else context.spec.partition_default_name
        for key, value in zip(context.partition.keys, context.values, strict=True)
    }
