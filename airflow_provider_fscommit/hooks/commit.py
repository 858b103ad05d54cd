"""``PartitionCommitHook``: runs a table's commit policy chain (Flink's ``PartitionCommitter``).

The core's :class:`~airflow_provider_fscommit.core.commit.committer.PartitionCommitter`
runs the chain and keeps the ledger; this hook gives it what only Airflow knows, the
connections: the metastore client factory of :class:`MetastoreHook`, the ``http-report``
target of :class:`HttpReportHook` (when the chain has that policy and an HTTP connection is
named), the Glue clients of :class:`GlueHook`, the Iceberg catalog of
:class:`IcebergCatalogHook` and the S3 settings of :class:`AwsStorageHook` around the whole
commit (one AWS connection for all three). Asset events
and skipping are the operator's: they depend on the task's context, not on the systems.
The hook sends what the committer measured (:mod:`~airflow_provider_fscommit.metrics`):
each policy's seconds and each partition's freshness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_provider_fscommit.core.commit.committer import (
    CommitOutcome,
    CommitState,
    PartitionCommitter,
)
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.config.options import PolicyKind
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.hooks.aws import AwsStorageHook
from airflow_provider_fscommit.hooks.glue import GlueHook
from airflow_provider_fscommit.hooks.http_report import HttpReportHook
from airflow_provider_fscommit.hooks.iceberg import IcebergCatalogHook
from airflow_provider_fscommit.hooks.metastore import MetastoreHook
from airflow_provider_fscommit.metrics import TableMetrics
from airflow_provider_fscommit.version_compat import BaseHook


class PartitionCommitHook(BaseHook):
    """Commits partitions with the table's policy chain and logs what each one got.

    Its own connection is the metastore's (the Hive provider's ``hive_metastore`` type);
    the others are named beside it.

    :param metastore_conn_id: Airflow connection of the Hive metastore.
    :param aws_conn_id: AWS connection for tables on S3, the ``glue`` policy's catalog and
        an ``iceberg`` policy's Glue catalog or S3 warehouse (None: the standard AWS chain).
    :param http_conn_id: HTTP connection the ``http-report`` policy posts to (its base URL,
        headers and basic auth); None: the spec's ``partition.mark-done-action.http.url``.
    :param iceberg_conn_id: the Iceberg provider's connection of the ``iceberg`` policy's
        catalog (None: the spec's ``iceberg.catalog.*``).
    """

    conn_name_attr = "metastore_conn_id"
    default_conn_name = "metastore_default"
    conn_type = "hive_metastore"
    hook_name = "Partition commit"

    def __init__(
        self,
        metastore_conn_id: str = default_conn_name,
        aws_conn_id: str | None = None,
        http_conn_id: str | None = None,
        iceberg_conn_id: str | None = None,
    ) -> None:
        super().__init__()
        self.metastore_conn_id = metastore_conn_id
        self.aws_conn_id = aws_conn_id
        self.http_conn_id = http_conn_id
        self.iceberg_conn_id = iceberg_conn_id

    def policies(self, spec: TableSpec) -> list[PartitionCommitPolicy]:
        """The chain of ``sink.partition-commit.policy.kind``, over this hook's connections."""
        http_target = None
        if self.http_conn_id and PolicyKind.HTTP_REPORT in spec.policy_kind:
            http_target = HttpReportHook(self.http_conn_id).get_target(spec)
        return create_policies(
            spec,
            MetastoreHook(self.metastore_conn_id).get_conn,
            http_target,
            GlueHook(self.aws_conn_id).get_conn,
            self.iceberg_catalog_hook().catalog_factory(spec),
        )

    def iceberg_catalog_hook(self) -> IcebergCatalogHook:
        """The ``iceberg`` policy's catalog, over this hook's connections."""
        return IcebergCatalogHook(self.iceberg_conn_id, self.aws_conn_id, self.metastore_conn_id)

    def commit(
        self,
        spec: TableSpec,
        partitions: Sequence[str],
        *,
        commit_empty: bool = False,
        origin: Mapping[str, Any] | None = None,
    ) -> list[CommitOutcome]:
        """Commit ``partitions`` (paths, as ``spec.partition_paths`` gives them); one outcome each.

        :param commit_empty: commit a partition with no published files as empty.
        :param origin: who commits (e.g. the task's DAG run), kept in the ledger.
        """
        with AwsStorageHook(self.aws_conn_id).storage():
            committer = PartitionCommitter(spec, self.policies(spec))
            outcomes = committer.commit(partitions, commit_empty=commit_empty, origin=origin)
        TableMetrics(spec).commit(committer.timings)
        for outcome in outcomes:
            if outcome.state is CommitState.EXPIRED:
                self.log.warning("%s: not committed: %s", outcome.partition, outcome.reason)
            elif outcome.state is CommitState.NOTHING_PUBLISHED:
                self.log.warning(
                    "%s: nothing committed: no files of it are published (no committed rows in "
                    "staging, or not compacted yet); set commit_empty_partitions=True to mark "
                    "an empty partition done",
                    outcome.partition,
                )
            else:
                self.log.info("%s: %s %s", outcome.partition, outcome.state, outcome.summary)
        return outcomes
