"""When a partition may be committed: strict, zone-aware, and right across DST."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition.commit_trigger import (
    IdleTimeCommitTrigger,
    PartitionTimeCommitTrigger,
    ProcTimeCommitTrigger,
    at_zone_epoch_ms,
    parse_time_zone,
)
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.partition.time_extractor import DefaultPartTimeExtractor

HOURLY = DefaultPartTimeExtractor("$dt $hour:00:00", None)


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


def epoch_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def hour(dt: str, hh: str) -> PartitionSpec:
    return PartitionSpec(("dt", "hour"), (dt, hh))


def trigger(zone: str = "UTC", delay: timedelta = timedelta(hours=1)):
    return PartitionTimeCommitTrigger(HOURLY, delay, parse_time_zone(zone))


def test_flink_documented_example_commits_strictly_after_partition_time_plus_delay():
    # Flink docs: dt=2020-05-20/hour=10 with delay 1 h commits once the watermark
    # passes 2020-05-20 11:00:00.
    t = trigger()
    commit = t.commit_time_ms(hour("2020-05-20", "10"), 0)
    assert commit == ms("2020-05-20T11:00:00+00:00")
    assert not t.is_committable(commit - 1, commit - 1, 0)
    assert not t.is_committable(commit, commit, 0)  # equal is not enough
    assert t.is_committable(commit, commit + 1, 0)
    assert not t.is_committable(commit, None, 0)  # no watermark yet


def test_watermark_time_zone_places_the_wall_clock_on_the_timeline():
    commit = trigger("Asia/Shanghai").commit_time_ms(hour("2026-11-20", "10"), 0)
    assert commit == ms("2026-11-20T11:00:00+08:00")
    assert trigger("GMT+08:00").commit_time_ms(hour("2026-11-20", "10"), 0) == commit


def test_us_fall_back_hour_01_holds_two_real_hours_and_ends_at_02_est():
    # 2026-11-01 in New York: 01:00-02:00 happens twice (EDT, then EST). Spark writes both
    # into hour=01, so it is complete at 02:00 EST = 07:00Z. Flink's convert-then-add rule
    # would say 01:00 EDT + 1 h = 06:00Z, an hour early.
    t = trigger("America/New_York")
    commit = t.commit_time_ms(hour("2026-11-01", "01"), 0)
    assert commit == ms("2026-11-01T07:00:00+00:00")
    flink_rule = at_zone_epoch_ms(datetime(2026, 11, 1, 1), ZoneInfo("America/New_York")) + 3600_000
    assert flink_rule == ms("2026-11-01T06:00:00+00:00")
    assert not t.is_committable(commit, ms("2026-11-01T06:30:00+00:00"), 0)


def test_us_spring_forward_hour_01_ends_at_03_edt():
    # 2026-03-08: 02:00-03:00 does not exist; hour=01 + 1 h lands in the gap and moves
    # forward by it, to 03:00 EDT = 07:00Z.
    t = trigger("America/New_York")
    assert t.commit_time_ms(hour("2026-03-08", "01"), 0) == ms("2026-03-08T07:00:00+00:00")
    assert t.commit_time_ms(hour("2026-03-08", "03"), 0) == ms("2026-03-08T08:00:00+00:00")


def test_day_partitions_with_a_day_delay_follow_the_wall_clock_across_dst():
    t = PartitionTimeCommitTrigger(
        DefaultPartTimeExtractor(None, None), timedelta(days=1), parse_time_zone("Europe/Berlin")
    )
    # 2026-10-25 has 25 hours in Berlin; the day ends at midnight local (23:00Z).
    commit = t.commit_time_ms(PartitionSpec(("dt",), ("2026-10-25",)), 0)
    assert commit == ms("2026-10-26T00:00:00+01:00")


def test_process_time_trigger_uses_creation_time_and_the_wall_clock():
    t = ProcTimeCommitTrigger(timedelta(minutes=5))
    commit = t.commit_time_ms(hour("2026-11-20", "00"), 1_000_000)
    assert commit == 1_000_000 + 300_000
    assert not t.is_committable(commit, watermark_ms=10**15, now_ms=commit)
    assert t.is_committable(commit, watermark_ms=None, now_ms=commit + 1)


@pytest.mark.parametrize("delay", [timedelta(0), timedelta(microseconds=999)])
def test_process_time_trigger_without_delay_commits_at_once(delay):
    # Flink's ProcTimeCommitPredicate: commitDelay == 0 (in whole ms) commits at once,
    # even with the clock not past the creation time (equal, or behind on another host).
    t = ProcTimeCommitTrigger(delay)
    commit = t.commit_time_ms(hour("2026-11-20", "00"), 1_000_000)
    assert t.is_committable(commit, watermark_ms=None, now_ms=1_000_000)
    assert t.is_committable(commit, watermark_ms=None, now_ms=999_000)


# Flink's FileSystemTableFactory.validateTimeZone (FileSystemTableFactoryTest): the forms
# its message advertises are accepted ...
@pytest.mark.parametrize(
    ("name", "offset_h"),
    [
        ("UTC", 0),
        ("GMT", 0),
        ("America/Los_Angeles", -8),
        ("Asia/Shanghai", 8),
        ("Etc/GMT+8", -8),
        ("GMT-08:00", -8),
        ("GMT+03:00", 3),
        ("GMT+8", 8),
        ("GMT+0530", 5.5),
        ("GMT+18:00", 18),
    ],
)
def test_flink_accepted_time_zones(name, offset_h):
    winter = datetime(2026, 1, 15, 12)
    assert winter.replace(tzinfo=parse_time_zone(name)).utcoffset() == timedelta(hours=offset_h)


# ... and what either of java.util.TimeZone and java.time.ZoneId reads differently is not:
# ISO offsets, 'UTC+8', 'Z', the SHORT_IDS abbreviations, ids in the wrong case.
@pytest.mark.parametrize(
    "name",
    [
        "+08:00",
        "-08:00",
        "UTC+8",
        "UTC+08:00",
        "Z",
        "UT",
        "EST",
        "PST",
        "utc",
        "asia/shanghai",
        "GMT+8:00",
        "GMT+19",
        "GMT+18:30",
        "GMT+05:60",
        "Mars/Olympus",
        "",
    ],
)
def test_time_zones_flink_refuses_are_rejected_saying_what_is_accepted(name):
    with pytest.raises(
        ConfigError, match=r"not a valid time zone.*'America/Los_Angeles'.*'GMT-08:00'.*'UTC'"
    ):
        parse_time_zone(name)


JAVA_PER_LINE = """
import java.time.*;
public class {name} {{
  public static void main(String[] args) throws Exception {{
    java.io.BufferedReader in =
        new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {{
      System.out.println(answer(line));
    }}
  }}
{answer}
}}
"""


def java_answers(tmp_path, name: str, answer: str, lines: list[str]) -> list[str]:
    """What Java's ``answer(line)`` (a static method's source) prints for each line."""
    (tmp_path / f"{name}.java").write_text(JAVA_PER_LINE.format(name=name, answer=answer))
    subprocess.run(["javac", f"{name}.java"], cwd=tmp_path, check=True)
    result = subprocess.run(
        ["java", "-cp", str(tmp_path), name],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.split()


FLINK_ZONE_RULE = """
  static boolean answer(String line) {
    try {
      return java.util.TimeZone.getTimeZone(line).toZoneId().equals(ZoneId.of(line));
    } catch (Exception e) {
      return false;
    }
  }
