"""Partition commit policies (Flink's ``PartitionCommitPolicy``): make a partition visible.

After a partition's files are published, the policies named by
``sink.partition-commit.policy.kind`` run in the order given: ``metastore`` adds or alters
the Hive partition, ``mark-event`` marks it ``LOAD_DONE`` there, ``success-file`` writes a
marker, ``http-report`` POSTs it to an endpoint, ``custom`` runs a user class. Write a
custom policy by subclassing :class:`PartitionCommitPolicy`; it is built with the
``;``-separated ``policy.class.parameters`` as positional string arguments, and its
``commit`` gets a :class:`CommitContext` whose ``summary`` is a :class:`CommitSummary`
(both defined with the publisher, ``core.publish.published``, and importable from here).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.publish.published import (
    CommitBatch,
    CommitContext,
    CommitSummary,
    Receipts,
)

# A custom policy imports the types it is given from here, where it finds its base class.
__all__ = ["CommitBatch", "CommitContext", "CommitSummary", "PartitionCommitPolicy", "Receipts"]


class PartitionCommitPolicy(abc.ABC):
    """Commits partitions; must be idempotent (a rerun commits the same partition again).

    ``kind`` names the policy in ``sink.partition-commit.policy.kind``; the ledger keeps
    what its ``commit_all`` says of a partition (:data:`Receipts`) under it.
    """

    kind: str = PolicyKind.CUSTOM

    @abc.abstractmethod
    def commit(self, context: CommitContext) -> None:
        """Make one partition visible."""

    def commit_all(self, contexts: Sequence[CommitContext]) -> Receipts | None:
        """Make a run's partitions visible; a policy overrides it to batch its calls (and may
        return what the ledger should keep of each, :data:`Receipts`). A committer hands it
        a :class:`CommitBatch`: the partitions' contexts with the table's completeness
        beside them (``as_batch(contexts).completeness``)."""
        for context in contexts:
            self.commit(context)
        return None
