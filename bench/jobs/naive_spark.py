"""Naive Spark compaction: ``naive_spark.py MANIFEST OUT FORMAT``, one spark-submit for all.

What a Spark user writes without fscommit: per partition, read its files and write them
back through ``coalesce(1)`` in their format (``parquet`` or ``orc``), with Spark's
default codec for it (the one the workloads' sink wrote with). The time of the loop
(without JVM start) is reported on a ``BENCH_RESULT`` line; the parent also times the
whole application.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    from pyspark.sql import SparkSession

    manifest, out, file_format = json.loads(Path(sys.argv[1]).read_text()), *sys.argv[2:4]
    spark = SparkSession.builder.appName("fscommit-bench-naive-spark").getOrCreate()
    started = time.monotonic()
    for partition in manifest["partitions"]:
        (
            spark.read.format(file_format)
            .load(partition["files"])
            .coalesce(1)
            .write.format(file_format)
            .mode("errorifexists")
            .save(f"{out}/{partition['path']}")
        )
    seconds = time.monotonic() - started
    spark.stop()
    print("BENCH_RESULT " + json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
