"""How Spark reads each engine's output: ``verify.py CONFIG`` (JSON).

The oracle is Spark itself, as downstream readers are: staging is read through its sink
log, each output directory with partition discovery, and for every partition the row
count and an order-independent checksum are computed, plus the data schema as Spark
infers it. Values are hashed as strings (``cast(... as string)``, session zone UTC), so a
checksum compares *values*: a timestamp read back as ``timestamp_ntz`` still matches, and
the type change shows in the schema instead. An output Spark cannot read is reported
with Spark's error.

Staging and every output are read as the workload's format: the published table has the
staged files' format, so a reader of it names that format.

CONFIG: ``staging``, ``format`` (``parquet`` or ``orc``), ``partitions`` (paths),
``outputs`` ({engine: directory}).
"""

from __future__ import annotations

import json
import sys

PARTITION_COLUMNS = ("dt", "hour")


def digest(df, columns: list[str], partitions: list[str]) -> dict[str, list]:
    """``{partition: [rows, checksum]}`` of the given partitions."""
    from pyspark.sql import functions as F

    path = F.concat(F.lit("dt="), F.col("dt"), F.lit("/hour="), F.col("hour"))
    hashed = F.xxhash64(*[F.col(c).cast("string") for c in columns]).cast("decimal(38,0)")
    rows = (
        df.where(path.isin(partitions))
        .groupBy(path.alias("partition"))
        .agg(F.count(F.lit(1)).alias("rows"), F.sum(hashed).alias("checksum"))
        .collect()
    )
    return {r["partition"]: [r["rows"], str(r["checksum"])] for r in rows}


def data_schema(df) -> list[dict]:
    return [f.jsonValue() for f in df.schema.fields if f.name not in PARTITION_COLUMNS]


def main() -> None:
    from pyspark.sql import SparkSession

    config = json.loads(sys.argv[1])
    spark = (
        SparkSession.builder.appName("fscommit-bench-verify")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    reader = spark.read.format(config["format"])
    staging = reader.load(config["staging"])
    columns = [f.name for f in staging.schema.fields if f.name not in PARTITION_COLUMNS]
    result = {
        "staging": {
            "schema": data_schema(staging),
            "partitions": digest(staging, columns, config["partitions"]),
        },
        "outputs": {},
    }
    for engine, directory in config["outputs"].items():
        try:
            df = reader.load(directory)
            missing = [c for c in columns if c not in df.columns]
            result["outputs"][engine] = {
                "schema": data_schema(df),
                "missing_columns": missing,
                "partitions": digest(df, columns, config["partitions"]) if not missing else {},
            }
        except Exception as exc:  # Spark's error for an unreadable output is the finding
            result["outputs"][engine] = {"error": f"{type(exc).__name__}: {str(exc)[:600]}"}
    spark.stop()
    print("BENCH_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
