"""Partition column statistics: Parquet and ORC footers merged exactly (files written by
Spark's Java writers and by pyarrow, which compaction uses), written where Hive's readers
look."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from hmsclient.genthrift.hive_metastore import ttypes

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ColumnStatisticsError, ConfigError
from airflow_provider_fscommit.core.formats.column_statistics import (
    ColumnStatistics,
    StatsKind,
    partition_column_statistics,
)
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from fscommit_dev.metastore.client import hive_sql, metastore_committer, thrift_client
from fscommit_dev.streams import StreamingTable, row
from tests.support.compaction import compact, table_options

DAY = "dt=2026-11-20"
EPOCH = datetime.date(1970, 1, 1)
LOCAL = pafs.LocalFileSystem()


def days(date: datetime.date) -> int:
    return (date - EPOCH).days


def parquet_statistics(*paths: Path) -> list[ColumnStatistics]:
    return partition_column_statistics(LOCAL, [str(p) for p in paths], FileFormat.PARQUET)


def orc_statistics(*paths: Path) -> list[ColumnStatistics]:
    return partition_column_statistics(LOCAL, [str(p) for p in paths], FileFormat.ORC)


def two_files() -> tuple[pa.Table, pa.Table]:
    """Nulls, an all-null chunk, dates, strings and a small integer column."""
    day = datetime.date
    first = pa.table(
        {
            "id": pa.array([5, 9, None], pa.int64()),
            "v": pa.array([1.5, None, None], pa.float64()),
            "d": pa.array([day(2026, 11, 20), None, day(2026, 11, 1)], pa.date32()),
            "k": ["a", "b", None],
            "small": pa.array([1, 2, 3], pa.int16()),
        }
    )
    second = pa.table(
        {
            "id": pa.array([-3, 4], pa.int64()),
            "v": pa.array([None, None], pa.float64()),  # all null: no bounds
            "d": pa.array([day(2026, 12, 31), None], pa.date32()),
            "k": ["c", "d"],
            "small": pa.array([7, 8], pa.int16()),
        }
    )
    return first, second


EXPECTED = [
    ColumnStatistics("id", StatsKind.LONG, -3, 9, 1),
    ColumnStatistics("v", StatsKind.DOUBLE, 1.5, 1.5, 4),
    ColumnStatistics(
        "d", StatsKind.DATE, days(datetime.date(2026, 11, 1)), days(datetime.date(2026, 12, 31)), 2
    ),
]


def test_parquet_footers_of_several_files_merge_into_exact_bounds_and_null_counts(tmp_path):
    first, second = two_files()
    pq.write_table(first, tmp_path / "a.parquet")
    pq.write_table(second, tmp_path / "b.parquet", write_statistics=["id", "v", "d", "k"])
    # "k": strings have no Hive bounds; "small": one file wrote no statistics for it.
    assert parquet_statistics(tmp_path / "a.parquet", tmp_path / "b.parquet") == EXPECTED


def test_orc_footers_of_several_files_and_stripes_merge_into_exact_bounds_and_null_counts(
    tmp_path,
):
    first, second = two_files()
    po.write_table(first, tmp_path / "a.orc", compression="zstd")
    po.write_table(second, tmp_path / "b.orc", compression="uncompressed")
    assert orc_statistics(tmp_path / "a.orc", tmp_path / "b.orc") == [
        *EXPECTED,
        ColumnStatistics("small", StatsKind.LONG, 1, 8, 0),  # ORC writes it in every file
    ]
    # Many stripes: the Footer's statistics cover all of them.
    ids = pa.array([None if i % 7 == 0 else (i * 7919) % 100_003 - 50_000 for i in range(200_000)])
    po.write_table(pa.table({"id": ids}), tmp_path / "big.orc", stripe_size=64 * 1024)
    assert po.ORCFile(str(tmp_path / "big.orc")).nstripes > 3
    low, high = pa.compute.min_max(ids).values()
    assert orc_statistics(tmp_path / "big.orc") == [
        ColumnStatistics("id", StatsKind.LONG, low.as_py(), high.as_py(), ids.null_count)
    ]


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_files_written_by_spark_give_what_spark_computes(spark, tmp_path, file_format):
    data = spark.sql(
        "SELECT id, CAST(id AS INT) AS i, CAST(id % 100 AS TINYINT) AS t, "
        "IF(id % 3 = 0, NULL, id / 4.0D) AS v, CAST(id AS FLOAT) / 8 AS f, "
        "IF(id % 5 = 0, NULL, date_add(DATE'2026-11-20', CAST(id AS INT))) AS d, "
        "concat('k', id) AS k FROM range(-50, 1000)"
    )
    data.repartition(3).write.format(file_format).save(str(tmp_path / "out"))
    files = sorted((tmp_path / "out").glob(f"part-*.{file_format}"))
    assert len(files) == 3
    found = partition_column_statistics(LOCAL, [str(f) for f in files], FileFormat(file_format))

    expected = []
    for column, kind in [("id", "long"), ("i", "long"), ("t", "long"), ("v", "double"),
                         ("f", "double"), ("d", "date")]:  # fmt: skip
        low, high, nulls = data.selectExpr(
            f"min({column})", f"max({column})", f"count(*) - count({column})"
        ).first()
        if kind == "date":
            low, high = days(low), days(high)
        expected.append(ColumnStatistics(column, StatsKind(kind), low, high, nulls))
    assert found == expected


def test_a_file_without_a_column_leaves_that_column_out_and_a_bad_footer_is_named(tmp_path):
    pq.write_table(pa.table({"id": [1, 2], "v": [1.0, 2.0]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"id": [3]}), tmp_path / "b.parquet")  # v: all null, uncounted
    (tmp_path / "c.parquet").write_bytes(b"not parquet at all")
    files = [tmp_path / name for name in ("a.parquet", "b.parquet")]
    assert parquet_statistics(*files) == [ColumnStatistics("id", StatsKind.LONG, 1, 3, 0)]
    with pytest.raises(ColumnStatisticsError, match=r"c\.parquet.*metastore\.column-statistics"):
        parquet_statistics(*files, tmp_path / "c.parquet")

    po.write_table(pa.table({"id": [1, 2], "v": [1.0, 2.0]}), tmp_path / "a.orc")
    po.write_table(pa.table({"id": [3]}), tmp_path / "b.orc")
    (tmp_path / "c.orc").write_bytes(b"ORC, but only in name")
    files = [tmp_path / name for name in ("a.orc", "b.orc")]
    assert orc_statistics(*files) == [ColumnStatistics("id", StatsKind.LONG, 1, 3, 0)]
    with pytest.raises(ColumnStatisticsError, match=r"c\.orc.*not an ORC file"):
        orc_statistics(*files, tmp_path / "c.orc")


def test_column_statistics_need_the_metastore_policy(tmp_path):
    with pytest.raises(ConfigError, match="no 'metastore'"):
        TableSpec.from_options(
            {
                "staging_path": str(tmp_path / "s"),
                "checkpoint_path": str(tmp_path / "c"),
                "partition_keys": "dt",
                "policy_kind": "success-file",
                "metastore.column-statistics": "true",
            }
        )


@pytest.fixture(params=["parquet", "orc"])
def varied_stream(spark, tmp_path, request) -> StreamingTable:
    """Two hours with varied values and nulls, a late row for hour 00, then hour 05."""
    stream = StreamingTable(tmp_path / "stream", file_format=request.param)
    stream.add_batches(
        [
            row(10 + i, f"2026-11-20T00:{10 * i:02d}:00Z", v=i / 4 if i % 2 else None)
            for i in range(5)
        ],
        [row(40 + i, f"2026-11-20T01:{10 * i:02d}:00Z", k=None, v=-i) for i in range(4)],
        [row(3, "2026-11-20T00:55:00Z", v=9.75)],  # late, and the lowest id of hour 00
        [row(90, "2026-11-20T05:00:00Z")],
        [row(91, "2026-11-20T05:10:00Z")],  # runs with the watermark hour 05 set
    )
    stream.run(spark)
    return stream


def spark_statistics(spark, path: str, file_format: str) -> dict[str, tuple]:
    """Bounds and null counts as Spark computes them from the published files' rows."""
    df = spark.read.format(file_format).load(path)
    out = {}
    for column in ("id", "v"):
        r = df.selectExpr(f"min({column})", f"max({column})", f"count(*) - count({column})").first()
        out[column] = (r[0], r[1], r[2])
    return out


