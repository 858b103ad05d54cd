"""Partition time extraction: from partition values to the partition's local time.

Mirrors Flink's ``PartitionTimeExtractor``: the ``default`` kind fills a timestamp pattern
(``$dt $hour:00:00``) with the partition values and parses the result, either with a Java
``DateTimeFormatter`` pattern or leniently as ``y-M-d[ H:m:s[.f]]``; the ``custom`` kind
loads a user class. The result is a *naive* local date-time: which instant it denotes is
decided by the commit trigger, on the wall clock of the watermark time zone.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cached_property, lru_cache

from airflow_provider_fscommit.core.errors import ConfigError, PartitionTimeError, shown
from airflow_provider_fscommit.core.loader import load_class
from airflow_provider_fscommit.core.partition.datetime_formatter import JavaDateTimeFormatter

# Flink's DefaultPartTimeExtractor.TIMESTAMP_FORMATTER / DATE_FORMATTER: year of 1-10
# digits, month and day of 1-2, an optional time of 1-2 digit fields and 1-9 fraction
# digits, resolved leniently (month 13 is January of the next year, 24:00 the next day).
_LENIENT = re.compile(
    r"(?P<y>[0-9]{1,10})-(?P<M>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?: (?P<H>[0-9]{1,2}):(?P<m>[0-9]{1,2}):(?P<s>[0-9]{1,2})(?:\.(?P<f>[0-9]{1,9}))?)?"
)
# The form nearly every partition time has (``2026-11-20 03:00:00``): when its fields are
# in range, LENIENT resolves nothing, and Python's own parser reads it 20x faster.
_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?: [0-9]{2}:[0-9]{2}:[0-9]{2})?")


class PartitionTimeExtractor(abc.ABC):
    """Turns a partition's values into its local date-time (a naive ``datetime``).

    Subclass it for the ``custom`` kind; the class is built with no arguments, like Flink's.
    """

    @abc.abstractmethod
    def extract(self, keys: Sequence[str], values: Sequence[str | None]) -> datetime:
        """Return the partition's time; raise ``ValueError`` when the values have none."""

    def validate(self, keys: Sequence[str]) -> None:  # noqa: B027 - optional hook
        """Check the extractor against the table's partition keys once, before any partition."""


class DefaultPartTimeExtractor(PartitionTimeExtractor):
    """Flink's ``default`` extractor: a ``$key`` pattern and an optional formatter."""

    def __init__(self, timestamp_pattern: str | None, timestamp_formatter: str | None) -> None:
        self.timestamp_pattern = timestamp_pattern or None
        self.timestamp_formatter = timestamp_formatter or None
        # (keys, values) -> time: a run asks for a partition's time in several places (its
        # judging, the completeness step, expiry), and a year-old table has thousands of
        # partitions. Bounded by the table's partitions; a value with no time is not kept.
        self._times: dict[tuple[tuple[str, ...], tuple[str | None, ...]], datetime] = {}

    @cached_property
    def _formatter(self) -> JavaDateTimeFormatter | None:
        if self.timestamp_formatter is None:
            return None
        try:
            return JavaDateTimeFormatter(self.timestamp_formatter)
        except ValueError as exc:
            raise ConfigError(f"partition.time-extractor.timestamp-formatter: {exc}") from None

    def validate(self, keys: Sequence[str]) -> None:
        if not keys:
            raise ConfigError(
                "the table has no partition keys, so partitions have no time; "
                "set the partition keys (e.g. --partition-keys dt,hour)"
            )
        if self.timestamp_pattern is not None:
            self._fill(self.timestamp_pattern, keys, ["0"] * len(keys))
        self._formatter  # noqa: B018 - compile the formatter now to report a bad one early

    def extract(self, keys: Sequence[str], values: Sequence[str | None]) -> datetime:
        known = (tuple(keys), tuple(values))
        time = self._times.get(known)
        if time is None:
            time = self._times[known] = self._extract(keys, values)
        return time

    def _extract(self, keys: Sequence[str], values: Sequence[str | None]) -> datetime:
        if self.timestamp_pattern is None:
            text = values[0]
            if text is None:
                raise PartitionTimeError(
                    f"partition value of '{keys[0]}' is null; a null partition has no time"
                )
        else:
            text = self._fill(self.timestamp_pattern, keys, values)
        return self.parse(text)

    def parse(self, text: str) -> datetime:
        """Parse the filled pattern as Flink does: formatter first, else the lenient form."""
        formatter = self._formatter
        if formatter is not None:
            try:
                return formatter.parse(text)
            except ValueError as exc:
                raise PartitionTimeError(
                    f"{exc}; fix partition.time-extractor.timestamp-formatter "
                    "(--timestamp-formatter) or the timestamp pattern"
                ) from None
        return _parse_lenient(text)

    @staticmethod
    def _fill(pattern: str, keys: Sequence[str], values: Sequence[str | None]) -> str:
        """Replace each ``$key`` with its value, preferring the longest key that matches."""
        out: list[str] = []
        for part in pattern_template(pattern, tuple(keys)):
            if isinstance(part, str):
                out.append(part)
                continue
            value = values[part]
            if value is None:
                raise PartitionTimeError(
                    f"partition value of '{keys[part]}' is null; a null partition has no time"
                )
            out.append(value)
        return "".join(out)


