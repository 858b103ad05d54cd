"""``PartitionExpireOperator``: drop published partitions past ``partition.expiration-time``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_provider_fscommit.core.commit.policy_factory import catalog_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ExpirationError
from airflow_provider_fscommit.core.maintenance.expiration import expire_partitions
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.hooks.glue import GlueHook
from airflow_provider_fscommit.hooks.iceberg import IcebergCatalogHook
from airflow_provider_fscommit.hooks.metastore import MetastoreHook
from airflow_provider_fscommit.operators.commit import commit_origin


class PartitionExpireOperator(BaseOperator):
    """Partition expiration for a table, e.g. daily (see the ``fscommit_expire`` example DAG).

    Partitions older than the spec's ``partition.expiration-time`` (by their partition time
    or their last commit, as ``partition.expiration-strategy`` says) are dropped from the
    catalogs the chain commits to (``metastore``, ``glue``, ``iceberg``), their published
    files are deleted, and the ledger records them as expired: late data for them is
    never published again. Staged files are never touched. Within
    ``partition.expiration-check-interval`` of the last expiration the task does nothing.

    :param table: the table spec (Python names or Flink keys, or a TableSpec); templated.
    :param dry_run: only log what would be expired.
    :param force: check even within the check interval.
    :param metastore_conn_id: Airflow connection of the Hive metastore.
    :param aws_conn_id: AWS connection for tables on S3, the glue policy's catalog and an
        iceberg policy's Glue catalog or S3 warehouse (None: the standard AWS chain).
    :param iceberg_conn_id: the Iceberg provider's connection of the iceberg policy's
        catalog (None: the spec's ``iceberg.catalog.*`` options).
    :return: ``{"partitions", "count", "files", "bytes", "errors", ...}``.
    """

    template_fields: Sequence[str] = ("table",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"table": "json"}

    def __init__(
        self,
        *,
        table: dict[str, Any] | TableSpec,
        dry_run: bool = False,
        force: bool = False,
        metastore_conn_id: str = "metastore_default",
        aws_conn_id: str | None = None,
        iceberg_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = TableSpec.options_of(table)
        self.dry_run = dry_run
        self.force = force
        self.metastore_conn_id = metastore_conn_id
        self.aws_conn_id = aws_conn_id
        self.iceberg_conn_id = iceberg_conn_id

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """Output: the published directory and its Hive table, altered (partitions dropped)."""
        from airflow_provider_fscommit.lineage import expiration_lineage, hive_dataset

        spec = TableSpec.from_options(self.table)
        return expiration_lineage(spec, hive_dataset(spec, self.metastore_conn_id))

    def execute(self, context: Any) -> dict[str, Any]:
        spec = TableSpec.from_options(self.table)
        catalogs = catalog_policies(
            spec,
            MetastoreHook(self.metastore_conn_id).get_conn,
            GlueHook(self.aws_conn_id).get_conn,
            iceberg_catalog=IcebergCatalogHook(
                self.iceberg_conn_id, self.aws_conn_id, self.metastore_conn_id
            ).catalog_factory(spec),
        )
        with AwsStorageHook(self.aws_conn_id).storage():
            report = expire_partitions(
                spec,
                dry_run=self.dry_run,
                catalogs=catalogs,
                force=self.force,
                origin=commit_origin(context),
            )
        summary = report.to_dict()
        if report.skipped_until_ms is not None:
            self.log.info(
                "expiration was checked less than partition.expiration-check-interval ago; "
                "next check after %s (force=True to check now)",
                summary["skipped_until"],
            )
            return summary
        for partition in report.partitions:
            self.log.info(
                "%s %s (since %s): %d file(s), %d bytes",
                "would expire" if self.dry_run else "expired",
                partition["partition"],
                partition["age_from"],
                partition["files"],
                partition["bytes"],
            )
        for error in report.errors:
            self.log.error("%s: %s", error["partition"], error["error"])
        self.log.info("%d partition(s), %d file(s)", summary["count"], summary["files"])
        if report.errors:
            raise ExpirationError(
                f"{len(report.errors)} partition(s) could not be judged for expiration (the "
                "others were handled; mend these as said and run again): "
                + "; ".join(f"{e['partition']}: {e['error']}" for e in report.errors[:3])
            )
        return summary
