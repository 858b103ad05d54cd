"""``CleanStagingOperator``: delete staged files whose rows are published, after an age."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_provider_fscommit.core.config.quantities import parse_duration
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.maintenance.retention import clean_staging
from airflow_provider_fscommit.hooks.aws import AwsStorageHook


class CleanStagingOperator(BaseOperator):
    """Staging retention for a table, e.g. daily with ``older_than="7 d"``.

    Deletes only staged files the ledger records as published and older than the age;
    the sink log, the checkpoint, orphans and unpublished files are never touched.

    :param table: the table spec (Python names or Flink keys); templated.
    :param older_than: minimum age of a file to delete (``"7 d"`` or a timedelta).
    :param dry_run: only log what would be deleted.
    :param aws_conn_id: AWS connection for tables on S3 (None: the standard AWS chain).
    :return: ``{"count", "bytes", "files", ...}``.
    """

    template_fields: Sequence[str] = ("table",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"table": "json"}

    def __init__(
        self,
        *,
        table: dict[str, Any] | TableSpec,
        older_than: str | timedelta,
        dry_run: bool = False,
        aws_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = TableSpec.options_of(table)
        self.older_than = parse_duration(older_than, "older_than")
        self.dry_run = dry_run
        self.aws_conn_id = aws_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        spec = TableSpec.from_options(self.table)
        with AwsStorageHook(self.aws_conn_id).storage():
            report = clean_staging(spec, self.older_than, self.dry_run)
        for file in report.files:
            self.log.info("%s %s", "would delete" if self.dry_run else "deleted", file["path"])
        summary = report.to_dict()
        self.log.info("%d file(s), %d bytes", summary["count"], summary["bytes"])
        return summary
