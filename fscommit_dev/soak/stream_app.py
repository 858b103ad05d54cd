"""The soak's one Spark application: a live streaming query per table, until it is stopped.

``python -m fscommit_dev.soak.stream_app CONFIG.json`` (from the repository root, in a
process group of its own: :class:`StreamApp` starts it and stops it by PID). Each query
reads its table's input folder of JSON files (written whole, by rename), sets a watermark
on the event time, derives minute partitions ``dt/hour/minute`` and writes Parquet through
the file sink on a processing-time trigger. No state: a late row is written, into a
partition its DAG run may have committed already. The checkpoint keeps every batch's
offsets and commits (``minBatchesToRetain``), so the freshness of every partition can be
read off it after the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fscommit_dev.soak.tables import PARTITION_KEYS, SoakTable
from fscommit_dev.streams import ROOT, SPARK_TEST_CONF, TEST_JVM_OPTIONS, spark_env


def _queries(config: dict[str, Any]) -> None:
    """Start every table's query in one local[2] session and wait until one ends."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    builder = SparkSession.builder.master("local[2]").appName("fscommit-soak-streams")
    conf = SPARK_TEST_CONF | {
        # Every batch's offsets and commits kept: the run's freshness is read off them.
        "spark.sql.streaming.minBatchesToRetain": "100000",
        "spark.sql.streaming.fileSink.log.compactInterval": "10",
        "spark.sql.streaming.fileSink.log.cleanupDelay": "600000",
        "spark.driver.memory": "1g",
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("ts", T.TimestampType()),
            T.StructField("k", T.StringType()),
            T.StructField("v", T.DoubleType()),
        ]
    )
    for table in config["tables"]:
        df = (
            spark.readStream.schema(schema)
            .json(table["input"])
            .withWatermark("ts", f"{config['watermark_seconds']} seconds")
            .withColumn("dt", F.date_format("ts", "yyyy-MM-dd"))
            .withColumn("hour", F.date_format("ts", "HH"))
            .withColumn("minute", F.date_format("ts", "mm"))
        )
        (
            df.writeStream.format("parquet")
            .queryName(table["name"])
            .option("path", table["staging"])
            .option("checkpointLocation", table["checkpoint"])
            .partitionBy(*PARTITION_KEYS)
            .trigger(processingTime=f"{config['trigger_seconds']} seconds")
            .start()
        )
    spark.streams.awaitAnyTermination()


class StreamApp:
    """The running application (its own process group), started and stopped by PID."""

    def __init__(
        self, base: Path, tables: list[SoakTable], trigger_seconds: int, watermark_seconds: int
    ) -> None:
        self.base = base
        self.config = {
            "tables": [
                {
                    "name": t.name,
                    "input": str(t.input_dir),
                    "staging": str(t.staging),
                    "checkpoint": str(t.checkpoint),
                }
                for t in tables
            ],
            "trigger_seconds": trigger_seconds,
            "watermark_seconds": watermark_seconds,
        }
        self.process: subprocess.Popen | None = None

    @property
    def log(self) -> Path:
        return self.base / "stream-app.log"

    def start(self) -> StreamApp:
        self.base.mkdir(parents=True, exist_ok=True)
        for table in self.config["tables"]:
            Path(table["input"]).mkdir(parents=True, exist_ok=True)
        config = self.base / "stream-app.json"
        config.write_text(json.dumps(self.config, indent=1))
        env = spark_env()
        env.setdefault("SPARK_SUBMIT_OPTS", TEST_JVM_OPTIONS)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "fscommit_dev.soak.stream_app", str(config)],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, grace: float = 30) -> None:
        """SIGTERM the group (the JVM stops its queries), SIGKILL what is left."""
        if self.process is None:
            return
        for signum in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, signum)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + grace
            while self.process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            if self.process.poll() is not None:
                break
        # The JVM and Python workers of the group, were the Python parent gone first.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


if __name__ == "__main__":
    _queries(json.loads(Path(sys.argv[1]).read_text()))
