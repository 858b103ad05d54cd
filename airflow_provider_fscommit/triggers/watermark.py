"""The trigger of a deferred ``PartitionWatermarkSensor``: it only waits.

It writes nothing, and fires once: committable, or stalled. It does not poll by itself:
the waiting partitions of a table in the triggerer subscribe to one poller of the table
(:mod:`~airflow_provider_fscommit.core.status.table_poller`), which looks at it once per
interval in a worker thread (file reads must not block the triggerer's event loop) and
wakes a trigger only when what it sees changes, so a thousand waiting partitions cost
what their tables' looks cost. Each logs what it sees when that changes, not every poll.
What it sees is also what a platform team alerts on
(:mod:`~airflow_provider_fscommit.metrics`): the watermark's lag (once per look at the
table), the table's partitions waiting in this triggerer, and a stall.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.table_poller import Terms, subscribe
from airflow_provider_fscommit.core.storage.object_store import S3Settings
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
        spec, settings = await asyncio.to_thread(self._resolve)
        terms = Terms(
            self.partition,
            self.poll_interval,
            None if self.stall_timeout is None else timedelta(seconds=self.stall_timeout),
            None
            if self.process_time_fallback is None
            else timedelta(seconds=self.process_time_fallback),
        )
        metrics = TableMetrics(spec)
        every = self.poll_interval / 2

        def lag(watermark_ms: int | None) -> None:  # the table's, once per look
            metrics.watermark_lag(watermark_ms, every=every)

        said = None
        metrics.waiting(self.partition, True)
        # Cancelled (the triggerer stops, the task times out) or done: no longer waiting.
        with subscribe(spec, terms, settings=settings, on_look=lag) as subscription:
            try:
                while True:
                    check = await subscription.next()  # only what changed
                    if check.reason != said:
                        self.log.info("%s: %s", self.partition, check.reason)
                        said = check.reason
                    if check.committable or check.stalled:
                        if check.stalled:
                            metrics.stalled()
                        metrics.waiting(self.partition, False)
                        yield TriggerEvent(check.to_dict())
                        return
            finally:
                metrics.waiting(self.partition, False)

    def _resolve(self) -> tuple[TableSpec, S3Settings | None]:
        """The spec and the S3 settings of the connection (in a worker thread: both may
        read files or the metadata database)."""
        settings = AwsStorageHook(self.aws_conn_id).get_s3_settings()
        return TableSpec.from_options(self.table), settings
