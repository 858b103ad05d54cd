"""The table's completeness on real streams: complete-through never passes a partition
that is not committed, and what the committer publishes never moves back.

The streams are real Spark queries; compaction runs the real ``compact_units`` in this
process and the real committer writes the ledger and the completeness record.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.maintenance.quarantine import quarantine
from airflow_provider_fscommit.core.status.completeness import (
    COMMITTED_STATES,
    Completeness,
    TableCompleteness,
    read_completeness,
)
from airflow_provider_fscommit.core.status.table_report import OrphanSearch, read_table_report
from fscommit_dev.streams import StreamingTable, hourly_batches, row
from fscommit_dev.tables import hourly_table
from tests.support.compaction import publish_and_commit, table_options
from tests.support.damage import truncate

DAY = "dt=2026-11-20"
HOUR_MS = 3600_000
DAY_START_MS = int(datetime(2026, 11, 20, tzinfo=timezone.utc).timestamp() * 1000)


def at(hour: int) -> int:
    """The partition time of ``hour`` of 2026-11-20 (negative: the day before)."""
    return DAY_START_MS + hour * HOUR_MS


def commit(spec: TableSpec, partitions: list[str]) -> TableCompleteness:
    """Compact and commit ``partitions`` as a run does; the committer's completeness."""
    committer = publish_and_commit(spec, partitions)
    assert committer.completeness is not None
    return committer.completeness


def check_honest(spec: TableSpec, completeness: TableCompleteness) -> None:
    """What the state gives now passes no uncommitted partition, nor the watermark."""
    report = read_table_report(spec, orphans=OrphanSearch.NONE)
    current = read_completeness(report).current
    assert current == completeness.current
    through = current.complete_through_ms
    if through is None:
        return
    for partition in report.partitions:
        if spec.partition_time_ms(partition.partition) <= through:
            assert partition.state in COMMITTED_STATES, partition
    assert current.watermark_ms is not None
    assert through + spec.delay.total_seconds() * 1000 < current.watermark_ms


