"""Spark's schema in the footers of files Spark wrote, merged field by field when a
partition's files differ, so a compacted file reads back in Spark as its inputs did."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.formats.spark_metadata import (
    SPARK_SCHEMA_KEY,
    merged_footer_metadata,
)


def spark_schema(spark, directory: Path, sql: str) -> pa.Schema:
    spark.sql(sql).coalesce(1).write.parquet(str(directory))
    return pq.read_schema(next(directory.glob("part-*.parquet")))


def test_the_merged_spark_schema_holds_both_files_fields_an_added_one_nullable(spark, tmp_path):
    old = spark_schema(spark, tmp_path / "a", "SELECT 1L AS id, timestamp_ntz'2026-11-20' AS ts")
    new = spark_schema(
        spark, tmp_path / "b", "SELECT 2L AS id, timestamp_ntz'2026-11-20' AS ts, 'x' AS extra"
    )
    merged = pa.unify_schemas([old, new])
    fields = json.loads(merged_footer_metadata([old, new], merged, {"extra"})[SPARK_SCHEMA_KEY])
    assert fields["type"] == "struct"
    by_name = {f["name"]: f for f in fields["fields"]}
    assert [f["name"] for f in fields["fields"]] == ["id", "ts", "extra"]
    assert by_name["ts"]["type"] == "timestamp_ntz"  # what Parquet's own schema cannot say
    assert by_name["extra"] == {"name": "extra", "type": "string", "nullable": True, "metadata": {}}
    assert by_name["id"]["nullable"] is False


def test_without_a_spark_schema_in_every_input_the_merge_has_none(spark, tmp_path):
    spark_written = spark_schema(spark, tmp_path / "a", "SELECT 1L AS id")
    assert SPARK_SCHEMA_KEY in spark_written.metadata
    plain = pa.schema([("id", pa.int64())], metadata={b"writer": b"pyarrow"})
    merged = merged_footer_metadata([spark_written, plain], plain, ())
    assert SPARK_SCHEMA_KEY not in merged
    assert merged[b"writer"] == b"pyarrow"
