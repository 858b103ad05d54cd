"""Durations and sizes are written as Flink users write them."""

from datetime import timedelta

import pytest

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.units import (
    format_duration,
    parse_duration,
    parse_memory_size,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 h", timedelta(hours=1)),
        ("1h", timedelta(hours=1)),
        ("2 hours", timedelta(hours=2)),
        ("30 min", timedelta(minutes=30)),
        ("30m", timedelta(minutes=30)),
        ("10 s", timedelta(seconds=10)),
        ("1 d", timedelta(days=1)),
        ("500 ms", timedelta(milliseconds=500)),
        ("500", timedelta(milliseconds=500)),
        ("0 s", timedelta(0)),
        (" 3 MIN ", timedelta(minutes=3)),
    ],
)
def test_flink_duration_forms(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "h", "1 fortnight", "-1 h", "1.5 h", "1 h 30 min"])
def test_bad_durations_name_the_value_and_the_accepted_units(text):
    with pytest.raises(ConfigError, match=r"cannot parse duration .*units: d, h, min, s, ms"):
        parse_duration(text, "sink.partition-commit.delay")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("128MB", 128 * 1024**2), ("20KB", 20 * 1024), ("1 gb", 1024**3), ("4096", 4096), (7, 7)],
)
def test_flink_memory_sizes(text, expected):
    assert parse_memory_size(text) == expected


@pytest.mark.parametrize("text", ["", "MB", "1.5MB", "0", "12 parsecs"])
def test_bad_sizes_are_rejected(text):
    with pytest.raises(ConfigError, match=r"compaction\.file-size"):
        parse_memory_size(text, "compaction.file-size")


@pytest.mark.parametrize(
    "value", [timedelta(hours=1), timedelta(minutes=90), timedelta(0), timedelta(milliseconds=1)]
)
def test_format_duration_round_trips(value):
    assert parse_duration(format_duration(value)) == value
