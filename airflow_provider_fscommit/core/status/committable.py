"""Committable partitions: the state of every partition of a staging table.

Data flows one way: checkpoint (safe watermark) → sink log (committed files per
partition) → commit trigger → state. The checkpoint is read *before* the sink log, so
the watermark a partition is judged by is never newer than the files seen for it.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.config.options import TriggerKind
from airflow_provider_fscommit.core.config.quantities import iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import CheckpointError, PartitionTimeError
from airflow_provider_fscommit.core.formats.file_format import FileFormat, table_format
from airflow_provider_fscommit.core.gc_pause import gc_paused
from airflow_provider_fscommit.core.ledger.table_state import TableState
from airflow_provider_fscommit.core.partition.partition_spec import PartitionGlob, PartitionSpec
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader, CheckpointState
from airflow_provider_fscommit.core.spark.sink_log import SinkLogSnapshot
from airflow_provider_fscommit.core.spark.staging import StagingPartition, StagingTable
from airflow_provider_fscommit.core.status.settlement import settled_partitions
from airflow_provider_fscommit.core.storage.object_store import store_errors


class PartitionState(StrEnum):
    """Where a partition stands in the commit life cycle: one vocabulary for every view.

    The staging table and the trigger alone tell ``pending``, ``committable`` and
    ``error`` (this module); the others need the ledger (``table_report``).
    """

    PENDING = "pending"  # the trigger's clock has not passed the commit time
    COMMITTABLE = "committable"  # it has, and nothing of the partition was committed
    COMMITTED = "committed"  # committed once, nothing new staged since
    LATE_DATA = "late-data"  # committed, and files staged since wait for the next run
    RECOMMITTED = "re-committed"  # committed more than once (late data), nothing new since
    EXPIRED = "expired"  # dropped by partition expiration; never published again
    ERROR = "error"  # no partition time, or an unreadable ledger


@dataclass(frozen=True)
class PartitionStatus:
    """One partition, its committed files and whether it may be committed."""

    staged: StagingPartition
    state: PartitionState
    commit_time_ms: int | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.staged.path,
            "values": self.staged.spec.as_dict(),
            "files": self.staged.files,
            "bytes": self.staged.bytes,
            "state": self.state.value,
            "commit_time_ms": self.commit_time_ms,
            "commit_time": iso_ms(self.commit_time_ms),
            "created_ms": self.staged.creation_time_ms,
            "last_file_ms": self.staged.last_modified_ms,
            "error": self.error,
        }


@dataclass(frozen=True)
class TableStatus:
    """A table's commit status at one moment."""

    spec: TableSpec
    checkpoint: CheckpointState
    sink_latest_batch: int | None
    now_ms: int
    partitions: list[PartitionStatus]
    snapshot: SinkLogSnapshot | None = None
    orphan_files: list[str] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)
    in_flight_files: list[str] = field(default_factory=list)

    @property
    def watermark_pending(self) -> bool:
        return watermark_pending(self.spec, self.checkpoint)

    @property
    def file_format(self) -> tuple[FileFormat | None, str | None]:
        """The staged files' format as their names give it, and any conflict with the spec."""
        if self.snapshot is None:
            return self.spec.format, None
        return table_format(self.snapshot.files["path"], self.spec.format)

    def in_state(self, state: PartitionState) -> list[PartitionStatus]:
        return [p for p in self.partitions if p.state == state]

    def find(self, partition: str) -> PartitionStatus | None:
        return next((p for p in self.partitions if p.staged.path == partition), None)

    def judge(self, partition: str) -> tuple[int | None, bool]:
        """Commit time and committability of any partition path (:func:`verdict`)."""
        return verdict(self.spec, partition, self.find(partition), self.checkpoint, self.now_ms)

    def to_dict(self) -> dict[str, Any]:
        cp = self.checkpoint
        file_format, format_error = self.file_format
        return {
            "staging_path": self.spec.staging_path,
            "checkpoint_path": self.spec.checkpoint_path,
            "trigger": self.spec.trigger,
            "format": file_format,
            "format_error": format_error,
            "latest_committed_batch": cp.latest_committed_batch,
            "latest_planned_batch": cp.latest_planned_batch,
            "watermark_ms": cp.watermark_ms,
            "watermark": iso_ms(cp.watermark_ms),
            "watermark_pending": self.watermark_pending,
            "next_batch_watermark_ms": cp.next_batch_watermark_ms,
            "last_batch_time_ms": cp.last_commit_time_ms,
            "last_batch_age_s": (
                None
                if cp.last_commit_time_ms is None
                else round((self.now_ms - cp.last_commit_time_ms) / 1000, 3)
            ),
            "sink_latest_batch": self.sink_latest_batch,
            "now_ms": self.now_ms,
            "partitions": [p.to_dict() for p in self.partitions],
            "orphan_files": self.orphan_files,
            "missing_files": self.missing_files,
            "in_flight_files": self.in_flight_files,
        }


