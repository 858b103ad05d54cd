"""``CommittablePartitionsOperator``: what a sweep should commit, as XCom for mapping."""

from __future__ import annotations

from airflow_provider_fscommit.operators.committable_partitions import CommittablePartitionsOperator
from fscommit_dev.tables import hourly_table
from tests.support.compaction import committable


def test_the_committable_partitions_not_committed_yet_are_returned_as_paths(
    compacted_stream, tmp_path
):
    stream = compacted_stream
    table = hourly_table(stream.staging, stream.checkpoint, table_path=str(tmp_path / "table"))
    ready = sorted(f"dt={d}/hour={h}" for d, h in committable(stream.staging, stream.checkpoint))
    operator = CommittablePartitionsOperator(task_id="discover", table=table)
    assert ready and operator.execute({}) == ready  # nothing published yet: every one is new
