"""Partition states read from real Spark output agree with what Spark itself reads."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from airflow_provider_fscommit.core.config.quantities import iso_ms
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import CheckpointError, PartitionPathError, SinkLogError
from airflow_provider_fscommit.core.ledger.table_state import PartitionSummary, TableState
from airflow_provider_fscommit.core.status.committable import (
    PartitionState,
    TableStatusReader,
)
from airflow_provider_fscommit.core.status.partition_wait import check_partition
from fscommit_dev.streams import BLOCK_VALUE, StreamingTable, hourly_batches, row


def spec_for(table: StreamingTable, **extra) -> TableSpec:
    options = {
        "staging_path": table.staging,
        "checkpoint_path": table.checkpoint,
        "partition_keys": list(table.partition_by),
        "timestamp_pattern": "$dt $hour:00:00" if "hour" in table.partition_by else "$dt",
        "delay": "1 h",
        "watermark_time_zone": table.time_zone,
    }
    return TableSpec.from_options(options | extra)


def spark_partitions(spark, table: StreamingTable) -> dict[tuple, int]:
    """Partition values -> committed row count, as Spark reads the staging directory."""
    df = spark.read.parquet(table.staging)
    keys = list(table.partition_by)
    return {tuple(r[:-1]): r[-1] for r in df.groupBy(*keys).count().collect()}


def expected_state(table: StreamingTable, values: tuple[str, ...], delay: timedelta) -> str:
    """Independent oracle: aware-datetime arithmetic in the query's zone (no DST here)."""
    dt, hour = values
    local = datetime.fromisoformat(f"{dt}T{hour}:00:00").replace(tzinfo=ZoneInfo(table.time_zone))
    commit_ms = int((local + delay).timestamp() * 1000)
    return "committable" if table.last_watermark_ms > commit_ms else "pending"


@pytest.mark.parametrize("fixture", ["compacted_stream", "shanghai_stream", "late_stateful_stream"])
def test_states_files_and_values_match_spark(fixture, request, spark):
    table = request.getfixturevalue(fixture)
    status = TableStatusReader(spec_for(table)).read()
    ours = {p.staged.spec.values: p for p in status.partitions}
    assert set(ours) == set(spark_partitions(spark, table))
    for values, partition in ours.items():
        assert partition.state.value == expected_state(table, values, timedelta(hours=1)), values
    assert status.in_state(PartitionState.COMMITTABLE), "the watermark passed some partitions"
    assert status.in_state(PartitionState.PENDING), "the latest partitions are still open"
    assert status.checkpoint.watermark_ms == table.last_watermark_ms
    assert sum(p.staged.files for p in status.partitions) == len(
        spark.read.parquet(table.staging).inputFiles()
    )
    assert status.orphan_files == [] and status.missing_files == []


def test_shanghai_partitions_are_judged_on_shanghai_wall_clock(shanghai_stream):
    status = TableStatusReader(spec_for(shanghai_stream)).read()
    # Input hours are 00-04 UTC, so Spark wrote hours 08-12 Shanghai time.
    assert [p.staged.path for p in status.partitions] == [
        f"dt=2026-11-20/hour={h:02d}" for h in range(8, 13)
    ]
    utc = TableStatusReader(spec_for(shanghai_stream, watermark_time_zone="UTC")).read()
    # Misreading the values as UTC puts every commit time 8 h late: nothing is committable.
    assert status.in_state(PartitionState.COMMITTABLE)
    assert not utc.in_state(PartitionState.COMMITTABLE)


def test_awkward_partition_values_round_trip_through_paths(awkward_stream, spark):
    status = TableStatusReader(spec_for(awkward_stream)).read()
    ours = {p.staged.spec.values for p in status.partitions}
    assert ours == set(spark_partitions(spark, awkward_stream))
    assert ("2026-11-20", "a b:c/d%e=f#g") in ours
    assert ("2026-11-20", None) in ours  # null and "" both went to __HIVE_DEFAULT_PARTITION__
    # Day partitions with a 1 h delay: the watermark is hours before 2026-11-21 01:00.
    assert {p.state for p in status.partitions} == {PartitionState.PENDING}


