"""A published partition: the facts every commit policy and catalog is given about it.

The publisher makes a partition's files visible; what it published (its
:class:`CommitSummary`), where (its location and file names) and for whom (the Airflow task
committing) is a :class:`CommitContext`. The policies of one run get their partitions
together as a :class:`CommitBatch`, with the table's completeness as it stands once they
are committed (Flink's ``PartitionCommitPolicy.Context``): a catalog that commits a
table's parameters with its data (an Iceberg transaction) writes both at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.ledger.table_state import PartitionSummary
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


@dataclass(frozen=True)
class CommitBatch(Sequence[CommitContext]):
    """The partitions one run commits, handed to every policy of the chain at once.

    A sequence of their contexts, so a policy written against ``commit_all(contexts)``
    iterates it unchanged. ``completeness`` holds the table parameters the run publishes
    once these partitions are committed (``status.completeness``): computed once per run,
    before the policies, and never lower than what a catalog already holds; None when the
    table's state could not be read (the committer says why in its log).
    """

    contexts: tuple[CommitContext, ...]
    completeness: Mapping[str, str] | None = None

    @overload
    def __getitem__(self, index: int) -> CommitContext: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[CommitContext]: ...

    def __getitem__(self, index: int | slice) -> CommitContext | Sequence[CommitContext]:
        return self.contexts[index]

    def __len__(self) -> int:
        return len(self.contexts)


def as_batch(contexts: Sequence[CommitContext]) -> CommitBatch:
    """``contexts`` as a batch: the batch itself, or a plain sequence (a policy called
    directly, outside a committer's run) as a batch without a completeness."""
    return contexts if isinstance(contexts, CommitBatch) else CommitBatch(tuple(contexts))


#: What a policy's ``commit_all`` may say of the partitions it committed, by path (e.g. the
#: Iceberg snapshot that holds them). The committer keeps each under the policy's kind in the
#: partition's policy record; nothing below the policy reads inside it.
Receipts = Mapping[str, Mapping[str, Any]]


def commit_summary(recorded: PartitionSummary, committed_at_ms: int) -> CommitSummary:
    """The commit facts of everything published for a partition so far (maybe nothing)."""
    return CommitSummary(
        files=recorded.published_files,
        bytes=recorded.published_bytes,
        rows=recorded.published_rows,
        watermark_ms=recorded.watermark_ms,
        max_batch_id=recorded.max_batch_id,
        compaction_seq=recorded.latest_commit,
        committed_at_ms=committed_at_ms,
        format=FileFormat(recorded.format) if recorded.format else None,
    )
