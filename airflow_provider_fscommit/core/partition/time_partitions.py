"""Time partitions the other way round: from a time to the partition values that name it.

A scheduled DAG commits one partition per run, and a run knows a time (the start of its
data interval), not a partition. The table's time extractor reads partition values into a
time; this module derives the inverse from the same options, so the DAG names exactly the
partition the extractor would read back: each time key's ``strftime`` format, the grain
of a partition (a day, an hour, N minutes) and the cron schedule of one run per partition.

It is derived once, from the options alone (no file is read): the filled timestamp
pattern of a sample time is matched against the pattern, every key's share of it mapped
back onto the formatter's fields, and the result checked by extracting the sample again.
What cannot be derived is refused with the option to change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from airflow_provider_fscommit.core.errors import ConfigError, PartitionTimeError
from airflow_provider_fscommit.core.partition.time_extractor import (
    DefaultPartTimeExtractor,
    PartitionTimeExtractor,
    pattern_template,
)

# Java DateTimeFormatter letters with a fixed-width strftime equivalent.
_JAVA_FIELDS = {"yyyy": "%Y", "uuuu": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M",
                "ss": "%S"}  # fmt: skip
_WIDTH = {"%Y": 4, "%m": 2, "%d": 2, "%H": 2, "%M": 2, "%S": 2}
# Flink's lenient forms without a formatter: a date alone, or a date and a time.
_LENIENT_FORMS = ("yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss")
# A sample time whose fields all differ, on every grain's boundary but the hour's.
_SAMPLE = datetime(2026, 11, 21, 13, 0, 0)
_GRAINS = (("%S", "second"), ("%M", "minute"), ("%H", "hour"), ("%d", "day"))


class IntervalError(ConfigError):
    """The span of a partition given does not fit its keys (the caller names its source)."""


@dataclass(frozen=True)
class TimePartitioning:
    """How a time names its partitions, and how often a partition begins.

    ``other_keys`` are the partition keys the time does not name (a region, a country, an
    event type): a time is then the partitions of every value they hold.
    """

    key_formats: Mapping[str, str]  # each time key's strftime format
    interval: timedelta  # the time span of one partition
    cron: str  # one run at the start of each partition
    other_keys: tuple[str, ...] = ()

    def values(self, start: datetime) -> dict[str, str]:
        """The time keys' values of the partitions starting at ``start`` (its wall clock)."""
        return {key: start.strftime(fmt) for key, fmt in self.key_formats.items()}

    def last_ended_at(self, moment: datetime) -> datetime:
        """The start of the last partition that ended at or before ``moment`` (wall clock).

        What a run triggered at ``moment`` without naming its partition commits, as a
        manual run of a data-interval DAG covers the last whole interval.
        """
        return _truncate(moment, self.interval) - self.interval


def time_partitioning(
    keys: Sequence[str], extractor: PartitionTimeExtractor, interval: timedelta | None = None
) -> TimePartitioning:
    """Derive the inverse of ``extractor`` over ``keys``.

    :param interval: the span of one partition when the keys name minutes (from
        ``partition.time-interval`` or the DAG's own setting); for days and hours it is
        implied, and a different one is refused.
    :raises IntervalError: when ``interval`` does not fit the keys.
    :raises ConfigError: naming the option to change when there is no single inverse.
    """
    if not isinstance(extractor, DefaultPartTimeExtractor):
        raise ConfigError(
            "partition.time-extractor.kind is 'custom': a custom extractor reads times from "
            "partitions but cannot say which partition a time is, so no schedule can be "
            "derived; use the default extractor with a timestamp pattern"
        )
    if not keys:
        raise ConfigError("partition_keys: a table without partition keys has no time partitions")
    pattern = extractor.timestamp_pattern or f"${keys[0]}"
    formats = _key_formats(keys, pattern, extractor.timestamp_formatter)
    span = _span(formats, interval)
    others = tuple(k for k in keys if k not in formats)
    partitioning = TimePartitioning(formats, span, _cron(span), others)
    sample = _truncate(_SAMPLE, span)
    try:  # the pattern reads the time keys only: the others' values do not matter
        read_back = extractor.extract(keys, [partitioning.values(sample).get(k, "") for k in keys])
    except PartitionTimeError as exc:
        read_back = exc
    if read_back != sample:
        raise ConfigError(
            f"partition.time-extractor.timestamp-pattern {pattern!r}: the partition derived "
            f"for {sample:%Y-%m-%d %H:%M} ({partitioning.values(sample)}) reads back as "
            f"{read_back}, not as that time; check the pattern and the formatter"
        )
    return partitioning


def _tokens(java_pattern: str) -> list[str]:
    """A formatter pattern as strftime pieces, one per output character or field."""
    pieces: list[str] = []
    i = 0
    while i < len(java_pattern):
        char = java_pattern[i]
        if char == "'":
            end = java_pattern.find("'", i + 1)
            if end < 0:
                raise ConfigError(
                    f"partition.time-extractor.timestamp-formatter {java_pattern!r} has an "
                    "unclosed quote"
                )
            pieces += [c.replace("%", "%%") for c in java_pattern[i + 1 : end] or "'"]
            i = end + 1
        elif char.isalpha():
            run = re.match(rf"{char}+", java_pattern[i:])
            letters = run.group(0) if run else char
            if letters not in _JAVA_FIELDS:
                raise ConfigError(
                    f"partition.time-extractor.timestamp-formatter {java_pattern!r}: the field "
                    f"{letters!r} has no fixed-width form a schedule can write; the DAG "
                    f"factory knows {', '.join(_JAVA_FIELDS)}"
                )
            pieces.append(_JAVA_FIELDS[letters])
            i += len(letters)
        else:
            pieces.append(char.replace("%", "%%"))
            i += 1
    return pieces