def test_late_rows_of_a_stateless_query_land_in_committable_partitions(
    spark, late_stateless_stream
):
    reader = TableStatusReader(spec_for(late_stateless_stream))
    before = {p.staged.path: p for p in reader.read().partitions}
    assert before["dt=2026-11-20/hour=00"].state == PartitionState.COMMITTABLE
    late_stateless_stream.add_batches([row(5000, "2026-11-20T00:30:00Z")])
    late_stateless_stream.run(spark)
    after = {p.staged.path: p for p in reader.read().partitions}
    assert (
        after["dt=2026-11-20/hour=00"].staged.files
        == before["dt=2026-11-20/hour=00"].staged.files + 1
    )
    assert after["dt=2026-11-20/hour=00"].state == PartitionState.COMMITTABLE
    fresh = TableStatusReader(spec_for(late_stateless_stream)).read().partitions
    assert [p.to_dict() for p in after.values()] == [p.to_dict() for p in fresh]
    assert spark_partitions(spark, late_stateless_stream)[("2026-11-20", "00")] == 4


@pytest.mark.slow
def test_killed_query_leaves_orphans_that_are_reported_and_never_counted(killed_stream, spark):
    status = TableStatusReader(spec_for(killed_stream)).read()
    staging = Path(killed_stream.staging)
    on_disk = {str(p.relative_to(staging)) for p in staging.rglob("part-*")}
    read_by_spark = {
        str(Path(uri.removeprefix("file:")).relative_to(staging))
        for uri in spark.read.parquet(killed_stream.staging).inputFiles()
    }
    orphans = sorted(on_disk - read_by_spark)
    assert orphans, "the kill left files of the unfinished batch behind"
    assert status.orphan_files == orphans
    assert set(orphans) <= {str(p.relative_to(staging)) for p in killed_stream.orphans_at_kill}
    hour2 = next(p for p in status.partitions if p.staged.path == "dt=2026-11-20/hour=02")
    assert hour2.staged.files == len([f for f in read_by_spark if "hour=02" in f])
    rows = spark_partitions(spark, killed_stream)
    assert rows[("2026-11-20", "02")] == 11  # every row once, the blocked one included
    assert spark.read.parquet(killed_stream.staging).where(f"k = '{BLOCK_VALUE}'").count() == 1


def test_process_time_trigger_uses_file_creation(compacted_stream):
    spec = spec_for(compacted_stream, trigger="process-time", delay="1 d")
    reader = TableStatusReader(spec)  # one reader, as a polling sensor keeps it
    status = reader.read()
    assert {p.state for p in status.partitions} == {PartitionState.PENDING}
    created = min(p.staged.creation_time_ms for p in status.partitions)
    later = reader.read(now_ms=created + 86_400_001)
    assert later.in_state(PartitionState.COMMITTABLE)
    assert later.to_dict() == TableStatusReader(spec).read(now_ms=created + 86_400_001).to_dict()


def test_unparsable_partition_time_marks_that_partition_only(compacted_stream):
    spec = spec_for(
        compacted_stream, timestamp_pattern="$dt $hour", timestamp_formatter="yyyy-MM-dd"
    )
    status = TableStatusReader(spec).read()
    assert {p.state for p in status.partitions} == {PartitionState.ERROR}
    assert "timestamp-formatter" in status.partitions[0].error


def test_a_stream_whose_watermark_has_not_advanced_yet_has_every_partition_pending(
    first_batches_stream,
):
    assert first_batches_stream.last_watermark_ms == 0  # Spark's own report: 1970-01-01
    spec = spec_for(first_batches_stream)
    status = TableStatusReader(spec).read()
    checkpoint = status.checkpoint
    assert (checkpoint.latest_committed_batch, checkpoint.watermark_ms) == (1, 0)
    assert checkpoint.next_batch_watermark_ms == int(
        datetime(2026, 11, 20, 0, 10, tzinfo=UTC).timestamp() * 1000
    )
    assert status.watermark_pending and status.to_dict()["watermark_pending"]
    assert [(p.staged.path, p.state) for p in status.partitions] == [
        ("dt=2026-11-20/hour=00", PartitionState.PENDING)
    ]
    assert status.judge("dt=2026-11-19/hour=05")[1] is False  # no hour, however old
    check = check_partition(spec, "dt=2026-11-20/hour=00")
    assert (check.committable, check.stalled) == (False, False)
    assert "watermark has not advanced yet" in check.reason


def test_query_without_watermark_is_an_error_for_partition_time_only(spark, tmp_path):
    """After one batch it may yet be a watermark that has not advanced; after two batches
    with data and still no watermark it cannot be, and partition-time refuses it."""
    table = StreamingTable(tmp_path, watermark_delay=None)
    table.add_batches([row(1, "2026-11-20T01:00:00Z")])
    table.run(spark)
    status = TableStatusReader(spec_for(table)).read()
    assert status.watermark_pending
    assert [p.state for p in status.partitions] == [PartitionState.PENDING]
    table.add_batches([row(2, "2026-11-20T02:00:00Z")])
    table.run(spark)
    with pytest.raises(CheckpointError, match=r"without an event-time watermark.*withWatermark"):
        TableStatusReader(spec_for(table)).read()
    status = TableStatusReader(spec_for(table, trigger="process-time")).read()
    assert len(status.partitions) == 2 and not status.watermark_pending