@pytest.mark.slow  # a Hive read through the metastore per format: ~20 s each
def test_the_metastore_policy_writes_partition_column_statistics_that_hive_readers_see(
    spark, varied_stream, metastore, metastore_connection, tmp_path
):
    table = tmp_path / "table"
    name = f"stats_{varied_stream.file_format}"
    hive_sql(
        metastore,
        "CREATE DATABASE IF NOT EXISTS fscommit",
        f"CREATE TABLE fscommit.{name} (id BIGINT, ts TIMESTAMP, k STRING, v DOUBLE) "
        f"PARTITIONED BY (dt STRING, hour STRING) STORED AS {varied_stream.file_format} "
        f"LOCATION '{table}'",
    )
    published = compact(varied_stream.staging, varied_stream.checkpoint, str(table))
    assert published.returncode == 0, published.stderr
    spec = TableSpec.from_options(
        table_options(varied_stream, str(table))
        | {
            "policy_kind": "metastore",
            "metastore_database": "fscommit",
            "metastore_table": name,
            "metastore.column-statistics": "true",
        }
    )
    partitions = [f"{DAY}/hour=00", f"{DAY}/hour=01"]
    committer = metastore_committer(spec)
    assert [o.state for o in committer.commit(partitions)] == ["committed", "committed"]

    with thrift_client(metastore) as client:
        answer = client.get_partitions_statistics_req(
            ttypes.PartitionsStatsRequest("fscommit", name, ["id", "k", "ts", "v"], partitions)
        )
    for partition in partitions:
        stored = {o.colName: o.statsData for o in answer.partStats[partition]}
        assert set(stored) == {"id", "v"}  # no exact Hive statistics for strings, timestamps
        expected = spark_statistics(spark, str(table / partition), varied_stream.file_format)
        long_stats, double_stats = stored["id"].longStats, stored["v"].doubleStats
        assert (long_stats.lowValue, long_stats.highValue, long_stats.numNulls) == expected["id"]
        assert (double_stats.lowValue, double_stats.highValue, double_stats.numNulls) == (
            expected["v"]
        )
    hour0 = {o.colName: o.statsData for o in answer.partStats[partitions[0]]}
    assert hour0["id"].longStats.lowValue == 3 and hour0["v"].doubleStats.numNulls == 3

    # Spark SQL cannot DESCRIBE a column of one partition (UNSUPPORTED_FEATURE
    # .DESC_TABLE_COLUMN_PARTITION); the partition's parameters show what the metastore
    # holds as accurate column statistics.
    rows = hive_sql(
        metastore, f"DESCRIBE FORMATTED fscommit.{name} PARTITION (dt='2026-11-20', hour='00')"
    )
    parameters = next(r["data_type"] for r in rows if r["col_name"] == "Partition Parameters")
    accurate = parameters.split("COLUMN_STATS_ACCURATE=", 1)[1]
    assert json.loads(accurate[: accurate.index("}}") + 2])["COLUMN_STATS"] == {
        "id": "true",
        "v": "true",
    }
