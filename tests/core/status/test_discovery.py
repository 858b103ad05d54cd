"""Discovery follows the ledger: new, late-data and policies-pending partitions."""

from __future__ import annotations

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.discovery import partitions_to_commit
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
    PartitionCommitter(spec, create_policies(spec)).commit(ready)
    assert partitions_to_commit(spec) == []
    assert CommittablePartitionsOperator(task_id="discover", table=options).execute({}) == []
    # Within a glob, or one partition: what a run of a time (or of a partition) commits.
    assert [p.partition for p in partitions_to_commit(spec, "dt=2026-11-20/hour=*")] == []
    hourly_stream.add_batches([row(8080, "2026-11-20T00:40:00Z")])
    hourly_stream.run(spark)
    assert [(p.partition, p.reason) for p in partitions_to_commit(spec)] == [
        ("dt=2026-11-20/hour=00", "late-data")
    ]
    for within, found in [
        ("dt=2026-11-20/hour=*", ["dt=2026-11-20/hour=00"]),
        ("dt=*/hour=00", ["dt=2026-11-20/hour=00"]),
        ("dt=2026-11-20/hour=00", ["dt=2026-11-20/hour=00"]),
        ("dt=2026-11-20/hour=01", []),
        ("dt=2026-11-21/hour=*", []),
    ]:
        assert [p.partition for p in partitions_to_commit(spec, within)] == found, within
    discover = CommittablePartitionsOperator(
        task_id="discover", table=options, within="dt=*/hour=00"
    )
    assert discover.execute({}) == ["dt=2026-11-20/hour=00"]
