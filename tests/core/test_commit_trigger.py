"""When a partition may be committed: strict, zone-aware, and right across DST."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from airflow_provider_fscommit.core.commit_trigger import (
    PartitionTimeCommitTrigger,
    ProcTimeCommitTrigger,
    at_zone_epoch_ms,
    parse_time_zone,
)
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.time_extractor import DefaultPartTimeExtractor

HOURLY = DefaultPartTimeExtractor("$dt $hour:00:00", None)


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


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
    assert trigger("+08:00").commit_time_ms(hour("2026-11-20", "10"), 0) == commit


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


@pytest.mark.parametrize("name", ["Mars/Olympus", "UTC+99", "", "+25:00"])
def test_unknown_time_zones_are_rejected_with_examples(name):
    with pytest.raises(ConfigError, match=r"is not a known time zone.*Asia/Shanghai"):
        parse_time_zone(name)


JAVA_AT_ZONE = """
import java.time.*;
public class AtZone {
  public static void main(String[] args) throws Exception {
    java.io.BufferedReader in =
        new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split("\\t");
      System.out.println(LocalDateTime.parse(p[0]).atZone(ZoneId.of(p[1])).toInstant().toEpochMilli());
    }
  }
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
    (tmp_path / "AtZone.java").write_text(JAVA_AT_ZONE)
    subprocess.run(["javac", "AtZone.java"], cwd=tmp_path, check=True)
    cases = _transition_cases()
    result = subprocess.run(
        ["java", "-cp", str(tmp_path), "AtZone"],
        input="".join(f"{local}\t{zone}\n" for local, zone in cases),
        capture_output=True,
        text=True,
        check=True,
    )
    java = [int(x) for x in result.stdout.split()]
    ours = [at_zone_epoch_ms(datetime.fromisoformat(t), parse_time_zone(z)) for t, z in cases]
    assert len(cases) > 150
    assert ours == java
