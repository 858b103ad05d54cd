"""What one compaction run did: per partition and in all, however the run was launched.

A run happens in a spark-submit driver, in this process against a Spark Connect server,
or here without Spark when there is nothing to compact; the CLI, the operator's hook and
the benchmarks read the same :class:`CompactionSummary` back from each (the spark-submit
driver stores it in the table's ledger as :meth:`CompactionSummary.to_dict`). Whether a
run failed, and the one message that says why, are decided here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_fscommit.core.compat import StrEnum


class CompactionState(StrEnum):
    """What one run did to one partition's staged files."""

    PUBLISHED = "published"  # compacted and published under its visible names
    UP_TO_DATE = "up-to-date"  # everything committed in staging is published already
    EMPTY = "empty"  # no committed files at all (a commit may still mark it done)
    EXPIRED = "expired"  # partition expiration retired it: never published again
    FAILED = "failed"  # nothing of this run was published; a rerun does it


@dataclass(frozen=True)
class PartitionResult:
    """What one run did to one partition: its plan's size in and out, and any error."""

    partition: str
    state: CompactionState
    seq: int | None = None  # the plan's number in the partition's ledger; None: no plan
    files_in: int = 0
    bytes_in: int = 0
    files_out: int = 0
    bytes_out: int = 0
    rows: int = 0
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.state == CompactionState.FAILED

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "state": self.state.value,
            "seq": self.seq,
            "files_in": self.files_in,
            "bytes_in": self.bytes_in,
            "files_out": self.files_out,
            "bytes_out": self.bytes_out,
            "rows": self.rows,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> PartitionResult:
        return cls(**{**document, "state": CompactionState(document["state"])})


@dataclass(frozen=True)
class CompactionSummary:
    """The result of one run.

    ``error`` is set when the run stopped before it could work on partitions (executors
    below the floors, the table lock, the checkpoint, the store); a failed partition is
    one of ``outcomes``, the others being published. ``seconds`` is the protocol's run,
    once the executors are up; ``read_ahead_seconds`` the dry run done before (what the
    run plans from; no footer, since the units read their own): while a spark-submit's
    executors started, or the launcher's look for work that a run in its process
    continues (on Spark Connect, or with nothing for Spark).

    ``unchanged`` counts the partitions that needed nothing at all (every committed file
    published and their policies current, or dropped by expiration with nothing staged
    since): a year-old table has thousands, and a run lists only the partitions it had
    something to say about. A summary stored before this count listed them as
    ``up-to-date`` outcomes; it reads as it was written.
    """

    outcomes: Sequence[PartitionResult] = field(default_factory=tuple)
    seconds: float = 0.0
    read_ahead_seconds: float = 0.0
    error: str | None = None
    unchanged: int = 0

    @classmethod
    def stopped(cls, error: str) -> CompactionSummary:
        """A run that stopped before any partition: ``error`` says why."""
        return cls(error=error)

    @property
    def selected(self) -> bool:
        """Whether the run had any partition to look at (listed or counted)."""
        return bool(self.outcomes) or self.unchanged > 0

    @property
    def failed(self) -> bool:
        """Whether the run stopped or any partition failed."""
        return self.error is not None or any(o.failed for o in self.outcomes)

    def failure(self) -> str | None:
        """The message of a failed run: its error, or its first failed partition's."""
        if self.error is not None:
            return self.error
        failed = [o for o in self.outcomes if o.failed]
        if not failed:
            return None
        return (
            f"compaction failed for {len(failed)} partition(s), first "
            f"{failed[0].partition}: {failed[0].error}"
        )

    def total(self, name: str) -> int:
        """The sum over the partitions of ``files_in``, ``bytes_out``, ``rows``..."""
        return sum(getattr(o, name) for o in self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        """The summary as the operator returns it (XCom) and the ledger stores it."""
        if self.error is not None:
            return {"error": self.error, "partitions": []}
        return {
            "partitions": [o.to_dict() for o in self.outcomes],
            "unchanged": self.unchanged,
            **{name: self.total(name) for name in _TOTALS},
            "seconds": round(self.seconds, 3),
            "read_ahead_seconds": round(self.read_ahead_seconds, 3),
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> CompactionSummary:
        outcomes = tuple(PartitionResult.from_dict(p) for p in document.get("partitions", ()))
        return cls(
            outcomes=outcomes,
            seconds=document.get("seconds", 0.0),
            read_ahead_seconds=document.get("read_ahead_seconds", 0.0),
            error=document.get("error"),
            unchanged=document.get("unchanged", 0),
        )


_TOTALS = ("files_in", "files_out", "bytes_in", "bytes_out", "rows")


def unchanged_text(count: int) -> str:
    """How the CLI and the operator's log say ``count`` unchanged partitions."""
    return f"{count} partition(s) unchanged: nothing staged since their last commit or expiry"
