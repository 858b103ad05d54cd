"""The end-to-end demo behind ``make demo``: a real streaming query, then its commit status.

It starts a Spark Structured Streaming query on the built-in ``rate`` source, with an
event-time column that runs faster than the wall clock (so hours of partitions appear in
seconds) and some rows arriving 90 minutes late, written as Hive-style ``dt/hour``
partitions with a watermark. After a few micro-batches it stops the query, prints what
``fscommit status`` reports for the table (the safe watermark, which partitions are
committable), then compacts and publishes the committable partitions into
``demo-output/table`` with the compaction application, as ``fscommit compact`` does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from airflow_provider_fscommit.cli.compact import run_compact
from airflow_provider_fscommit.cli.main import render_status
from airflow_provider_fscommit.core.committable import TableStatusReader
from airflow_provider_fscommit.core.table_spec import TableSpec

EVENT_TIME_START = "2026-11-20 00:00:00"
SECONDS_OF_EVENT_TIME_PER_ROW = 20
ROWS_PER_SECOND = 30
LATE_EVERY_NTH_ROW = 7


def run_stream(output: Path, seconds: float) -> None:
    """Run the demo query for about ``seconds`` and stop it after a completed batch."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("fscommit-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
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
    while time.monotonic() < deadline:
        progress = query.lastProgress
        if progress and progress["batchId"] != reported:
            reported = progress["batchId"]
            watermark = progress.get("eventTime", {}).get("watermark", "-")
            print(f"  batch {reported}: {progress['numInputRows']} rows, watermark {watermark}")
        time.sleep(0.5)
    query.stop()
    spark.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("demo-output"))
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    output = args.output.resolve()
    shutil.rmtree(output, ignore_errors=True)
    run_stream(output, args.seconds)
    spec = TableSpec.from_options(
        {
            "staging_path": str(output / "staging"),
            "checkpoint_path": str(output / "checkpoint"),
            "partition_keys": "dt,hour",
            "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
            "sink.partition-commit.delay": "1 h",
            "table_path": str(output / "table"),
        }
    )
    print()
    print(render_status(TableStatusReader(spec).read()))
    print()
    print("Compacting the committable partitions into", spec.table_path)
    code = run_compact(
        spec,
        None,
        master="local[2]",
        spark_submit=None,
        conf={},
        codec="snappy",
        dry_run=False,
        as_json=False,
    )
    flags = (
        f"--staging {spec.staging_path} --checkpoint {spec.checkpoint_path} "
        "--partition-keys dt,hour --timestamp-pattern '$dt $hour:00:00' --delay '1 h'"
    )
    print(
        "\nLook again at any time with:\n"
        f"  .venv/bin/fscommit status {flags}\n"
        f"  .venv/bin/fscommit compact {flags} --table {spec.table_path}"
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
