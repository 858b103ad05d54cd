"""Discovery follows the ledger: new, late-data and policies-pending partitions."""

from __future__ import annotations

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader
from airflow_provider_fscommit.core.status.committable import TableStatusReader
from airflow_provider_fscommit.core.status.discovery import discover, partitions_to_commit
from airflow_provider_fscommit.operators.committable_partitions import CommittablePartitionsOperator
from fscommit_dev.streams import row
from tests.support.compaction import committable, compact, table_options


def test_discovery_through_a_commit_cycle_and_late_data(spark, hourly_stream, tmp_path):
    table = str(tmp_path / "table")
    options = table_options(hourly_stream, table) | {
        "sink.partition-commit.policy.kind": "success-file"
    }
    spec = TableSpec.from_options(options)
    ready = sorted(
        f"dt={d}/hour={h}" for d, h in committable(hourly_stream.staging, hourly_stream.checkpoint)
    )
    assert [(p.partition, p.reason) for p in partitions_to_commit(spec)] == [
        (p, "new") for p in ready
    ]
    assert compact(hourly_stream.staging, hourly_stream.checkpoint, table).returncode == 0
    assert {p.reason for p in partitions_to_commit(spec)} == {"policies-pending"}
    # How far commits are behind: every ready partition, the oldest committable since the
    # batch whose watermark passed its commit time was committed.
    behind = discover(spec)
    checkpoint = CheckpointReader(hourly_stream.checkpoint)
    oldest = TableStatusReader(spec).read().find(ready[0]).commit_time_ms
    passed = checkpoint.watermark_passed_ms(checkpoint.read(), oldest)
    assert (behind.uncommitted, behind.errors) == (len(ready), 0)
    assert behind.oldest_committable_ms == passed is not None
    committer = PartitionCommitter(spec, create_policies(spec))
    committer.commit(ready)
    # Freshness: to the moment the policies committed, from that same moment for hour 00.
    assert set(committer.timings.policy_seconds) == {"success-file"}
    assert set(committer.timings.freshness_s) == set(ready)
    assert committer.timings.freshness_s[ready[0]] >= (behind.now_ms - passed) / 1000
    assert partitions_to_commit(spec) == []
    assert (discover(spec).uncommitted, discover(spec).oldest_committable_ms) == (0, None)
    assert CommittablePartitionsOperator(task_id="discover", table=options).execute({}) == []
    # Within a glob, or one partition: what a run of a time (or of a partition) commits.
    assert [p.partition for p in partitions_to_commit(spec, "dt=2026-11-20/hour=*")] == []
    hourly_stream.add_batches([row(8080, "2026-11-20T00:40:00Z")])
    hourly_stream.run(spark)
    assert [(p.partition, p.reason) for p in partitions_to_commit(spec)] == [
        ("dt=2026-11-20/hour=00", "late-data")
    ]
    assert discover(spec).uncommitted == 0  # late data: readers see the partition already
    for within, found in [
        ("dt=2026-11-20/hour=*", ["dt=2026-11-20/hour=00"]),
        ("dt=*/hour=00", ["dt=2026-11-20/hour=00"]),
        ("dt=2026-11-20/hour=00", ["dt=2026-11-20/hour=00"]),
        ("dt=2026-11-20/hour=01", []),
        ("dt=2026-11-21/hour=*", []),
    ]:
        assert [p.partition for p in partitions_to_commit(spec, within)] == found, within
    operator = CommittablePartitionsOperator(
        task_id="discover", table=options, within="dt=*/hour=00"
    )
    assert operator.execute({}) == ["dt=2026-11-20/hour=00"]
