"""Builds the policy chain a table spec names (Flink's ``PartitionCommitPolicyFactory``)."""

from __future__ import annotations

from airflow_provider_fscommit.core.commit.http_report_policy import (
    HttpReportCommitPolicy,
    HttpTarget,
)
from airflow_provider_fscommit.core.commit.mark_event_policy import MarkEventCommitPolicy
from airflow_provider_fscommit.core.commit.metastore_policy import (
    ClientFactory,
    MetastoreCommitPolicy,
)
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.commit.success_file_policy import SuccessFileCommitPolicy
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.loader import load_class


def create_policies(
    spec: TableSpec,
    metastore_client: ClientFactory | None = None,
    http_target: HttpTarget | None = None,
) -> list[PartitionCommitPolicy]:
    """The policies of ``sink.partition-commit.policy.kind``, in the order given.

    ``http_target`` is where ``http-report`` posts when an Airflow HTTP connection names
    it; otherwise the spec's ``partition.mark-done-action.http.*`` options do.
    """
    if not spec.policy_kind:
        raise ConfigError(
            "sink.partition-commit.policy.kind is empty, so committing would make nothing "
            "visible; set it, e.g. 'metastore,success-file' or 'success-file'"
        )
    policies: list[PartitionCommitPolicy] = []
    for kind in spec.policy_kind:
        if kind.needs_metastore_table:
            policy = (
                MetastoreCommitPolicy if kind is PolicyKind.METASTORE else MarkEventCommitPolicy
            )
            policies.append(
                policy(
                    _require(metastore_client, f"the {kind} policy"),
                    spec.metastore_database,
                    spec.metastore_table or "",
                )
            )
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


def metastore_table_policy(
    spec: TableSpec, metastore_client: ClientFactory | None
) -> MetastoreCommitPolicy | None:
    """The chain's metastore policy, for partition expiration to drop what it added.

    None when the chain has no ``metastore`` policy (nothing to drop there).
    """
    if PolicyKind.METASTORE not in spec.policy_kind:
        return None
    client = _require(metastore_client, "expiring partitions of a metastore table")
    return MetastoreCommitPolicy(client, spec.metastore_database, spec.metastore_table or "")


def _require(metastore_client: ClientFactory | None, what: str) -> ClientFactory:
    if metastore_client is None:
        raise ConfigError(
            f"{what} needs a metastore connection (--metastore-uri, or the Airflow connection "
            "metastore_default)"
        )
    return metastore_client
