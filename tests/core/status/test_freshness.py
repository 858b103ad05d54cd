"""A partition is committable from the moment its trigger's clock passed its commit time."""

from __future__ import annotations

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader
from airflow_provider_fscommit.core.status.committable import TableStatusReader
from airflow_provider_fscommit.core.status.freshness import committable_since_ms
from tests.support.compaction import table_options


def test_each_trigger_says_since_when_a_partition_is_committable(compacted_stream, tmp_path):
    options = table_options(compacted_stream, str(tmp_path / "t"))
    reader = CheckpointReader(compacted_stream.checkpoint)
    checkpoint = reader.read()
    status = TableStatusReader(TableSpec.from_options(options)).read(find_orphans=False)
    commit_times = sorted(p.commit_time_ms for p in status.partitions)
    by_watermark = TableSpec.from_options(options)
    for commit_time in commit_times:
        since = committable_since_ms(by_watermark, commit_time, reader, checkpoint)
        # The checkpoint's answer: the batch whose safe watermark passed the commit time.
        assert since == reader.watermark_passed_ms(checkpoint, commit_time)
    assert committable_since_ms(by_watermark, commit_times[0], reader, checkpoint) is not None
    assert committable_since_ms(by_watermark, None, reader, checkpoint) is None
    # The wall clock's triggers: the commit time is that moment already.
    by_clock = TableSpec.from_options(options | {"sink.partition-commit.trigger": "process-time"})
    assert committable_since_ms(by_clock, commit_times[0], reader, checkpoint) == commit_times[0]
    # A query stopped for good completed every partition with its last batch.
    ended = TableSpec.from_options(options | {"sink.partition-commit.end-input": "true"})
    last_batch = checkpoint.last_commit_time_ms
    assert committable_since_ms(ended, commit_times[-1], reader, checkpoint) == last_batch
