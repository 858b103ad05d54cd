"""Commit triggers: when a partition is complete and may be committed.

``partition-time`` (Flink's ``PartitionTimeCommitPredicate``): the safe watermark has
passed the partition's commit time, strictly. The commit time is the partition time plus
the delay *on the wall clock of the watermark time zone*, placed on the timeline as Java's
``LocalDateTime.atZone`` does (a time in a DST gap moves forward by the gap, in an overlap
the earlier offset wins). Flink converts first and adds the delay after, which commits the
US fall-back ``hour=01`` (two real hours in one directory) an hour early; outside DST
transitions the two rules agree.

``process-time`` (Flink's ``ProcTimeCommitPredicate``): the wall clock has passed the
partition's creation time (its first committed file) plus the delay.
"""

from __future__ import annotations

import abc
import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.time_extractor import PartitionTimeExtractor

_EPOCH = datetime(1970, 1, 1)
_MS = timedelta(milliseconds=1)
_FIXED_OFFSET = re.compile(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?")


def parse_time_zone(name: str) -> tzinfo:
    """Resolve a Java-style zone id: a region (``Asia/Shanghai``), ``UTC`` or ``+08:00``."""
    if name.upper() in ("UTC", "GMT", "UT", "Z"):
        return UTC
    fixed = _FIXED_OFFSET.fullmatch(name)
    if fixed:
        sign = -1 if fixed.group(1) == "-" else 1
        offset = timedelta(hours=int(fixed.group(2)), minutes=int(fixed.group(3) or 0))
        if offset <= timedelta(hours=18):
            return timezone(sign * offset)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"sink.partition-commit.watermark-time-zone {name!r} is not a known time zone; "
            "use a region id such as 'UTC', 'Asia/Shanghai' or 'America/New_York', "
            "or an offset such as '+08:00'"
        ) from None


def at_zone_epoch_ms(local: datetime, zone: tzinfo) -> int:
    """Epoch milliseconds of a naive local date-time in ``zone``, as Java's ``atZone``.

    Python's ``fold=0`` applies the offset in force *before* a transition: in a gap that
    lands the time later by the gap's length, and in an overlap it picks the earlier
    offset, which is exactly what ``LocalDateTime.atZone`` documents.
    """
    offset = local.replace(tzinfo=zone, fold=0).utcoffset() or timedelta(0)
    return (local - _EPOCH - offset) // _MS


class PartitionCommitTrigger(abc.ABC):
    """Decides whether a partition may be committed, strictly after its commit time."""

    kind: str

    @abc.abstractmethod
    def commit_time_ms(self, partition: PartitionSpec, creation_time_ms: int) -> int:
        """The instant (epoch ms) that this trigger's clock must pass."""

    @abc.abstractmethod
    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        """This trigger's clock: the safe watermark or the wall clock (None: unknown)."""

    def is_committable(self, commit_time_ms: int, watermark_ms: int | None, now_ms: int) -> bool:
        """Strictly after: a watermark equal to the commit time is not enough (as Flink)."""
        clock = self.clock_ms(watermark_ms, now_ms)
        return clock is not None and clock > commit_time_ms


class PartitionTimeCommitTrigger(PartitionCommitTrigger):
    """``partition-time``: watermark > partition time + delay, on the zone's wall clock."""

    kind = "partition-time"

    def __init__(self, extractor: PartitionTimeExtractor, delay: timedelta, zone: tzinfo):
        self.extractor = extractor
        self.delay = delay
        self.zone = zone

    def partition_time(self, partition: PartitionSpec) -> datetime:
        return self.extractor.extract(partition.keys, partition.values)

    def commit_time_ms(self, partition: PartitionSpec, creation_time_ms: int) -> int:
        return at_zone_epoch_ms(self.partition_time(partition) + self.delay, self.zone)

    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        return watermark_ms


class ProcTimeCommitTrigger(PartitionCommitTrigger):
    """``process-time``: now > the partition's first committed file's time + delay."""

    kind = "process-time"

    def __init__(self, delay: timedelta):
        self.delay = delay

    def commit_time_ms(self, partition: PartitionSpec, creation_time_ms: int) -> int:
        return creation_time_ms + self.delay // _MS

    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        return now_ms
