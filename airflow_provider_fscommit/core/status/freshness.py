"""Freshness: since when a partition has been committable, as Flink would have committed it.

Flink commits a partition at the checkpoint after its watermark passes the partition's
time plus the delay; here that moment is the commit of the streaming batch whose safe
watermark first passed it (:meth:`CheckpointReader.watermark_passed_ms`). Everything after
it (the sensor's poll, the scheduler, the compaction, the policies) is the provider's
delay: what a platform team watches (the oldest committable partition's age) and what a
commit run reports (each partition's freshness, to the moment its policies committed it).
"""

from __future__ import annotations

from airflow_provider_fscommit.core.config.options import TriggerKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader, CheckpointState


def committable_since_ms(
    spec: TableSpec,
    commit_time_ms: int | None,
    reader: CheckpointReader,
    checkpoint: CheckpointState,
) -> int | None:
    """When a partition whose commit time is ``commit_time_ms`` became committable (epoch
    ms), None when it is not (or its commit time is unknown).

    ``partition-time``: when the batch whose watermark passed the commit time was committed
    (purged batches make it the oldest retained one's: freshness is then a lower bound).
    ``process-time`` and ``idle-time`` judge by the wall clock, so the commit time itself.
    With ``end-input``, when the query's last batch was committed: it stopped for good then.
    """
    if spec.end_of_input:
        return checkpoint.last_commit_time_ms
    if commit_time_ms is None:
        return None
    if spec.trigger is TriggerKind.PARTITION_TIME:
        return reader.watermark_passed_ms(checkpoint, commit_time_ms)
    return commit_time_ms
