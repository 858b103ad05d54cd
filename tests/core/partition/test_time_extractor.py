"""Partition times are extracted as Flink's DefaultPartTimeExtractor extracts them."""

from __future__ import annotations

from datetime import datetime

import pytest

from airflow_provider_fscommit.core.errors import ConfigError, PartitionTimeError
from airflow_provider_fscommit.core.partition.time_extractor import (
    DefaultPartTimeExtractor,
    PartitionTimeExtractor,
    create_time_extractor,
)


class HourOfYearExtractor(PartitionTimeExtractor):
    """A custom extractor for ``year=2026/hoy=100`` (hour of year) partitions."""

    def extract(self, keys, values):
        from datetime import timedelta

        return datetime(int(values[0]), 1, 1) + timedelta(hours=int(values[1]))


@pytest.mark.parametrize(
    ("keys", "values", "pattern", "formatter", "expected"),
    [
        # Flink's documented forms.
        (["dt"], ["2020-05-20"], None, None, datetime(2020, 5, 20)),
        (["dt", "hour"], ["2020-05-20", "10"], "$dt $hour:00:00", None, datetime(2020, 5, 20, 10)),
        (
            ["year", "month", "day", "hour"],
            ["2020", "05", "20", "10"],
            "$year-$month-$day $hour:00:00",
            None,
            datetime(2020, 5, 20, 10),
        ),
        (["dt"], ["20200520"], "$dt", "yyyyMMdd", datetime(2020, 5, 20)),
        (
            ["year", "month", "day"],
            ["2020", "05", "20"],
            "$year$month$day",
            "yyyyMMdd",
            datetime(2020, 5, 20),
        ),
        (
            ["dt", "hour"],
            ["20200520", "07"],
            "$dt $hour",
            "yyyyMMdd HH",
            datetime(2020, 5, 20, 7),
        ),
        # The lenient form takes 1-digit fields and fractions.
        (["dt", "hour"], ["2026-1-2", "3"], "$dt $hour:0:0", None, datetime(2026, 1, 2, 3)),
        (["ts"], ["2026-11-20 03:04:05.123"], None, None, datetime(2026, 11, 20, 3, 4, 5, 123000)),
        # The longest key wins: $dth is not $dt followed by 'h'.
        (["dt", "dth"], ["2026-11-20", "07"], "$dt $dth:00:00", None, datetime(2026, 11, 20, 7)),
    ],
)
def test_default_extractor(keys, values, pattern, formatter, expected):
    extractor = DefaultPartTimeExtractor(pattern, formatter)
    extractor.validate(keys)
    assert extractor.extract(keys, values) == expected


def test_pattern_referencing_an_unknown_key_is_a_config_error_naming_it():
    extractor = DefaultPartTimeExtractor("$day $hour:00:00", None)
    with pytest.raises(ConfigError, match=r"references '\$day'.*keys are \['dt', 'hour'\]"):
        extractor.validate(["dt", "hour"])


@pytest.mark.parametrize(
    ("values", "pattern", "formatter", "message"),
    [
        (["yesterday", "00"], "$dt $hour:00:00", None, "cannot parse partition time"),
        (["2026-11-20", "10"], "$dt $hour:00:00.", None, "'2026-11-20 10:00:00.'"),
        (["10000-01-01", "00"], "$dt $hour:00:00", None, "cannot parse partition time"),
        (["2026-11-20", "00"], "$dt", "yyyyMMdd", "timestamp-formatter"),
        ([None, "00"], "$dt $hour:00:00", None, "value of 'dt' is null"),
        ([None, "00"], None, None, "value of 'dt' is null"),
    ],
)
def test_unparsable_partition_times_say_what_and_how_to_fix(values, pattern, formatter, message):
    extractor = DefaultPartTimeExtractor(pattern, formatter)
    with pytest.raises(PartitionTimeError, match=message):
        extractor.extract(["dt", "hour"], values)


def test_a_bad_formatter_is_reported_when_validating():
    with pytest.raises(ConfigError, match="timestamp-formatter"):
        DefaultPartTimeExtractor("$dt", "yyyy-QQ").validate(["dt"])


def test_custom_extractor_is_loaded_by_dotted_path():
    extractor = create_time_extractor("custom", f"{__name__}.HourOfYearExtractor", None, None)
    assert extractor.extract(["year", "hoy"], ["2026", "25"]) == datetime(2026, 1, 2, 1)


