"""One unit, rewritten in-process with pyarrow on files Spark wrote."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compaction.compactor import UnitTask, compact_task, hidden_name
from airflow_provider_fscommit.core.compaction.plan_schema import read_plan_schema


def spark_file(spark, directory: Path, sql: str) -> str:
    spark.sql(sql).coalesce(1).write.parquet(str(directory))
    return next(directory.glob("part-*.parquet")).as_uri()


def task(table: Path, inputs: list[str], schema_uris: list[str] | None = None) -> UnitTask:
    plan_schema = read_plan_schema(schema_uris or inputs)
    return UnitTask(
        table_path=str(table),
        partition="dt=1",
        plan_id="p1",
        unit=0,
        inputs=tuple(inputs),
        output="part-x.c000.snappy.parquet",
        codec="snappy",
        schema=plan_schema.schema.serialize().to_pybytes(),
        int96=plan_schema.int96,
        dictionary_columns=plan_schema.dictionary_columns,
    )


def test_a_column_added_mid_stream_is_merged_with_nulls_for_older_rows(spark, tmp_path):
    old = spark_file(spark, tmp_path / "a", "SELECT 1L AS id, timestamp'2026-11-20 01:00' AS ts")
    new = spark_file(
        spark, tmp_path / "b", "SELECT 2L AS id, timestamp'2026-11-20 02:00' AS ts, 'x' AS extra"
    )
    result = compact_task(task(tmp_path / "t", [old, new]))[0]
    assert result.error is None and result.rows == 2 and not result.copied
    output = tmp_path / "t" / "dt=1" / hidden_name("part-x.c000.snappy.parquet")
    visible = tmp_path / "visible.parquet"  # Spark will not read a hidden name
    visible.write_bytes(output.read_bytes())
    rows = spark.read.parquet(str(visible)).orderBy("id").collect()
    assert [(r.id, r.extra) for r in rows] == [(1, None), (2, "x")]
    assert pq.read_metadata(output).schema.column(1).physical_type == "INT96"


def test_a_single_input_with_the_plan_schema_is_copied_byte_for_byte(spark, tmp_path):
    only = spark_file(spark, tmp_path / "a", "SELECT 1L AS id")
    result = compact_task(task(tmp_path / "t", [only]))[0]
    assert result.copied and result.rows == 1
    output = tmp_path / "t" / "dt=1" / hidden_name("part-x.c000.snappy.parquet")
    assert output.read_bytes() == Path(only.removeprefix("file://")).read_bytes()


def test_outputs_dictionary_encode_the_columns_spark_dictionary_encoded(spark, tmp_path):
    sql = "SELECT id, CAST(id % 3 AS STRING) AS kind FROM range({}, {})"
    first = spark_file(spark, tmp_path / "a", sql.format(0, 5000))
    second = spark_file(spark, tmp_path / "b", sql.format(5000, 10000))
    spark_chunks = pq.read_metadata(first.removeprefix("file://")).row_group(0)
    assert [spark_chunks.column(i).has_dictionary_page for i in range(2)] == [False, True]
    assert read_plan_schema([first, second]).dictionary_columns == ("kind",)
    assert compact_task(task(tmp_path / "t", [first, second]))[0].rows == 10000
    output = tmp_path / "t" / "dt=1" / hidden_name("part-x.c000.snappy.parquet")
    chunks = pq.read_metadata(output).row_group(0)
    assert [chunks.column(i).has_dictionary_page for i in range(2)] == [False, True]
