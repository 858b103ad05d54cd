"""The application ``fscommit class-archive`` submits: its driver loads the classes a
compaction's driver loads, so the class archive its JVM writes as it exits holds them.

A session, a Parquet file written and read back, and a Python job over Arrow batches
(``mapInArrow``, as the compaction's units run): the session, the SQL planner and code
generator, the Parquet reader and writer, and the Python runner. A compaction's own classes
beyond these are few, and the JVM loads them as usual.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession


def _same(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield from batches


def main() -> None:
    spark = SparkSession.builder.appName("fscommit-class-archive").getOrCreate()
    try:
        with tempfile.TemporaryDirectory(prefix="fscommit-") as scratch:
            rows = spark.range(4).selectExpr("id", "cast(id as string) as s")
            rows.write.parquet(f"{scratch}/rows")
            back = spark.read.parquet(f"{scratch}/rows")
            if back.mapInArrow(_same, back.schema).count() != 4:
                raise SystemExit("the class archive's application read back the wrong rows")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
