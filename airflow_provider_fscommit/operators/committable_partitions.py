"""``CommittablePartitionsOperator``: the partitions a sweep should commit, as XCom.

Its return value (a list of partition paths) feeds dynamic task mapping
(``.expand(partitions=...)``, with ``map_index_template="{{ task.partitions }}"`` for
readable names) or one compaction application for all of them. A discovery of the whole
table (a sweep's) also reports how far its commits are behind as metrics
(:mod:`~airflow_provider_fscommit.metrics`); one ``within`` a time sees only that time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.discovery import discover
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.metrics import TableMetrics


class CommittablePartitionsOperator(BaseOperator):
    """List committable partitions that are not committed yet (or have late data).

    :param table: the table spec (Python names or Flink keys); templated.
    :param within: only the partitions of this glob, e.g. ``region=*/dt={{ ds }}/hour=03``
        (the hour of every region), or this one partition; templated. None: every one.
    :param aws_conn_id: AWS connection for tables on S3 (None: the standard AWS chain).
    :return: partition paths, e.g. ``["dt=2026-11-20/hour=03", ...]``.
    """

    template_fields: Sequence[str] = ("table", "within")
    template_fields_renderers: ClassVar[dict[str, str]] = {"table": "json"}

    def __init__(
        self,
        *,
        table: dict[str, Any] | TableSpec,
        within: str | None = None,
        aws_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = TableSpec.options_of(table)
        self.within = within
        self.aws_conn_id = aws_conn_id

    def execute(self, context: Any) -> list[str]:
        spec = TableSpec.from_options(self.table)
        with AwsStorageHook(self.aws_conn_id).storage():
            found = discover(spec, self.within)
        if self.within is None:
            TableMetrics(spec).discovery(found)
        pending = found.pending
        for item in pending:
            self.log.info("%s: %s", item.partition, item.reason)
        self.log.info("%d partition(s) to commit", len(pending))
        return [item.partition for item in pending]
