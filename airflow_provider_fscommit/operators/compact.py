"""``PartitionCompactOperator``: compact and publish partitions with a Spark application."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_provider_fscommit.core.compaction.summary import unchanged_text
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.hooks.compaction import CompactionHook
from airflow_provider_fscommit.metrics import TableMetrics


class PartitionCompactOperator(BaseOperator):
    """Compact the committed small files of partitions into the published table.

    Exactly once: reruns, retries and backfills publish nothing twice (the table's ledger
    records what is published); late rows of a published partition are published as new
    files. Partitions must be committable (see ``fscommit status``).

    :param table: the table spec, as options (Python names or Flink keys) or a TableSpec.
    :param partitions: partition(s) as paths such as ``dt=2026-11-20/hour=03`` or as
        ``{"dt": "2026-11-20", "hour": "03"}`` (templated); None compacts every
        committable partition in one application.
    :param conn_id: the Spark connection, default ``spark_default``. A ``spark_connect``
        connection runs the compaction units on that running Spark Connect server (no
        spark-submit, no JVM start per run); the protocol stays in this task.
    :param spark_binary: spark-submit to run; default: the connection's ``spark-binary``,
        else ``$SPARK_HOME/bin/spark-submit``, else the ``spark`` extra's pyspark.
    :param conf: Spark conf for the application; ``spark.pyspark.python`` names the
        cluster's Python (the driver's too, unless ``spark.pyspark.driver.python`` is set).
    :param codec: Parquet codec of the outputs (snappy, zstd, gzip, lz4, none); ORC outputs
        keep their inputs' compression, JSON/CSV/text their codec.
    :param sort_by: columns to sort each partition by (``"user_id,ts"`` or a list); replaces
        the spec's order (``compaction.sort-by`` or ``compaction.z-order-by``).
    :param z_order_by: 2 to 4 columns to cluster each partition by in Z-order; replaces the
        spec's order too.
    :param dry_run: only log the plan; templated (``"{{ params.dry_run }}"``).
    :param aws_conn_id: AWS connection for tables on S3 (None: the standard AWS chain); its
        credentials reach a local or standalone Spark application through spark-submit's
        environment, never its command line.
    :param submit_kwargs: e.g. ``num_executors``, ``executor_memory``, ``driver_memory``,
        passed to the Spark provider's ``SparkSubmitHook``.
    :param end_of_input: the streaming query has stopped for good (the task before ran
        it, e.g. with ``trigger(availableNow=True)``): every partition in its sink log is
        complete, whatever the watermark (``sink.partition-commit.end-input``); refused
        while the query is still writing a batch.
    :return: the run summary (files and bytes in and out, rows, seconds, per partition).
    """

    template_fields: Sequence[str] = ("table", "partitions", "conf", "dry_run")
    template_fields_renderers: ClassVar[dict[str, str]] = {"table": "json", "conf": "json"}
    ui_color = "#e8f4ea"

    def __init__(
        self,
        *,
        table: dict[str, Any] | TableSpec,
        partitions: str | Mapping[str, str] | list[Any] | None = None,
        conn_id: str = "spark_default",
        spark_binary: str | None = None,
        conf: dict[str, Any] | None = None,
        codec: str = "snappy",
        sort_by: str | Sequence[str] | None = None,
        z_order_by: str | Sequence[str] | None = None,
        dry_run: bool | str = False,
        aws_conn_id: str | None = None,
        submit_kwargs: dict[str, Any] | None = None,
        end_of_input: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = TableSpec.with_overrides(
            TableSpec.options_of(table, end_of_input),
            TableSpec.order_overrides(sort_by, z_order_by),
        )
        self.partitions = partitions
        self.conn_id = conn_id
        self.spark_binary = spark_binary
        self.conf = conf
        self.codec = codec
        self.dry_run = dry_run
        self.aws_conn_id = aws_conn_id
        self.submit_kwargs = submit_kwargs or {}
        self._hook: CompactionHook | None = None

    def execute(self, context: Any) -> dict[str, Any]:
        spec = TableSpec.from_options(self.table)
        partitions = None if self.partitions is None else spec.partition_paths(self.partitions)
        self._hook = CompactionHook(
            conn_id=self.conn_id,
            spark_binary=self.spark_binary,
            conf=self.conf,
            codec=self.codec,
            aws_conn_id=self.aws_conn_id,
            **self.submit_kwargs,
        )
        if _as_bool(self.dry_run, "dry_run"):
            preview = self._hook.preview(spec, partitions)
            for plan in preview.plans:
                self.log.info(
                    "plan %s: %d file(s), %d bytes -> %d unit(s)",
                    plan.partition,
                    len(plan.inputs),
                    plan.bytes,
                    len(plan.units),
                )
            for outcome in preview.settled:
                self.log.info("%s: %s", outcome.partition, outcome.state)
            self._log_unchanged(preview.unchanged)
            return preview.to_dict()
        result = self._hook.compact(spec, partitions)
        for outcome in result["partitions"]:
            self.log.info(
                "%s %s: %d file(s) -> %d, %d rows, %d -> %d bytes",
                outcome["partition"],
                outcome["state"],
                outcome["files_in"],
                outcome["files_out"],
                outcome["rows"],
                outcome["bytes_in"],
                outcome["bytes_out"],
            )
        self._log_unchanged(result["unchanged"])
        self.log.info(
            "compacted %d file(s) into %d, %d rows, in %s s",
            result["files_in"],
            result["files_out"],
            result["rows"],
            result["seconds"],
        )
        TableMetrics(spec).compaction(result)
        return result

    def _log_unchanged(self, count: int) -> None:
        if count:
            self.log.info(unchanged_text(count))

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """Inputs: the streaming query's output; output: the published table."""
        from airflow_provider_fscommit.lineage import compaction_lineage

        return compaction_lineage(TableSpec.from_options(self.table))

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.on_kill()


def _as_bool(value: bool | str, name: str) -> bool:
    """A templated flag: a template renders to text unless the DAG renders native objects."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ValueError(f"{name} must be true or false, not {value!r}")