def test_complete_through_holds_at_a_stalled_hour_a_quarantine_and_a_late_older_hour(
    spark, tmp_path
):
    stream = StreamingTable(tmp_path / "stream")
    hours = hourly_batches("2026-11-20", [0, 1, 2, 3, 5, 6])  # hour 04 has no rows
    # A second file for hour 01: the one that turns out unreadable.
    stream.add_batches(*hours[:2], [row(100, "2026-11-20T01:50:00Z")], *hours[2:])
    stream.run(spark)  # safe watermark 05:10: hours 00 to 04 committable, 05 and 06 pending
    spec = TableSpec.from_options(
        table_options(stream, str(tmp_path / "table"))
        | {"sink.partition-commit.policy.kind": "success-file"}
    )
    ledger = CommitLedger(spec.table_path)

    before = read_completeness(read_table_report(spec))
    assert before.published is None
    assert before.current == Completeness(
        at(5) + 600_000, None, reason=f"{DAY}/hour=00 is committable, not committed"
    )

    # Run 1: hour 02 stalls (its run never comes); hour 01 fails on its unreadable file.
    victim = sorted(Path(stream.staging, DAY, "hour=01").glob("*.parquet"))[-1]
    truncate(victim, victim.stat().st_size // 2)
    first = commit(spec, [f"{DAY}/hour=00", f"{DAY}/hour=01", f"{DAY}/hour=03"])
    check_honest(spec, first)
    assert first.current.complete_through_ms == at(0)
    assert first.current.reason == f"{DAY}/hour=01 is committable, not committed"
    published = first.published
    assert published is not None and published.committed_at_ms is not None
    assert (published.watermark_ms, published.complete_through_ms) == (at(5) + 600_000, at(0))
    assert ledger.read_completeness() == published.to_record()
    assert published.table_parameters() == {
        "fscommit.watermark": "2026-11-20T05:10:00.000+00:00",
        "fscommit.complete-through": "2026-11-20T00:00:00.000+00:00",
        "fscommit.committed-at": published.to_dict()["committed_at"],
    }

    # The user quarantines the file: hour 01 is committed without it; 02 still holds.
    quarantine(spec, [str(victim)], "half written by a dead disk")
    second = commit(spec, [f"{DAY}/hour=01"])
    check_honest(spec, second)
    assert second.published is not None
    assert second.published.complete_through_ms == at(1)
    assert second.current.reason == f"{DAY}/hour=02 is committable, not committed"

    # Late rows: for committed hour 00, and for 2026-11-19 23:00, a new and older hour.
    stream.add_batches([row(200, "2026-11-20T00:55:00Z"), row(201, "2026-11-19T23:30:00Z")])
    stream.run(spark)  # safe watermark 06:10: hour 05 committable
    third = commit(spec, [f"{DAY}/hour=05"])
    check_honest(spec, third)
    older = "dt=2026-11-19/hour=23"
    assert third.current == Completeness(
        at(6) + 600_000, None, reason=f"{older} is committable, not committed"
    )
    # Published: the watermark moves on, complete-through does not move back.
    assert third.published is not None
    assert (third.published.watermark_ms, third.published.complete_through_ms) == (
        at(6) + 600_000,
        at(1),
    )
    assert third.published.committed_at_ms is not None and third.published != second.published

    # The older hour committed: hour 00, late data not committed again yet, still counts.
    fourth = commit(spec, [older])
    check_honest(spec, fourth)
    states = {p.partition: p.state.value for p in read_table_report(spec).partitions}
    assert states[f"{DAY}/hour=00"] == "late-data"
    assert fourth.current.complete_through_ms == at(1)
    assert fourth.published == third.published  # nothing moved: nothing new published

    # The stalled hour's run comes: complete through 05, past the hour without rows,
    # and not past 06, whose commit time the watermark has not passed.
    fifth = commit(spec, [f"{DAY}/hour=02"])
    check_honest(spec, fifth)
    assert fifth.current.complete_through_ms == at(5)
    assert fifth.current.reason == f"{DAY}/hour=06 is pending, not committed"
    assert fifth.published is not None and fifth.published.complete_through_ms == at(5)
    assert fifth.published.watermark_ms == at(6) + 600_000

    # A rerun changes nothing, the record included.
    again = commit(spec, [f"{DAY}/hour=02"])
    assert again.published == fifth.published
    assert ledger.read_completeness() == fifth.published.to_record()

    # An unreadable record is named where the status shows it, and fails no commit run;
    # deleted, the next run writes it again from the table's state.
    record = Path(spec.table_path, "_fscommit", "completeness.json")
    record.write_text("{")
    shown = read_completeness(read_table_report(spec))
    assert shown.published is None and shown.current == fifth.current
    assert shown.published_error is not None and str(record) in shown.published_error
    unread = commit(spec, [f"{DAY}/hour=02"])
    assert unread.current.reason == shown.published_error and record.read_text() == "{"
    record.unlink()
    rewritten = commit(spec, [f"{DAY}/hour=02"])
    assert rewritten.published is not None
    assert (rewritten.published.watermark_ms, rewritten.published.complete_through_ms) == (
        at(6) + 600_000,
        at(5),
    )


def test_process_time_and_idle_time_count_committed_partitions_past_the_watermark(
    compacted_stream, tmp_path
):
    stream = compacted_stream  # hours 00 to 07, safe watermark 06:10; read, never written
    table = str(tmp_path / "table")
    options = hourly_table(
        stream.staging,
        stream.checkpoint,
        table_path=table,
        **{
            "sink.partition-commit.policy.kind": "success-file",
            "sink.partition-commit.delay": "0 s",
        },
    )
    process_time = TableSpec.from_options(
        options | {"sink.partition-commit.trigger": "process-time"}
    )
    hours = [f"{DAY}/hour={h:02d}" for h in range(8)]

    held = commit(process_time, [h for h in hours if h != hours[2]])
    check_honest_by_files(process_time, held)
    assert held.current.complete_through_ms == at(1)
    assert held.current.reason == f"{DAY}/hour=02 is committable, not committed"
    assert held.current.watermark_ms == stream.last_watermark_ms  # shown, not a bound

    done = commit(process_time, [hours[2]])
    assert done.current == Completeness(stream.last_watermark_ms, at(7))
    assert done.published is not None and done.published.complete_through_ms == at(7)
    assert at(7) > stream.last_watermark_ms  # the wall clock decided, not the watermark

    # Under idle-time the same ledger says the same: committed is committed.
    idle_time = TableSpec.from_options(
        options | {"partition.idle-time-to-done": "30 min", "partition.time-interval": "1 h"}
    )
    assert read_completeness(read_table_report(idle_time)).current == done.current
    # Under partition-time the watermark (06:10) bounds it: 05 is the last complete hour.
    partition_time = TableSpec.from_options(table_options(stream, table))
    bounded = read_completeness(read_table_report(partition_time))
    assert bounded.current.complete_through_ms == at(5)
    assert bounded.current.reason == (
        f"{DAY}/hour=06 is committed, but the watermark 2026-11-20T06:10:00.000+00:00 has "
        "not passed its commit time"
    )
    assert bounded.published == done.published  # reading publishes nothing
    # On a zone whose offset moves, each partition's local time decides: the watermark is
    # 01:10 in New York, past the commit time of hour 00 there (01:00) and of no later one.
    zoned_spec = TableSpec.from_options(
        table_options(stream, table)
        | {"sink.partition-commit.watermark-time-zone": "America/New_York"}
    )
    zoned = read_completeness(read_table_report(zoned_spec)).current
    assert zoned.complete_through_ms == at(5)  # 00:00 in New York
    assert zoned.reason == (
        f"{DAY}/hour=01 is committed, but the watermark 2026-11-20T06:10:00.000+00:00 has "
        "not passed its commit time"
    )


def check_honest_by_files(spec: TableSpec, completeness: TableCompleteness) -> None:
    """Every partition at or before complete-through is committed (no watermark bound)."""
    report = read_table_report(spec, orphans=OrphanSearch.NONE)
    through = completeness.current.complete_through_ms
    assert through is not None
    for partition in report.partitions:
        if spec.partition_time_ms(partition.partition) <= through:
            assert partition.state in COMMITTED_STATES, partition


def test_without_partition_times_or_a_watermark_it_is_unknown_not_guessed(
    awkward_stream, first_batches_stream, tmp_path
):
    # Process-time commits without partition times; a pattern of a key that holds no
    # time gives none, and complete-through says which partition lacks one.
    no_times = TableSpec.from_options(
        {
            "staging_path": awkward_stream.staging,
            "checkpoint_path": awkward_stream.checkpoint,
            "partition_keys": "dt,k",
            "partition.time-extractor.timestamp-pattern": "$k",
            "sink.partition-commit.trigger": "process-time",
            "table_path": str(tmp_path / "awkward"),
        }
    )
    current = read_completeness(read_table_report(no_times)).current
    assert current.complete_through_ms is None and current.watermark_ms is not None
    assert current.reason is not None and "has no partition time" in current.reason
    assert current.reason.startswith("partition dt=2026-11-20/k=")

    # A stream that has just started: its watermark is 0, nothing is complete yet.
    just_started = TableSpec.from_options(
        table_options(first_batches_stream, str(tmp_path / "first"))
    )
    assert read_completeness(read_table_report(just_started)).current == Completeness(
        None, None, reason="the stream's watermark has not advanced yet: no partition is complete"
    )


def test_a_catalog_tables_parameters_read_back_as_what_was_published():
    """The completeness sensor's view: the catalog parameters, and nothing else."""
    published = Completeness(1795154400000, 1795143600000, 1795154500000)
    read = Completeness.from_table_parameters(published.table_parameters(), "db.events")
    assert read == published
    assert read.reaches(1795143600000, "db.events") == (
        True,
        "db.events is complete through 2026-11-20T03:00:00.000+00:00, at or after "
        "2026-11-20T03:00:00.000+00:00",
    )
    assert read.reaches(1795147200000, "db.events") == (
        False,
        "db.events is complete through 2026-11-20T03:00:00.000+00:00; waiting for "
        "2026-11-20T04:00:00.000+00:00",
    )
    none = Completeness.from_table_parameters({"EXTERNAL": "TRUE"}, "db.events")
    assert none == Completeness(None, None, None)
    done, said = none.reaches(1795143600000, "db.events")
    assert not done and said.startswith("db.events has no fscommit.complete-through yet")


def test_a_parameter_fscommit_did_not_write_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"db\.events: its table parameter fscommit\.complete"):
        Completeness.from_table_parameters({"fscommit.complete-through": "soon"}, "db.events")
