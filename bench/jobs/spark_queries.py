"""The layout suite's selective queries by Spark: ``spark_queries.py ARGUMENTS`` (JSON).

Per table and query: the answer, the fastest of ``reps`` runs and the bytes the JVM read
during the last run (its ``/proc/<pid>/io`` ``rchar``; ``local[1]``, so the JVM is the
reader): Spark's Parquet reader skips row groups by their statistics and pages by the
page index.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.measure import print_result  # noqa: E402


def read_bytes(pid: int) -> int:
    """What process ``pid`` has read so far (``rchar``: every read call's bytes, from the
    page cache or the disk): Spark's own task metric misses the Parquet reader's reads."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/{pid}/io has no rchar")


def main() -> None:
    from pyspark.sql import SparkSession

    arguments = json.loads(sys.argv[1])
    spark = (
        SparkSession.builder.appName("fscommit-bench-queries")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    results: dict = {}
    for table, directory in arguments["tables"].items():
        for query, predicate in arguments["predicates"].items():
            best, answer, read = None, None, None
            for _ in range(arguments["reps"]):
                before = read_bytes(jvm)
                started = time.monotonic()
                row = (
                    spark.read.parquet(directory)
                    .where(predicate)
                    .selectExpr("count(*)", "sum(i)")
                    .first()
                )
                took = time.monotonic() - started
                answer, read = [row[0], row[1]], read_bytes(jvm) - before
                best = took if best is None else min(best, took)
            results.setdefault(table, {})[query] = {
                "answer": answer,
                "seconds": best,
                "bytes_read": read,
            }
    spark.stop()
    print_result(results)


if __name__ == "__main__":
    main()
