"""The end-to-end demo behind ``make demo``: stream, compact, commit, query through Hive.

1. Starts a real Hive metastore on 127.0.0.1 (from pyspark's jars) and a Spark session
   using it.
2. Runs a Spark Structured Streaming query on the built-in ``rate`` source, with an
   event-time column that runs faster than the wall clock (hours of partitions appear in
   seconds) and some rows arriving 90 minutes late, written as Hive-style ``dt/hour``
   partitions with a watermark, then stops it.
3. Prints what ``fscommit status`` reports: the safe watermark, committable partitions.
4. Commits the committable partitions as ``fscommit commit`` does: the compaction
   application publishes them into ``demo-output/table``, then the ``metastore`` and
   ``success-file`` policies make them visible.
5. Reads the Hive table with Spark SQL and shows its rows per partition next to what the
   sink log holds for the same partitions.

``--catalog iceberg`` (``make demo-iceberg``) commits to an Apache Iceberg table instead:
pyiceberg's SQL catalog on SQLite under ``demo-output/iceberg`` (no metastore), the
``iceberg`` and ``success-file`` policies, the table created on the first commit and read
back with pyiceberg, with the snapshot and the completeness it carries.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from airflow_provider_fscommit.cli.commit import run_commit
from airflow_provider_fscommit.cli.compaction import SparkOptions
from airflow_provider_fscommit.cli.status import render_status
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.status.committable import PartitionState
from airflow_provider_fscommit.core.status.completeness import read_completeness
from airflow_provider_fscommit.core.status.table_report import TableReport, read_table_report
from fscommit_dev.metastore import server as metastore_server

EVENT_TIME_START = "2026-11-20 00:00:00"
SECONDS_OF_EVENT_TIME_PER_ROW = 20
ROWS_PER_SECOND = 30
LATE_EVERY_NTH_ROW = 7
# Completed batches before the demo stops its query, and how long past its time it waits
# for them. Here, 16 s gave batch 0 (no rows) and batch 1 with watermark 0; batch 2 ran with
# 00:29, past the commit time of the late rows' hour (2026-11-19 22:00 plus 1 h).
BATCHES_TO_COMMIT = 4
GRACE_S = 120.0


def spark_session(metastore_uri: str | None, warehouse: Path):
    """A local session; with ``metastore_uri``, its Hive support uses that metastore."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("fscommit-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
    )
    if metastore_uri is not None:
        builder = builder.config("hive.metastore.uris", metastore_uri).enableHiveSupport()
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_stream(spark, output: Path, seconds: float) -> None:
    """Run the demo query for about ``seconds``, and on until it has completed
    ``BATCHES_TO_COMMIT`` batches (at most ``GRACE_S`` longer): the first batches run
    before any watermark, so on a loaded machine whose first batches take the whole time
    nothing would be committable yet."""
    from pyspark.sql import functions as F

    offset = F.col("value") * SECONDS_OF_EVENT_TIME_PER_ROW - F.when(
        F.col("value") % LATE_EVERY_NTH_ROW == 0, 90 * 60
    ).otherwise(0)
    events = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", ROWS_PER_SECOND)
        .load()
        .withColumn(
            "event_time",
            F.timestamp_seconds(F.unix_timestamp(F.lit(EVENT_TIME_START)) + offset),
        )
        .withWatermark("event_time", "10 minutes")
        .withColumn("dt", F.date_format("event_time", "yyyy-MM-dd"))
        .withColumn("hour", F.date_format("event_time", "HH"))
    )
    query = (
        events.writeStream.format("parquet")
        .option("path", str(output / "staging"))
        .option("checkpointLocation", str(output / "checkpoint"))
        .partitionBy("dt", "hour")
        .trigger(processingTime="2 seconds")
        .start()
    )
    print(f"streaming query started: {output / 'staging'} (checkpoint {output / 'checkpoint'})")
    deadline = time.monotonic() + seconds
    reported = -1
    while True:
        progress = query.lastProgress
        if progress and progress["batchId"] != reported:
            reported = progress["batchId"]
            watermark = progress.get("eventTime", {}).get("watermark", "-")
            print(f"  batch {reported}: {progress['numInputRows']} rows, watermark {watermark}")
        late = time.monotonic() - deadline
        if late >= GRACE_S or (late >= 0 and reported + 1 >= BATCHES_TO_COMMIT):
            break
        time.sleep(0.5)
    query.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("demo-output"))
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--catalog",
        choices=("hive", "iceberg"),
        default="hive",
        help="commit to a Hive metastore table (default) or an Apache Iceberg table",
    )
    args = parser.parse_args(argv)
    output = args.output.resolve()
    shutil.rmtree(output, ignore_errors=True)
    if args.catalog == "iceberg":
        return demo_iceberg(output, args.seconds)
    metastore = metastore_server.start(output / "metastore")
    print(f"Hive metastore {metastore.uri} (pid {metastore.pid})")
    try:
        return demo(output, args.seconds, metastore.uri)
    finally:
        metastore_server.stop(output / "metastore")


