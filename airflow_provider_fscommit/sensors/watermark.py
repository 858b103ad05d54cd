"""``PartitionWatermarkSensor``: wait until one partition may be committed."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, ClassVar

from airflow.configuration import conf
from airflow.sdk import BaseSensorOperator, PokeReturnValue

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.partition_wait import PartitionCheck, check_partition
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.metrics import TableMetrics
from airflow_provider_fscommit.triggers.watermark import PartitionWatermarkTrigger
from airflow_provider_fscommit.version_compat import AirflowException


class PartitionWatermarkSensor(BaseSensorOperator):
    """Wait until a partition is committable: the stream's safe watermark has passed its
    time plus the commit delay (``partition-time``), or the wall clock its creation plus
    the delay (``process-time``). Works in poke, reschedule and deferrable mode.

    A watermark that has not moved for ``stall_timeout`` fails the task with a message
    saying the stream is stalled or idle; ``process_time_fallback`` (opt-in) instead
    commits once the wall clock is that long past the commit time.

    :param table: the table spec (Python names or Flink keys); templated.
    :param partition: the escaped partition path, e.g.
        ``dt={{ data_interval_start | ds }}/hour={{ data_interval_start.strftime('%H') }}``,
        or its values as ``{key: value}``; templated.
    :param stall_timeout: give up after this long without watermark progress.
    :param process_time_fallback: commit anyway this long after the commit time.
    :param deferrable: wait in the triggerer (default: ``[operators] default_deferrable``).
    :param aws_conn_id: AWS connection for tables on S3 (None: the standard AWS chain).
    :param end_of_input: the streaming query has stopped for good (the task before ran
        it, e.g. with ``trigger(availableNow=True)``): every partition in its sink log is
        complete, whatever the watermark (``sink.partition-commit.end-input``); refused
        while the query is still writing a batch.
    :return: XCom ``{"partition", "watermark_ms", "batch_id", "commit_time_ms", "reason"}``.
    """

    template_fields: Sequence[str] = ("table", "partition")
    template_fields_renderers: ClassVar[dict[str, str]] = {"table": "json"}
    ui_color = "#fdf3e1"

    def __init__(
        self,
        *,
        table: dict[str, Any] | TableSpec,
        partition: str | Mapping[str, str],
        stall_timeout: timedelta | None = None,
        process_time_fallback: timedelta | None = None,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        aws_conn_id: str | None = None,
        end_of_input: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = TableSpec.options_of(table, end_of_input)
        self.partition = partition
        self.stall_timeout = stall_timeout
        self.process_time_fallback = process_time_fallback
        self.deferrable = deferrable
        self.aws_conn_id = aws_conn_id

    def _check(self) -> PartitionCheck:
        spec = TableSpec.from_options(self.table)
        with AwsStorageHook(self.aws_conn_id).storage():
            check = check_partition(
                spec,
                spec.partition_path(self.partition),
                self.stall_timeout,
                self.process_time_fallback,
            )
        self.log.info("%s: %s%s", check.partition, check.reason, _lag(check.watermark_ms))
        metrics = TableMetrics(spec)
        metrics.watermark_lag(check.watermark_ms)
        if check.stalled:
            metrics.stalled()
            raise AirflowException(check.reason)
        return check

    def poke(self, context: Any) -> PokeReturnValue:
        check = self._check()
        return PokeReturnValue(check.committable, _xcom(check.to_dict()))

    def execute(self, context: Any) -> Any:
        if not self.deferrable:
            return super().execute(context)
        check = self._check()
        if check.committable:
            return _xcom(check.to_dict())
        self.defer(
            trigger=PartitionWatermarkTrigger(
                table=self.table,
                partition=check.partition,
                poll_interval=self.poke_interval,
                stall_timeout=_seconds(self.stall_timeout),
                process_time_fallback=_seconds(self.process_time_fallback),
                aws_conn_id=self.aws_conn_id,
            ),
            method_name="execute_complete",
            timeout=timedelta(seconds=self.timeout) if self.timeout else None,
        )
        return None

    def execute_complete(self, context: Any, event: dict[str, Any]) -> dict[str, Any]:
        if event["stalled"]:
            raise AirflowException(event["reason"])
        self.log.info("%s: %s", event["partition"], event["reason"])
        return _xcom(event)


def _lag(watermark_ms: int | None) -> str:
    """How far the stream's event time is behind the wall clock (its freshness)."""
    if not watermark_ms:  # none yet, or 0: not advanced yet (the reason says so)
        return ""
    lag = timedelta(seconds=round(time.time() - watermark_ms / 1000))
    return f" (watermark lag {lag})"


def _xcom(check: dict[str, Any]) -> dict[str, Any]:
    keys = ("partition", "watermark_ms", "batch_id", "commit_time_ms", "reason")
    return {key: check[key] for key in keys}


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()
