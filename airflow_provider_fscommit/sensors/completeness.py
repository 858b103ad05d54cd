"""``TableCompletenessSensor``: wait until a catalog table is complete through a time.

Downstream teams see the catalog, not the stream: each commit run publishes how far the
table is complete as the table parameter ``fscommit.complete-through`` (a partition time:
every partition at or before it is committed) in the Hive metastore, the Glue Data
Catalog or an Iceberg table's properties. This sensor waits on that parameter alone, so
it needs no access to the stream, its checkpoint or the table's files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from airflow.configuration import conf
from airflow.sdk import BaseSensorOperator

from airflow_provider_fscommit.core.config.option_values import iceberg_catalog_properties
from airflow_provider_fscommit.core.config.quantities import epoch_ms, parse_duration
from airflow_provider_fscommit.core.errors import ConfigError, FsCommitError
from airflow_provider_fscommit.hooks.completeness import CompletenessTable, catalog_kind
from airflow_provider_fscommit.hooks.metastore import MetastoreHook
from airflow_provider_fscommit.triggers.completeness import TableCompletenessTrigger
from airflow_provider_fscommit.version_compat import AirflowException


class TableCompletenessSensor(BaseSensorOperator):
    """Wait until ``database.table_name`` is complete through the partition time ``through``.

    Done once the table's ``fscommit.complete-through`` is at or after ``through``. A table
    without the parameter yet (no commit run has published it) waits, and says so once; a
    missing table or refused credentials fail the task with one message naming them. Works
    in poke, reschedule and deferrable mode.

    :param catalog: ``"metastore"`` (the Hive metastore of ``metastore_conn_id``),
        ``"glue"`` (the Glue Data Catalog of ``aws_conn_id``) or ``"iceberg"`` (an Iceberg
        table's properties, its catalog from ``iceberg_conn_id`` or ``iceberg_catalog``).
    :param database: the catalog database; templated.
    :param table_name: the catalog table; templated.
    :param through: the partition time to wait for, a datetime or an ISO-8601 string (no
        offset: UTC); templated. Default: the last partition of the run's data interval,
        its end minus ``partition_interval`` (a daily run over an hourly table waits for
        the day's 23:00 partition). A run without a data interval (a partitioned run) names
        it, e.g. ``through="{{ (partition_date + macros.timedelta(hours=23)).isoformat() }}"``.
    :param partition_interval: the span of one of the table's partitions (default 1 h;
        ``"1 d"`` for a daily table), for the default ``through``.
    :param aws_conn_id: AWS connection of the Glue catalog (None: the standard AWS chain).
    :param metastore_conn_id: Airflow connection of the Hive metastore.
    :param glue_catalog_id: the Glue catalog's account id (None: the identity's own).
    :param iceberg_conn_id: the Iceberg provider's connection of the Iceberg catalog.
    :param iceberg_catalog: the Iceberg catalog's pyiceberg properties, as the table spec's
        ``iceberg.catalog.*`` give them (no credentials: those come from ``aws_conn_id``,
        ``metastore_conn_id`` or ``iceberg_conn_id``).
    :param deferrable: wait in the triggerer (default: ``[operators] default_deferrable``).
    """

    template_fields: Sequence[str] = ("database", "table_name", "through")
    ui_color = "#e8f4e1"

    def __init__(
        self,
        *,
        catalog: str,
        database: str,
        table_name: str,
        through: datetime | str | None = None,
        partition_interval: timedelta | str = timedelta(hours=1),
        aws_conn_id: str | None = None,
        metastore_conn_id: str = MetastoreHook.default_conn_name,
        glue_catalog_id: str | None = None,
        iceberg_conn_id: str | None = None,
        iceberg_catalog: Mapping[str, str] | None = None,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.catalog = catalog_kind(catalog)
        self.database = database
        self.table_name = table_name
        self.through = through
        self.partition_interval = parse_duration(partition_interval, "partition_interval")
        self.aws_conn_id = aws_conn_id
        self.metastore_conn_id = metastore_conn_id
        self.glue_catalog_id = glue_catalog_id
        self.iceberg_conn_id = iceberg_conn_id
        self.iceberg_catalog = iceberg_catalog_properties(iceberg_catalog, "iceberg_catalog")
        self.deferrable = deferrable
        self._said: str | None = None

    def poke(self, context: Any) -> bool:
        table = self._table()
        try:
            published = table.read_completeness()
        except FsCommitError as exc:
            raise AirflowException(str(exc)) from None
        complete, message = published.reaches(self._through_ms(context), table.name)
        if complete or message != self._said:  # what changed, not the same line every poke
            self.log.info("%s", message)
            self._said = message
        return complete

    def execute(self, context: Any) -> None:
        if not self.deferrable:
            super().execute(context)
            return
        if self.poke(context):
            return
        self.defer(
            trigger=TableCompletenessTrigger(
                self._table().to_kwargs(), self._through_ms(context), self.poke_interval
            ),
            method_name="execute_complete",
            timeout=timedelta(seconds=self.timeout) if self.timeout else None,
        )

    def _table(self) -> CompletenessTable:
        """The table as rendered for this run (its names are templated)."""
        return CompletenessTable(
            self.catalog,
            self.database,
            self.table_name,
            self.aws_conn_id,
            self.metastore_conn_id,
            self.glue_catalog_id,
            self.iceberg_conn_id,
            self.iceberg_catalog or None,
        )

    def execute_complete(self, context: Any, event: dict[str, Any]) -> None:
        if not event["complete"]:
            raise AirflowException(event["message"])
        self.log.info("%s", event["message"])

    def _through_ms(self, context: Any) -> int:
        if self.through is not None:
            try:
                return epoch_ms(self.through, f"{self.task_id}: through")
            except ConfigError as exc:
                raise AirflowException(str(exc)) from None
        start, end = context.get("data_interval_start"), context.get("data_interval_end")
        if start is None or end is None or not start < end:
            raise AirflowException(
                f"{self.task_id}: this run has no data interval (a partitioned or a manual "
                "run), so there is no default time to wait for; name it with through=, e.g. "
                'through="{{ (partition_date + macros.timedelta(hours=23)).isoformat() }}"'
            )
        return epoch_ms(end - self.partition_interval)
