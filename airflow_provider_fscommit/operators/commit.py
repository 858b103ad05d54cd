"""``PartitionCommitOperator``: run the commit policies and announce committed partitions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow.sdk import Asset, BaseOperator

from airflow_provider_fscommit.core.commit.committer import CommitOutcome
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.storage.filesystem import normalize_uri
from airflow_provider_fscommit.hooks.commit import PartitionCommitHook
from airflow_provider_fscommit.version_compat import AirflowSkipException, announce_partitions


def table_asset(table_path: str) -> Asset:
    """The asset of a published table: its directory URI (``file://`` for a local path)."""
    location = normalize_uri(table_path)
    uri = str(location) if location.scheme else f"file://{location.path}"
    return Asset(uri=uri, name=f"fscommit:{uri}")


class PartitionCommitOperator(BaseOperator):
    """Make published partitions visible with the table's commit policy chain.

    :class:`~airflow_provider_fscommit.hooks.commit.PartitionCommitHook` runs
    ``sink.partition-commit.policy.kind`` in order (the metastore in one batch call
    through ``HiveMetastoreHook``; ``mark-event`` through the same connection; ``glue``
    in Glue's batch calls through ``aws_conn_id``; ``done-partition`` in each of those
    catalogs; ``http-report`` to ``http_conn_id`` or the spec's URL; ``iceberg`` in one
    Iceberg snapshot through ``iceberg_conn_id`` or the spec's catalog) and records each
    commit in the table's ledger (reruns, retries and backfills change nothing; late data
    is committed again); the operator emits an asset event for the table asset keyed by
    each committed partition's time (``2026-11-20T03:00:00``: the key of the run that
    commits it, and what Airflow's temporal partition mappers read;
    ``core.partition.partition_key``), with the partition paths and commit facts in
    ``extra["partitions"]`` (or skips when nothing new was committed), so a DAG scheduled
    with ``PartitionedAssetTimetable(assets=table_asset(...))`` runs once per partition time
    (Airflow 3.3+; before, one asset event whose ``extra`` holds the partitions:
    ``version_compat``).

    :param table: the table spec (Python names or Flink keys, or a TableSpec); templated.
    :param partitions: partition(s) to commit, as paths (``dt=2026-11-20/hour=03``) or
        ``{key: value}`` mappings; templated.
    :param metastore_conn_id: Airflow connection of the Hive metastore.
    :param commit_empty_partitions: commit a partition with no published files as empty
        (directory, metastore partition, success file) instead of only logging why not.
    :param asset: the table asset; default :func:`table_asset` of the table path.
    :param aws_conn_id: AWS connection for tables on S3, the glue policy's catalog and an
        iceberg policy's Glue catalog or S3 warehouse (None: the standard AWS chain).
    :param http_conn_id: HTTP connection the ``http-report`` policy posts to (its base URL,
        headers and basic auth); None: the spec's ``partition.mark-done-action.http.url``.
    :param iceberg_conn_id: the Iceberg provider's connection of the iceberg policy's
        catalog (None: the spec's ``iceberg.catalog.*`` options).
    :param end_of_input: the streaming query has stopped for good (the task before ran
        it, e.g. with ``trigger(availableNow=True)``): every partition in its sink log is
        complete, whatever the watermark (``sink.partition-commit.end-input``); refused
        while the query is still writing a batch.
    """

    template_fields: Sequence[str] = ("table", "partitions")
    template_fields_renderers: ClassVar[dict[str, str]] = {"table": "json"}
    ui_color = "#e3eefb"

    def __init__(
        self,
        *,
        table: dict[str, Any] | TableSpec,
        partitions: str | Mapping[str, str] | list[Any],
        metastore_conn_id: str = "metastore_default",
        commit_empty_partitions: bool = False,
        asset: Asset | None = None,
        aws_conn_id: str | None = None,
        http_conn_id: str | None = None,
        iceberg_conn_id: str | None = None,
        end_of_input: bool = False,
        **kwargs: Any,
    ) -> None:
        table = TableSpec.options_of(table, end_of_input)
        # Only the table path is needed now: other options may still be templates.
        table_path = table.get("table_path") or TableSpec.from_options(table).require_table_path()
        self.asset = asset or table_asset(table_path)
        kwargs.setdefault("outlets", [self.asset])
        super().__init__(**kwargs)
        self.table = table
        self.partitions = partitions
        self.metastore_conn_id = metastore_conn_id
        self.commit_empty_partitions = commit_empty_partitions
        self.aws_conn_id = aws_conn_id
        self.http_conn_id = http_conn_id
        self.iceberg_conn_id = iceberg_conn_id

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """Input: the published directory; output: its Hive table (when committed there)."""
        from airflow_provider_fscommit.lineage import commit_lineage, hive_dataset

        spec = TableSpec.from_options(self.table)
        return commit_lineage(spec, hive_dataset(spec, self.metastore_conn_id))

    def execute(self, context: Any) -> list[dict[str, Any]]:
        spec = TableSpec.from_options(self.table)
        partitions = spec.partition_paths(self.partitions)  # bad ones refused before anything
        hook = PartitionCommitHook(
            self.metastore_conn_id, self.aws_conn_id, self.http_conn_id, self.iceberg_conn_id
        )
        outcomes = hook.commit(
            spec,
            partitions,
            commit_empty=self.commit_empty_partitions,
            origin=commit_origin(context),
        )
        self._announce_committed(context, spec, outcomes)
        return [o.to_dict() for o in outcomes]

    def _announce_committed(
        self, context: Any, spec: TableSpec, outcomes: Sequence[CommitOutcome]
    ) -> None:
        """Emit the table asset's event for what was committed; skip the task if nothing was."""
        committed = {
            o.partition: o.summary.to_dict()
            for o in outcomes
            if o.state.committed and o.summary is not None
        }
        if not committed:
            # A skipped task emits no asset event: a rerun must not announce anything.
            raise AirflowSkipException(
                f"nothing new to commit in {len(outcomes)} partition(s): "
                + ", ".join(f"{o.partition} {o.state}" for o in outcomes[:5])
            )
        keys = {spec.partition_time_key(partition) for partition in committed}
        announce_partitions(
            context["outlet_events"][self.asset],
            sorted(key for key in keys if key is not None),
            {"table_path": spec.table_path, "partitions": committed},
        )


def commit_origin(context: Any) -> dict[str, Any]:
    """Who commits (or expires): the task's DAG run, kept in the ledger for the status page."""
    ti = context["ti"]
    return {
        "dag_id": ti.dag_id,
        "run_id": ti.run_id,
        "task_id": ti.task_id,
        "map_index": ti.map_index,
    }
