"""``IcebergCatalogHook``: the pyiceberg catalog the ``iceberg`` policy commits to.

A table spec names the catalog (``iceberg.catalog.type``, ``uri``, ``warehouse``, …) and
never its secrets; the credentials come from the Airflow connections a DAG already has,
as Airflow users expect:

- ``iceberg_conn_id``: the Iceberg provider's ``iceberg`` connection, through its
  ``IcebergHook`` (a REST catalog's URI and OAuth client, or any pyiceberg catalog's
  properties in its extra). It replaces the spec's catalog properties.
- a ``glue`` catalog (or any catalog whose warehouse is on S3) with ``aws_conn_id``: the
  Amazon provider's ``AwsBaseHook`` resolves the connection (keys, profile, assumed role,
  endpoint, region) and the catalog gets them as pyiceberg's ``client.*`` properties, the
  endpoint as ``glue.endpoint`` / ``s3.endpoint``. Without a connection boto3's standard
  chain applies.
- a ``hive`` catalog without a ``uri``: the host and port of ``metastore_conn_id`` (the
  Hive provider's ``hive_metastore`` connection), Kerberos when that connection uses it.

Properties the spec gives win over what a connection fills in (but a spec holds no
secret: those are refused when the spec is read). Nothing is connected until a policy
asks: the core takes a factory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_provider_fscommit.core.commit.policy_factory import IcebergCatalogFactory
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import FsCommitError, IcebergError, import_extra
from airflow_provider_fscommit.hooks.metastore import MetastoreHook
from airflow_provider_fscommit.version_compat import AirflowException, BaseHook

if TYPE_CHECKING:
    from airflow_provider_fscommit.core.catalogs.iceberg_table import IcebergTable


class IcebergCatalogHook(BaseHook):
    """Loads a table's Iceberg catalog with credentials from Airflow connections.

    Uses the Iceberg provider's ``iceberg`` connection type when ``iceberg_conn_id`` is given.

    :param iceberg_conn_id: the Iceberg provider's connection (None: the spec's catalog).
    :param aws_conn_id: AWS connection of a Glue catalog or an S3 warehouse (None: the
        standard AWS chain).
    :param metastore_conn_id: Hive metastore connection of a ``hive`` catalog without a
        ``uri`` in the spec.
    """

    conn_name_attr = "iceberg_conn_id"
    default_conn_name = "iceberg_default"
    conn_type = "iceberg"
    hook_name = "Apache Iceberg catalog (partition commit)"

    def __init__(
        self,
        iceberg_conn_id: str | None = None,
        aws_conn_id: str | None = None,
        metastore_conn_id: str = MetastoreHook.default_conn_name,
    ) -> None:
        super().__init__()
        self.iceberg_conn_id = iceberg_conn_id
        self.aws_conn_id = aws_conn_id
        self.metastore_conn_id = metastore_conn_id

    def catalog_factory(self, spec: TableSpec) -> IcebergCatalogFactory:
        """What loads the catalog of ``spec`` when the policy first needs it."""
        return lambda: self.get_catalog(spec.iceberg_catalog)

    def get_catalog(self, properties: Mapping[str, str]) -> Any:
        """The pyiceberg catalog of a spec's ``iceberg.catalog.*`` properties, with this
        hook's connections (the Iceberg connection's alone, when named)."""
        if self.iceberg_conn_id is not None:
            return self._provider_catalog()
        from airflow_provider_fscommit.core.catalogs.iceberg_table import load_catalog

        return load_catalog(self.catalog_properties(properties))

    def get_table(self, database: str, table: str, properties: Mapping[str, str]) -> IcebergTable:
        """``database.table`` of the catalog of ``properties``; the catalog is loaded only
        when the table is asked something."""
        from airflow_provider_fscommit.core.catalogs.iceberg_table import IcebergTable

        return IcebergTable(lambda: self.get_catalog(properties), database, table)

    def get_table_parameters(
        self, database: str, table: str, properties: Mapping[str, str]
    ) -> dict[str, str]:
        """``database.table``'s properties, e.g. the completeness a commit run published;
        one error naming the table if it is missing."""
        return self.get_table(database, table, properties).read_table_parameters()

    def catalog_properties(self, spec_properties: Mapping[str, str]) -> dict[str, str]:
        """The spec's catalog properties, with what the connections fill in."""
        from airflow_provider_fscommit.core.catalogs.iceberg_table import wants_metastore_uri

        filled: dict[str, str] = {}
        if self.aws_conn_id is not None:
            glue = spec_properties.get("type") == "glue"
            filled.update(aws_properties(self.aws_conn_id, glue=glue))
        if wants_metastore_uri(spec_properties):
            filled.update(metastore_properties(self.metastore_conn_id))
        return {**filled, **spec_properties}

    def _provider_catalog(self) -> Any:
        try:
            from airflow.providers.apache.iceberg.hooks.iceberg import IcebergHook
        except ImportError:
            raise FsCommitError(
                f"iceberg_conn_id={self.iceberg_conn_id!r} needs the Iceberg provider: install "
                "apache-airflow-providers-apache-iceberg (2.0 or later), or name the catalog "
                "in the table's iceberg.catalog.* options instead"
            ) from None
        from airflow_provider_fscommit.core.catalogs.iceberg_table import loading_errors

        try:
            return IcebergHook(self.iceberg_conn_id).get_conn()
        except (AirflowException, *loading_errors()) as exc:  # the lookup's, or pyiceberg's
            raise IcebergError(
                f"the Iceberg connection {self.iceberg_conn_id!r} gave no catalog ({exc}); "
                "check its Catalog URI, client id and secret, and its extra (type, warehouse)"
            ) from exc