@dataclass(frozen=True)
class TableLook:
    """The checkpoint, then the sink log, read at one moment: what a partition is judged by."""

    checkpoint: CheckpointState
    snapshot: SinkLogSnapshot
    now_ms: int


def watermark_pending(spec: TableSpec, checkpoint: CheckpointState) -> bool:
    """Batches are committed but the watermark ``partition-time`` waits for is still 0."""
    return (
        spec.trigger is TriggerKind.PARTITION_TIME
        and checkpoint.latest_committed_batch is not None
        and not checkpoint.watermark_advanced
    )


def verdict(
    spec: TableSpec,
    partition: str,
    status: PartitionStatus | None,
    checkpoint: CheckpointState,
    now_ms: int,
) -> tuple[int | None, bool]:
    """Commit time and committability of any partition path, staged files or not.

    ``status`` is the partition's, None when the stream wrote nothing to it (an idle
    hour): then it is judged by its time alone under ``partition-time``; ``process-time``
    and ``idle-time`` cannot judge it (no file to time). A path that does not match the
    partition keys raises ``PartitionPathError``; one whose time cannot be extracted,
    ``PartitionTimeError``.
    """
    if status is None:
        if spec.trigger is not TriggerKind.PARTITION_TIME:
            PartitionSpec.parse(partition, spec.partition_keys, spec.partition_default_name)
            return None, False
        return judge_by_time(spec, partition, checkpoint, now_ms)
    if status.error:
        raise PartitionTimeError(f"partition {partition} cannot be judged: {status.error}")
    return status.commit_time_ms, status.state == PartitionState.COMMITTABLE


def judge_by_time(
    spec: TableSpec, partition: str, checkpoint: CheckpointState, now_ms: int
) -> tuple[int, bool]:
    """``partition-time``'s verdict on ``partition`` from its path and the checkpoint.

    Under ``partition-time`` a partition's commit time is its partition time plus the
    delay, whatever its files: the safe watermark alone decides, so waiting needs the
    checkpoint, never the sink log (which grows with the stream's age).
    """
    keys, default = spec.partition_keys, spec.partition_default_name
    values = PartitionSpec.parse(partition, keys, default)
    trigger = spec.commit_trigger
    try:
        commit_time = trigger.commit_time_ms(values, 0)  # its error names the value
    except PartitionTimeError as exc:
        glob = PartitionGlob.parse(partition, keys, default)
        if glob is None:
            raise
        raise PartitionTimeError(
            f"{partition} has no single time: it leaves a key the partition time reads to "
            f"any value ({exc}); give every time key's value, '*' only for the others"
        ) from None
    return commit_time, trigger.is_committable(commit_time, checkpoint.watermark_ms, now_ms)


def check_ended(checkpoint: CheckpointState, sink_latest_batch: int | None) -> None:
    """Refuse end of input on a query that is still writing: a batch planned (an offset)
    without its commit, or a sink log batch newer than the last commit. Between batches a
    running query looks like a stopped one; the DAG that ran it knows which it is."""
    committed = checkpoint.latest_committed_batch
    planned = checkpoint.latest_planned_batch
    newer = None
    if planned is not None and (committed is None or planned > committed):
        newer = f"batch {planned} is planned (offsets/{planned}) without its commit"
    elif sink_latest_batch is not None and (committed is None or sink_latest_batch > committed):
        newer = (
            f"its sink log has batch {sink_latest_batch}, newer than its last commit {committed}"
        )
    if newer is not None:
        raise CheckpointError(
            f"sink.partition-commit.end-input is set but the query of {checkpoint.path} is "
            f"still writing: {newer}. End of input commits every partition once the query "
            "has stopped: run this after the task that runs the query (e.g. with "
            "trigger(availableNow=True)) has finished; a killed query must be restarted to "
            "finish its batch first"
        )


