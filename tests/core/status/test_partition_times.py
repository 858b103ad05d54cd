"""Many partitions' times as one Arrow column: the same instants as one by one, or none.

The column route is only a faster way to the time :meth:`TableSpec.partition_time_ms`
defines. Each case is a table's extractor settings and zone, with partition paths that
are canonical (the column must read them) and paths it must leave to the one-by-one route:
values out of range that Java's LENIENT rolls over, escaped and null values, other keys.
"""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import PartitionPathError, PartitionTimeError
from airflow_provider_fscommit.core.status.partition_times import (
    column_times_ms,
    partition_times_ms,
)

HOURLY = {"partition.time-extractor.timestamp-pattern": "$dt $hour:00:00"}
# Canonical hours: the column reads them.
READ = [
    "dt=2026-11-20/hour=03",
    "dt=2024-02-29/hour=23",  # a leap year's leap day
    "dt=2026-01-31/hour=00",
    "dt=0001-01-01/hour=00",
    "dt=9999-12-31/hour=23",
]
# Left to the one-by-one route, which reads them (LENIENT) or refuses them.
LEFT = [
    "dt=2026-02-29/hour=00",  # Arrow rolls it to March 1st: LENIENT decides
    "dt=2026-04-31/hour=00",
    "dt=2026-13-01/hour=00",
    "dt=2026-11-00/hour=01",
    "dt=2026-11-20/hour=24",
    "dt=2026-11-20/hour=3",  # one digit: not canonical
    "dt=2026-1-20/hour=03",
    "dt=2026%2D11-20/hour=03",  # escaped
    "dt=0000-01-01/hour=00",  # no Python date
    "dt=2026-11-20/hour=__HIVE_DEFAULT_PARTITION__",  # null
    "dt=/hour=03",
    "dt=2026-11-20/hour=0a",
]


def spec(**options: str) -> TableSpec:
    return TableSpec.from_options(
        {"staging_path": "/s", "checkpoint_path": "/c", "partition_keys": "dt,hour"} | options
    )


def one_by_one(table: TableSpec, partition: str) -> int | str:
    try:
        return table.partition_time_ms(partition)
    except (PartitionTimeError, PartitionPathError) as exc:
        return type(exc).__name__


@pytest.mark.parametrize(
    "options",
    [
        HOURLY,
        HOURLY | {"sink.partition-commit.watermark-time-zone": "GMT+03:00"},
        HOURLY | {"sink.partition-commit.watermark-time-zone": "GMT-08:30"},
    ],
    ids=["utc", "gmt+3", "gmt-8:30"],
)
def test_canonical_hours_are_read_in_the_column_as_one_by_one(options):
    table = spec(**options)
    column = column_times_ms(table, READ + LEFT)
    assert column[: len(READ)] == [one_by_one(table, p) for p in READ]
    assert column[len(READ) :] == [None] * len(LEFT)
    for partition in LEFT:  # the caller's iteration reads them one by one, errors included
        assert one_by_one(table, partition) == _iterated(table, partition)


def test_a_daily_table_without_a_pattern_reads_its_dates():
    table = TableSpec.from_options(
        {"staging_path": "/s", "checkpoint_path": "/c", "partition_keys": "dt"}
    )
    days = ["dt=2026-11-20", "dt=2026-02-29", "dt=2026-11-20 04:00:00", "region=eu"]
    read = [one_by_one(table, d) for d in days]
    assert column_times_ms(table, days) == [read[0], None, read[2], None]
    assert [_iterated(table, d) for d in days] == read


def test_a_pattern_of_several_keys_and_literals_is_filled_from_the_path():
    table = TableSpec.from_options(
        {
            "staging_path": "/s",
            "checkpoint_path": "/c",
            "partition_keys": "year,month,day,hour",
            "partition.time-extractor.timestamp-pattern": "$year-$month-$day $hour:30:00",
        }
    )
    paths = ["year=2026/month=11/day=20/hour=03", "year=2026/month=11/day=31/hour=03"]
    assert column_times_ms(table, paths) == [one_by_one(table, paths[0]), None]
    assert [_iterated(table, p) for p in paths] == [one_by_one(table, p) for p in paths]


@pytest.mark.parametrize(
    "options",
    [
        HOURLY | {"sink.partition-commit.watermark-time-zone": "America/Los_Angeles"},
        {
            "partition.time-extractor.timestamp-pattern": "$dt$hour",
            "partition.time-extractor.timestamp-formatter": "yyyy-MM-ddHH",
        },
    ],
    ids=["zone-with-transitions", "formatter"],
)
def test_other_tables_are_read_one_by_one(options):
    table = spec(**options)
    assert column_times_ms(table, READ) == [None] * len(READ)
    assert [_iterated(table, p) for p in READ] == [one_by_one(table, p) for p in READ]


def _iterated(table: TableSpec, partition: str) -> int | str:
    try:
        return next(partition_times_ms(table, [partition]))
    except (PartitionTimeError, PartitionPathError) as exc:
        return type(exc).__name__
