"""The trigger of a deferred ``PartitionWatermarkSensor``: it only waits.

It polls the checkpoint and sink log in a worker thread (file reads must not block the
triggerer's event loop), writes nothing, and fires once: committable, or stalled. The
waiting partitions of a table share their looks at it (one per half poll interval), and
each logs what it sees when that changes, not every poll. What it sees is also what a
platform team alerts on (:mod:`~airflow_provider_fscommit.metrics`): the watermark's lag,
the table's partitions waiting in this triggerer, and a stall.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.partition_wait import check_partition
from airflow_provider_fscommit.core.storage.object_store import use_s3_settings
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.metrics import TableMetrics


class PartitionWatermarkTrigger(BaseTrigger):
    """Fires when ``partition`` is committable, or when the stream stalls.

    :param table: the table spec as plain options (it travels through the database).
    :param partition: escaped partition path, e.g. ``dt=2026-11-20/hour=03``.
    :param poll_interval: seconds between looks.
    :param stall_timeout: seconds without watermark progress before giving up, or None.
    :param process_time_fallback: seconds after the commit time to commit anyway, or None.
    :param aws_conn_id: AWS connection for tables on S3, resolved in the triggerer (only
        its id is stored with the trigger).
    """

    def __init__(
        self,
        table: dict[str, Any],
        partition: str,
        poll_interval: float = 30.0,
        stall_timeout: float | None = None,
        process_time_fallback: float | None = None,
        aws_conn_id: str | None = None,
    ) -> None:
        super().__init__()
        self.table = table
        self.partition = partition
        self.poll_interval = poll_interval
        self.stall_timeout = stall_timeout
        self.process_time_fallback = process_time_fallback
        self.aws_conn_id = aws_conn_id

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "table": self.table,
                "partition": self.partition,
                "poll_interval": self.poll_interval,
                "stall_timeout": self.stall_timeout,
                "process_time_fallback": self.process_time_fallback,
                "aws_conn_id": self.aws_conn_id,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        settings = await asyncio.to_thread(AwsStorageHook(self.aws_conn_id).get_s3_settings)
        spec = await asyncio.to_thread(TableSpec.from_options, self.table)
        stall = None if self.stall_timeout is None else timedelta(seconds=self.stall_timeout)
        fallback = (
            None
            if self.process_time_fallback is None
            else timedelta(seconds=self.process_time_fallback)
        )
        # The other waiting partitions of the table in this triggerer share its looks.
        shared = timedelta(seconds=self.poll_interval / 2)
        said = None
        metrics = TableMetrics(spec)
        metrics.waiting(self.partition, True)
        try:
            while True:
                # Set in this trigger's own context (copied into the polling thread) and
                # only around the poll: other triggers in the triggerer keep theirs, and
                # nothing is left to reset when the triggerer closes this generator after
                # its event (from another context, as `airflow dags test` of 3.0 does).
                with use_s3_settings(settings):
                    check = await asyncio.to_thread(
                        check_partition, spec, self.partition, stall, fallback, max_age=shared
                    )
                if check.reason != said:  # what changed, not the same line every poll
                    self.log.info("%s: %s", self.partition, check.reason)
                    said = check.reason
                metrics.watermark_lag(check.watermark_ms, every=shared.total_seconds())
                if check.committable or check.stalled:
                    if check.stalled:
                        metrics.stalled()
                    metrics.waiting(self.partition, False)
                    yield TriggerEvent(check.to_dict())
                    return
                await asyncio.sleep(self.poll_interval)
        finally:  # cancelled (the triggerer stops, the task times out): no longer waiting
            metrics.waiting(self.partition, False)
