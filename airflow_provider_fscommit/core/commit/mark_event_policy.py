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

from airflow_provider_fscommit.core.commit.catalog import catalog_values
from airflow_provider_fscommit.core.commit.metastore_policy import MetastoreTablePolicy
from airflow_provider_fscommit.core.commit.policy import CommitContext
from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.errors import MetastoreError

LOAD_DONE = ttypes.PartitionEventType.LOAD_DONE


class MarkEventCommitPolicy(MetastoreTablePolicy):
    def commit_all(self, contexts: Sequence[CommitContext]) -> None:
        """One connection for all partitions; one event each (Thrift has no batch call)."""
        if not contexts:
            return
        connection = self._connect()
        keys = contexts[0].partition.keys
        try:
            with connection as client:
                for context in contexts:
                    values = dict(strict_zip(keys, catalog_values(context.spec, context.values)))
                    client.markPartitionForEvent(self.database, self.table, values, LOAD_DONE)
        except ttypes.UnknownTableException:
            raise MetastoreError(
                f"table {self.name} does not exist in the metastore, so no partition of it can "
                "be marked done; create it or fix the database/table name"
            ) from None
        except (TException, OSError) as exc:
            raise MetastoreError(
                f"marking {len(contexts)} partition(s) of {self.name} done in the metastore "
                f"failed ({type(exc).__name__}: {exc}); nothing after the mark-event policy "
                "ran, and a retry marks them again safely"
            ) from exc
