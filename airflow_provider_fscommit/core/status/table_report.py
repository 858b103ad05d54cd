"""The table report: the stream's progress and every partition's commit state, in one view.

``TableStatus`` knows what the stream wrote and what the trigger allows; the ledger knows
what was published and committed, and by whom. A person (``fscommit status``) and the
status page in the Airflow UI both need the two merged, with the same states
(``PartitionState``: the ledger adds committed, late-data, re-committed and expired to
what the trigger tells), so they are merged once, here.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from airflow_provider_fscommit.core.compat import StrEnum, strict_zip
from airflow_provider_fscommit.core.config.quantities import format_duration, iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import LedgerError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.ledger.table_state import (
    PartitionSummary,
    RowFacts,
    TableState,
)
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.status.committable import (
    PartitionState,
    PartitionStatus,
    TableStatus,
    TableStatusReader,
)
from airflow_provider_fscommit.core.status.partition_wait import is_stalled, progress_since_ms
from airflow_provider_fscommit.core.status.table_watch import table_watch
from airflow_provider_fscommit.core.status.work import (
    EVERY_STEP,
    PUBLISHING,
    Work,
    answered_by_summary,
    partition_work,
)
from airflow_provider_fscommit.core.storage.object_store import explain, store_errors

# The sensor has no default stall timeout; a page needs one to say "stalled" at all.
DEFAULT_STALL_TIMEOUT = timedelta(minutes=30)
#: How long a published partition's policies may be unfinished before a person must look:
#: a DAG run commits moments after it compacts, and a failed commit task is retried within
#: minutes, so a monitor that looks in between is told nothing it should act on.
POLICY_GRACE = timedelta(minutes=15)


@dataclass(frozen=True)
class CommitOrigin:
    """The Airflow task that committed a partition (absent for the CLI and old ledgers)."""

    dag_id: str
    run_id: str
    task_id: str | None = None

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> CommitOrigin | None:
        origin = record.get("origin")
        if not isinstance(origin, dict) or not origin.get("dag_id") or not origin.get("run_id"):
            return None
        return cls(str(origin["dag_id"]), str(origin["run_id"]), origin.get("task_id"))


@dataclass(frozen=True)
class PartitionReport:
    """One partition: what is staged, what is published, and its commits."""

    partition: str
    values: dict[str, str | None]
    state: PartitionState
    staged_files: int = 0
    staged_bytes: int = 0
    unpublished_files: int = 0
    quarantined_files: int = 0
    published_inputs: int = 0
    published_files: int = 0
    published_bytes: int = 0
    published_rows: int = 0
    # Published files from two or more compactions, more than one compaction of their
    # bytes makes, or no longer sorted across (:mod:`fragmentation`): how many one makes.
    fragmented: bool = False
    one_compaction_files: int = 0
    commits: int = 0
    commit_time_ms: int | None = None
    last_commit_ms: int | None = None
    last_origin: CommitOrigin | None = None
    published_ms: int | None = None  # when its latest compaction was published
    # What the policies of its latest commit said of it, by policy kind (:data:`Receipts`)
    receipts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    expired_ms: int | None = None
    error: str | None = None
    work: Work = Work.NONE  # what a run would do for it (:mod:`.work`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "values": self.values,
            "state": self.state.value,
            # "files"/"bytes" are the staged ones, as `fscommit status --json` always said.
            "files": self.staged_files,
            "bytes": self.staged_bytes,
            "unpublished_files": self.unpublished_files,
            "quarantined_files": self.quarantined_files,
            "published_inputs": self.published_inputs,
            "published_files": self.published_files,
            "published_bytes": self.published_bytes,
            "published_rows": self.published_rows,
            "fragmented": self.fragmented,
            "one_compaction_files": self.one_compaction_files,
            "commits": self.commits,
            "commit_time_ms": self.commit_time_ms,
            "commit_time": iso_ms(self.commit_time_ms),
            "last_commit_ms": self.last_commit_ms,
            "last_commit": iso_ms(self.last_commit_ms),
            "published_ms": self.published_ms,
            "published": iso_ms(self.published_ms),
            "committed_by": (
                None
                if self.last_origin is None
                else {
                    "dag_id": self.last_origin.dag_id,
                    "run_id": self.last_origin.run_id,
                    "task_id": self.last_origin.task_id,
                }
            ),
            "receipts": {kind: dict(receipt) for kind, receipt in self.receipts.items()},
            "expired_ms": self.expired_ms,
            "expired": iso_ms(self.expired_ms),
            "error": self.error,
            "work": self.work.names,
        }


#: A partition's path, its state and the error that put it in error (if so).
StateRow = tuple[str, PartitionState, "str | None"]


@dataclass(frozen=True)
class PartitionStates:
    """Every partition's state at one moment, and no more: what the completeness step
    needs of a report. A commit run asks it of every partition of the table; a full
    report row each (values, fragmentation, receipts) cost a year-old table's no-op
    commit ~60 ms of its ~0.5 s."""

    status: TableStatus
    states: list[StateRow]  # sorted by path
    ledger_error: str | None = None

    @property
    def spec(self) -> TableSpec:
        return self.status.spec


@dataclass(frozen=True)
class SettledPartitions:
    """The partitions a report counts without a row each: the table state settles each
    whole (no run has a step for it, :func:`.work.settled_as`), and none is
    fragmented (a person is told what becomes of those). Of a year-old table a person is
    shown what changed, as ``git status`` lists no unchanged file; their states
    (committed, re-committed or expired) still count, and the completeness reads them."""

    states: list[StateRow] = field(default_factory=list)  # sorted by path

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(path for path, _, _ in self.states)


@dataclass(frozen=True)
class TableReport:
    """A table at one moment: the stream's progress and every partition's state.

    ``partitions``: a row per partition, except those ``settled`` counts (none unless the
    report was read without them, :func:`read_table_report`).
    """

    status: TableStatus
    partitions: list[PartitionReport]
    stall_timeout: timedelta
    progress_since_ms: int | None
    ledger_error: str | None = None
    settled: SettledPartitions = field(default_factory=SettledPartitions)

    @property
    def spec(self) -> TableSpec:
        return self.status.spec

    @property
    def now_ms(self) -> int:
        return self.status.now_ms

    @property
    def watermark_lag_ms(self) -> int | None:
        """How far the safe watermark is behind the wall clock (None without one)."""
        watermark = self.status.checkpoint.watermark_ms
        return None if not watermark else self.now_ms - watermark

    @property
    def last_batch_ms(self) -> int | None:
        return self.status.checkpoint.last_commit_time_ms

    @property
    def stalled(self) -> bool:
        """No watermark progress (or no batch, without a watermark) for the stall timeout."""
        return is_stalled(self.progress_since_ms, self.stall_timeout, self.now_ms)

    def in_state(self, state: PartitionState) -> list[PartitionReport]:
        """The listed partitions in ``state`` (:meth:`counts` counts the settled too)."""
        return [p for p in self.partitions if p.state == state]

    @property
    def partition_count(self) -> int:
        """Every partition of the table, the settled ones included."""
        return len(self.partitions) + len(self.settled.states)

    @property
    def unfinished_policies(self) -> list[PartitionReport]:
        """Published partitions whose policies have not all committed the publication
        (a policy failed, or a run died between publishing and committing); none for a
        table whose spec names no policy (it is only compacted)."""
        if not self.spec.policy_kind:
            return []
        return [
            p
            for p in self.partitions
            if p.work & Work.COMMIT and not p.work & PUBLISHING and p.published_files
        ]

    @property
    def attention(self) -> list[str]:
        """What a person must look at, one line each (none: all is well): a stalled
        stream, partitions in error, an unreadable ledger, orphan files of failed batches,
        unfinished policies. ``fscommit status`` exits "attention needed" for any, and
        every table of ``status --specs`` is judged alike."""
        reasons = []
        if self.stalled:
            reasons.append(
                f"the stream is stalled: no progress since {iso_ms(self.progress_since_ms)}"
            )
        errors = self.in_state(PartitionState.ERROR)
        if errors:
            reasons.append(f"{len(errors)} partition(s) in error, e.g. {errors[0].partition}")
        if self.ledger_error:
            reasons.append(self.ledger_error)
        orphans = self.status.orphan_files
        if orphans:
            reasons.append(f"{len(orphans)} orphan file(s) of failed batches in staging")
        overdue = self.overdue_policies
        if overdue:
            reasons.append(
                f"{len(overdue)} partition(s) published with policies unfinished for more "
                f"than {format_duration(POLICY_GRACE)}, e.g. {overdue[0].partition} (a commit "
                "run finishes them)"
            )
        return reasons

    @property
    def overdue_policies(self) -> list[PartitionReport]:
        """The unfinished policies left longer than :data:`POLICY_GRACE` (or since a
        time the ledger does not say, as a release before recorded it)."""
        since = self.now_ms - int(POLICY_GRACE.total_seconds() * 1000)
        return [
            p for p in self.unfinished_policies if p.published_ms is None or p.published_ms <= since
        ]

    @property
    def fragmented_outlook(self) -> str:
        """What becomes of the table's fragmented partitions, and why."""
        file_format = self.status.file_format[0]
        if file_format is not None and file_format.is_lines:
            return "they stay so: line files are concatenated once, not compacted again"
        if self.spec.rewrites_fragmented:
            return "the next compaction run compacts them again"
        return (
            "they stay so: compacting them again needs compaction.rewrite-fragmented and a "
            "catalog policy that shows readers the new files at once (one that switches a "
            "partition's location atomically: metastore, glue; or an Iceberg snapshot)"
        )

    def states(self) -> PartitionStates:
        """Every partition's state alone, the settled ones included."""
        rows = [(p.partition, p.state, p.error) for p in self.partitions]
        return PartitionStates(self.status, _with_settled(rows, self.settled), self.ledger_error)

    def counts(self) -> dict[str, int]:
        """Partitions per state, the settled ones included, in life-cycle order, only
        states that occur."""
        counted = Counter(p.state for p in self.partitions)
        counted.update(state for _, state, _ in self.settled.states)
        return {s.value: counted[s] for s in PartitionState if counted[s]}

    def to_dict(self) -> dict[str, Any]:
        return self.status.to_dict() | {
            "table_path": self.spec.table_path,
            "watermark_lag_s": _seconds(self.watermark_lag_ms),
            "stalled": self.stalled,
            "stall_timeout_s": self.stall_timeout.total_seconds(),
            "progress_since": iso_ms(self.progress_since_ms),
            "states": self.counts(),
            "attention": self.attention,
            "partitions": [p.to_dict() for p in self.partitions],
            "fragmented_outlook": self.fragmented_outlook,
            "ledger_error": self.ledger_error,
        }


