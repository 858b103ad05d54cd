"""Durations and memory sizes written the way Flink users write them (``1 h``, ``128MB``).

Flink's ``TimeUtils.parseDuration`` and ``MemorySize.parse`` define the accepted forms; we
accept the same so options pasted from a Flink table definition mean the same thing.
"""

from __future__ import annotations

import re
from datetime import timedelta

from airflow_provider_fscommit.core.errors import ConfigError

_DURATION_UNITS: dict[str, timedelta] = {}
for _names, _unit in (
    (("d", "day", "days"), timedelta(days=1)),
    (("h", "hour", "hours"), timedelta(hours=1)),
    (("min", "m", "minute", "minutes"), timedelta(minutes=1)),
    (("s", "sec", "secs", "second", "seconds"), timedelta(seconds=1)),
    (("ms", "milli", "millis", "millisecond", "milliseconds"), timedelta(milliseconds=1)),
    (("us", "µs", "micro", "micros", "microsecond", "microseconds"), timedelta(microseconds=1)),
):
    for _name in _names:
        _DURATION_UNITS[_name] = _unit

_MEMORY_UNITS: dict[str, int] = {}
for _names, _factor in (
    (("b", "bytes"), 1),
    (("k", "kb", "kibibytes"), 1024),
    (("m", "mb", "mebibytes"), 1024**2),
    (("g", "gb", "gibibytes"), 1024**3),
    (("t", "tb", "tebibytes"), 1024**4),
):
    for _name in _names:
        _MEMORY_UNITS[_name] = _factor

_AMOUNT = re.compile(r"^\s*(\d+)\s*([^\d\s]*)\s*$")


def parse_duration(text: str | int | float | timedelta, option: str = "duration") -> timedelta:
    """Parse ``'1 h'``, ``'30min'``, ``'500'`` (milliseconds, as in Flink) into a timedelta."""
    if isinstance(text, timedelta):
        return text
    if isinstance(text, bool):
        raise ConfigError(f"{option}: expected a duration such as '1 h', got {text!r}")
    if isinstance(text, int | float):
        return timedelta(milliseconds=text)
    match = _AMOUNT.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or (unit and unit not in _DURATION_UNITS):
        raise ConfigError(
            f"{option}: cannot parse duration {text!r}; write a number and a unit such as "
            "'1 h', '30 min', '10 s' or '500 ms' (units: d, h, min, s, ms, us)"
        )
    return int(match.group(1)) * _DURATION_UNITS.get(unit, timedelta(milliseconds=1))


def parse_memory_size(text: str | int, option: str = "size") -> int:
    """Parse ``'128MB'``, ``'20 kb'`` or ``'1024'`` (bytes) into a byte count (1 KB = 1024)."""
    if isinstance(text, bool):
        raise ConfigError(f"{option}: expected a size such as '128MB', got {text!r}")
    if isinstance(text, int):
        size = text
    else:
        match = _AMOUNT.match(text)
        unit = match.group(2).lower() if match else ""
        if not match or (unit and unit not in _MEMORY_UNITS):
            raise ConfigError(
                f"{option}: cannot parse size {text!r}; write a number and a unit such as "
                "'128MB', '512 kb' or '1gb' (units: b, kb, mb, gb, tb)"
            )
        size = int(match.group(1)) * _MEMORY_UNITS.get(unit, 1)
    if size <= 0:
        raise ConfigError(f"{option}: the size must be positive, got {text!r}")
    return size


def format_duration(value: timedelta) -> str:
    """Render a duration in the largest unit that divides it, as Flink prints them."""
    ms = value // timedelta(milliseconds=1)
    for name, unit_ms in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms and ms % unit_ms == 0:
            return f"{ms // unit_ms} {name}"
    return f"{ms} ms"


def format_size(size: int) -> str:
    """A byte count for people: ``512 B``, ``1.5 MB``, ``2.0 GB``."""
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KB", "MB", "GB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"