def _pattern_parts(pattern: str, keys: Sequence[str]) -> list[tuple[str | None, str]]:
    """The timestamp pattern as ``(key, "")`` and ``(None, literal)`` parts, one literal a
    character, as the extractor fills it (:func:`time_extractor.pattern_template`)."""
    parts: list[tuple[str | None, str]] = []
    for part in pattern_template(pattern, tuple(keys)):
        if isinstance(part, str):
            parts += [(None, char) for char in part]
        else:
            parts.append((keys[part], ""))
    return parts


def _alignments(
    parts: Sequence[tuple[str | None, str]], text: str, bounds: Sequence[int], at: int = 0
) -> Iterator[dict[str, tuple[int, int]]]:
    """Every way the parts cover ``text`` with each key on whole fields: its spans."""
    if not parts:
        if at == len(text):
            yield {}
        return
    (key, literal), rest = parts[0], parts[1:]
    if key is None:
        if text.startswith(literal, at):
            yield from _alignments(rest, text, bounds, at + 1)
        return
    for end in (b for b in bounds if b > at):
        for found in _alignments(rest, text, bounds, end):
            if found.get(key, (at, end)) == (at, end):
                yield {key: (at, end), **found}


def _key_formats(keys: Sequence[str], pattern: str, formatter: str | None) -> dict[str, str]:
    """Each key's strftime format: the formatter's fields its value covers in the pattern."""
    parts = _pattern_parts(pattern, keys)
    timed = [k for k in keys if (k, "") in parts]
    if not timed:
        raise ConfigError(
            f"partition.time-extractor.timestamp-pattern {pattern!r} uses none of the "
            f"partition keys {', '.join(keys)}: the partitions have no time, so no run can "
            "name the partitions it commits; commit the table with `fscommit commit` or the "
            "sweep DAG"
        )
    for java_pattern in (formatter,) if formatter else _LENIENT_FORMS:
        pieces = _tokens(java_pattern)
        bounds = [0]
        for piece in pieces:
            bounds.append(bounds[-1] + _WIDTH.get(piece, 1))
        readings = [
            {
                key: "".join(pieces[bounds.index(a) : bounds.index(b)])
                for key, (a, b) in spans.items()
            }
            for spans in _alignments(parts, _SAMPLE.strftime("".join(pieces)), bounds)
        ]
        if len(readings) > 1:
            raise ConfigError(
                f"partition.time-extractor.timestamp-pattern {pattern!r} with {java_pattern!r} "
                f"reads two ways ({readings[0]} or {readings[1]}); put a separator between "
                "the keys, e.g. '$dt $hour'"
            )
        if readings:
            return {key: readings[0][key] for key in timed}
    how = f"formatter {formatter!r}" if formatter else "the default 'yyyy-MM-dd[ HH:mm:ss]'"
    raise ConfigError(
        f"partition.time-extractor.timestamp-pattern {pattern!r} does not line up with {how}: "
        "each $key must cover whole fields of the formatter (e.g. '$dt $hour:00:00' with "
        "'yyyy-MM-dd HH:mm:ss')"
    )


def _span(formats: Mapping[str, str], interval: timedelta | None) -> timedelta:
    """The span of one partition: implied by the finest field the keys name."""
    written = "".join(formats.values())
    finest = next((name for field, name in _GRAINS if field in written), None)
    implied = {"day": timedelta(days=1), "hour": timedelta(hours=1)}.get(finest or "")
    if finest is None or finest == "second":
        raise ConfigError(
            f"partition_keys: their finest field is {finest or 'coarser than a day'}; the DAG "
            "factory schedules partitions of minutes, hours or a day"
        )
    if implied is not None:
        if interval is not None and interval != implied:
            raise IntervalError(
                f"the partition keys name one {finest} per partition, so one partition "
                f"spans 1 {finest}, not {_minutes(interval)}"
            )
        return implied
    minutes = interval.total_seconds() / 60 if interval else 0
    if not minutes or minutes != int(minutes) or 60 % int(minutes):
        raise IntervalError(
            "the partition keys name minutes, so the span of one partition must be given "
            "(partition.time-interval, or the DAG's interval) as whole minutes dividing an "
            "hour (e.g. '15 min'), "
            f"got {_minutes(interval) if interval else 'none'}"
        )
    return timedelta(minutes=int(minutes))


def _minutes(span: timedelta) -> str:
    return f"{span.total_seconds() / 60:g} min"


def _cron(span: timedelta) -> str:
    if span == timedelta(days=1):
        return "0 0 * * *"
    if span == timedelta(hours=1):
        return "0 * * * *"
    return f"*/{int(span.total_seconds() // 60)} * * * *"


def _truncate(moment: datetime, span: timedelta) -> datetime:
    """The start of the partition of ``span`` that holds ``moment``."""
    midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight + (moment - midnight) // span * span