@store_errors
class OrphanSearch(StrEnum):
    """Where a report looks for staged files the sink log does not list (or lost)."""

    NONE = "none"
    #: In the partitions not committed yet (late data included): what a routine look
    #: needs, at a cost that does not grow with the table's age.
    UNCOMMITTED = "uncommitted"
    #: The whole staging directory: committed partitions too, and folders the log does not
    #: name yet (a request per 1,000 files on S3).
    ALL = "all"


# Committed and settled (or gone): no file of theirs is waiting to be published.
_SETTLED_STATES = frozenset(
    {PartitionState.COMMITTED, PartitionState.RECOMMITTED, PartitionState.EXPIRED}
)


@store_errors
def read_table_report(
    spec: TableSpec,
    stall_timeout: timedelta = DEFAULT_STALL_TIMEOUT,
    now_ms: int | None = None,
    orphans: OrphanSearch = OrphanSearch.UNCOMMITTED,
    shared: bool = False,
    reader: TableStatusReader | None = None,
    status: TableStatus | None = None,
    list_settled: bool = True,
) -> TableReport:
    """Read the stream's status and the ledger (when the spec has a table path) together.

    Read-only. The checkpoint and sink log are read first, then the ledger, so a commit
    that lands in between shows as committed rather than as a partition gone missing.
    ``shared``: read through this process's watch of the table (incrementally, as a
    long-lived process such as the api-server should), else through ``reader`` (one the
    caller read the stream with already) or afresh. ``status``: what ``reader`` read of the
    stream already (without orphans), for a caller that looked at it moments ago (the
    committer): the report is of that look. ``list_settled=False``: the partitions the
    table state settles whole are counted (:class:`SettledPartitions`), neither judged by
    the trigger nor given a row, so what it costs follows what changed, not the table's
    age (``fscommit status`` without ``--all``); the table state is then read first, to
    tell them apart.
    """
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    if not shared:
        reader = reader or TableStatusReader(spec)
        return _report(spec, reader, stall_timeout, now_ms, orphans, status, list_settled)
    watch = table_watch(spec)
    with watch.lock:
        return _report(
            spec, watch.status_reader(), stall_timeout, now_ms, orphans, list_settled=list_settled
        )