def test_wrong_partition_keys_are_reported(compacted_stream):
    with pytest.raises(PartitionPathError, match="has 2 level"):
        TableStatusReader(
            spec_for(compacted_stream, partition_keys="dt", timestamp_pattern="$dt")
        ).read()


def test_a_moved_staging_directory_is_reported_not_guessed(compacted_stream, tmp_path):
    moved = shutil.copytree(compacted_stream.staging, tmp_path / "moved-staging")
    spec = spec_for(compacted_stream, staging_path=str(moved))
    with pytest.raises(SinkLogError, match=r"lists committed files outside it.*moved or copied"):
        TableStatusReader(spec).read()


def test_a_watermark_that_jumps_makes_every_hour_in_between_committable(spark, tmp_path):
    """A stream restarted after an outage: hours 00-01, then 09-10. The safe watermark
    jumps from 00:10 to 09:10, so hours 00 to 08 (02 to 08 empty) are committable at once."""
    table = StreamingTable(tmp_path)
    table.add_batches(*hourly_batches("2026-11-20", [0, 1]))
    table.run(spark)
    spec = spec_for(table)
    before = TableStatusReader(spec).read()
    assert not before.in_state(PartitionState.COMMITTABLE)
    table.add_batches(*hourly_batches("2026-11-20", [9, 10]))
    table.run(spark)
    status = TableStatusReader(spec).read()
    assert status.checkpoint.watermark_ms == table.last_watermark_ms
    assert [p.staged.path for p in status.in_state(PartitionState.COMMITTABLE)] == [
        "dt=2026-11-20/hour=00",
        "dt=2026-11-20/hour=01",
    ]
    judged = {h: status.judge(f"dt=2026-11-20/hour={h:02d}")[1] for h in range(12)}
    assert judged == {h: h <= 8 for h in range(12)}


def test_idle_time_trigger_waits_for_the_newest_file_and_late_files_move_it(spark, hourly_stream):
    """Paimon's partition.idle-time-to-done selects the trigger: the hours' files all came
    after their hours ended, so each is done when no file has been committed to it for that
    long, judged by its newest file's time as the sink log records it (the file's
    modification time); late rows restart it."""
    spec = TableSpec.from_options(
        {
            "staging_path": hourly_stream.staging,
            "checkpoint_path": hourly_stream.checkpoint,
            "partition_keys": "dt,hour",
            "partition.idle-time-to-done": "10 min",
            "partition.time-interval": "1 h",
        }
    )
    assert spec.trigger == "idle-time"
    assert spec.trigger_summary == (
        "idle-time, idle 10 min after both the newest file and the partition's end "
        "(its time + 1 h), time zone UTC"
    )
    reader = TableStatusReader(spec)
    status = reader.read()
    newest = {
        p.staged.path: max(
            int(f.stat().st_mtime * 1000)
            for f in Path(hourly_stream.staging, p.staged.path).glob("*.parquet")
        )
        for p in status.partitions
    }
    assert {p.staged.path: p.staged.last_modified_ms for p in status.partitions} == newest
    assert all(p.commit_time_ms == newest[p.staged.path] + 600_000 for p in status.partitions)
    hour02 = "dt=2026-11-20/hour=02"
    now = newest[hour02] + 600_001
    judged = {p.staged.path: p.state for p in reader.read(now_ms=now).partitions}
    assert judged == {
        path: PartitionState.COMMITTABLE if last + 600_000 < now else PartitionState.PENDING
        for path, last in newest.items()
    }
    assert judged[hour02] == PartitionState.COMMITTABLE
    assert check_partition(spec, hour02, now_ms=now).committable

    # A table state that settles every hour (each committed file published, its policies
    # current): the reader judges none of them, and judges hour 02 again once it has late
    # rows, though the state and the reader are the ones that settled it.
    state = TableState(
        3,
        {
            p.staged.path: PartitionSummary(
                settled_files=p.staged.files, latest_commit=0, policies_current=True
            )
            for p in status.partitions
        },
    )
    unsettled, settled = reader.read_unsettled(state, now)
    assert (unsettled.partitions, settled) == ([], dict.fromkeys(newest, False))

    hourly_stream.add_batches([row(60, "2026-11-20T02:40:00Z")])  # late rows for hour 02
    hourly_stream.run(spark)
    unsettled, settled = reader.read_unsettled(state, now)
    assert [p.staged.path for p in unsettled.partitions] == [hour02]
    assert hour02 not in settled and len(settled) == len(newest) - 1
    later = reader.read(now_ms=now)
    moved = later.find(hour02)
    assert moved.staged.last_modified_ms > newest[hour02]
    assert moved.state == PartitionState.PENDING
    check = check_partition(spec, hour02, now_ms=now)
    assert not check.committable
    assert (
        "no new file for 10 min after both the newest file and the partition's end (its time "
        f"+ partition.time-interval 1 h), the later of which is "
        f"{iso_ms(moved.staged.last_modified_ms)}: until {iso_ms(moved.commit_time_ms)}"
    ) in check.reason


