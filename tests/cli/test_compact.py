"""``fscommit compact``: committable partitions published once; a rerun finds them done."""

from __future__ import annotations

import json

from tests.support.compaction import check_exactly_once, compact


def test_compact_publishes_each_committable_partition_once_and_a_rerun_has_nothing_to_do(
    spark, compacted_stream, tmp_path
):
    stream, table = compacted_stream, str(tmp_path / "table")
    first = compact(stream.staging, stream.checkpoint, table)
    assert first.returncode == 0, first.stderr[-3000:]
    states = {p["partition"]: p["state"] for p in json.loads(first.stdout)["partitions"]}
    assert states and set(states.values()) == {"published"}
    again = compact(stream.staging, stream.checkpoint, table, "--spark-submit", "/bin/false")
    assert again.returncode == 0, again.stderr[-3000:]  # nothing to compute: no application
    assert {p["state"] for p in json.loads(again.stdout)["partitions"]} == {"up-to-date"}
    complete = {tuple(v.split("=")[1] for v in p.split("/")) for p in states}
    check_exactly_once(spark, stream.staging, table, complete=complete)


def test_end_of_input_publishes_the_last_hours_of_a_query_that_ran_to_its_end(
    spark, hourly_stream, tmp_path
):
    stream, table = hourly_stream, str(tmp_path / "table")
    result = compact(stream.staging, stream.checkpoint, table, "--end-of-input")
    assert result.returncode == 0, result.stderr[-3000:]
    published = {p["partition"] for p in json.loads(result.stdout)["partitions"]}
    assert "dt=2026-11-20/hour=03" in published  # its watermark never passes 04:00
    every = {("2026-11-20", f"{hour:02d}") for hour in range(4)}
    check_exactly_once(spark, stream.staging, table, complete=every)
