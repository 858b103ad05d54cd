"""From a time to the partition that names it: the inverse of the table's time extractor."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition.time_extractor import (
    DefaultPartTimeExtractor,
    PartitionTimeExtractor,
)
from airflow_provider_fscommit.core.partition.time_partitions import time_partitioning


@pytest.mark.parametrize(
    ("keys", "pattern", "formatter", "interval", "formats", "cron"),
    [
        (
            ["dt", "hour"],
            "$dt $hour:00:00",
            None,
            None,
            {"dt": "%Y-%m-%d", "hour": "%H"},
            "0 * * * *",
        ),
        (["dt"], None, None, None, {"dt": "%Y-%m-%d"}, "0 0 * * *"),
        (["dt"], "$dt", "yyyyMMdd", None, {"dt": "%Y%m%d"}, "0 0 * * *"),
        (["dt"], "$dt", "dd.MM.yyyy", None, {"dt": "%d.%m.%Y"}, "0 0 * * *"),
        (["dt"], "$dt", "yyyy-MM-dd'T'HH", None, {"dt": "%Y-%m-%dT%H"}, "0 * * * *"),
        (["y", "m", "d"], "$y-$m-$d", None, None, {"y": "%Y", "m": "%m", "d": "%d"}, "0 0 * * *"),
        (
            ["dt", "hour", "minute"],
            "$dt $hour:$minute:00",
            None,
            timedelta(minutes=15),
            {"dt": "%Y-%m-%d", "hour": "%H", "minute": "%M"},
            "*/15 * * * *",
        ),
    ],
)
def test_each_key_gets_the_format_the_extractor_reads_back(
    keys, pattern, formatter, interval, formats, cron
):
    extractor = DefaultPartTimeExtractor(pattern, formatter)
    partitioning = time_partitioning(keys, extractor, interval)
    assert dict(partitioning.key_formats) == formats
    assert partitioning.cron == cron
    start = datetime(2026, 11, 20, 3, 45) if interval else datetime(2026, 11, 20, 3)
    if partitioning.interval == timedelta(days=1):
        start = datetime(2026, 11, 20)
    values = partitioning.values(start)
    assert extractor.extract(keys, [values[k] for k in keys]) == start


def test_an_hourly_table_names_the_hour_as_the_hourly_dag_does():
    partitioning = time_partitioning(
        ["dt", "hour"], DefaultPartTimeExtractor("$dt $hour:00:00", None)
    )
    assert partitioning.values(datetime(2026, 11, 20, 3)) == {"dt": "2026-11-20", "hour": "03"}
    assert partitioning.interval == timedelta(hours=1)


def test_keys_the_time_does_not_name_are_the_other_keys_of_each_time():
    """``region=…/dt=…/hour=…``: a time is the partitions of every region."""
    extractor = DefaultPartTimeExtractor("$dt $hour:00:00", None)
    partitioning = time_partitioning(["region", "dt", "hour"], extractor)
    assert partitioning.other_keys == ("region",)
    assert partitioning.values(datetime(2026, 11, 20, 3)) == {"dt": "2026-11-20", "hour": "03"}
    assert (partitioning.interval, partitioning.cron) == (timedelta(hours=1), "0 * * * *")


class _Custom(PartitionTimeExtractor):
    def extract(self, keys, values):
        return datetime(2026, 11, 20)


@pytest.mark.parametrize(
    ("keys", "extractor", "interval", "message"),
    [
        (
            ["dt", "country"],
            DefaultPartTimeExtractor("2026-11-20", None),
            None,
            "uses none of the partition keys dt, country",
        ),
        (
            ["dt", "hour"],
            DefaultPartTimeExtractor("$dt$hour", "yyyyMMddHH"),
            None,
            "reads two ways",
        ),
        (["dt"], DefaultPartTimeExtractor("$dt", "EEE"), None, "no fixed-width form"),
        (
            ["dt", "hour"],
            DefaultPartTimeExtractor("$dt $hour:00:00", None),
            timedelta(days=1),
            "spans 1 hour",
        ),
        (
            ["dt", "h", "m"],
            DefaultPartTimeExtractor("$dt $h:$m:00", None),
            None,
            "whole minutes dividing an hour",
        ),
        (
            ["dt", "h", "m"],
            DefaultPartTimeExtractor("$dt $h:$m:00", None),
            timedelta(minutes=7),
            "whole minutes dividing an hour",
        ),
        (["dt"], DefaultPartTimeExtractor("$dt", "yyyy-MM"), None, "coarser than a day"),
        (["dt"], DefaultPartTimeExtractor("x$dt", None), None, "does not line up"),
        (["dt"], _Custom(), None, "custom extractor"),
    ],
)
def test_what_has_no_single_inverse_is_refused_naming_the_option(
    keys, extractor, interval, message
):
    with pytest.raises(ConfigError, match=message):
        time_partitioning(keys, extractor, interval)