class TableStatusReader:
    """Reads a table's status; keep one per table to make repeated reads incremental."""

    def __init__(self, spec: TableSpec, checkpoint: CheckpointReader | None = None) -> None:
        self.spec = spec
        self.checkpoint = checkpoint or CheckpointReader(spec.checkpoint_path)
        self.staging = StagingTable(
            spec.staging_path, spec.partition_keys, spec.partition_default_name
        )
        # Partition path -> its status at the last read. A partition's time is extracted
        # again only when its files change, and an unchanged status is reused: sensors
        # poll tables of thousands of partitions every few seconds.
        self._statuses: dict[str, PartitionStatus] = {}
        # The last read's snapshot, trigger clock and verdicts: a read of the same snapshot
        # on the same clock (a run's dry run, its run, its committer and its completeness
        # step, on a partition-time table whose watermark did not move) judges nothing again.
        self._judged: tuple[SinkLogSnapshot, int | None, list[PartitionStatus]] | None = None

    @store_errors
    def read(self, now_ms: int | None = None, find_orphans: bool = True) -> TableStatus:
        """The state of every partition; ``find_orphans`` adds a listing of the whole
        staging directory (:meth:`with_orphans`)."""
        look = self.look(now_ms)
        checkpoint, snapshot = look.checkpoint, look.snapshot
        clock = self.spec.commit_trigger.clock_ms(checkpoint.watermark_ms, look.now_ms)
        judged = self._judged
        if judged is not None and judged[0] is snapshot and judged[1] == clock:
            partitions = list(judged[2])
        else:
            partitions = [
                self._judge(p, checkpoint, look.now_ms) for p in self.staging.partitions(snapshot)
            ]
            self._statuses = {p.staged.path: p for p in partitions}
            self._judged = (snapshot, clock, partitions)
        status = TableStatus(
            spec=self.spec,
            checkpoint=checkpoint,
            sink_latest_batch=snapshot.latest_batch,
            now_ms=look.now_ms,
            partitions=partitions,
            snapshot=snapshot,
        )
        return self.with_orphans(status) if find_orphans else status

    @store_errors
    def read_unsettled(
        self, state: TableState, now_ms: int | None = None, list_fragmented: bool = False
    ) -> tuple[TableStatus, dict[str, bool]]:
        """The status of the partitions ``state`` does not settle whole against the sink
        log, and those it does, each with whether it is fragmented (judged and in the
        status too with ``list_fragmented``, as a report lists them): a run judges what
        changed, not every partition of a year-old table. Without orphans."""
        look = self.look(now_ms)
        with gc_paused():  # a count and a verdict per partition: thousands of a year-old table
            counts = self.staging.counts(look.snapshot)
            settled = settled_partitions(self.spec, state, counts, look.now_ms)
            unsettled = counts.keys() - settled.keys()
            if list_fragmented:
                unsettled |= {path for path, fragmented in settled.items() if fragmented}
        partitions = [
            self._judge(p, look.checkpoint, look.now_ms)
            for p in self.staging.partitions(look.snapshot, only=unsettled)
        ]
        self._statuses.update((p.staged.path, p) for p in partitions)
        status = TableStatus(
            spec=self.spec,
            checkpoint=look.checkpoint,
            sink_latest_batch=look.snapshot.latest_batch,
            now_ms=look.now_ms,
            partitions=partitions,
            snapshot=look.snapshot,
        )
        return status, settled

    @store_errors
    def with_orphans(
        self, status: TableStatus, partitions: Collection[str] | None = None
    ) -> TableStatus:
        """``status`` with the files a listing of staging finds unlogged (orphans, or in
        flight) or gone, in ``partitions`` (None: the whole staging directory)."""
        assert status.snapshot is not None  # every read has one
        orphans = self.staging.orphans(status.snapshot, self._settle, partitions)
        return replace(
            status,
            orphan_files=orphans.orphan_files,
            missing_files=orphans.missing_files,
            in_flight_files=orphans.in_flight_files,
        )

    @store_errors
    def look(self, now_ms: int | None = None) -> TableLook:
        """The checkpoint, then the sink log (read incrementally), for judging partitions."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        checkpoint = self.checkpoint.read()
        snapshot = self.staging.snapshot()
        if self.spec.end_of_input:
            check_ended(checkpoint, snapshot.latest_batch)
        else:
            self._check_watermark(checkpoint, snapshot)
        return TableLook(checkpoint, snapshot, now_ms)

    def judge(self, look: TableLook, partition: str) -> tuple[int | None, bool]:
        """:func:`verdict` on one partition from ``look``, judging that partition only.

        What a sensor's poke and a trigger's poll need under ``process-time`` and
        ``idle-time``: the cost of a look must not grow with the table's age. A glob
        (``region=*/dt=…/hour=…``) is judged as every partition it matches.
        """
        spec = self.spec
        glob = PartitionGlob.parse(partition, spec.partition_keys, spec.partition_default_name)
        if glob is not None:
            return self._judge_glob(look, partition, glob)
        staged = self.staging.partition(look.snapshot, partition)
        status = None
        if staged is not None:
            status = self._judge(staged, look.checkpoint, look.now_ms)
            self._statuses[staged.path] = status
        return verdict(self.spec, partition, status, look.checkpoint, look.now_ms)

    def _judge_glob(
        self, look: TableLook, path: str, glob: PartitionGlob
    ) -> tuple[int | None, bool]:
        """Commit time and committability of every partition of ``glob``.

        Under ``partition-time`` they share the time the glob names, whatever partitions
        exist yet (a glob that leaves a time key open names no single time: refused).
        ``process-time`` and ``idle-time`` judge each staged partition by its files: the
        latest commit time, committable once every one is (and one exists).
        """
        if self.spec.trigger is TriggerKind.PARTITION_TIME:
            return judge_by_time(self.spec, path, look.checkpoint, look.now_ms)
        statuses = [
            self._judge(p, look.checkpoint, look.now_ms)
            for p in self.staging.partitions(look.snapshot)
            if glob.matches(p.spec)
        ]
        failed = next((s for s in statuses if s.error), None)
        if failed is not None:
            raise PartitionTimeError(
                f"partition {failed.staged.path} cannot be judged: {failed.error}"
            )
        if not statuses:
            return None, False
        commit_time = max(s.commit_time_ms or 0 for s in statuses)
        return commit_time, all(s.state == PartitionState.COMMITTABLE for s in statuses)

    def _settle(self) -> tuple[SinkLogSnapshot, int | None]:
        """The log read again after the checkpoint, and the latest commit's time."""
        checkpoint = self.checkpoint.read()
        return self.staging.snapshot(), checkpoint.last_commit_time_ms

    def _check_watermark(self, checkpoint: CheckpointState, snapshot: SinkLogSnapshot) -> None:
        """Refuse ``partition-time`` on a query that evidently has no event-time watermark.

        Every query's first batch runs with watermark 0, and so does each batch until one
        has seen event times: that is a watermark that has not advanced yet, and every
        partition is simply pending. Only a query that has committed two batches or more,
        with files in the sink, and still reports 0 both as its watermark and as the next
        batch's has certainly none (or event times that are all null): the batch that
        wrote those files would have set the next watermark. A stream that stops before
        that is the stall timeout's business, not an error.
        """
        if (
            self.spec.trigger is TriggerKind.PARTITION_TIME
            and (checkpoint.latest_committed_batch or 0) >= 1
            and not checkpoint.has_watermark
            and snapshot.files.num_rows
        ):
            raise CheckpointError(
                f"checkpoint {checkpoint.path} has committed batches 0 to "
                f"{checkpoint.latest_committed_batch}, and files in the sink, without an "
                "event-time watermark: the query does not call withWatermark() (or its event "
                "times are all null), so partition-time cannot tell when a partition is "
                "complete. Add .withWatermark('<event time column>', '<delay>') to the "
                "query, or use the process-time trigger"
            )

    def _judge(
        self, staged: StagingPartition, checkpoint: CheckpointState, now_ms: int
    ) -> PartitionStatus:
        trigger = self.spec.commit_trigger
        previous = self._statuses.get(staged.path)
        if (
            previous is not None
            and previous.commit_time_ms is not None
            and previous.staged.creation_time_ms == staged.creation_time_ms
            and previous.staged.last_modified_ms == staged.last_modified_ms
        ):
            commit_time = previous.commit_time_ms
        else:
            try:
                commit_time = trigger.commit_time_ms(
                    staged.spec, staged.creation_time_ms, staged.last_modified_ms
                )
            except PartitionTimeError as exc:
                return PartitionStatus(staged, PartitionState.ERROR, error=str(exc))
        committable = trigger.is_committable(commit_time, checkpoint.watermark_ms, now_ms)
        state = PartitionState.COMMITTABLE if committable else PartitionState.PENDING
        if previous is not None and previous.staged is staged and previous.state is state:
            return previous
        return PartitionStatus(staged, state, commit_time)
