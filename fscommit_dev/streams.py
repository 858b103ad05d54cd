"""Real Spark Structured Streaming queries for the tests: a file source, a watermark and a
partitioned Parquet file sink, fed one JSON input file per micro-batch.

The same query definition runs in the test process (``StreamingTable.run``) and in a child
process (``stream_job.py``) that a test can SIGKILL in the middle of a batch.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from fscommit_dev.relocate import rewrite_paths

ROOT = Path(__file__).resolve().parents[1]
BLOCK_VALUE = "__block__"
# Input files get increasing modification times from here, so the file source (which
# orders new files by modification time) takes exactly one file per batch, in order.
_INPUT_MTIME_BASE = 1_700_000_000
# Where a child query (stream_job.py) appends its progress, one JSON object a line.
CHILD_PROGRESS = "child-progress.jsonl"
# The name of a file of Spark's metadata logs (the sink's, the file source's, offsets and
# commits): the batch id, ``.compact`` after a compaction.
LOG_FILE = re.compile(r"\d+(\.compact)?")

# The JVMs the suite's Spark starts (every spark-submit, the sessions, the Connect
# servers) each live seconds: with C1 alone and the serial collector a spark-submit of a
# small job costs about half the CPU here (15 s of user time down to 8 s), and the suite
# is CPU-bound on two cores. What the JVM computes is the same. tests/conftest.py sets it.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

SPARK_TEST_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    # Small so that a few batches exercise sink-log compaction and checkpoint purging.
    "spark.sql.streaming.fileSink.log.compactInterval": "3",
    "spark.sql.streaming.fileSink.log.cleanupDelay": "0",
    "spark.sql.streaming.minBatchesToRetain": "3",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
}


def spark_env(python: str = sys.executable) -> dict[str, str]:
    """Spark on loopback, its driver and workers on ``python`` (whose pyspark runs)."""
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYSPARK_PYTHON"] = python
    env["PYSPARK_DRIVER_PYTHON"] = python
    if python != sys.executable:  # another Spark line: its own pyspark, not ours
        env.pop("SPARK_HOME", None)
        env.pop("PYTHONPATH", None)
    return env


def new_spark_session(app_name: str = "fscommit-tests"):
    """A local[2] session configured like the streaming queries in the tests."""
    os.environ.update(spark_env())
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName(app_name)
    for key, value in SPARK_TEST_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def row(row_id: int, ts: str, k: str | None = "x", v: float = 1.0) -> dict[str, Any]:
    """One input record; ``ts`` is ISO-8601 with an offset, e.g. ``2026-11-20T03:10:00Z``."""
    return {"id": row_id, "ts": ts, "k": k, "v": v}


@dataclass
class QueryDirs:
    """A test query's directories under ``base`` and its ordered input files."""

    base: Path
    batches_written: int = 0

    @property
    def staging(self) -> str:
        return str(self.base / "staging")

    @property
    def checkpoint(self) -> str:
        return str(self.base / "checkpoint")

    @property
    def input_dir(self) -> Path:
        return self.base / "input"

    def _next_input(self, suffix: str) -> Path:
        self.input_dir.mkdir(parents=True, exist_ok=True)
        return self.input_dir / f"batch-{self.batches_written:05d}.{suffix}"

    def _added(self, path: Path) -> None:
        """Order the new input after the others (the source orders by mtime)."""
        mtime = _INPUT_MTIME_BASE + self.batches_written
        os.utime(path, (mtime, mtime))
        self.batches_written += 1


def hourly_batches(day: str, hours: range, start_id: int = 0) -> list[list[dict[str, Any]]]:
    """One batch per hour: three rows inside that hour (ids 10 * hour + 0..2)."""
    return [
        [row(start_id + 10 * h + i, f"{day}T{h:02d}:{20 * i:02d}:00Z") for i in range(3)]
        for h in hours
    ]


