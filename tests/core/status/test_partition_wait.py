"""One look at one partition: committable, waiting, stalled, or committed by fallback."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import PartitionTimeError
from airflow_provider_fscommit.core.spark import checkpoint, sink_log
from airflow_provider_fscommit.core.status.committable import TableStatusReader
from airflow_provider_fscommit.core.status.partition_wait import check_partition
from fscommit_dev.counting_fs import counting
from fscommit_dev.synthetic_log import SyntheticLog
from fscommit_dev.tables import hourly_table
from tests.support.compaction import committable, table_options


def spec_of(stream, tmp_path) -> TableSpec:
    return TableSpec.from_options(table_options(stream, str(tmp_path / "table")))


def test_committable_pending_and_empty_partitions(hourly_stream, tmp_path):
    spec = spec_of(hourly_stream, tmp_path)
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert ("2026-11-20", "00") in ready and ("2026-11-20", "03") not in ready
    done = check_partition(spec, "dt=2026-11-20/hour=00")
    assert done.committable and not done.stalled and done.batch_id is not None
    assert "passed the commit time 2026-11-20T01:00:00.000+00:00" in done.reason
    waiting = check_partition(spec, "dt=2026-11-20/hour=03")
    assert not waiting.committable and not waiting.stalled
    # An hour without any row: its time alone decides.
    assert check_partition(spec, "dt=2026-11-19/hour=05").committable
    assert not check_partition(spec, "dt=2026-11-21/hour=00").committable


def test_a_watermark_that_does_not_move_is_reported_as_stalled(hourly_stream, tmp_path):
    spec = spec_of(hourly_stream, tmp_path)
    time.sleep(1.2)
    check = check_partition(spec, "dt=2026-11-20/hour=03", stall_timeout=timedelta(seconds=1))
    assert check.stalled and not check.committable
    assert "stalled or idle" in check.reason and hourly_stream.checkpoint in check.reason
    patient = check_partition(spec, "dt=2026-11-20/hour=03", stall_timeout=timedelta(hours=1))
    assert not patient.stalled


def test_process_time_fallback_commits_after_the_commit_time_plus_the_fallback(
    hourly_stream, tmp_path
):
    spec = spec_of(hourly_stream, tmp_path)
    check = check_partition(
        spec, "dt=2026-11-20/hour=03", process_time_fallback=timedelta(minutes=10)
    )
    assert check.committable and check.reason.startswith("process-time fallback")
    commit_ms = check.commit_time_ms
    later = check_partition(
        spec,
        "dt=2026-11-20/hour=03",
        process_time_fallback=timedelta(minutes=10),
        now_ms=commit_ms + 1,
    )
    assert not later.committable


# Each stream's table as its query partitions it (options beside the hourly table's).
STREAMS = {
    "compacted_stream": {},
    "late_stateful_stream": {},
    "late_stateless_stream": {},
    "killed_stream": {},
    "first_batches_stream": {},
    "shanghai_stream": {"sink.partition-commit.watermark-time-zone": "Asia/Shanghai"},
    "awkward_stream": {
        "partition_keys": "dt,k",
        "partition.time-extractor.timestamp-pattern": "$dt 00:00:00",
    },
}


TRIGGERS = {
    "partition-time": {},
    "process-time": {},
    "idle-time": {"partition.idle-time-to-done": "10 min", "partition.time-interval": "1 h"},
}


def with_trigger(options: dict, trigger: str) -> TableSpec:
    """The table of ``options`` under ``trigger`` (idle-time has no delay: it refuses one)."""
    if trigger == "idle-time":
        options = {k: v for k, v in options.items() if k != "sink.partition-commit.delay"}
    return TableSpec.from_options(
        options | {"sink.partition-commit.trigger": trigger} | TRIGGERS[trigger]
    )


@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
@pytest.mark.parametrize("fixture", sorted(STREAMS))
def test_a_wait_judges_every_partition_as_the_full_read_does(fixture, trigger, request, tmp_path):
    """The cheap look (checkpoint only, for partition-time) and the one-partition look at
    the shared incremental read (process-time, idle-time) give the full read's verdict,
    staged partitions or not."""
    stream = request.getfixturevalue(fixture)
    options = table_options(stream, str(tmp_path / "table")) | STREAMS[fixture]
    spec = with_trigger(options, trigger)
    now = int(time.time() * 1000)
    full = TableStatusReader(spec).read(now_ms=now, find_orphans=False)
    staged = [p.staged.path for p in full.partitions]
    assert staged
    # Nothing staged: a day before the stream (committable by time alone), one after.
    idle = [f"dt={day}/{spec.partition_keys[1]}=00" for day in ("2026-11-19", "2026-11-21")]
    for partition in staged + idle:
        commit_time, ready = full.judge(partition)
        for _ in range(2):  # the first look at the table, then the next (incremental)
            check = check_partition(spec, partition, now_ms=now)
            assert (check.committable, check.commit_time_ms) == (ready, commit_time), partition
            assert check.watermark_ms == full.checkpoint.watermark_ms
            assert check.batch_id == full.checkpoint.latest_committed_batch
            assert ("has not advanced yet" in check.reason) == (
                full.watermark_pending and not ready
            )


@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_a_glob_waits_for_every_partition_of_its_time(awkward_stream, trigger, tmp_path):
    """``dt=2026-11-20/k=*``: the day of every k, as one run of a time waits for it."""
    options = table_options(awkward_stream, str(tmp_path / "table")) | {
        "partition_keys": "dt,k",
        "partition.time-extractor.timestamp-pattern": "$dt",
        "sink.partition-commit.delay": "1 d",
    }
    spec = with_trigger(options, trigger)
    if trigger == "idle-time":  # a day's partitions span a day
        spec = TableSpec.from_options(TableSpec.options_of(spec) | {"time_interval": "1 d"})
    for now in (int(time.time() * 1000), int(time.time() * 1000) + 3 * 86_400_000):
        full = TableStatusReader(spec).read(now_ms=now, find_orphans=False)
        day = [p for p in full.partitions if p.staged.spec.values[0] == "2026-11-20"]
        assert len(day) > 2
        if trigger == "partition-time":  # the time decides, whatever k
            expected = full.judge("dt=2026-11-20/k=anything")
        else:
            expected = (
                max(p.commit_time_ms for p in day),
                all(p.state.value == "committable" for p in day),
            )
        check = check_partition(spec, "dt=2026-11-20/k=*", now_ms=now)
        assert (check.commit_time_ms, check.committable) == expected, now
    if trigger == "partition-time":
        with pytest.raises(PartitionTimeError, match=r"dt=\*/k=x has no single time"):
            check_partition(spec, "dt=*/k=x")


@pytest.mark.slow
def test_a_poll_reads_the_checkpoint_not_the_sink_log_whatever_its_size(
    tmp_path_factory, monkeypatch
):
    """On a million-entry log as on a thousand-entry one: two listings of the checkpoint,
    its new batch files, and one look at the sink log's directory; no sink log file."""
    calls: dict[int, list[tuple[str, str]]] = {}
    for entries, partitions in ((1_000, 10), (1_000_000, 10_000)):
        log = SyntheticLog(tmp_path_factory.mktemp(f"log{entries}"), entries, partitions)
        log.write()
        spec = TableSpec.from_options(hourly_table(str(log.staging), str(log.checkpoint)))
        newest = log.partition_path(partitions - 1)  # pending: its hour is not over
        with counting(monkeypatch, checkpoint, sink_log) as seen:
            for _ in range(3):
                check = check_partition(
                    spec, newest, stall_timeout=timedelta(days=1), now_ms=log.now_ms()
                )
                assert not check.committable and not check.stalled
            calls[entries] = [(operation, _shape(path, log.root)) for operation, path in seen]
        log_dir = str(log.log_dir)
        assert not [c for c in seen if c[1].startswith(log_dir) and c[0] != "get_file_info"]
        assert check_partition(spec, log.partition_path(0), now_ms=log.now_ms()).committable
    assert calls[1_000] == calls[1_000_000]
    opened = [name for operation, name in calls[1_000] if operation.startswith("open")]
    # The first poll: the latest offsets and commits files, and the offsets before the
    # latest (the stall check); later polls open nothing (no new batch in between).
    assert opened == [f"checkpoint/{log}/N" for log in ("offsets", "commits", "offsets")]
    # Two listings per poll (commits/, offsets/): the stall check asks the listings the
    # poll's look was read from.
    assert [operation for operation, _ in calls[1_000]].count("list") == 2 * 3


