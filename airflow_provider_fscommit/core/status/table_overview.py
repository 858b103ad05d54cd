"""Every table at a glance: one line per table spec file, for a team running many streams.

``fscommit status --specs 'specs/*.yaml'`` and the status page's front page show the same
lines, read here: which spec files the patterns name, each table's report (or the error
that stopped reading it: one table's trouble never hides the others), and the few facts
an operator scans forty tables for (watermark and lag, how many partitions wait, may be
committed, are committed or in error, the oldest one not committed, the published
complete-through, a stalled stream).
"""

from __future__ import annotations

import glob
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from airflow_provider_fscommit.core.config.quantities import iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.status.committable import PartitionState
from airflow_provider_fscommit.core.status.completeness import (
    TableCompleteness,
    read_completeness,
)
from airflow_provider_fscommit.core.status.table_report import (
    PartitionReport,
    TableReport,
    read_table_report,
)

log = logging.getLogger(__name__)

# The overview's columns of partition states: committed once or again is "committed";
# late data waits for a commit as a committable partition does.
_WORK = (PartitionState.COMMITTABLE, PartitionState.LATE_DATA)
_DONE = (PartitionState.COMMITTED, PartitionState.RECOMMITTED)
_NOT_COMMITTED = (PartitionState.PENDING, *_WORK, PartitionState.ERROR)


@dataclass(frozen=True)
class TableEntry:
    """One configured table: its report and completeness, or why it could not be read."""

    name: str
    spec_file: str
    report: TableReport | None = None
    error: str | None = None
    completeness: TableCompleteness | None = None

    def count(self, *states: PartitionState) -> int:
        if self.report is None:
            return 0
        counts = self.report.counts()  # the settled partitions' too
        return sum(counts.get(s.value, 0) for s in states)

    @property
    def pending(self) -> int:
        return self.count(PartitionState.PENDING)

    @property
    def committable(self) -> int:
        """Partitions a commit run would commit now (late data included)."""
        return self.count(*_WORK)

    @property
    def committed(self) -> int:
        return self.count(*_DONE)

    @property
    def errors(self) -> int:
        """Partitions in error, or 1 when the table itself could not be read."""
        if self.report is None:
            return 1
        return self.count(PartitionState.ERROR) + (1 if self.report.ledger_error else 0)

    @property
    def oldest_uncommitted(self) -> PartitionReport | None:
        """The earliest partition (by commit time, then path) not committed yet."""
        if self.report is None:
            return None
        waiting = [p for p in self.report.partitions if p.state in _NOT_COMMITTED]
        return (
            min(waiting, key=lambda p: (p.commit_time_ms is None, p.commit_time_ms, p.partition))
            if waiting
            else None
        )

    def to_dict(self) -> dict[str, Any]:
        """The line as ``fscommit status --specs --json`` and the page's JSON give it."""
        report = self.report
        oldest = self.oldest_uncommitted
        watermark = report.status.checkpoint.watermark_ms if report else None
        lag = report.watermark_lag_ms if report else None
        published = self.completeness.published if self.completeness else None
        through = published.complete_through_ms if published else None
        return {
            "name": self.name,
            "spec_file": self.spec_file,
            "error": self.error,
            "watermark_ms": watermark,
            "watermark": iso_ms(watermark),
            "watermark_lag_s": None if lag is None else lag / 1000,
            "stalled": report.stalled if report else None,
            "pending": self.pending,
            "committable": self.committable,
            "committed": self.committed,
            "errors": self.errors,
            "oldest_uncommitted": oldest.partition if oldest else None,
            "complete_through_ms": through,
            "complete_through": iso_ms(through),
        }


def spec_files(patterns: Sequence[str]) -> list[str]:
    """The spec files the patterns name, in order; a pattern matching nothing is kept
    as it is, so its line says the file is missing rather than silently vanishing."""
    files: list[str] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else []
        for path in matches or [pattern]:
            if path not in files:
                files.append(path)
    return files


def read_tables(
    patterns: Sequence[str],
    stall_timeout: timedelta,
    now_ms: int | None = None,
    shared: bool = False,
    storage: Callable[[], AbstractContextManager[Any]] = nullcontext,
    list_settled: bool = True,
) -> list[TableEntry]:
    """One entry per spec file the patterns name: its report, or the error reading it.

    ``shared`` keeps sink-log snapshots between calls (a long-lived server's reads);
    ``storage`` is entered around each table's reading (an Airflow AWS connection's
    settings), so a connection that fails shows on each line, not as a failed page.
    ``list_settled=False``: each report counts its settled partitions (a line per table
    shows counts, never a partition that is settled; the page's cards list them all).
    """
    entries = []
    for path in spec_files(patterns):
        name = Path(path).stem
        try:
            spec = TableSpec.from_file(path)
            with storage():
                report = read_table_report(
                    spec, stall_timeout, now_ms=now_ms, shared=shared, list_settled=list_settled
                )
                completeness = read_completeness(report)
        except FsCommitError as exc:
            entries.append(TableEntry(name, path, error=str(exc)))
        except Exception as exc:
            # Storage clients raise all kinds of errors (permissions, network); one table's
            # trouble must not take every other table's line down with it.
            log.exception("cannot read the table of %s", path)
            entries.append(TableEntry(name, path, error=f"{type(exc).__name__}: {exc}"))
        else:
            entries.append(TableEntry(name, path, report=report, completeness=completeness))
    return entries