@store_errors
def read_partition_states(
    spec: TableSpec,
    status: TableStatus,
    now_ms: int,
    settled: SettledPartitions | None = None,
) -> PartitionStates:
    """Every partition's state as :func:`read_table_report` would report it, from
    ``status`` (a look at the stream moments ago) and the ledger; ``settled``: the
    partitions :func:`read_unsettled` left out of ``status``, their states known."""
    ledger, error = _ledger(spec)
    if ledger is None:
        rows = [(p.staged.path, p.state, p.error) for p in status.partitions]
        return PartitionStates(status, rows, error)
    settled = settled or SettledPartitions()
    rows = [
        (
            path,
            partition_state(found, recorded or _NOTHING_RECORDED),
            found.error if found else None,
        )
        if failed is None
        else (path, PartitionState.ERROR, failed)
        for path, found, recorded, _, failed in _merged(
            spec, status, now_ms, *ledger, settled.paths
        )
    ]
    return PartitionStates(status, _with_settled(rows, settled))


def _report(
    spec: TableSpec,
    reader: TableStatusReader,
    stall_timeout: timedelta,
    now_ms: int,
    orphans: OrphanSearch,
    status: TableStatus | None = None,
    list_settled: bool = True,
) -> TableReport:
    settled = SettledPartitions()
    if list_settled or status is not None:
        if status is None or orphans is OrphanSearch.ALL:
            status = reader.read(now_ms=now_ms, find_orphans=orphans is OrphanSearch.ALL)
        ledger, error = _ledger(spec)  # after the stream: a commit meanwhile shows committed
    else:
        # The state first, to tell the settled partitions apart before the stream is judged:
        # a commit meanwhile shows its partition as committable until the next look.
        ledger, error = _ledger(spec)
        if ledger is None:
            status = reader.read(now_ms=now_ms, find_orphans=orphans is OrphanSearch.ALL)
        else:
            status, settled = read_unsettled(reader, ledger[1], now_ms)
            if orphans is OrphanSearch.ALL:
                status = reader.with_orphans(status)
    since = progress_since_ms(status.checkpoint, reader.checkpoint)
    if ledger is None:
        partitions = [_from_status(p) for p in status.partitions]
    else:
        partitions = [
            _merge(spec, path, found, recorded, work)
            if failed is None
            else _errored(spec, path, found, failed)
            for path, found, recorded, work, failed in _merged(
                spec, status, now_ms, *ledger, settled.paths
            )
        ]
    if orphans is OrphanSearch.UNCOMMITTED:
        unsettled = [p.partition for p in partitions if p.state not in _SETTLED_STATES]
        status = reader.with_orphans(status, unsettled)
    return TableReport(status, partitions, stall_timeout, since, error, settled)


