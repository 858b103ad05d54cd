"""Durations and sizes are written as Flink users write them."""

from datetime import datetime, timedelta, timezone

import pytest

from airflow_provider_fscommit.core.config.quantities import (
    epoch_ms,
    format_duration,
    iso_ms,
    parse_duration,
    parse_memory_size,
)
from airflow_provider_fscommit.core.errors import ConfigError


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


# Flink's TimeUtilsTest: testParseDurationMillis/Seconds/Minutes/Hours/UpperCase/Trim.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1234", timedelta(milliseconds=1234)),
        ("1234ms", timedelta(milliseconds=1234)),
        ("1234 ms", timedelta(milliseconds=1234)),
        ("667766s", timedelta(seconds=667766)),
        ("667766 s", timedelta(seconds=667766)),
        ("7657623min", timedelta(minutes=7657623)),
        ("7657623 min", timedelta(minutes=7657623)),
        ("987654h", timedelta(hours=987654)),
        ("987654 h", timedelta(hours=987654)),
        ("1 MS", timedelta(milliseconds=1)),
        ("1 S", timedelta(seconds=1)),
        ("1 MIN", timedelta(minutes=1)),
        ("1 H", timedelta(hours=1)),
        ("      155      ", timedelta(milliseconds=155)),
        ("      155      ms   ", timedelta(milliseconds=155)),
    ],
)
def test_flink_time_utils_test_vectors(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("labels", "thousand"),
    # Every label of Flink's TimeUtils.TimeUnit, with what 1000 of it is.
    [
        ("d day days", timedelta(days=1000)),
        ("h hour hours", timedelta(hours=1000)),
        ("min m minute minutes", timedelta(minutes=1000)),
        ("s sec secs second seconds", timedelta(seconds=1000)),
        ("ms milli millis millisecond milliseconds", timedelta(seconds=1)),
        ("µs micro micros microsecond microseconds", timedelta(milliseconds=1)),
        ("ns nano nanos nanosecond nanoseconds", timedelta(microseconds=1)),
    ],
)
def test_every_flink_unit_label_is_accepted_in_any_case(labels, thousand):
    for label in labels.split():
        assert parse_duration(f"1000 {label}") == thousand
        assert parse_duration(f"1000{label[:-1]}{label[-1].upper()}") == thousand


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2000 ns", timedelta(microseconds=2)),
        ("1500 nanos", timedelta(microseconds=1)),  # truncated, as Duration.toMillis truncates
        ("999 ns", timedelta(0)),
        ("3 us", timedelta(microseconds=3)),  # ASCII spelling of Flink's µs
    ],
)
def test_nanoseconds_are_truncated_to_the_microseconds_a_timedelta_holds(text, expected):
    assert parse_duration(text) == expected


# Flink's TimeUtilsTest.testParseDurationInvalid, and forms Flink refuses too.
@pytest.mark.parametrize(
    "text",
    [
        "",
        "     ",
        "foobar or fubar or foo bazz",
        "16 gjah",
        "16 16 17 18 ms",
        "-100 ms",
        "h",
        "1 fortnight",
        "1.5 h",
        "1 h 30 min",
        "1 mins",  # Flink's 'min' has no plural
        "+1 h",
        "\u0661 h",  # ARABIC-INDIC DIGIT ONE: not an ASCII digit
    ],
)
def test_bad_durations_name_the_value_and_the_accepted_units(text):
    with pytest.raises(ConfigError, match=r"cannot parse duration .*units: d, h, min .*, ns"):
        parse_duration(text, "sink.partition-commit.delay")


# Flink's TimeUtilsTest.testParseDurationNumberOverflow / NumberTimeUnitOverflow: Flink's
# limit is a Java Duration, ours a timedelta's; either way a clear error, not a crash.
@pytest.mark.parametrize(
    "text",
    [
        "100000000000000000000000000000000 ms",
        "100000000000000000 h",
        "99999999999999999999 d",
        "1000000000 d",
        10**30,
    ],
)
def test_too_long_durations_name_the_option_and_the_limit(text):
    with pytest.raises(
        ConfigError, match=r"sink\.partition-commit\.delay: .*too long.*999999999 days"
    ):
        parse_duration(text, "sink.partition-commit.delay")


@pytest.mark.parametrize("value", [True, -1, float("nan"), float("inf")])
def test_numbers_must_be_non_negative_milliseconds(value):
    with pytest.raises(ConfigError, match=r"delay: expected a duration"):
        parse_duration(value, "delay")


def test_a_too_long_delay_is_a_config_error_of_the_table_spec():
    from airflow_provider_fscommit.core.config.table_spec import TableSpec

    options = {"staging_path": "/s", "checkpoint_path": "/c", "partition_keys": "dt"}
    with pytest.raises(ConfigError, match=r"sink\.partition-commit\.delay: .*too long"):
        TableSpec.from_options(options | {"sink.partition-commit.delay": "99999999999999999999 d"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [("128MB", 128 * 1024**2), ("20KB", 20 * 1024), ("1 gb", 1024**3), ("4096", 4096), (7, 7)],
)
def test_flink_memory_sizes(text, expected):
    assert parse_memory_size(text) == expected


@pytest.mark.parametrize(
    "unit",
    [
        "b",
        "bytes",
        "k",
        "kb",
        "kibibytes",
        "m",
        "mb",
        "mebibytes",
        "g",
        "gb",
        "gibibytes",
        "t",
        "tb",
        "tebibytes",
    ],
)
def test_every_flink_memory_unit_label_is_accepted_in_any_case(unit):
    # Flink's MemorySize.MemoryUnit labels
    assert parse_memory_size(f"3 {unit.upper()}") == parse_memory_size(f"3{unit}") >= 3


@pytest.mark.parametrize("text", ["", "MB", "1.5MB", "0", "12 parsecs", "-1 mb"])
def test_bad_sizes_are_rejected(text):
    with pytest.raises(ConfigError, match=r"compaction\.file-size"):
        parse_memory_size(text, "compaction.file-size")


def test_sizes_past_a_java_long_are_rejected_as_in_flink():
    assert parse_memory_size(f"{2**63 - 1}") == 2**63 - 1
    with pytest.raises(
        ConfigError, match=r"compaction\.file-size: .*too large.*9223372036854775807"
    ):
        parse_memory_size("8388608 tb", "compaction.file-size")


@pytest.mark.parametrize(
    "value",
    [
        timedelta(hours=1),
        timedelta(minutes=90),
        timedelta(0),
        timedelta(milliseconds=1),
        timedelta(microseconds=1500),
        timedelta.max,
    ],
)
def test_format_duration_round_trips(value):
    assert parse_duration(format_duration(value)) == value


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-20T03:00:00.000+00:00",  # as iso_ms writes it
        "2026-11-20T03:00:00",  # no offset: UTC
        "2026-11-20 11:00:00+08:00",
        datetime(2026, 11, 20, 3, tzinfo=timezone.utc),
    ],
)
def test_an_iso_time_is_the_epoch_ms_iso_ms_wrote(value):
    assert epoch_ms(value) == 1795143600000
    assert iso_ms(epoch_ms(value)) == "2026-11-20T03:00:00.000+00:00"


def test_a_time_that_is_not_iso_names_the_option():
    with pytest.raises(ConfigError, match=r"through: 'tomorrow' is not an ISO-8601 time"):
        epoch_ms("tomorrow", "through")
