"""Partition commit policies (Flink's ``PartitionCommitPolicy``): make a partition visible.

After a partition's files are published, the policies named by
``sink.partition-commit.policy.kind`` run in the order given: ``metastore`` adds or alters
the Hive partition, ``mark-event`` marks it ``LOAD_DONE`` there, ``success-file`` writes a
marker, ``http-report`` POSTs it to an endpoint, ``custom`` runs a user class. Write a
custom policy by subclassing :class:`PartitionCommitPolicy`; it is built with the
``;``-separated ``policy.class.parameters`` as positional string arguments.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec


@dataclass(frozen=True)
class CommitContext:
    """What a policy knows about the partition it commits."""

    spec: TableSpec
    partition: PartitionSpec
    path: str
    location: str
    summary: dict[str, Any] = field(default_factory=dict)
    origin: Mapping[str, Any] | None = None  # the Airflow task committing (dag_id, run_id, ...)
    files: tuple[str, ...] = ()  # the published files' names in the partition directory

    @property
    def values(self) -> tuple[str | None, ...]:
        return self.partition.values


class PartitionCommitPolicy(abc.ABC):
    """Commits partitions; must be idempotent (a rerun commits the same partition again)."""

    @abc.abstractmethod
    def commit(self, context: CommitContext) -> None:
        """Make one partition visible."""

    def commit_all(self, contexts: Sequence[CommitContext]) -> None:
        """Make many partitions visible; a policy overrides it to batch its calls."""
        for context in contexts:
            self.commit(context)