@pytest.mark.slow
@pytest.mark.parametrize("trigger", ["process-time", "idle-time"])
def test_a_poll_judges_its_partition_only_whatever_the_tables_age(
    trigger, tmp_path_factory, monkeypatch
):
    """Under the triggers that need the partition's files, a poll after the first judges
    that one partition on a table of a thousand partitions as on one of ten."""
    judged: dict[int, list[int]] = {}
    for entries, partitions in ((1_000, 10), (100_000, 1_000)):
        log = SyntheticLog(tmp_path_factory.mktemp(f"log{entries}"), entries, partitions)
        log.write()
        spec = with_trigger(hourly_table(str(log.staging), str(log.checkpoint)), trigger)
        trigger_class = type(spec.commit_trigger)
        calls: list[int] = []
        original = trigger_class.is_committable

        def counted(self, *args, original=original, calls=calls):
            calls.append(1)
            return original(self, *args)

        monkeypatch.setattr(trigger_class, "is_committable", counted)
        newest = log.partition_path(partitions - 1)
        polls = []
        for _ in range(3):
            before = len(calls)
            check_partition(spec, newest, now_ms=log.now_ms())
            polls.append(len(calls) - before)
        monkeypatch.undo()
        judged[entries] = polls
        full = TableStatusReader(spec).read(now_ms=log.now_ms(), find_orphans=False)
        assert (
            check_partition(spec, newest, now_ms=log.now_ms()).committable
            == (full.judge(newest)[1])
        )
    assert judged[1_000] == judged[100_000] == [1, 1, 1]