def _ledger(spec: TableSpec) -> tuple[tuple[CommitLedger, TableState] | None, str | None]:
    """The table's ledger and its state; None without a ledger to consult, and why it
    could not be read (if so): then the stream alone tells."""
    if not spec.table_path:
        return None, None
    try:
        ledger = CommitLedger(spec.table_path)
        return (ledger, ledger.state()), None
    except (OSError, LedgerError) as exc:
        # An unreachable table directory or a damaged table state must not hide what the
        # stream says.
        reason = explain(exc) or exc if isinstance(exc, OSError) else exc
        return None, f"cannot read the ledger of {spec.table_path}: {reason}"


def read_unsettled(
    reader: TableStatusReader, state: TableState, now_ms: int
) -> tuple[TableStatus, SettledPartitions]:
    """The stream's status (without orphans) of the partitions ``state`` does not settle
    whole, and those it does, with their states: what a run judges, and what it counts.
    The report read without the settled partitions and the committer split them alike."""
    status, settled = reader.read_unsettled(state, now_ms, list_fragmented=True)
    paths = sorted(path for path, fragmented in settled.items() if not fragmented)
    rows: list[StateRow] = [
        (path, found, None) for path, found in strict_zip(paths, settled_states(state, paths))
    ]
    return status, SettledPartitions(rows)


