"""The trigger of a deferred ``TableCompletenessSensor``: it only waits.

It reads the catalog table's parameters in a worker thread (a Thrift or AWS call must not
block the triggerer's event loop), writes nothing, and fires once: the table is complete
through the time waited for, or the catalog refused (a missing table, refused
credentials). It logs what it sees when that changes, not every poll.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.status.completeness import Completeness
from airflow_provider_fscommit.hooks.glue import GlueHook
from airflow_provider_fscommit.hooks.iceberg import IcebergCatalogHook
from airflow_provider_fscommit.hooks.metastore import MetastoreHook

#: The catalogs a commit run publishes completeness to (its catalog policies).
CATALOGS = ("glue", "iceberg", "metastore")


@dataclass(frozen=True)
class CatalogTable:
    """A catalog table the completeness is read from, and how to reach it.

    :param catalog: ``glue``, ``iceberg`` or ``metastore``.
    :param aws_conn_id: AWS connection of the Glue catalog (None: the standard AWS chain).
    :param metastore_conn_id: Airflow connection of the Hive metastore.
    :param glue_catalog_id: the Glue catalog's account id (None: the identity's own).
    :param iceberg_conn_id: the Iceberg provider's connection of an Iceberg table's catalog.
    :param iceberg_catalog: an Iceberg table's catalog properties, as a spec's
        ``iceberg.catalog.*`` (credentials from the connections above).
    """

    catalog: str
    database: str
    table_name: str
    aws_conn_id: str | None = None
    metastore_conn_id: str = MetastoreHook.default_conn_name
    glue_catalog_id: str | None = None
    iceberg_conn_id: str | None = None
    iceberg_catalog: dict[str, str] | None = None

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table_name}"

    def read_completeness(self) -> Completeness:
        """What the table publishes (its parameters), through the catalog's hook."""
        if self.catalog == "glue":
            parameters = GlueHook(self.aws_conn_id).get_table_parameters(
                self.database, self.table_name, self.glue_catalog_id
            )
        elif self.catalog == "iceberg":
            hook = IcebergCatalogHook(
                self.iceberg_conn_id, self.aws_conn_id, self.metastore_conn_id
            )
            parameters = hook.get_table_parameters(
                self.database, self.table_name, self.iceberg_catalog or {}
            )
        else:
            parameters = MetastoreHook(self.metastore_conn_id).get_table_parameters(
                self.database, self.table_name
            )
        return Completeness.from_table_parameters(parameters, self.name)


class TableCompletenessTrigger(BaseTrigger):
    """Fires when the catalog table is complete through ``through_ms``, or refuses.

    :param table: the :class:`CatalogTable` as plain fields (it travels through the
        database; connections are resolved in the triggerer, only their ids are stored).
    :param through_ms: the partition time waited for (epoch ms UTC).
    :param poll_interval: seconds between looks.
    """

    def __init__(self, table: dict[str, Any], through_ms: int, poll_interval: float = 60.0) -> None:
        super().__init__()
        self.table = table
        self.through_ms = through_ms
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "table": self.table,
                "through_ms": self.through_ms,
                "poll_interval": self.poll_interval,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        table = CatalogTable(**self.table)
        said = None
        while True:
            try:
                published = await asyncio.to_thread(table.read_completeness)
            except FsCommitError as exc:
                yield TriggerEvent({"complete": False, "message": str(exc)})
                return
            complete, message = published.reaches(self.through_ms, table.name)
            if complete:
                yield TriggerEvent({"complete": True, "message": message})
                return
            if message != said:  # what changed, not the same line every poll
                self.log.info("%s", message)
                said = message
            await asyncio.sleep(self.poll_interval)
