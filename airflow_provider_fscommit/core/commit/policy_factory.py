"""Builds the policy chain a table spec names (Flink's ``PartitionCommitPolicyFactory``).

A catalog's client library is an extra of the package (``hive``, ``glue``, ``iceberg``), never
imported with it: building a chain that names a catalog checks its extra first
(:func:`require_extras`), so a chain used without it fails at once with the one message
that names the extra, before anything is compacted or committed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow_provider_fscommit.core.catalogs.glue_table import GlueClientFactory
from airflow_provider_fscommit.core.catalogs.metastore_table import ClientFactory
from airflow_provider_fscommit.core.commit.catalog import CatalogPolicy
from airflow_provider_fscommit.core.commit.done_partition_policy import (
    DonePartitionCommitPolicy,
)
from airflow_provider_fscommit.core.commit.glue_policy import GlueCommitPolicy
from airflow_provider_fscommit.core.commit.http_report_policy import (
    HttpReportCommitPolicy,
    HttpTarget,
)
from airflow_provider_fscommit.core.commit.mark_event_policy import MarkEventCommitPolicy
from airflow_provider_fscommit.core.commit.metastore_policy import MetastoreCommitPolicy
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.commit.success_file_policy import SuccessFileCommitPolicy
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, import_extra
from airflow_provider_fscommit.core.loader import load_class

# Loads a pyiceberg Catalog (core/catalogs/iceberg_table.py, imported only when used).
IcebergCatalogFactory = Callable[[], Any]

#: Each policy whose catalog client is an extra: the extra, and the module of it the core
#: calls (the hooks check the Airflow providers of their extras themselves).
EXTRAS: dict[PolicyKind, tuple[str, str]] = {
    PolicyKind.METASTORE: ("hive", "hmsclient.genthrift.hive_metastore.ttypes"),
    PolicyKind.MARK_EVENT: ("hive", "hmsclient.genthrift.hive_metastore.ttypes"),
    PolicyKind.GLUE: ("glue", "botocore.exceptions"),
    PolicyKind.ICEBERG: ("iceberg", "pyiceberg.catalog"),
}


def require_extras(spec: TableSpec) -> None:
    """Refuse a chain naming a policy whose extra is not installed, with the one message
    ``pip install 'airflow-provider-fscommit[EXTRA]'``."""
    for kind in spec.policy_kind:
        if kind in EXTRAS:
            extra, module = EXTRAS[kind]
            import_extra(module, extra, f"the {kind} policy")


def create_policies(
    spec: TableSpec,
    metastore_client: ClientFactory | None = None,
    http_target: HttpTarget | None = None,
    glue_client: GlueClientFactory | None = None,
    iceberg_catalog: IcebergCatalogFactory | None = None,
) -> list[PartitionCommitPolicy]:
    """The policies of ``sink.partition-commit.policy.kind``, in the order given.

    ``http_target`` is where ``http-report`` posts when an Airflow HTTP connection names
    it; otherwise the spec's ``partition.mark-done-action.http.*`` options do.
    ``iceberg_catalog`` loads the iceberg policy's catalog with a connection's
    credentials; otherwise pyiceberg loads it from the spec's ``iceberg.catalog.*``.
    """
    if not spec.policy_kind:
        raise ConfigError(
            "sink.partition-commit.policy.kind is empty, so committing would make nothing "
            "visible; set it, e.g. 'metastore,success-file' or 'success-file'"
        )
    require_extras(spec)
    catalogs = {
        catalog.kind: catalog
        for catalog in catalog_policies(
            spec, metastore_client, glue_client, "committing", iceberg_catalog
        )
    }
    policies: list[PartitionCommitPolicy] = []
    for kind in spec.policy_kind:
        if kind.catalog:
            policies.append(catalogs[kind])
        elif kind is PolicyKind.MARK_EVENT:
            policies.append(
                MarkEventCommitPolicy(
                    _require(metastore_client, f"the {kind} policy"),
                    spec.metastore_database,
                    spec.metastore_table or "",
                )
            )
        elif kind is PolicyKind.DONE_PARTITION:
            policies.append(DonePartitionCommitPolicy(list(catalogs.values())))
        elif kind is PolicyKind.SUCCESS_FILE:
            policies.append(SuccessFileCommitPolicy(spec.success_file_name))
        elif kind is PolicyKind.HTTP_REPORT:
            policies.append(HttpReportCommitPolicy(http_target or spec_http_target(spec)))
        else:
            cls = load_class(
                spec.policy_class or "", PartitionCommitPolicy, "sink.partition-commit.policy.class"
            )
            policies.append(cls(*spec.policy_class_parameters))
    return policies


def spec_http_target(spec: TableSpec, url: str | None = None) -> HttpTarget:
    """The http-report target of the spec's options; ``url`` replaces the spec's."""
    url = url or spec.http_report_url
    if not url:
        raise ConfigError(
            "the http-report policy needs an endpoint: set partition.mark-done-action.http.url "
            "(--http-report-url), or give the commit operator an HTTP connection (http_conn_id)"
        )
    return HttpTarget(url, spec.http_report_timeout, spec.http_report_params)


def catalog_policies(
    spec: TableSpec,
    metastore_client: ClientFactory | None,
    glue_client: GlueClientFactory | None,
    purpose: str = "expiring partitions",
    iceberg_catalog: IcebergCatalogFactory | None = None,
) -> list[CatalogPolicy]:
    """The chain's catalog policies, in chain order: what committed partitions are in.

    Partition expiration drops from these what they added. A client factory is needed
    only for a catalog the chain names.
    """
    require_extras(spec)
    catalogs: list[CatalogPolicy] = []
    table = spec.metastore_table or ""
    for kind in spec.policy_kind:
        if kind is PolicyKind.METASTORE:
            client = _require(metastore_client, f"{purpose} of a metastore table")
            catalogs.append(MetastoreCommitPolicy(client, spec.metastore_database, table))
        elif kind is PolicyKind.GLUE:
            if glue_client is None:
                raise ConfigError(f"{purpose} of a Glue table needs an AWS Glue client")
            catalogs.append(
                GlueCommitPolicy(glue_client, spec.metastore_database, table, spec.glue_catalog_id)
            )
        elif kind is PolicyKind.ICEBERG:
            catalogs.append(iceberg_policy(spec, iceberg_catalog))
    return catalogs


def iceberg_policy(spec: TableSpec, catalog: IcebergCatalogFactory | None = None) -> CatalogPolicy:
    """The iceberg policy of the spec's table; its catalog from ``catalog`` or, without
    one, from the spec's ``iceberg.catalog.*`` properties. pyiceberg is imported only here:
    it is the ``iceberg`` extra's."""
    from airflow_provider_fscommit.core.catalogs.iceberg_table import load_catalog
    from airflow_provider_fscommit.core.commit.iceberg_policy import IcebergCommitPolicy

    properties = dict(spec.iceberg_catalog)
    return IcebergCommitPolicy(
        catalog or (lambda: load_catalog(properties)),
        spec.metastore_database,
        spec.metastore_table or "",
        spec.iceberg_create_table,
    )


def _require(metastore_client: ClientFactory | None, what: str) -> ClientFactory:
    if metastore_client is None:
        raise ConfigError(
            f"{what} needs a metastore connection (--metastore-uri, or the Airflow connection "
            "metastore_default)"
        )
    return metastore_client
