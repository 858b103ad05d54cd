"""Partition commit policies (Flink's ``PartitionCommitPolicy``): make a partition visible.

After a partition's files are published, the policies named by
``sink.partition-commit.policy.kind`` run in the order given: ``metastore`` adds or alters
the Hive partition, ``mark-event`` marks it ``LOAD_DONE`` there, ``success-file`` writes a
marker, ``http-report`` POSTs it to an endpoint, ``custom`` runs a user class. Write a
custom policy by subclassing :class:`PartitionCommitPolicy`; it is built with the
``;``-separated ``policy.class.parameters`` as positional string arguments, and its
``commit`` gets a :class:`CommitContext` whose ``summary`` is a :class:`CommitSummary`.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec


@dataclass(frozen=True)
class CommitSummary(Mapping[str, Any]):
    """The commit facts of a partition: everything published for it so far, and when.

    What the policies report: the metastore's partition statistics (``files``, ``bytes``,
    ``rows``) and ``fscommit.*`` parameters, the HTTP report's document, the success
    file's record; the ledger keeps it with each commit. :meth:`to_dict` is its JSON form
    in all of those (and in the commit outcomes of XCom and ``fscommit commit --json``).

    It is also a read-only mapping of those same keys, so a custom policy written when
    the summary was a ``dict`` (``context.summary["rows"]``) reads it unchanged.
    """

    files: int  # published files of the partition (every compaction's outputs)
    bytes: int
    rows: int
    watermark_ms: int | None  # the watermark the latest compaction was planned at
    max_batch_id: int | None  # the sink log's latest batch then
    compaction_seq: int | None  # the latest compaction's seq; None: committed empty
    committed_at_ms: int
    format: FileFormat | None  # the staged files' format (None: nothing published)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "bytes": self.bytes,
            "rows": self.rows,
            "watermark_ms": self.watermark_ms,
            "max_batch_id": self.max_batch_id,
            "compaction_seq": self.compaction_seq,
            "committed_at_ms": self.committed_at_ms,
            "format": self.format.value if self.format is not None else None,
        }

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())


@dataclass(frozen=True)
class CommitContext:
    """What a policy knows about the partition it commits."""

    spec: TableSpec
    partition: PartitionSpec
    path: str
    location: str
    summary: CommitSummary
    origin: Mapping[str, Any] | None = None  # the Airflow task committing (dag_id, run_id, ...)
    files: tuple[str, ...] = ()  # the published files' names in the partition directory

    @property
    def values(self) -> tuple[str | None, ...]:
        return self.partition.values


#: What a policy's ``commit_all`` may say of the partitions it committed, by path (e.g. the
#: Iceberg snapshot that holds them): the committer keeps it in each one's policy record.
Receipts = Mapping[str, Mapping[str, Any]]


class PartitionCommitPolicy(abc.ABC):
    """Commits partitions; must be idempotent (a rerun commits the same partition again)."""

    @abc.abstractmethod
    def commit(self, context: CommitContext) -> None:
        """Make one partition visible."""

    def commit_all(self, contexts: Sequence[CommitContext]) -> Receipts | None:
        """Make many partitions visible; a policy overrides it to batch its calls (and may
        return what the ledger should keep of each, :data:`Receipts`)."""
        for context in contexts:
            self.commit(context)
        return None
