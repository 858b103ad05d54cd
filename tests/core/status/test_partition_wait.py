"""One look at one partition: committable, waiting, stalled, or committed by fallback."""

from __future__ import annotations

import time
from datetime import timedelta

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.partition_wait import check_partition
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