def aws_properties(aws_conn_id: str, glue: bool) -> dict[str, str]:
    """pyiceberg's ``client.*`` credentials and region, and the endpoints, of an Airflow AWS
    connection (the Amazon provider resolves it and masks the secrets in task logs)."""
    base_aws = import_extra(
        "airflow.providers.amazon.aws.hooks.base_aws",
        "glue" if glue else "s3",
        f"aws_conn_id={aws_conn_id!r} (an AWS connection for an Iceberg catalog)",
    )
    hook = base_aws.AwsBaseHook(aws_conn_id=aws_conn_id, client_type="glue" if glue else "s3")
    frozen = hook.get_credentials()
    properties: dict[str, str] = {}
    if frozen is not None and frozen.access_key and frozen.secret_key:
        properties["client.access-key-id"] = frozen.access_key
        properties["client.secret-access-key"] = frozen.secret_key
        if frozen.token:
            properties["client.session-token"] = frozen.token
    config = hook.conn_config
    if config.region_name:
        properties["client.region"] = config.region_name
    endpoints = {"s3.endpoint": "s3", **({"glue.endpoint": "glue"} if glue else {})}
    for key, service in endpoints.items():
        if endpoint := config.get_service_endpoint_url(service):
            properties[key] = endpoint
    return properties


def metastore_properties(metastore_conn_id: str) -> dict[str, str]:
    """The ``uri`` (and Kerberos) of a Hive catalog, from the Hive metastore connection."""
    connection = MetastoreHook.get_connection(metastore_conn_id)
    if not connection.host:
        raise IcebergError(
            f"the Hive metastore connection {metastore_conn_id!r} has no host; give it one, "
            "or set iceberg.catalog.uri to thrift://HOST:PORT"
        )
    properties = {"uri": f"thrift://{connection.host}:{connection.port or 9083}"}
    extra = connection.extra_dejson or {}
    if extra.get("authMechanism") == "GSSAPI":
        properties["hive.kerberos-authentication"] = "true"
        properties["hive.kerberos-service-name"] = extra.get("kerberos_service_name", "hive")
    return properties
