"""Waiting for one partition: is it committable now, and is the stream still moving?

Shared by the sensor (poke and reschedule) and its deferrable trigger. Besides the
trigger's verdict it reports a *stalled* stream: a watermark that has not moved for
``stall_timeout`` means the query is stopped, failing or receiving no data, and waiting
silently for it is the pain every Flink user knows. An opt-in process-time fallback
commits anyway once the wall clock is past the commit time plus a further delay.

A wait costs what the checkpoint costs, not what the sink log costs. One process (the
triggerer) holds many waiting partitions of the same tables, each polling; a year-old
stream's sink log holds a million entries. So the waiting partitions of a table share
its :class:`~.table_watch.TableWatch`, and with ``max_age`` its last look: under
``partition-time`` (the default) a look reads the checkpoint only (its new batch files,
since the last look), since the watermark and the partition's time decide;
``process-time`` and ``idle-time`` need the partition's files and read the sink log
incrementally (only what the query appended since).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from airflow_provider_fscommit.core.config.options import TriggerKind
from airflow_provider_fscommit.core.config.quantities import format_duration, iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader, CheckpointState
from airflow_provider_fscommit.core.status.committable import judge_by_time, watermark_pending
from airflow_provider_fscommit.core.status.table_watch import TableWatch, table_watch
from airflow_provider_fscommit.core.storage.object_store import store_errors

_MS = timedelta(milliseconds=1)


@dataclass(frozen=True)
class PartitionCheck:
    """One look at a partition; ``committable`` or ``stalled`` ends the wait."""

    partition: str
    committable: bool
    stalled: bool
    watermark_ms: int | None
    batch_id: int | None
    commit_time_ms: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Look:
    checkpoint: CheckpointState
    commit_time_ms: int | None
    committable: bool
    watermark_pending: bool


@store_errors
def _look(watch: TableWatch, partition: str, now_ms: int, max_age_s: float) -> _Look:
    """One look at ``partition`` with what ``watch`` knows (its lock held), from a look at
    the table taken less than ``max_age_s`` ago if there is one."""
    spec = watch.spec
    if spec.trigger is TriggerKind.PARTITION_TIME:
        checkpoint = watch.recent("checkpoint", max_age_s, lambda: _checkpoint(watch))
        # A query without a watermark is refused only when its sink has files: the full
        # read decides that (rare, and then the wait ends with the error).
        two_batches = (checkpoint.latest_committed_batch or 0) >= 1
        if checkpoint.has_watermark or not two_batches:
            commit_time, committable = judge_by_time(spec, partition, checkpoint, now_ms)
            pending = watermark_pending(spec, checkpoint)
            return _Look(checkpoint, commit_time, committable, pending)
    reader = watch.status_reader()
    look = watch.recent("table", max_age_s, lambda: reader.look(now_ms))
    commit_time, committable = reader.judge(look, partition)
    pending = watermark_pending(spec, look.checkpoint)
    return _Look(look.checkpoint, commit_time, committable, pending)


def _checkpoint(watch: TableWatch) -> CheckpointState:
    """The checkpoint's state, once the sink log is known to be there."""
    checkpoint = watch.checkpoint.read()
    watch.sink_log().require()
    return checkpoint


def check_partition(
    spec: TableSpec,
    partition: str,
    stall_timeout: timedelta | None = None,
    process_time_fallback: timedelta | None = None,
    now_ms: int | None = None,
    max_age: timedelta = timedelta(0),
) -> PartitionCheck:
    """Judge ``partition`` (an escaped path such as ``dt=2026-11-20/hour=03``) now.

    ``max_age``: a look at the table that another waiting partition of this process took
    less than this long ago serves this one too (the trigger passes half its interval).
    """
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    watch = table_watch(spec)
    with watch.lock:
        look = _look(watch, partition, now_ms, max_age.total_seconds())
        since = (
            progress_since_ms(look.checkpoint, watch.checkpoint)
            if stall_timeout is not None and not look.committable
            else None
        )
    cp = look.checkpoint
    commit_time, committable = look.commit_time_ms, look.committable

    def verdict(committable: bool, stalled: bool, reason: str) -> PartitionCheck:
        return PartitionCheck(
            partition,
            committable,
            stalled,
            cp.watermark_ms,
            cp.latest_committed_batch,
            commit_time,
            reason,
        )

    clock = (
        f"watermark {iso_ms(cp.watermark_ms)}"
        if spec.trigger is TriggerKind.PARTITION_TIME
        else f"wall clock {iso_ms(now_ms)}"
    )
    if committable and spec.end_of_input:
        batch = cp.latest_committed_batch
        ended = f"after batch {batch}" if batch is not None else ""
        return verdict(
            True,
            False,
            f"end of input: the query stopped {ended or 'before its first batch'}, so every "
            "partition in its sink log is complete",
        )
    if committable:
        return verdict(
            True, False, f"{spec.trigger}: {clock} passed the commit time {iso_ms(commit_time)}"
        )
    if (
        process_time_fallback is not None
        and commit_time is not None
        and now_ms > commit_time + process_time_fallback // _MS
    ):
        return verdict(
            True,
            False,
            "process-time fallback: the wall clock passed the commit "
            f"time {iso_ms(commit_time)} plus {process_time_fallback}",
        )
    if stall_timeout is not None and is_stalled(since, stall_timeout, now_ms):
        return verdict(
            False,
            True,
            (
                "the stream looks stalled or idle: its watermark "
                f"{iso_ms(cp.watermark_ms)} has not moved since {iso_ms(since)} (more than "
                f"{stall_timeout}), so partition {partition} (commit time "
                f"{iso_ms(commit_time)}) may never become committable. "
                f"Check the streaming query (checkpoint {spec.checkpoint_path}): stopped, "
                "failing, or receiving no data? Or set process_time_fallback to commit anyway"
            ),
        )
    if look.watermark_pending:
        return verdict(
            False,
            False,
            "waiting: the stream's watermark has not advanced yet (a query runs its first "
            f"batches with 0 until it has seen event times), commit time {iso_ms(commit_time)}",
        )
    if spec.trigger is TriggerKind.IDLE_TIME and commit_time is not None:
        idle = spec.idle_time_to_done or timedelta(0)
        return verdict(
            False,
            False,
            f"waiting: no new file for {format_duration(idle)} after both the newest file "
            f"and the partition's end (its time + partition.time-interval "
            f"{format_duration(spec.time_interval or timedelta(0))}), the later of which is "
            f"{iso_ms(commit_time - idle // _MS)}: until {iso_ms(commit_time)} (late files "
            "move it)",
        )
    return verdict(False, False, f"waiting: {clock}, commit time {iso_ms(commit_time)}")


def progress_since_ms(checkpoint: CheckpointState, reader: CheckpointReader) -> int | None:
    """Since when the stream has made no progress (epoch ms), None before its first batch.

    Progress is the watermark moving; a query without a watermark (process-time) counts
    its committed batches instead. The sensor's stall check and the status page share it.
    """
    if checkpoint.has_watermark:
        since = reader.watermark_since_ms(checkpoint)
        if since is not None:
            return since
    return checkpoint.last_commit_time_ms


def is_stalled(since_ms: int | None, stall_timeout: timedelta, now_ms: int) -> bool:
    """Whether no progress since ``since_ms`` has lasted longer than ``stall_timeout``."""
    return since_ms is not None and now_ms - since_ms > stall_timeout // _MS