def _shape(path: str, root: Path) -> str:
    """The path below ``root`` with batch numbers as ``N``: ``checkpoint/offsets/N``."""
    parts = Path(path).relative_to(root).parts
    return "/".join("N" if part.isdigit() else part for part in parts)


def test_waiting_partitions_of_a_table_share_a_look_younger_than_max_age(tmp_path, monkeypatch):
    """What the trigger relies on: five waiting hours of one table polled within max_age
    make the filesystem calls of one look, and give the verdicts of five fresh looks."""
    log = SyntheticLog(tmp_path / "log", 1_000, 10)
    log.write()
    spec = TableSpec.from_options(hourly_table(str(log.staging), str(log.checkpoint)))
    hours = [log.partition_path(i) for i in range(5, 10)]
    shared = timedelta(minutes=5)
    with counting(monkeypatch, checkpoint, sink_log) as seen:
        first = check_partition(spec, hours[0], now_ms=log.now_ms(), max_age=shared)
        one_look = len(seen)
        together = [first] + [
            check_partition(spec, hour, now_ms=log.now_ms(), max_age=shared) for hour in hours[1:]
        ]
        assert one_look > 0 and len(seen) == one_look
        apart = [check_partition(spec, hour, now_ms=log.now_ms()) for hour in hours]
        assert len(seen) > one_look  # max_age 0 (the default): a look each
        assert together == apart

        log.add_batch()  # the stream moves: a look within max_age has not seen it yet
        batch = first.batch_id
        assert check_partition(spec, hours[0], max_age=shared).batch_id == batch
        assert check_partition(spec, hours[0]).batch_id == batch + 1
        assert check_partition(spec, hours[1], max_age=shared).batch_id == batch + 1