@pytest.mark.parametrize(
    ("class_path", "message"),
    [
        (None, "partition.time-extractor.class is not set"),
        ("NoDots", "not a dotted path"),
        ("no_such_module_xyz.Extractor", "cannot import module 'no_such_module_xyz'"),
        ("datetime.datetime", "not a subclass of"),
    ],
)
def test_custom_extractor_errors(class_path, message):
    with pytest.raises(ConfigError, match=message):
        create_time_extractor("custom", class_path, None, None)


FLINK_LENIENT = r"""
import java.time.*;
import java.time.format.*;
import static java.time.temporal.ChronoField.*;
public class FlinkLenient {
  // Flink's DefaultPartTimeExtractor.toLocalDateTime(String) without a formatter.
  static DateTimeFormatterBuilder date() {
    return new DateTimeFormatterBuilder()
        .appendValue(YEAR, 1, 10, SignStyle.NORMAL).appendLiteral('-')
        .appendValue(MONTH_OF_YEAR, 1, 2, SignStyle.NORMAL).appendLiteral('-')
        .appendValue(DAY_OF_MONTH, 1, 2, SignStyle.NORMAL);
  }
  public static void main(String[] args) throws Exception {
    DateTimeFormatter ts = date().optionalStart().appendLiteral(' ')
        .appendValue(HOUR_OF_DAY, 1, 2, SignStyle.NORMAL).appendLiteral(':')
        .appendValue(MINUTE_OF_HOUR, 1, 2, SignStyle.NORMAL).appendLiteral(':')
        .appendValue(SECOND_OF_MINUTE, 1, 2, SignStyle.NORMAL)
        .optionalStart().appendFraction(NANO_OF_SECOND, 1, 9, true).optionalEnd().optionalEnd()
        .toFormatter().withResolverStyle(ResolverStyle.LENIENT);
    DateTimeFormatter d = date().toFormatter()
        .withResolverStyle(ResolverStyle.LENIENT);
    java.io.BufferedReader in =
        new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String out;
      try { out = LocalDateTime.parse(line, ts).toString(); }
      catch (DateTimeParseException e) {
        try { out = LocalDate.parse(line, d).atStartOfDay().toString(); }
        catch (DateTimeParseException e2) { out = "ERROR"; }
      }
      System.out.println(out);
    }
  }
}
"""

LENIENT_CASES = [
    "2026-11-20",
    "2026-1-2",
    "2026-11-20 03:04:05",
    "2026-11-20 3:4:5",
    "2026-11-20 03:04:05.1",
    "2026-11-20 03:04:05.123456789",
    "2026-13-01",
    "2026-02-30",
    "2026-00-10",
    "2026-11-00",
    "2026-11-20 24:00:00",
    "2026-11-20 23:59:60",
    "2026-11-20 10:75:00",
    "2026-11-20 10:15:30.",
    "2026-11-20 10:15",
    "2026-11-20T10:15:30",
    "2026/11/20",
    "26-1-1",
    "1-1-1",
    "2026-11-20 ",
    "20261120",
    "2026-11-20 99:99:99",
    "\uff12\uff10\uff12\uff16-11-20",  # full-width digits
    # The canonical form, read by Python's parser when its fields are in range.
    "2024-02-29 23:59:59",
    "2026-02-29",
    "9999-12-31 23:59:59",
    "2026-11-31 00:00:00",
]


def test_lenient_parse_matches_flinks_formatter_in_java(tmp_path):
    import subprocess

    (tmp_path / "FlinkLenient.java").write_text(FLINK_LENIENT)
    subprocess.run(["javac", "FlinkLenient.java"], cwd=tmp_path, check=True)
    java = subprocess.run(
        ["java", "-cp", str(tmp_path), "FlinkLenient"],
        input="".join(c + "\n" for c in LENIENT_CASES),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    extractor = DefaultPartTimeExtractor(None, None)
    for text, expected in zip(LENIENT_CASES, java, strict=True):
        try:
            ours = extractor.parse(text).isoformat()
        except PartitionTimeError:
            ours = "ERROR"
        # java.time prints 2026-11-20T00:00 where Python prints 2026-11-20T00:00:00.
        assert ours == (
            "ERROR" if expected == "ERROR" else datetime.fromisoformat(expected).isoformat()
        ), text
