"""The layout suite's selective queries by Spark: ``spark_queries.py ARGUMENTS`` (JSON).

Per table and query: the answer, the fastest of ``reps`` runs and the input bytes its
stages read (Spark's own task metrics, from its status API): Spark's Parquet reader skips
row groups by their statistics and pages by the page index.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.measure import print_result  # noqa: E402


def input_bytes(spark, group: str) -> int:
    """The input bytes of every stage of the jobs of ``group``."""
    context = spark.sparkContext
    tracker = context.statusTracker()
    stages = {
        s for job in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(job).stageIds
    }
    url = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}/stages"
    with urllib.request.urlopen(url, timeout=30) as response:
        listed = json.load(response)
    return sum(s["inputBytes"] for s in listed if s["stageId"] in stages)


def main() -> None:
    from pyspark.sql import SparkSession

    arguments = json.loads(sys.argv[1])
    spark = (
        SparkSession.builder.appName("fscommit-bench-queries")
        .config("spark.ui.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    results: dict = {}
    for table, directory in arguments["tables"].items():
        for query, predicate in arguments["predicates"].items():
            best, answer, read = None, None, None
            for rep in range(arguments["reps"]):
                group = f"{table}-{query}-{rep}"
                spark.sparkContext.setJobGroup(group, group)
                started = time.monotonic()
                row = (
                    spark.read.parquet(directory)
                    .where(predicate)
                    .selectExpr("count(*)", "sum(i)")
                    .first()
                )
                took = time.monotonic() - started
                answer, read = [row[0], row[1]], input_bytes(spark, group)
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