@dataclass
class StreamingTable(QueryDirs):
    """A streaming query's input, checkpoint and staging output under ``base``."""

    partition_by: tuple[str, ...] = ("dt", "hour")
    watermark_delay: str | None = "30 minutes"
    stateful: bool = False
    time_zone: str = "UTC"
    offset_log_version: int = 1
    blockable: bool = False
    # Live: a query that runs until killed, a micro-batch whenever input arrives.
    live: bool = False
    spark_conf: dict[str, str] = field(default_factory=dict)
    # The sink's format and options (e.g. {"compression": "gzip", "header": "true"}).
    file_format: str = "parquet"
    sink_options: dict[str, str] = field(default_factory=dict)
    progress: list[dict[str, Any]] = field(default_factory=list)
    # The Python whose pyspark runs the query in a child (another Spark line's venv).
    python: str = sys.executable

    def add_batches(self, *batches: list[dict[str, Any]]) -> None:
        """Write one input file per batch; the next run processes them in order.

        Each file is written under a hidden name and renamed, so a live query never
        reads one half-written.
        """
        for batch in batches:
            path = self._next_input("json")
            hidden = path.with_name(f".{path.name}")
            hidden.write_text("".join(json.dumps(r) + "\n" for r in batch))
            self._added(hidden)
            hidden.rename(path)

    def config(self) -> dict[str, Any]:
        return {
            "base": str(self.base),
            "partition_by": list(self.partition_by),
            "watermark_delay": self.watermark_delay,
            "stateful": self.stateful,
            "time_zone": self.time_zone,
            "offset_log_version": self.offset_log_version,
            "blockable": self.blockable,
            "live": self.live,
            "spark_conf": self.spark_conf,
            "file_format": self.file_format,
            "sink_options": self.sink_options,
        }

    def run(self, spark) -> list[dict[str, Any]]:
        """Process every new input file (availableNow), one batch per file, and wait."""
        progress = run_query(spark, self.config())
        self.progress.extend(progress)
        return progress

    @property
    def last_watermark_ms(self) -> int:
        """The watermark Spark reports for its last executed batch (the oracle)."""
        iso = self.progress[-1]["eventTime"]["watermark"]
        return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)

    def copy_to(self, base: Path) -> StreamingTable:
        """This table as a new one under ``base``, which a test may change or run further.

        Spark's logs name files by absolute path: the sink log its data files, the file
        source's log its inputs (what a restarted query skips). Every log file (``N`` or
        ``N.compact``, wherever it is kept) is rewritten to the copy's paths, and its Hadoop
        checksum file (``.N.crc``) dropped, as Hadoop reads a file without one unchecked;
        modification times are kept, so the source orders its inputs as before. State
        store files name no path. What a builder noted on the table (``killed_mid_batch``'s
        orphans and files at the kill) is moved along.
        """
        shutil.copytree(self.base, base, symlinks=True)
        for path in base.rglob("*"):
            is_log = LOG_FILE.fullmatch(path.name) and path.is_file()
            if is_log and rewrite_paths(path, str(self.base), str(base)):
                path.with_name(f".{path.name}.crc").unlink(missing_ok=True)
        copy = replace(self, base=base, progress=list(self.progress))
        declared = {f.name for f in fields(self)}
        for name, value in vars(self).items():
            if name not in declared:  # noted by a builder: paths under base, or lists of them
                setattr(copy, name, _rebased(value, self.base, base))
        return copy

    def run_child(self) -> list[dict[str, Any]]:
        """Process every new input file in a child on ``python``; its progress, kept."""
        child = self.run_in_child()
        if child.wait(timeout=300) != 0:
            raise RuntimeError(f"the child query failed; see {self.base}/child.log")
        return self.child_progress()

    def child_progress(self) -> list[dict[str, Any]]:
        """``progress`` with what children reported since it was last read."""
        reported = self.base / CHILD_PROGRESS
        if reported.exists():
            self.progress.extend(json.loads(line) for line in reported.read_text().splitlines())
            reported.unlink()
        return self.progress

    def run_in_child(self, block: bool = False) -> subprocess.Popen:
        """Start the query in its own process group (``stream_job.py``) on ``python``.

        The child appends the progress of the batches it finished to ``progress``'s file
        (:meth:`child_progress`); a killed child reports none.
        """
        env = spark_env(self.python)
        if block:
            env["FSCOMMIT_TEST_BLOCK_SIGNAL"] = str(self.base / "blocked")
        return subprocess.Popen(
            [
                self.python,
                str(ROOT / "fscommit_dev" / "stream_job.py"),
                json.dumps(self.config()),
            ],
            env=env,
            cwd=str(self.base),
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=open(self.base / "child.log", "ab"),
        )


