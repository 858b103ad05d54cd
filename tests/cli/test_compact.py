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