def _with_settled(rows: list[StateRow], settled: SettledPartitions) -> list[StateRow]:
    """``rows`` (sorted by path) and the settled partitions' together, sorted by path."""
    if not settled.states:
        return rows
    return list(heapq.merge(rows, settled.states, key=_path))


def _path(row: StateRow) -> str:
    return row[0]


#: Each partition of the stream or the ledger: its path, its staged files' status (None:
#: none staged), its summary (None: no records), its work and why its records could not
#: be read (if so).
_Merged = tuple[str, "PartitionStatus | None", "PartitionSummary | None", Work, "str | None"]


def _merged(
    spec: TableSpec,
    status: TableStatus,
    now_ms: int,
    ledger: CommitLedger,
    state: TableState,
    settled: frozenset[str] = frozenset(),
) -> Iterator[_Merged]:
    """Every partition's facts but the ``settled`` ones', sorted by path.

    A partition the table state finds work for is reported from its records, which the
    state may lag (:func:`.work.answered_by_summary`): the report says what a run would do.
    """
    staged = {p.staged.path: p for p in status.partitions}
    for path in sorted((set(staged) | set(state.partitions) | set(state.errors)) - settled):
        found = staged.get(path)
        recorded = state.get(path)
        files = found.staged.files if found else None
        committable = found is not None and found.state is PartitionState.COMMITTABLE
        work = partition_work(spec, path, recorded, files, now_ms, committable)
        try:
            if path in state.errors:
                raise LedgerError(state.errors[path])
            if recorded is not None and not answered_by_summary(work, recorded, EVERY_STEP):
                recorded = ledger.look(path, state).summary()
                work = partition_work(spec, path, recorded, files, now_ms, committable)
        except LedgerError as exc:
            yield path, found, recorded, work, str(exc)
            continue
        yield path, found, recorded, work, None


def _from_status(status: PartitionStatus) -> PartitionReport:
    """A partition without a ledger to consult: the trigger's verdict only."""
    return PartitionReport(
        partition=status.staged.path,
        values=status.staged.spec.as_dict(),
        state=status.state,
        staged_files=status.staged.files,
        staged_bytes=status.staged.bytes,
        unpublished_files=status.staged.files,
        commit_time_ms=status.commit_time_ms,
        error=status.error,
    )


def _errored(
    spec: TableSpec, path: str, status: PartitionStatus | None, error: str
) -> PartitionReport:
    return PartitionReport(
        partition=path,
        values=_values(spec, path),
        state=PartitionState.ERROR,
        staged_files=status.staged.files if status else 0,
        staged_bytes=status.staged.bytes if status else 0,
        error=error,
    )