def test_idle_time_does_not_announce_an_hour_that_went_quiet_before_it_ended(spark, tmp_path):
    """Paimon's partition.time-interval: a stream wrote the first twenty minutes of an hour
    and went quiet. Idle long enough is not enough: the hour is done only once it has ended
    and the idle time has passed after its end."""
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    table = StreamingTable(tmp_path)
    table.add_batches(
        [row(1, f"{start + timedelta(minutes=5):%Y-%m-%dT%H:%M:%SZ}")],
        [row(2, f"{start + timedelta(minutes=20):%Y-%m-%dT%H:%M:%SZ}")],
    )
    table.run(spark)
    spec = spec_for(
        table,
        delay="0 s",
        **{"partition.idle-time-to-done": "10 min", "partition.time-interval": "1 h"},
    )
    reader = TableStatusReader(spec)
    (partition,) = reader.read().partitions
    path = partition.staged.path
    assert path == f"dt={start:%Y-%m-%d}/hour={start:%H}"
    end_ms = int((start + timedelta(hours=1)).timestamp() * 1000)
    newest = partition.staged.last_modified_ms
    assert newest + 600_000 < end_ms  # the files came well before the hour's end
    assert partition.commit_time_ms == end_ms + 600_000

    quiet = newest + 600_001  # ten minutes without a file, the hour not over
    assert reader.read(now_ms=quiet).find(path).state == PartitionState.PENDING
    check = check_partition(spec, path, now_ms=quiet)
    assert not check.committable and f"the later of which is {iso_ms(end_ms)}" in check.reason
    done = end_ms + 600_001
    assert reader.read(now_ms=done).find(path).state == PartitionState.COMMITTABLE
    assert check_partition(spec, path, now_ms=done).committable


def test_end_of_input_makes_an_ended_querys_last_hours_committable(hourly_stream):
    """An availableNow query has stopped; its watermark will not pass its last hour."""
    waiting = TableStatusReader(spec_for(hourly_stream)).read()
    pending = {p.staged.path for p in waiting.in_state(PartitionState.PENDING)}
    assert "dt=2026-11-20/hour=03" in pending
    ended = TableStatusReader(spec_for(hourly_stream, end_of_input=True)).read()
    assert {p.state for p in ended.partitions} == {PartitionState.COMMITTABLE}
    assert {p.staged.path for p in ended.partitions} == {p.staged.path for p in waiting.partitions}
    check = check_partition(spec_for(hourly_stream, end_of_input=True), "dt=2026-11-20/hour=03")
    assert check.committable
    assert check.reason == (
        f"end of input: the query stopped after batch {check.batch_id}, so every partition "
        "in its sink log is complete"
    )


@pytest.mark.slow
def test_end_of_input_is_refused_on_a_query_killed_mid_batch(killed_stream):
    """SIGKILLed in a batch, the query left an offset without its commit: not stopped."""
    at_kill = killed_stream.at_kill
    spec = TableSpec.from_options(
        spec_for(killed_stream, end_of_input=True).to_dict()
        | {"staging_path": str(at_kill / "staging"), "checkpoint_path": str(at_kill / "checkpoint")}
    )
    with pytest.raises(CheckpointError) as refused:
        TableStatusReader(spec).read(find_orphans=False)
    planned = max(int(p.name) for p in (at_kill / "checkpoint" / "offsets").glob("[0-9]*"))
    assert str(refused.value).startswith(
        f"sink.partition-commit.end-input is set but the query of {spec.checkpoint_path} is "
        f"still writing: batch {planned} is planned (offsets/{planned}) without its commit."
    )
    # Restarted, it finished the batch: then every partition is complete.
    ended = TableStatusReader(spec_for(killed_stream, end_of_input=True)).read()
    assert {p.state for p in ended.partitions} == {PartitionState.COMMITTABLE}