"""


def test_time_zone_validation_matches_flinks_java_rule(tmp_path):
    # The condition of Flink's FileSystemTableFactory.validateTimeZone, run by Java.
    names = [
        *ZONE_IDS,
        *(f"{p}{s}{o}" for p in ("", "UTC", "GMT", "UT") for s in "+-" for o in OFFSETS),
    ]
    java = java_answers(tmp_path, "FlinkZone", FLINK_ZONE_RULE, names)
    assert [_accepts(name) for name in names] == [v == "true" for v in java]


ZONE_IDS = (  # noqa: SIM905 - one id per word reads best
    "UTC GMT UT Z UCT Zulu GMT0 EST5EDT CET MET Etc/UTC Europe/Berlin utc EST MST HST "
    "PST CST IST JST BST ACT VST Factory localtime ROC"
).split()
OFFSETS = (  # noqa: SIM905 - one offset per word reads best
    "0 8 08 800 0800 08:00 8:00 18 18:00 1801 19 23 05:30 0530 05:60 08:00:00"
).split()


def _accepts(name: str) -> bool:
    try:
        parse_time_zone(name)
    except ConfigError:
        return False
    return True


AT_ZONE = """
  static long answer(String line) {
    String[] p = line.split("\\t");
    return LocalDateTime.parse(p[0]).atZone(ZoneId.of(p[1])).toInstant().toEpochMilli();
  }
"""


def _transition_cases() -> list[tuple[str, str]]:
    """Every quarter hour around the 2026 transitions of zones with unusual DST rules."""
    cases = []
    for zone in (
        "America/New_York",
        "Europe/Berlin",
        "Australia/Lord_Howe",
        "Europe/Dublin",
        "America/Santiago",
        "Asia/Shanghai",
        "UTC",
    ):
        tz = ZoneInfo(zone)
        instant = datetime(2026, 1, 1, tzinfo=UTC)
        previous = instant.astimezone(tz).utcoffset()
        while instant.year == 2026:
            offset = instant.astimezone(tz).utcoffset()
            if offset != previous:
                local = instant.astimezone(tz).replace(tzinfo=None)
                for quarter in range(-12, 13):
                    moment = local + timedelta(minutes=15 * quarter)
                    cases.append((moment.isoformat(), zone))
                previous = offset
            instant += timedelta(hours=1)
        cases.append(("2026-06-15T12:00:00", zone))
    return cases


def test_at_zone_matches_java_local_date_time_at_zone(tmp_path):
    cases = _transition_cases()
    lines = [f"{local}\t{zone}" for local, zone in cases]
    java = [int(x) for x in java_answers(tmp_path, "AtZone", AT_ZONE, lines)]
    ours = [at_zone_epoch_ms(datetime.fromisoformat(t), parse_time_zone(z)) for t, z in cases]
    assert len(cases) > 150
    assert ours == java


def test_idle_time_trigger_waits_after_the_newest_file_and_the_partitions_end():
    """Paimon's rule: now - max(last update, partition start + interval) > idle time."""
    t = IdleTimeCommitTrigger(
        timedelta(minutes=30), timedelta(hours=1), HOURLY, parse_time_zone("Asia/Shanghai")
    )
    end = epoch_ms("2026-11-20T01:00:00+08:00")
    quiet = epoch_ms("2026-11-20T00:20:00+08:00")  # the last file came early in the hour
    commit = t.commit_time_ms(hour("2026-11-20", "00"), quiet - 1_000, quiet)
    assert commit == end + 1_800_000  # not quiet + 30 min: the hour is not over then
    late = epoch_ms("2026-11-20T01:10:00+08:00")  # a file after the hour's end moves it
    assert t.commit_time_ms(hour("2026-11-20", "00"), quiet, late) == late + 1_800_000
    assert not t.is_committable(commit, watermark_ms=10**15, now_ms=commit)
    assert t.is_committable(commit, watermark_ms=None, now_ms=commit + 1)