def demo(output: Path, seconds: float, metastore_uri: str) -> int:
    spark = spark_session(metastore_uri, output / "metastore" / "warehouse")
    try:
        run_stream(spark, output, seconds)
        table = output / "table"
        spark.sql("CREATE DATABASE IF NOT EXISTS fscommit_demo")
        spark.sql(
            "CREATE TABLE fscommit_demo.events (timestamp TIMESTAMP, value BIGINT, "
            "event_time TIMESTAMP) PARTITIONED BY (dt STRING, hour STRING) STORED AS PARQUET "
            f"LOCATION '{table}'"
        )
        spec = demo_spec(output, {"sink.partition-commit.policy.kind": "metastore,success-file"})
        report, code = status_and_commit(spec, "the metastore", metastore_uri)
        print("\nThe Hive table fscommit_demo.events, read by Spark SQL through the metastore:")
        spark.sql("REFRESH TABLE fscommit_demo.events")
        spark.sql(
            "SELECT dt, hour, count(*) AS rows FROM fscommit_demo.events "
            "GROUP BY dt, hour ORDER BY dt, hour"
        ).show(50, truncate=False)
        committed = [p.partition for p in report.in_state(PartitionState.COMMITTABLE)]
        staged = spark.read.option("basePath", spec.staging_path).parquet(spec.staging_path)
        print(
            f"Rows in the sink log for the same {len(committed)} partition(s): "
            f"{staged.where(_partition_filter(committed)).count()}"
        )
    finally:
        spark.stop()
    flags = (
        f"--staging-path {spec.staging_path} --checkpoint-path {spec.checkpoint_path} "
        f"--table-path {spec.table_path} --partition-keys dt,hour "
        "--timestamp-pattern '$dt $hour:00:00' --delay '1 h'"
    )
    print(f"\nLook again at any time with:\n  .venv/bin/fscommit status {flags}")
    return code


def demo_spec(output: Path, options: dict[str, str]) -> TableSpec:
    """The demo's table (hourly ``dt/hour`` partitions, 1 h delay) with ``options``."""
    return TableSpec.from_options(
        {
            "staging_path": str(output / "staging"),
            "checkpoint_path": str(output / "checkpoint"),
            "table_path": str(output / "table"),
            "partition_keys": "dt,hour",
            "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
            "sink.partition-commit.delay": "1 h",
            "metastore_database": "fscommit_demo",
            "metastore_table": "events",
        }
        | options
    )


def status_and_commit(
    spec: TableSpec, catalog: str, metastore_uri: str | None
) -> tuple[TableReport, int]:
    """Print the table's status, then commit what is committable as ``fscommit commit``
    does; the status it printed and the command's exit code."""
    report = read_table_report(spec)
    print()
    print(render_status(report, read_completeness(report)))
    print()
    print(f"Committing the committable partitions into {spec.table_path} and {catalog}")
    code = run_commit(
        spec,
        None,
        metastore_uri=metastore_uri,
        spark=SparkOptions(master="local[2]"),
        dry_run=False,
        as_json=False,
    )
    return report, code


def demo_iceberg(output: Path, seconds: float) -> int:
    """The demo committing to an Iceberg table of pyiceberg's SQL catalog (SQLite)."""
    spark = spark_session(None, output / "warehouse")
    catalog = {
        "type": "sql",
        "uri": f"sqlite:///{output / 'iceberg' / 'catalog.db'}",
        "warehouse": f"file://{output / 'iceberg' / 'warehouse'}",
    }
    (output / "iceberg").mkdir(parents=True)
    try:
        run_stream(spark, output, seconds)
        spec = demo_spec(
            output,
            {"sink.partition-commit.policy.kind": "iceberg,success-file"}
            | {"iceberg.create-table": "true"}
            | {f"iceberg.catalog.{key}": value for key, value in catalog.items()},
        )
        report, code = status_and_commit(spec, "Iceberg", None)
        committed = [p.partition for p in report.in_state(PartitionState.COMMITTABLE)]
        staged = spark.read.option("basePath", spec.staging_path).parquet(spec.staging_path)
        staged_rows = staged.where(_partition_filter(committed)).count()
    finally:
        spark.stop()
    _show_iceberg_table(catalog)
    print(f"Rows in the sink log for the same {len(committed)} partition(s): {staged_rows}")
    return code


def _show_iceberg_table(catalog: dict[str, str]) -> None:
    """The Iceberg table as pyiceberg reads it: rows per partition, its snapshot, and the
    completeness the commit put in its properties."""
    from collections import Counter

    from pyiceberg.catalog import load_catalog

    table = load_catalog("default", **catalog).load_table("fscommit_demo.events")
    rows = table.scan(selected_fields=("dt", "hour")).to_arrow().to_pylist()
    counts = Counter((r["dt"], r["hour"]) for r in rows)
    print("\nThe Iceberg table fscommit_demo.events, read by pyiceberg:")
    print("dt          hour  rows")
    for (dt, hour), n in sorted(counts.items()):
        print(f"{dt}  {hour}    {n}")
    snapshot = table.current_snapshot()
    if snapshot is not None:
        summary = snapshot.summary or {}
        print(
            f"snapshot {snapshot.snapshot_id}: {summary.get('added-data-files', 0)} data files "
            f"added, fscommit.watermark {summary.get('fscommit.watermark')}"
        )
    for key in ("fscommit.complete-through", "fscommit.watermark"):
        print(f"table property {key} = {table.properties.get(key)}")
    print(f"metadata: {table.metadata_location}")


def _partition_filter(paths: list[str]) -> str:
    clauses = []
    for path in paths:
        values = dict(part.split("=", 1) for part in path.split("/"))
        clauses.append(f"(dt = '{values['dt']}' AND hour = '{values['hour']}')")
    return " OR ".join(clauses) or "false"


if __name__ == "__main__":
    raise SystemExit(main())
