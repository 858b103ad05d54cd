"""The catalog table a completeness sensor waits on, and how to reach it through the hooks.

The ``TableCompletenessSensor`` pokes it and its deferred ``TableCompletenessTrigger``
polls it, so both read through this one module: which catalog (a catalog policy's
:class:`PolicyKind`), which table, and the connections' ids. It travels through Airflow's
database as plain fields (:meth:`CompletenessTable.to_kwargs`); a trigger serialized by a
release that named the catalog as a plain string (``"catalog": "metastore"``) reads the
same.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from airflow_provider_fscommit.core.catalogs.catalog_table import CatalogTable
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.status.completeness import Completeness
from airflow_provider_fscommit.hooks.glue import GlueHook
from airflow_provider_fscommit.hooks.iceberg import IcebergCatalogHook
from airflow_provider_fscommit.hooks.metastore import MetastoreHook

#: The catalogs a commit run publishes completeness to: its catalog policies' kinds.
CATALOGS = tuple(kind for kind in PolicyKind if kind.catalog)


def catalog_kind(catalog: str) -> PolicyKind:
    """The catalog policy named ``catalog``; one error naming the catalogs otherwise."""
    kind = next((k for k in CATALOGS if k == catalog), None)
    if kind is None:
        *names, last = (repr(str(k)) for k in CATALOGS)
        raise ValueError(f"catalog={catalog!r}: name the catalog, {', '.join(names)} or {last}")
    return kind


@dataclass(frozen=True)
class CompletenessTable:
    """A catalog table the completeness is read from, and how to reach it.

    :param catalog: the catalog policy whose catalog holds it, ``metastore``, ``glue`` or
        ``iceberg`` (a :class:`PolicyKind`, or its name).
    :param aws_conn_id: AWS connection of the Glue catalog (None: the standard AWS chain).
    :param metastore_conn_id: Airflow connection of the Hive metastore.
    :param glue_catalog_id: the Glue catalog's account id (None: the identity's own).
    :param iceberg_conn_id: the Iceberg provider's connection of an Iceberg table's catalog.
    :param iceberg_catalog: an Iceberg table's catalog properties, as a spec's
        ``iceberg.catalog.*`` (credentials from the connections above).
    """

    catalog: PolicyKind
    database: str
    table_name: str
    aws_conn_id: str | None = None
    metastore_conn_id: str = MetastoreHook.default_conn_name
    glue_catalog_id: str | None = None
    iceberg_conn_id: str | None = None
    iceberg_catalog: dict[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "catalog", catalog_kind(self.catalog))

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table_name}"

    def catalog_table(self) -> CatalogTable:
        """The table, through its catalog's hook (nothing is connected yet)."""
        if self.catalog is PolicyKind.GLUE:
            return GlueHook(self.aws_conn_id).get_table(
                self.database, self.table_name, self.glue_catalog_id
            )
        if self.catalog is PolicyKind.ICEBERG:
            hook = IcebergCatalogHook(
                self.iceberg_conn_id, self.aws_conn_id, self.metastore_conn_id
            )
            return hook.get_table(self.database, self.table_name, self.iceberg_catalog or {})
        return MetastoreHook(self.metastore_conn_id).get_table(self.database, self.table_name)

    def read_completeness(self) -> Completeness:
        """What the table publishes (its parameters)."""
        parameters = self.catalog_table().read_table_parameters()
        return Completeness.from_table_parameters(parameters, self.name)

    def to_kwargs(self) -> dict[str, Any]:
        """Its fields as plain values (the catalog by its name), for a trigger's kwargs."""
        return asdict(self) | {"catalog": str(self.catalog)}