def _merge(
    spec: TableSpec,
    path: str,
    status: PartitionStatus | None,
    recorded: PartitionSummary | None,
    work: Work,
) -> PartitionReport:
    """A partition's report from its staged files and its summary in the table state."""
    recorded = recorded or _NOTHING_RECORDED
    staged_files = status.staged.files if status else 0
    unpublished = _unpublished(status, recorded)
    state = partition_state(status, recorded)
    published = (recorded.published_files, recorded.published_bytes, recorded.published_rows)
    if state is PartitionState.EXPIRED:
        published = (0, 0, 0)  # its published files are deleted
    fragmentation = recorded.fragmentation(spec.compaction_file_size)
    fragmented = state != PartitionState.EXPIRED and fragmentation.fragmented(
        bool(spec.sort_columns)
    )
    return PartitionReport(
        partition=path,
        values=status.staged.spec.as_dict() if status else _values(spec, path),
        state=state,
        staged_files=staged_files,
        staged_bytes=status.staged.bytes if status else 0,
        unpublished_files=unpublished,
        quarantined_files=recorded.quarantined_files,
        published_inputs=recorded.published_inputs,
        published_files=published[0],
        published_bytes=published[1],
        published_rows=published[2],
        fragmented=fragmented,
        one_compaction_files=fragmentation.one_compaction if fragmented else 0,
        commits=recorded.policy_commits,
        commit_time_ms=status.commit_time_ms if status else None,
        last_commit_ms=recorded.last_commit_ms,
        last_origin=CommitOrigin.from_record({"origin": recorded.last_origin}),
        published_ms=recorded.published_ms,
        receipts=recorded.receipts or {},
        expired_ms=recorded.expired_at_ms,
        error=status.error if status else None,
        work=work,
    )


_NOTHING_RECORDED = PartitionSummary()


def partition_state(status: PartitionStatus | None, recorded: PartitionSummary) -> PartitionState:
    """A partition's state from its staged files' status (None: none staged) and its
    summary (an empty one: no records): the one rule of the report and the completeness."""
    if recorded.expired_at_ms is not None:
        return PartitionState.EXPIRED
    if status is not None and status.state is PartitionState.ERROR:
        return PartitionState.ERROR
    if not recorded.policy_commits:
        committable = status is not None and status.state is PartitionState.COMMITTABLE
        if committable or recorded.latest_commit is not None:
            return PartitionState.COMMITTABLE
        return PartitionState.PENDING
    if _unpublished(status, recorded) or not recorded.policies_current:
        return PartitionState.LATE_DATA
    if recorded.policy_commits > 1:
        return PartitionState.RECOMMITTED
    return PartitionState.COMMITTED


# partition_state's rule for a partition with nothing staged beyond its summary, as the
# conditions of settled_states's columns come (the last: none of them).
_BY_SUMMARY = (
    PartitionState.EXPIRED,
    PartitionState.COMMITTABLE,
    PartitionState.PENDING,
    PartitionState.LATE_DATA,
    PartitionState.RECOMMITTED,
    PartitionState.COMMITTED,
)
_STATE_FACTS = ("expired_at_ms", "latest_commit", "policy_commits", "policies_current")


def settled_states(state: TableState, paths: Sequence[str]) -> list[PartitionState]:
    """:func:`partition_state` of each of ``paths`` by its summary alone (a partition the
    state settles: nothing staged that it does not count), in order. A year-old table's
    thousands by the checkpoint's columns, without a summary made for each; a partition
    whose summary is not its row (``state.changed``) one at a time. Checked against
    :func:`partition_state` (``tests/core/status/test_settlement.py``)."""
    codes = [-1] * len(paths)
    checkpoint = state.columns
    if checkpoint is not None and checkpoint.rows and paths:
        facts = RowFacts(checkpoint, paths)
        if facts.has(_STATE_FACTS):
            commits = facts.number("policy_commits")
            uncommitted = commits == 0
            conditions = [
                facts.present("expired_at_ms"),
                uncommitted & facts.present("latest_commit"),
                uncommitted,
                ~facts.flag("policies_current"),
                commits > 1,
            ]
            chosen = np.select(conditions, range(len(conditions)), len(conditions))
            codes = np.where(facts.found, chosen, -1).tolist()
    changed = state.changed
    return [
        partition_state(None, state.partitions[path])
        if code < 0 or path in changed
        else _BY_SUMMARY[code]
        for path, code in strict_zip(paths, codes)
    ]


def _unpublished(status: PartitionStatus | None, recorded: PartitionSummary) -> int:
    """The staged files not settled yet (published or quarantined)."""
    return max((status.staged.files if status else 0) - recorded.settled_files, 0)


def _values(spec: TableSpec, path: str) -> dict[str, str | None]:
    return PartitionSpec.parse(path, spec.partition_keys, spec.partition_default_name).as_dict()


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)
