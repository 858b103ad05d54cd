"""Naive Spark compaction: ``naive_spark.py MANIFEST OUT``, one spark-submit for all.

What a Spark user writes without fscommit: per partition, read its files and write them
back through ``coalesce(1)``. The time of the loop (without JVM start) is reported on a
``BENCH_RESULT`` line; the parent also times the whole application.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    from pyspark.sql import SparkSession

    manifest, out = json.loads(Path(sys.argv[1]).read_text()), sys.argv[2]
    spark = SparkSession.builder.appName("fscommit-bench-naive-spark").getOrCreate()
    started = time.monotonic()
    for partition in manifest["partitions"]:
        (
            spark.read.parquet(*partition["files"])
            .coalesce(1)
            .write.mode("errorifexists")
            .parquet(f"{out}/{partition['path']}")
        )
    seconds = time.monotonic() - started
    spark.stop()
    print("BENCH_RESULT " + json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