def run_query(spark, config: dict[str, Any]) -> list[dict[str, Any]]:
    """Build and run the test query described by ``config``; returns its progress."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("ts", T.TimestampType()),
            T.StructField("k", T.StringType()),
            T.StructField("v", T.DoubleType()),
        ]
    )
    query_conf = {
        "spark.sql.session.timeZone": config["time_zone"],
        "spark.sql.streaming.offsetLog.formatVersion": str(config["offset_log_version"]),
    } | config.get("spark_conf", {})
    if config["stateful"]:
        # RocksDB with state checkpoint format 2 makes Spark write commit log v2.
        query_conf["spark.sql.streaming.stateStore.providerClass"] = (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        )
        query_conf["spark.sql.streaming.stateStore.checkpointFormatVersion"] = "2"
    previous = {key: spark.conf.get(key, None) for key in query_conf}
    for key, value in query_conf.items():
        spark.conf.set(key, value)
    trigger = (
        {"processingTime": "200 milliseconds"} if config.get("live") else {"availableNow": True}
    )
    try:
        df = (
            spark.readStream.schema(schema)
            .option("maxFilesPerTrigger", 1)
            .json(str(Path(config["base"]) / "input"))
        )
        if config["watermark_delay"]:
            df = df.withWatermark("ts", config["watermark_delay"])
        if config["stateful"]:
            df = df.dropDuplicates(["id", "ts"])
        if config.get("blockable"):
            df = df.repartition(2, "id").withColumn("k", _blocking_udf()(F.col("k")))
        df = df.withColumn("dt", F.date_format("ts", "yyyy-MM-dd")).withColumn(
            "hour", F.date_format("ts", "HH")
        )
        file_format = config.get("file_format", "parquet")
        if file_format == "text":  # one string column: the row as JSON
            df = df.select(
                F.to_json(F.struct("id", "ts", "k", "v")).alias("value"), *config["partition_by"]
            )
        query = (
            df.writeStream.format(file_format)
            .options(**config.get("sink_options", {}))
            .option("path", str(Path(config["base"]) / "staging"))
            .option("checkpointLocation", str(Path(config["base"]) / "checkpoint"))
            .partitionBy(*config["partition_by"])
            .trigger(**trigger)
            .start()
        )
        query.awaitTermination()
        return list(query.recentProgress)
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _blocking_udf():
    """A UDF that hangs on the marker row, so its task never finishes (to be killed)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    signal_path = os.environ.get("FSCOMMIT_TEST_BLOCK_SIGNAL")

    def passthrough(value):
        if value == BLOCK_VALUE and signal_path:
            Path(signal_path).touch()
            time.sleep(3600)
        return value

    return F.udf(passthrough, T.StringType())


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the child and everything it started (its JVM, Python workers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def typed_schema(with_extra: bool):
    """Every type family of the fidelity invariant; ``extra`` is added mid-stream."""
    from pyspark.sql import types as T

    fields = [
        T.StructField("id", T.LongType()),
        T.StructField("ts", T.TimestampType()),
        T.StructField("d", T.DateType()),
        T.StructField("flag", T.BooleanType()),
        T.StructField("i", T.IntegerType()),
        T.StructField("f", T.FloatType()),
        T.StructField("x", T.DoubleType()),
        T.StructField("small_dec", T.DecimalType(5, 2)),
        T.StructField("dec", T.DecimalType(12, 3)),
        T.StructField("big_dec", T.DecimalType(30, 6)),
        T.StructField("s", T.StringType()),
        T.StructField("bin", T.BinaryType()),
        T.StructField(
            "st",
            T.StructType(
                [
                    T.StructField("a", T.IntegerType()),
                    T.StructField("t", T.TimestampType()),
                    T.StructField("tags", T.ArrayType(T.StringType())),
                ]
            ),
        ),
        T.StructField("arr", T.ArrayType(T.DoubleType())),
        T.StructField("m", T.MapType(T.StringType(), T.IntegerType())),
        T.StructField(
            "nested",
            T.ArrayType(
                T.StructType([T.StructField("k", T.StringType()), T.StructField("v", T.LongType())])
            ),
        ),
    ]
    if with_extra:
        fields.append(T.StructField("extra", T.StringType()))
    return T.StructType(fields)


def typed_row(row_id: int, ts: str, with_extra: bool) -> tuple:
    """A row with values (and, for every third id, nulls) in every column."""
    from decimal import Decimal

    moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    values: tuple = (
        row_id,
        moment,
        moment.date(),
        row_id % 2 == 0,
        row_id * 7,
        row_id / 3.0,
        row_id * 1.000001,
        Decimal(f"{row_id % 1000}.25"),
        Decimal(f"{row_id}.125"),
        Decimal(f"123456789012345678901.{row_id:06d}"),
        f"row {row_id} ✓",
        bytes([row_id % 256, 0, 255]),
        (row_id, moment, [f"t{row_id}", None]),
        [row_id * 0.5, -1.0],
        {"a": row_id, "b": None},
        [("k", row_id), ("l", None)],
    )
    if row_id % 3 == 0:  # nulls everywhere but the key and the event time
        values = values[:2] + (None,) * (len(values) - 2)
    return values + ((f"extra {row_id}" if row_id % 3 else None,) if with_extra else ())


@dataclass
class TypedTable(QueryDirs):
    """A streaming table of every type family, fed from Spark-written Parquet files."""

    timestamp_type: str = "INT96"
    file_format: str = "parquet"  # the query's sink

    def add_batch(self, spark, rows: list[tuple[int, str]], with_extra: bool) -> None:
        """Write one input Parquet file (one micro-batch) with Spark's batch writer."""
        schema = typed_schema(with_extra)
        data = [typed_row(i, ts, with_extra) for i, ts in rows]
        scratch = self.base / "scratch" / str(self.batches_written)
        spark.createDataFrame(data, schema).coalesce(1).write.parquet(str(scratch))
        target = self._next_input("parquet")
        next(scratch.glob("part-*.parquet")).rename(target)
        self._added(target)

    def run(self, spark, with_extra: bool) -> None:
        from pyspark.sql import functions as F

        previous = spark.conf.get("spark.sql.parquet.outputTimestampType")
        spark.conf.set("spark.sql.parquet.outputTimestampType", self.timestamp_type)
        try:
            df = (
                spark.readStream.schema(typed_schema(with_extra))
                .option("maxFilesPerTrigger", 1)
                .parquet(str(self.input_dir))
                .withWatermark("ts", "30 minutes")
                .withColumn("dt", F.date_format("ts", "yyyy-MM-dd"))
                .withColumn("hour", F.date_format("ts", "HH"))
            )
            query = (
                df.writeStream.format(self.file_format)
                .option("path", self.staging)
                .option("checkpointLocation", self.checkpoint)
                .partitionBy("dt", "hour")
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
        finally:
            spark.conf.set("spark.sql.parquet.outputTimestampType", previous)


def killed_mid_batch(table: StreamingTable, *then: list[dict]) -> StreamingTable:
    """Run ``table``'s query in a child, SIGKILL it in an hour-02 batch, and restart it.

    The batch's task that meets the marker row hangs; the other task finishes and leaves
    its part files in staging. They never reach the sink log: after the kill and the
    restart (which redoes the batch, then runs the batches ``then``) they are orphans,
    kept as ``table.orphans_at_kill``.
    """
    table.add_batches(
        [row(200 + i, f"2026-11-20T02:{5 * i:02d}:00Z") for i in range(10)]
        + [row(299, "2026-11-20T02:59:00Z", k=BLOCK_VALUE)],
        *then,
    )
    child = table.run_in_child(block=True)
    try:
        blocked = table.base / "blocked"
        deadline = time.monotonic() + 240
        while not (blocked.exists() and _part_files(table, "hour=02")):
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the child query did not block; see {table.base}/child.log")
            time.sleep(0.5)
        time.sleep(2)  # let the other task close its files
    finally:
        kill_group(child)
    table.orphans_at_kill = sorted(_part_files(table, "hour=02"))  # type: ignore[attr-defined]
    # The checkpoint and sink log as the kill left them (an offset without its commit),
    # kept for the tests of what a query that is still writing looks like.
    at_kill = table.base / "at-kill"
    shutil.copytree(table.checkpoint, at_kill / "checkpoint")
    shutil.copytree(Path(table.staging, "_spark_metadata"), at_kill / "staging" / "_spark_metadata")
    table.at_kill = at_kill  # type: ignore[attr-defined]
    restarted = table.run_in_child(block=False)
    if restarted.wait(timeout=300) != 0:
        raise RuntimeError(f"the restarted query failed; see {table.base}/child.log")
    table.child_progress()
    return table


def _rebased(value: Any, old: Path, new: Path) -> Any:
    """``value`` (a path or a list of paths) with the ones under ``old`` moved to ``new``."""
    if isinstance(value, list):
        return [_rebased(v, old, new) for v in value]
    if isinstance(value, Path) and value.is_relative_to(old):
        return new / value.relative_to(old)
    return value


def _part_files(table: StreamingTable, partition_dir: str) -> list[Path]:
    return [p for p in Path(table.staging).rglob("part-*") if partition_dir in str(p)]
