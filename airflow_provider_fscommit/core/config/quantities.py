"""Durations and memory sizes written the way Flink users write them (``1 h``, ``128MB``).

Flink's ``TimeUtils.parseDuration`` and ``MemorySize.parse`` define the accepted forms; we
accept the same so options pasted from a Flink table definition mean the same thing: a
non-negative integer, then a unit label in any case (none: milliseconds, or bytes).

Two differences, both at the edges. A timedelta holds microseconds, so nanoseconds are
truncated to whole microseconds; Flink reads every duration option in whole milliseconds
(``Duration.toMillis``), so what a trigger does is the same. And ``us`` is accepted as
well as Flink's ``µs``, which is awkward to type in YAML or a shell.

Instants are shown here too (:func:`iso_ms`): every layer above (the ledger's records, the
policies, the status readers, the command line) prints epoch milliseconds the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

from airflow_provider_fscommit.core.errors import ConfigError

_NS_PER_US = 1000
# Each unit in nanoseconds, so that ``ns`` needs no special case.
_DURATION_UNITS: dict[str, int] = {}
for _names, _ns in (
    (("d", "day", "days"), 86_400 * 10**9),
    (("h", "hour", "hours"), 3_600 * 10**9),
    (("min", "m", "minute", "minutes"), 60 * 10**9),
    (("s", "sec", "secs", "second", "seconds"), 10**9),
    (("ms", "milli", "millis", "millisecond", "milliseconds"), 10**6),
    (("µs", "us", "micro", "micros", "microsecond", "microseconds"), _NS_PER_US),
    (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1),
):
    for _name in _names:
        _DURATION_UNITS[_name] = _ns
_DURATION_UNIT_NAMES = "d, h, min (or m), s, ms, µs (or us), ns"
_MAX_DURATION_US = timedelta.max // timedelta(microseconds=1)
_MAX_SIZE = 2**63 - 1  # Flink's MemorySize is a Java long of bytes

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

# ASCII digits only, as Flink: int() would take other scripts' digits too.
_AMOUNT = re.compile(r"^\s*([0-9]+)\s*([^0-9\s]*)\s*$")


def _amount(text: str, units: Mapping[str, int], error: str) -> tuple[int, str]:
    """The number and lower-case unit label ('' for none) of ``text``, else ``error``.

    Shared, so that durations and sizes read numbers and labels alike.
    """
    match = _AMOUNT.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or (unit and unit not in units):
        raise ConfigError(error)
    return int(match.group(1)), unit


def parse_duration(
    text: str | int | float | timedelta, option: str = "duration", *, unit_required: bool = False
) -> timedelta:
    """Parse ``'1 h'``, ``'30min'``, ``'500'`` (milliseconds, as in Flink) into a timedelta.

    ``unit_required`` refuses a number without a unit (the command line's flags: ``5``
    meaning 5 ms surprises anyone who is not pasting a Flink option).
    """
    if isinstance(text, timedelta):
        return text
    if isinstance(text, bool) or (isinstance(text, (int, float)) and not 0 <= text < math.inf):
        raise ConfigError(f"{option}: expected a duration such as '1 h', got {text!r}")
    if isinstance(text, (int, float)):
        nanos = round(text * 10**6)
    else:
        amount, unit = _amount(
            text,
            _DURATION_UNITS,
            f"{option}: cannot parse duration {text!r}; write a number and a unit such as "
            f"'1 h', '30 min', '10 s' or '500 ms' (units: {_DURATION_UNIT_NAMES}"
            + (")" if unit_required else "; none: ms)"),
        )
        if unit_required and not unit:
            raise ConfigError(
                f"{option}: the duration {text!r} has no unit; write it with one, e.g. "
                f"'{amount} s' or '{amount} min' (units: {_DURATION_UNIT_NAMES})"
            )
        nanos = amount * _DURATION_UNITS.get(unit, 10**6)
    if nanos // _NS_PER_US > _MAX_DURATION_US:
        raise ConfigError(
            f"{option}: the duration {text!r} is too long; the limit is {timedelta.max.days} days"
        )
    return timedelta(microseconds=nanos // _NS_PER_US)


def parse_memory_size(text: str | int, option: str = "size") -> int:
    """Parse ``'128MB'``, ``'20 kb'`` or ``'1024'`` (bytes) into a byte count (1 KB = 1024)."""
    if isinstance(text, bool):
        raise ConfigError(f"{option}: expected a size such as '128MB', got {text!r}")
    if isinstance(text, int):
        size = text
    else:
        amount, unit = _amount(
            text,
            _MEMORY_UNITS,
            f"{option}: cannot parse size {text!r}; write a number and a unit such as "
            "'128MB', '512 kb' or '1gb' (units: b, kb, mb, gb, tb)",
        )
        size = amount * _MEMORY_UNITS.get(unit, 1)
    if size <= 0:
        raise ConfigError(f"{option}: the size must be positive, got {text!r}")
    if size > _MAX_SIZE:
        raise ConfigError(
            f"{option}: the size {text!r} is too large; the limit is {_MAX_SIZE} bytes "
            "(8 EB, a Java long as in Flink)"
        )
    return size


def format_duration(value: timedelta) -> str:
    """Render a duration in the largest unit that divides it, as Flink prints them.

    Exact, so a spec's delay survives :meth:`TableSpec.to_dict` and back.
    """
    us = value // timedelta(microseconds=1)
    for name, unit_s in (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)):
        if us and us % (unit_s * 10**6) == 0:
            return f"{us // (unit_s * 10**6)} {name}"
    return f"{us // 1000} ms" if us % 1000 == 0 else f"{us} µs"


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


def iso_ms(epoch_ms: int | None) -> str | None:
    """Epoch milliseconds as an ISO-8601 UTC string (None stays None)."""
    if epoch_ms is None:
        return None
    return datetime.fromtimestamp(epoch_ms / 1000, timezone.utc).isoformat(timespec="milliseconds")


def epoch_ms(value: datetime | str, option: str = "time") -> int:
    """An ISO-8601 time (or a datetime) as epoch milliseconds, the inverse of :func:`iso_ms`;
    a time without an offset is UTC, as the catalogs' parameters are written."""
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"{option}: {value!r} is not an ISO-8601 time such as 2026-11-20T23:00:00+00:00"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return round(moment.timestamp() * 1000)
