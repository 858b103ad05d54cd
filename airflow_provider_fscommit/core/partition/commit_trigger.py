"""Commit triggers: when a partition is complete and may be committed.

``partition-time`` (Flink's ``PartitionTimeCommitPredicate``): the safe watermark has
passed the partition's commit time, strictly. The commit time is the partition time plus
the delay *on the wall clock of the watermark time zone*, placed on the timeline as Java's
``LocalDateTime.atZone`` does (a time in a DST gap moves forward by the gap, in an overlap
the earlier offset wins). Flink converts first and adds the delay after, which commits the
US fall-back ``hour=01`` (two real hours in one directory) an hour early; outside DST
transitions the two rules agree.

``process-time`` (Flink's ``ProcTimeCommitPredicate``): the wall clock has passed the
partition's creation time (its first committed file) plus the delay; with no delay (under
a millisecond, as Flink reads it) at once.

``idle-time`` (Paimon's ``partition.idle-time-to-done`` with ``partition.time-interval``):
the wall clock has passed the idle time after the later of the partition's newest
committed file and the end of its time span (its partition time plus the interval), as
Paimon's ``PartitionMarkDoneTrigger`` decides. For trickling streams whose partition time
says little about when the data stops: a partition is done when nothing new has arrived
for that long *and* its span is over, so a quiet stretch inside an hour does not announce
the hour. Late data restarts the clock, and the partition is committed again once it is
idle again.

End of input (Flink's ``endInput``, Paimon's ``partition.end-input-to-done``;
``sink.partition-commit.end-input``): once the query has stopped for good, no row is due
for any partition, so every partition is committable whatever the trigger's clock says.
It is a fact about one run, not a trigger of its own: :class:`EndOfInputTrigger` wraps the
spec's trigger, which still gives each partition's commit time.
"""

from __future__ import annotations

import abc
import functools
import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, available_timezones

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.partition.time_extractor import PartitionTimeExtractor

_EPOCH = datetime(1970, 1, 1)
_MS = timedelta(milliseconds=1)
# Flink's rule (FileSystemTableFactory.validateTimeZone): java.util.TimeZone and
# java.time.ZoneId must read the id alike. That leaves TZDB ids, 'UTC' and fixed offsets
# written 'GMT+h', 'GMT+hh', 'GMT+hhmm' or 'GMT+hh:mm' up to 18 hours; it refuses 'Z',
# '+08:00', 'UTC+8', 'UT', and the TZDB ids EST, MST and HST, which TimeZone reads as
# ZoneId.SHORT_IDS offsets (so the zone cannot mean two things). Java's TZDB also lacks
# a few names of the system's database.
_GMT_OFFSET = re.compile(r"GMT([+-])(?:([0-9]{1,2})|([0-9]{2}):?([0-9]{2}))")
_REFUSED_BY_JAVA = frozenset({"EST", "MST", "HST", "Factory", "localtime", "posixrules", "ROC"})


@functools.cache
def _tzdb_ids() -> frozenset[str]:
    """Read once, on first use: listing the zone database takes some 20 ms."""
    return frozenset(available_timezones() - _REFUSED_BY_JAVA)


def parse_time_zone(name: str) -> tzinfo:
    """Resolve a zone id as Flink validates it: a TZDB id, ``UTC``, or ``GMT-08:00``."""
    if name in ("UTC", "GMT"):
        return timezone.utc
    fixed = _GMT_OFFSET.fullmatch(name)
    if fixed:
        sign, short_hours, hours, minutes = fixed.groups()
        offset = timedelta(hours=int(short_hours or hours), minutes=int(minutes or 0))
        if offset <= timedelta(hours=18) and int(minutes or 0) < 60:
            return timezone(-offset if sign == "-" else offset)
    elif name in _tzdb_ids():
        return ZoneInfo(name)
    raise ConfigError(
        f"sink.partition-commit.watermark-time-zone {name!r} is not a valid time zone; as "
        "in Flink, use a TZDB id such as 'America/Los_Angeles' or 'Asia/Shanghai' to "
        "include daylight saving time, a fixed offset written 'GMT-08:00' or 'GMT+03:00', "
        "or 'UTC'"
    )


def at_zone_epoch_ms(local: datetime, zone: tzinfo) -> int:
    """Epoch milliseconds of a naive local date-time in ``zone``, as Java's ``atZone``.

    Python's ``fold=0`` applies the offset in force *before* a transition: in a gap that
    lands the time later by the gap's length, and in an overlap it picks the earlier
    offset, which is exactly what ``LocalDateTime.atZone`` documents.
    """
    if isinstance(zone, timezone):  # a fixed offset (UTC, GMT+03:00): no transition to place
        offset = zone.utcoffset(None)
    else:
        offset = local.replace(tzinfo=zone, fold=0).utcoffset() or timedelta(0)
    return (local - _EPOCH - offset) // _MS


