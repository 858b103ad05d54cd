"""A run's summary reads the same from the ledger, a Connect run and an idle run."""

from __future__ import annotations

import json

from airflow_provider_fscommit.core.compaction.summary import (
    CompactionState,
    CompactionSummary,
    PartitionResult,
)

PUBLISHED = PartitionResult(
    "dt=2026-11-20/hour=00", CompactionState.PUBLISHED, 0, 12, 1200, 1, 900, 36
)
FAILED = PartitionResult(
    "dt=2026-11-20/hour=01", CompactionState.FAILED, 0, 3, 300, 1, error="corrupt footer"
)


def test_the_stored_document_reads_back_as_the_same_summary():
    summary = CompactionSummary(
        (PUBLISHED, FAILED), seconds=1.25, read_ahead_seconds=0.5, unchanged=8760
    )
    document = json.loads(json.dumps(summary.to_dict()))
    assert CompactionSummary.from_dict(document) == summary
    assert document["files_in"] == 15 and document["bytes_out"] == 900 and document["rows"] == 36
    assert document["partitions"][1]["state"] == "failed"
    assert document["unchanged"] == 8760


def test_a_summary_stored_before_the_unchanged_count_reads_as_it_was_written():
    """An earlier release listed every partition with nothing to do as up to date."""
    listed = PartitionResult("dt=2026-11-20/hour=02", CompactionState.UP_TO_DATE)
    document = CompactionSummary((PUBLISHED, listed)).to_dict()
    del document["unchanged"]
    summary = CompactionSummary.from_dict(document)
    assert (summary.outcomes, summary.unchanged) == ((PUBLISHED, listed), 0)


def test_a_run_of_unchanged_partitions_alone_selected_some():
    """A year-old table with nothing new is not "nothing committable"."""
    assert CompactionSummary(unchanged=24).selected
    assert CompactionSummary((PUBLISHED,)).selected
    assert not CompactionSummary().selected


def test_a_failed_partition_fails_the_run_and_is_named_first():
    summary = CompactionSummary((PUBLISHED, FAILED, FAILED))
    assert summary.failed
    assert summary.failure() == (
        "compaction failed for 2 partition(s), first dt=2026-11-20/hour=01: corrupt footer"
    )
    assert not CompactionSummary((PUBLISHED,)).failed
    assert CompactionSummary((PUBLISHED,)).failure() is None


def test_a_stopped_run_has_only_its_error():
    stopped = CompactionSummary.stopped("the table lock is held by another run")
    assert stopped.to_dict() == {"error": "the table lock is held by another run", "partitions": []}
    assert CompactionSummary.from_dict(stopped.to_dict()) == stopped
    assert stopped.failed and stopped.failure() == "the table lock is held by another run"
