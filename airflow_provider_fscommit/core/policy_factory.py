"""Builds the policy chain a table spec names (Flink's ``PartitionCommitPolicyFactory``)."""

from __future__ import annotations

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.loader import load_class
from airflow_provider_fscommit.core.metastore_policy import ClientFactory, MetastoreCommitPolicy
from airflow_provider_fscommit.core.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.success_file_policy import SuccessFileCommitPolicy
from airflow_provider_fscommit.core.table_spec import TableSpec


def create_policies(
    spec: TableSpec, metastore_client: ClientFactory | None = None
) -> list[PartitionCommitPolicy]:
    """The policies of ``sink.partition-commit.policy.kind``, in the order given."""
    if not spec.policy_kind:
        raise ConfigError(
            "sink.partition-commit.policy.kind is empty, so committing would make nothing "
            "visible; set it, e.g. 'metastore,success-file' or 'success-file'"
        )
    policies: list[PartitionCommitPolicy] = []
    for kind in spec.policy_kind:
        if kind == "metastore":
            if metastore_client is None:
                raise ConfigError(
                    "the metastore policy needs a metastore connection (--metastore-uri, or "
                    "the Airflow connection metastore_default)"
                )
            policies.append(
                MetastoreCommitPolicy(
                    metastore_client, spec.metastore_database, spec.metastore_table or ""
                )
            )
        elif kind == "success-file":
            policies.append(SuccessFileCommitPolicy(spec.success_file_name))
        else:
            cls = load_class(
                spec.policy_class or "", PartitionCommitPolicy, "sink.partition-commit.policy.class"
            )
            policies.append(cls(*spec.policy_class_parameters))
    return policies