class PartitionCommitTrigger(abc.ABC):
    """Decides whether a partition may be committed, strictly after its commit time."""

    @abc.abstractmethod
    def commit_time_ms(
        self, partition: PartitionSpec, creation_time_ms: int, last_modified_ms: int = 0
    ) -> int:
        """The instant (epoch ms) that this trigger's clock must pass.

        ``creation_time_ms`` and ``last_modified_ms`` are the partition's first and newest
        committed files' times (0: the partition has no files).
        """

    @abc.abstractmethod
    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        """This trigger's clock: the safe watermark or the wall clock (None: unknown)."""

    def is_committable(self, commit_time_ms: int, watermark_ms: int | None, now_ms: int) -> bool:
        """Strictly after: a watermark equal to the commit time is not enough (as Flink)."""
        clock = self.clock_ms(watermark_ms, now_ms)
        return clock is not None and clock > commit_time_ms


class PartitionTimeCommitTrigger(PartitionCommitTrigger):
    """``partition-time``: watermark > partition time + delay, on the zone's wall clock."""

    def __init__(self, extractor: PartitionTimeExtractor, delay: timedelta, zone: tzinfo):
        self.extractor = extractor
        self.delay = delay
        self.zone = zone
        # A partition's commit time depends on its values alone, and a run judges each
        # partition in several readers: computed once (bounded by the table's partitions).
        self._commit_times: dict[PartitionSpec, int] = {}

    def partition_time(self, partition: PartitionSpec) -> datetime:
        return self.extractor.extract(partition.keys, partition.values)

    def commit_time_ms(
        self, partition: PartitionSpec, creation_time_ms: int, last_modified_ms: int = 0
    ) -> int:
        commit_time = self._commit_times.get(partition)
        if commit_time is None:
            commit_time = at_zone_epoch_ms(self.partition_time(partition) + self.delay, self.zone)
            self._commit_times[partition] = commit_time
        return commit_time

    @property
    def fixed_delay_ms(self) -> int | None:
        """How long after a partition's time, placed in the zone, its commit time is, where
        the zone has a fixed offset and the delay is whole milliseconds: the same for every
        partition. None where the zone's transitions may move it: each partition's local
        time decides (:meth:`commit_time_ms`)."""
        if isinstance(self.zone, timezone) and not self.delay % _MS:
            return self.delay // _MS
        return None

    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        return watermark_ms


class ProcTimeCommitTrigger(PartitionCommitTrigger):
    """``process-time``: now > the partition's first committed file's time + delay."""

    def __init__(self, delay: timedelta):
        self.delay = delay

    def is_committable(self, commit_time_ms: int, watermark_ms: int | None, now_ms: int) -> bool:
        """No delay commits at once, as Flink: a file's time from another host's clock may
        be ahead of ours, and a committed file is complete whatever the clocks say."""
        no_delay = self.delay // _MS == 0
        return no_delay or super().is_committable(commit_time_ms, watermark_ms, now_ms)

    def commit_time_ms(
        self, partition: PartitionSpec, creation_time_ms: int, last_modified_ms: int = 0
    ) -> int:
        return creation_time_ms + self.delay // _MS

    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        return now_ms


class IdleTimeCommitTrigger(PartitionCommitTrigger):
    """``idle-time``: now > max(newest committed file's time, the span's end) + idle time.

    File times come from the clocks of the hosts that wrote them, as for ``process-time``;
    the idle time (minutes, not milliseconds) absorbs ordinary clock skew. The span ends
    ``interval`` after the partition time on the wall clock of ``zone``, placed on the
    timeline as ``partition-time`` places its commit time (Paimon adds the interval to
    the instant in the JVM's zone; the two agree outside DST transitions).
    """

    def __init__(
        self,
        idle: timedelta,
        interval: timedelta,
        extractor: PartitionTimeExtractor,
        zone: tzinfo,
    ):
        self.idle = idle
        self.interval = interval
        self.extractor = extractor
        self.zone = zone

    def span_end_ms(self, partition: PartitionSpec) -> int:
        """When the partition's time span ends (epoch ms): no row of it is due after."""
        start = self.extractor.extract(partition.keys, partition.values)
        return at_zone_epoch_ms(start + self.interval, self.zone)

    def commit_time_ms(
        self, partition: PartitionSpec, creation_time_ms: int, last_modified_ms: int = 0
    ) -> int:
        return max(last_modified_ms, self.span_end_ms(partition)) + self.idle // _MS

    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        return now_ms


class EndOfInputTrigger(PartitionCommitTrigger):
    """End of input: every partition is committable; its commit time and the clock stay
    ``trigger``'s (what the status shows).

    Only for a query that has stopped for good: the status reader refuses end of input on
    a query still writing a batch before any partition is judged.
    """

    def __init__(self, trigger: PartitionCommitTrigger):
        self.trigger = trigger

    def commit_time_ms(
        self, partition: PartitionSpec, creation_time_ms: int, last_modified_ms: int = 0
    ) -> int:
        return self.trigger.commit_time_ms(partition, creation_time_ms, last_modified_ms)

    def clock_ms(self, watermark_ms: int | None, now_ms: int) -> int | None:
        return self.trigger.clock_ms(watermark_ms, now_ms)

    def is_committable(self, commit_time_ms: int, watermark_ms: int | None, now_ms: int) -> bool:
        return True
