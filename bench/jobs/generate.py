"""Write a benchmark workload with a real Structured Streaming query: ``generate.py CONFIG``.

The compaction job only accepts what a Spark file sink really produced (its
``_spark_metadata`` log and the query's checkpoint), so the input is made the way
production makes it: a streaming query with a watermark, partitioned by ``dt, hour``,
written by Spark's own writer of the workload's format and codec (Parquet: snappy, INT96
timestamps; ORC: zstd, Spark's default). Rows are generated *inside*
the query from tiny seed files (one row per id range), so millions of rows cost one pass
of Spark expressions instead of a round trip through Python objects.

Micro-batches:

0. every seed of the workload; ``repartition(files)`` makes each task write one file in
   each hour partition (12 hours x 200 tasks = 2,400 files of ~100 KB for workload a);
1. one row two hours after the last data hour: it moves the watermark;
2. one more such row, so the latest committed batch *runs with* the moved watermark
   (``offsets/2``'s ``batchWatermarkMs``, the safe watermark fscommit reads) and every data
   hour is committable, while the hour of these two rows stays pending.

CONFIG is JSON: ``base`` (directory), ``files`` (tasks = files per hour), ``rows`` (total),
``hours``, ``start`` (ISO-8601 UTC hour), ``seed_files``, ``format`` (``parquet`` or
``orc``), ``codec``.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

WATERMARK_DELAY = "30 minutes"
_SEED_SCHEMA = pa.schema(
    [("first_id", pa.int64()), ("rows", pa.int64()), ("epoch_s", pa.int64()), ("hours", pa.int32())]
)


def typed_columns():
    """Spark expressions for every type family of ``fscommit_dev.streams.typed_schema``.

    About every third row is null everywhere but ``id`` and ``ts`` (as in ``typed_row``),
    chosen by a hash of the id: the hour is ``id % hours``, so ``id % 3`` would have made
    whole hours of nulls (4 of (a)'s 12) and the others null-free. A hash in ``s`` gives the
    strings realistic entropy, so file sizes are not flattered by perfectly regular data.
    """
    from pyspark.sql import functions as F

    def value(expression: str, name: str):
        null = F.expr("pmod(xxhash64(id), 3) = 0")
        return F.when(null, F.lit(None)).otherwise(F.expr(expression)).alias(name)

    return [
        F.col("id"),
        F.col("ts"),
        value("to_date(ts)", "d"),
        value("id % 2 = 0", "flag"),
        value("cast(id * 7 as int)", "i"),
        value("cast(id / 3.0 as float)", "f"),
        value("cast(id * 1.000001 as double)", "x"),
        value("cast((id % 1000) + 0.25 as decimal(5, 2))", "small_dec"),
        value("cast(id + 0.125 as decimal(12, 3))", "dec"),
        value(
            "cast(concat('123456789012345678901.', lpad(cast(id % 1000000 as string), 6, '0'))"
            " as decimal(30, 6))",
            "big_dec",
        ),
        value("concat('row ', id, ' ✓ ', substr(sha2(cast(id as string), 256), 1, 12))", "s"),
        value("unhex(concat(lpad(hex(id % 256), 2, '0'), '00ff'))", "bin"),
        value(
            "named_struct('a', cast(id as int), 't', ts, 'tags', array(concat('t', id), "
            "cast(null as string)))",
            "st",
        ),
        value("array(cast(id * 0.5 as double), cast(-1.0 as double))", "arr"),
        value("map('a', cast(id as int), 'b', cast(null as int))", "m"),
        value(
            "array(named_struct('k', 'k', 'v', id), named_struct('k', 'l', 'v', "
            "cast(null as bigint)))",
            "nested",
        ),
    ]


def write_seed(directory: Path, name: str, rows: list[tuple[int, int, int, int]]) -> None:
    """One seed file; the file source plans it into the next micro-batch."""
    directory.mkdir(parents=True, exist_ok=True)
    columns = list(zip(*rows, strict=True))
    table = pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, _SEED_SCHEMA, strict=True)],
        schema=_SEED_SCHEMA,
    )
    pq.write_table(table, directory / name)


def run_batch(spark, base: Path, files: int, file_format: str) -> None:
    """Process every new seed file (availableNow) with the workload's query."""
    from pyspark.sql import functions as F

    from fscommit_dev.streams import typed_schema

    seeds = spark.readStream.schema(_spark_seed_schema()).parquet(str(base / "seeds"))
    rows = seeds.select(
        F.explode(F.sequence("first_id", F.col("first_id") + F.col("rows") - 1)).alias("id"),
        "epoch_s",
        "hours",
    ).withColumn(
        "ts",
        F.timestamp_seconds(
            F.col("epoch_s") + (F.col("id") % F.col("hours")) * 3600 + (F.col("id") * 7919) % 3600
        ),
    )
    typed = rows.select(*typed_columns())
    if typed.schema.simpleString() != typed_schema(with_extra=False).simpleString():
        raise SystemExit(
            f"the generated schema is not fscommit_dev.streams.typed_schema: {typed.schema}"
        )
    query = (
        typed.withWatermark("ts", WATERMARK_DELAY)
        .repartition(files)
        .withColumn("dt", F.date_format("ts", "yyyy-MM-dd"))
        .withColumn("hour", F.date_format("ts", "HH"))
        .writeStream.format(file_format)
        .option("path", str(base / "staging"))
        .option("checkpointLocation", str(base / "checkpoint"))
        .partitionBy("dt", "hour")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


def _spark_seed_schema():
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("first_id", T.LongType()),
            T.StructField("rows", T.LongType()),
            T.StructField("epoch_s", T.LongType()),
            T.StructField("hours", T.IntegerType()),
        ]
    )


def main() -> None:
    config = json.loads(sys.argv[1])
    base = Path(config["base"])
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName("fscommit-bench-generate")
        .config("spark.sql.parquet.outputTimestampType", "INT96")
        .config(f"spark.sql.{config['format']}.compression.codec", config["codec"])
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    start = int(datetime.fromisoformat(config["start"].replace("Z", "+00:00")).timestamp())
    total, chunks = config["rows"], config["seed_files"]
    per_chunk = -(-total // chunks)
    for chunk in range(chunks):
        first = chunk * per_chunk
        count = min(per_chunk, total - first)
        if count > 0:
            write_seed(
                base / "seeds", f"0-{chunk:03d}.parquet", [(first, count, start, config["hours"])]
            )
    run_batch(spark, base, config["files"], config["format"])
    late = start + (config["hours"] + 2) * 3600
    for batch in (1, 2):
        write_seed(base / "seeds", f"{batch}.parquet", [(total + batch, 1, late, 1)])
        run_batch(spark, base, config["files"], config["format"])
    spark.stop()


if __name__ == "__main__":
    main()
