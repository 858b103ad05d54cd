"""The ORC Footer's timestamp bounds, read from files Spark wrote."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from airflow_provider_fscommit.core.formats.orc_tail import read_footer, timestamp_range_ms

MS_2026 = 1_795_136_523_123  # 2026-11-20T01:02:03.123Z
MS_9999 = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def _spark_orc(spark, tmp_path, sql: str) -> bytes:
    spark.sql(sql).coalesce(1).write.orc(str(tmp_path / "orc"))
    (path,) = (tmp_path / "orc").glob("part-*.orc")
    return read_footer(pafs.LocalFileSystem(), str(path))


@pytest.fixture
def utc(spark):
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    yield
    spark.conf.set("spark.sql.session.timeZone", zone)


def test_the_bounds_span_every_timestamp_column_nested_ones_too(spark, tmp_path, utc):
    footer = _spark_orc(
        spark,
        tmp_path,
        "SELECT 1 AS id, timestamp'2026-11-20 01:02:03.123' AS t, "
        "named_struct('inner', timestamp'9999-12-31 23:59:59.999') AS s",
    )
    low, high = timestamp_range_ms(footer)
    assert low == MS_2026
    assert high == MS_9999


def test_a_file_without_timestamps_has_no_bounds(spark, tmp_path):
    footer = _spark_orc(spark, tmp_path, "SELECT 1 AS id, 'x' AS s, date'2026-11-20' AS d")
    assert timestamp_range_ms(footer) is None