@lru_cache(maxsize=64)
def pattern_template(pattern: str, keys: tuple[str, ...]) -> tuple[str | int, ...]:
    """``pattern`` as its literal text and the positions of the keys it names, parsed once
    per table rather than once per partition."""
    by_length = sorted(keys, key=len, reverse=True)
    parts: list[str | int] = []
    literal = ""
    i = 0
    while i < len(pattern):
        if pattern[i] != "$":
            literal += pattern[i]
            i += 1
            continue
        key = next((k for k in by_length if pattern.startswith(k, i + 1)), None)
        if key is None:
            ref = re.match(r"\$\w*", pattern[i:])
            raise ConfigError(
                f"partition.time-extractor.timestamp-pattern {pattern!r} references "
                f"{ref.group(0) if ref else '$'!r}, which is not a partition key; "
                f"the keys are {list(keys)}"
            )
        parts.extend([literal, keys.index(key)] if literal else [keys.index(key)])
        literal = ""
        i += 1 + len(key)
    if literal:
        parts.append(literal)
    return tuple(parts)


def _parse_lenient(text: str) -> datetime:
    """Parse as Flink does without a formatter, with Java's LENIENT resolution."""
    if _CANONICAL.fullmatch(text):
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            pass  # a field out of range (hour 24, November 31st): LENIENT rolls it over
    match = _LENIENT.fullmatch(text)
    try:
        if match is None:
            raise ValueError("expected y-M-d[ H:m:s[.fraction]]")
        months = int(match["y"]) * 12 + int(match["M"]) - 1
        return datetime(months // 12, months % 12 + 1, 1) + timedelta(
            days=int(match["d"]) - 1,
            hours=int(match["H"] or 0),
            minutes=int(match["m"] or 0),
            seconds=int(match["s"] or 0),
            microseconds=int((match["f"] or "").ljust(6, "0")[:6]),
        )
    except (ValueError, OverflowError) as exc:
        raise PartitionTimeError(
            f"cannot parse partition time {shown(text)}: {exc}; set "
            "partition.time-extractor.timestamp-pattern (e.g. '$dt $hour:00:00') and, for "
            "other layouts, partition.time-extractor.timestamp-formatter (e.g. 'yyyyMMdd')"
        ) from None


def create_time_extractor(
    kind: str,
    class_path: str | None,
    timestamp_pattern: str | None,
    timestamp_formatter: str | None,
) -> PartitionTimeExtractor:
    """Build the extractor named by ``partition.time-extractor.kind``."""
    if kind == "default":
        return DefaultPartTimeExtractor(timestamp_pattern, timestamp_formatter)
    if kind == "custom":
        if not class_path:
            raise ConfigError(
                "partition.time-extractor.kind is 'custom' but partition.time-extractor.class "
                "is not set; give the dotted path of a PartitionTimeExtractor subclass"
            )
        cls = load_class(class_path, PartitionTimeExtractor, "partition.time-extractor.class")
        return cls()
    raise ConfigError(
        f"partition.time-extractor.kind {kind!r} is unknown; use 'default' or 'custom'"
    )
