"""Spec inference: a table's options read off what its stream wrote, with the evidence.

A new user has a staging directory and a checkpoint, and a spec asks for partition keys,
a time pattern, a formatter, a trigger and a delay that both already say. This reads
them: the keys from the staged directories the sink log lists (``dt=…/hour=…``), the
partition time from the values' shapes (``2026-11-20`` and ``03`` give
``$dt $hour:00:00``; ``20261120`` the formatter ``yyyyMMdd``; ``year=/month=/day=``),
the trigger from whether the checkpoint has ever carried a watermark, the delay from the
finest time key, the format from the staged files' names. Each answer comes with the
evidence it rests on, so a person can check it. Where two readings fit the same evidence
(``05-11-2026``: May or November; ``2026112003``: a date and hour, or epoch seconds) it
refuses with a :class:`SpecInferenceError` naming both and the option that decides: a
wrong guess would commit partitions at the wrong time, silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from airflow_provider_fscommit.core.compat import StrEnum
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.config.quantities import format_duration, iso_ms
from airflow_provider_fscommit.core.errors import PartitionTimeError, SpecInferenceError, shown
from airflow_provider_fscommit.core.formats.file_format import formats_of_names
from airflow_provider_fscommit.core.partition.partition_spec import (
    DEFAULT_PARTITION_NAME,
    PartitionSpec,
    unescape_path_name,
)
from airflow_provider_fscommit.core.partition.time_extractor import DefaultPartTimeExtractor
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointState, read_checkpoint
from airflow_provider_fscommit.core.spark.sink_log import FileSinkLog, SinkLogSnapshot
from airflow_provider_fscommit.core.storage.filesystem import normalize_uri, relative_path

# Names that say what a key holds, where the values alone read two ways (a 10-digit
# number: a date and hour, or epoch seconds) or could be anything (00..23: an hour, or a
# bucket). Lower-case; a key's name is compared lower-cased.
DATE_NAMES = frozenset({"dt", "ds", "date", "day", "pt", "dh", "datehour", "date_hour"})
HOUR_NAMES = frozenset({"hour", "hr", "hh", "h"})
MINUTE_NAMES = frozenset({"minute", "min", "mi"})
YEAR_NAMES = frozenset({"year", "yr", "yyyy"})
MONTH_NAMES = frozenset({"month", "mon", "mo"})
DAY_NAMES = frozenset({"day", "dd", "d"})

_YMD = re.compile(r"(\d{4})([-./])(\d{1,2})\2(\d{1,2})")
_DMY = re.compile(r"(\d{1,2})([-./])(\d{1,2})\2(\d{4})")
_DATE_TIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})")
# Years a date-shaped number is read as a date in: outside them it is just a number.
_YEARS = range(1900, 2200)


class Role(StrEnum):
    """What one partition key's values are to the partition time."""

    DATE = "date"
    DATE_HOUR = "date and hour"
    DATE_TIME = "date and time"
    YEAR = "year"
    MONTH = "month"
    DAY = "day of month"
    HOUR = "hour"
    MINUTE = "minute"
    EPOCH = "epoch"


@dataclass(frozen=True)
class Reading:
    """One way to read every value of a key: its role and its layout.

    ``layout`` is the values' Java ``DateTimeFormatter`` pattern when the formatter must
    say it, None when Flink's lenient ``y-M-d[ H:m:s]`` parsing reads them as they are.
    ``shape`` is how the evidence names them (``yyyy-MM-dd``, ``epoch seconds``).
    """

    role: Role
    shape: str
    layout: str | None = None


@dataclass(frozen=True)
class Finding:
    """One option as inferred (or given), with the evidence a person can check."""

    option: str  # the key the spec file writes (a Flink key, or the Python name)
    value: Any
    evidence: str
    inferred: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "option": self.option,
            "value": self.value,
            "evidence": self.evidence,
            "inferred": self.inferred,
        }


@dataclass(frozen=True)
class Partitioning:
    """The partition keys and the partition time, read off the staged directories."""

    keys: tuple[str, ...]
    timestamp_pattern: str | None
    timestamp_formatter: str | None
    time_interval: timedelta | None  # the finest time key's grain (None: no time)
    directories: int
    keys_evidence: str
    time_evidence: str
    interval_evidence: str
    keys_inferred: bool = True
    time_inferred: bool = True

    @property
    def summary(self) -> str:
        """One line for a status header: what was inferred, from how many directories."""
        parts = []
        if self.keys_inferred:
            parts.append(f"partition keys {', '.join(self.keys)}")
        if self.timestamp_pattern:
            parts.append(f"pattern {self.timestamp_pattern!r}")
        if self.timestamp_formatter:
            parts.append(f"formatter {self.timestamp_formatter!r}")
        if not parts:
            return f"no partition time in {_directories(self.directories)}"
        what = f"{', '.join(parts[:-1])} and {parts[-1]}" if len(parts) > 1 else parts[0]
        if self.time_inferred and not self.timestamp_pattern:
            what += " (no key holds a date: no partition time)"
        return f"{what} inferred from {_directories(self.directories)}"

    def findings(self) -> list[Finding]:
        """The partitioning's options: the keys, and the time extractor's if inferred."""
        found = [
            Finding(
                o.PARTITION_KEYS.name, ",".join(self.keys), self.keys_evidence, self.keys_inferred
            )
        ]
        if self.time_inferred:
            found.append(
                Finding(
                    _key(o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_PATTERN),
                    self.timestamp_pattern,
                    self.time_evidence,
                )
            )
            if self.timestamp_formatter:
                found.append(
                    Finding(
                        _key(o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_FORMATTER),
                        self.timestamp_formatter,
                        "the values' layout, which Flink's lenient y-M-d[ H:m:s] does not read",
                    )
                )
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition_keys": list(self.keys),
            "timestamp_pattern": self.timestamp_pattern,
            "timestamp_formatter": self.timestamp_formatter,
            "time_interval": format_duration(self.time_interval) if self.time_interval else None,
            "directories": self.directories,
            "summary": self.summary,
        }


@dataclass(frozen=True)
class SpecInference:
    """What was inferred for a table, option by option, in the order a spec file lists them."""

    partitioning: Partitioning
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    # The staged partitions it was read from (relative paths, sorted).
    partitions: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """One line for every command that read the table: the partitioning, then each
        other option inferred (``status`` prints it in its header, the others on stderr)."""
        partitioning = {f.option for f in self.partitioning.findings()}
        others = [
            f"{f.option} {f.value}"
            for f in self.findings
            if f.inferred and f.value is not None and f.option not in partitioning
        ]
        if not others:
            return self.partitioning.summary
        return f"{self.partitioning.summary}; and, as init does, {', '.join(others)}"

    @property
    def options(self) -> dict[str, Any]:
        """The inferred options (set ones only), ready for ``TableSpec.from_options``."""
        return {f.option: f.value for f in self.findings if f.inferred and f.value is not None}

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "partitioning": self.partitioning.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
        }


def _key(option: o.ConfigOption) -> str:
    """The name a spec file gives an option: Flink's key where Flink has one."""
    return option.key or option.name


def _directories(count: int) -> str:
    return f"{count} staged director{'y' if count == 1 else 'ies'}"


# The readings of one key's values.


def _is_date(year: int, month: int, day: int) -> bool:
    if year not in _YEARS:
        return False
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _width(letter: str, fields: Sequence[str]) -> str:
    """A Java field of fixed width when every value has two digits, else a variable one."""
    return letter * 2 if all(len(f) == 2 for f in fields) else letter


def _separated_dates(name: str, values: Sequence[str]) -> list[Reading]:
    """``2026-11-20``, ``2026/11/20``, ``20.11.2026``, ``11-20-2026``: one separator."""
    readings = []
    ymd = [_YMD.fullmatch(v) for v in values]
    if all(ymd) and len({m[2] for m in ymd if m}) == 1:
        matches = [m for m in ymd if m]
        if all(_is_date(int(m[1]), int(m[3]), int(m[4])) for m in matches):
            sep = matches[0][2]
            shape = (
                f"yyyy{sep}{_width('M', [m[3] for m in matches])}"
                f"{sep}{_width('d', [m[4] for m in matches])}"
            )
            # Flink's lenient parse reads y-M-d as it is: no formatter to get wrong.
            readings.append(Reading(Role.DATE, shape, None if sep == "-" else shape))
    dmy = [_DMY.fullmatch(v) for v in values]
    if all(dmy) and len({m[2] for m in dmy if m}) == 1:
        matches = [m for m in dmy if m]
        sep = matches[0][2]
        firsts, seconds = [m[1] for m in matches], [m[3] for m in matches]
        if all(_is_date(int(m[4]), int(m[3]), int(m[1])) for m in matches):
            shape = f"{_width('d', firsts)}{sep}{_width('M', seconds)}{sep}yyyy"
            readings.append(Reading(Role.DATE, shape, shape))
        if all(_is_date(int(m[4]), int(m[1]), int(m[3])) for m in matches):
            shape = f"{_width('M', firsts)}{sep}{_width('d', seconds)}{sep}yyyy"
            readings.append(Reading(Role.DATE, shape, shape))
    return readings


def _compact_dates(name: str, values: Sequence[str]) -> list[Reading]:
    """``20261120`` (``yyyyMMdd``) and ``2026112003`` (``yyyyMMddHH``)."""
    if all(len(v) == 8 and v.isdigit() for v in values) and all(
        _is_date(int(v[:4]), int(v[4:6]), int(v[6:])) for v in values
    ):
        return [Reading(Role.DATE, "yyyyMMdd", "yyyyMMdd")]
    if all(len(v) == 10 and v.isdigit() for v in values) and all(
        _is_date(int(v[:4]), int(v[4:6]), int(v[6:8])) and int(v[8:]) < 24 for v in values
    ):
        return [Reading(Role.DATE_HOUR, "yyyyMMddHH", "yyyyMMddHH")]
    return []


def _date_times(name: str, values: Sequence[str]) -> list[Reading]:
    """``2026-11-20 03:00:00`` in one value, as Flink's lenient parse reads it."""
    matches = [_DATE_TIME.fullmatch(v) for v in values]
    if all(m and _is_date(int(m[1]), int(m[2]), int(m[3])) and int(m[4]) < 24 for m in matches):
        return [Reading(Role.DATE_TIME, "yyyy-MM-dd HH:mm:ss")]
    return []


def _epochs(name: str, values: Sequence[str]) -> list[Reading]:
    """Seconds (10 digits) or milliseconds (13) since 1970: a time, but not one Flink's
    default extractor reads; left out of the pattern."""
    for digits, unit in ((10, "seconds"), (13, "milliseconds")):
        if all(len(v) == digits and v.isdigit() and v[0] != "0" for v in values):
            return [Reading(Role.EPOCH, f"epoch {unit}")]
    return []


Reader = Callable[[str, Sequence[str]], list[Reading]]  # a key's name and values -> readings


def _named(role: Role, names: frozenset[str], widths: range, low: int, high: int) -> Reader:
    """A number the key's name says is a ``role`` (``hour=03``), within its range."""

    def read(name: str, values: Sequence[str]) -> list[Reading]:
        if name.lower() in names and all(
            v.isdigit() and len(v) in widths and low <= int(v) <= high for v in values
        ):
            shape = "yyyy" if role is Role.YEAR else f"{low:02d}..{high:02d}"
            return [Reading(role, shape)]
        return []

    return read


_READERS: tuple[Reader, ...] = (
    _separated_dates,
    _compact_dates,
    _date_times,
    _epochs,
    _named(Role.YEAR, YEAR_NAMES, range(4, 5), _YEARS.start, _YEARS.stop - 1),
    _named(Role.MONTH, MONTH_NAMES, range(1, 3), 1, 12),
    _named(Role.DAY, DAY_NAMES, range(1, 3), 1, 31),
    _named(Role.HOUR, HOUR_NAMES, range(1, 3), 0, 23),
    _named(Role.MINUTE, MINUTE_NAMES, range(1, 3), 0, 59),
)


def read_key(name: str, values: Sequence[str]) -> Reading | None:
    """The one reading every value of ``name`` fits (None: not a time, or no values).

    Two readings are told apart by the key's name where it says (``dt=2026112003`` is a
    date and hour, ``ts=2026112003`` could be either); otherwise this refuses, naming both.
    """
    if not values:
        return None
    readings = [r for reader in _READERS for r in reader(name, values)]
    if len(readings) > 1 and name.lower() in DATE_NAMES:
        readings = [r for r in readings if r.role is not Role.EPOCH]
    if len(readings) > 1:
        first, second = readings[:2]
        raise SpecInferenceError(
            f"partition key {name!r} reads two ways (e.g. {shown(values[0])}): as "
            f"{_described(first)} or as {_described(second)}, and fscommit will not guess; "
            "set partition.time-extractor.timestamp-pattern and "
            "partition.time-extractor.timestamp-formatter to say which (e.g. "
            f"--timestamp-pattern '${name}' --timestamp-formatter "
            f"'{first.layout or first.shape}')"
        )
    return readings[0] if readings else None


def _described(reading: Reading) -> str:
    if reading.role is Role.EPOCH:
        return f"{reading.shape} (not a time the default extractor reads: left out)"
    return f"{reading.shape} (a {reading.role})"


# The partitioning.


def infer_partitioning(
    directories: Sequence[str],
    keys: Sequence[str] | None = None,
    default_name: str = DEFAULT_PARTITION_NAME,
    *,
    time: bool = True,
) -> Partitioning:
    """The partition keys (unless given) and, with ``time``, the partition time of staged
    directories.

    ``directories`` are relative to the staging root, escaped as Spark names them. Without
    ``time`` (the user gave the time pattern) the values are not read for a time at all,
    so a reading this would refuse does not stand in the way of the one given.
    """
    if not directories:
        raise SpecInferenceError(
            "nothing is staged yet: the sink log lists no committed file, so there are no "
            "partition directories to read the partition keys from; let the query commit a "
            "batch with rows, or give the partition keys (--partition-keys dt,hour)"
        )
    inferred = keys is None
    keys = _keys_of(directories) if keys is None else tuple(keys)
    specs = [PartitionSpec.parse(d, keys, default_name) for d in directories]
    values = {
        key: sorted({s.values[i] for s in specs if s.values[i] is not None})
        for i, key in enumerate(keys)
    }
    example = min(directories, key=lambda d: (len(d), d))  # the plainest, to read
    keys_evidence = (
        f"read from the {_directories(len(directories))} the sink log lists, e.g. {example}"
        if inferred
        else "given"
    )
    if not time:
        return Partitioning(
            keys, None, None, None, len(directories), keys_evidence, "given", "", inferred, False
        )
    readings = {key: read_key(key, values[key]) for key in keys}
    pattern, formatter, interval, used, why = _partition_time(readings, values)
    notes = [why, *_left_out(readings, values, used)]
    partitioning = Partitioning(
        keys=keys,
        timestamp_pattern=pattern,
        timestamp_formatter=formatter,
        time_interval=interval,
        directories=len(directories),
        keys_evidence=keys_evidence,
        time_evidence="the partition time: " + "; ".join(n for n in notes if n),
        interval_evidence=_interval_evidence(readings, values, used, interval),
        keys_inferred=inferred,
    )
    _check_reads_every_partition(partitioning, specs)
    return partitioning


def _keys_of(directories: Sequence[str]) -> tuple[str, ...]:
    """The ``key=`` names of the directories, which must be the same in each."""
    layouts: dict[tuple[str, ...], str] = {}
    for directory in directories:
        names = []
        for segment in [s for s in directory.split("/") if s]:
            name, sep, _ = segment.partition("=")
            if not sep or not name:
                raise SpecInferenceError(
                    f"staged directory {shown(directory)} is not a Hive-style partition "
                    f"({shown(segment)} is not key=value): the query does not write with "
                    "partitionBy, so there are no partitions to commit"
                )
            names.append(unescape_path_name(name))
        layouts.setdefault(tuple(names), directory)
    if len(layouts) > 1:
        (a, one), (b, other) = sorted(layouts.items())[:2]
        raise SpecInferenceError(
            f"the staged directories disagree on the partition keys: {one} has "
            f"{', '.join(a) or 'none'}, {other} has {', '.join(b) or 'none'}; give the "
            "query's partitionBy columns as the partition keys (--partition-keys)"
        )
    (keys,) = layouts
    if not keys:
        raise SpecInferenceError(
            "the stream is not partitioned: its files lie directly in the staging directory, "
            "and fscommit commits partitions; write the query with partitionBy(...)"
        )
    return keys


_ANCHORS = (Role.DATE, Role.DATE_HOUR, Role.DATE_TIME)


def _partition_time(
    readings: Mapping[str, Reading | None], values: Mapping[str, list[str]]
) -> tuple[str | None, str | None, timedelta | None, set[str], str]:
    """Pattern, formatter, interval, the keys they use, and why (the evidence)."""
    by_role: dict[Role, list[str]] = {}
    for key, reading in readings.items():
        if reading is not None:
            by_role.setdefault(reading.role, []).append(key)
    anchors = [k for role in _ANCHORS for k in by_role.get(role, [])]
    ymd = [by_role.get(r, []) for r in (Role.YEAR, Role.MONTH, Role.DAY)]
    if all(len(keys) == 1 for keys in ymd):
        anchors.append("-".join(keys[0] for keys in ymd))
    if len(anchors) > 1:
        raise SpecInferenceError(
            f"two partition keys hold a date: {anchors[0]} and {anchors[1]}, and either could "
            "be the partition time; fscommit will not guess: set "
            "partition.time-extractor.timestamp-pattern to the one it is (e.g. "
            f"--timestamp-pattern '${anchors[0].split('-')[0]}')"
        )
    if not anchors:
        return None, None, None, set(), "no partition key holds a date"
    for role in (Role.HOUR, Role.MINUTE):
        if len(by_role.get(role, [])) > 1:
            first, second = by_role[role][:2]
            raise SpecInferenceError(
                f"two partition keys hold the {role}: {first} and {second}; fscommit will not "
                "guess which is the partition time's: set "
                "partition.time-extractor.timestamp-pattern (e.g. --timestamp-pattern "
                f"'$dt ${first}:00:00')"
            )
    anchor = anchors[0]
    if "-" in anchor and anchor not in readings:  # year, month and day keys
        year, month, day = anchor.split("-")
        date_part, layout, used = f"${year}-${month}-${day}", None, {year, month, day}
        why = f"{year}, {month} and {day} hold the year, month and day"
    else:
        reading = readings[anchor]
        assert reading is not None
        date_part, layout, used = f"${anchor}", reading.layout, {anchor}
        why = f"{anchor} holds a {reading.role} ({reading.shape}, e.g. {values[anchor][0]})"
        if reading.role is not Role.DATE:
            interval = _grain_of_times(reading, values[anchor])
            return date_part, layout, interval, used, why
    hours = by_role.get(Role.HOUR, [])
    if not hours:
        return date_part, layout, timedelta(days=1), used, why
    hour = hours[0]
    minutes = by_role.get(Role.MINUTE, [])
    minute = f"${minutes[0]}" if minutes else "00"
    used |= {hour, *minutes[:1]}
    why += f", {hour} the hour ({values[hour][0]})"
    if minutes:
        why += f", {minutes[0]} the minute ({values[minutes[0]][0]})"
    pattern = f"{date_part} ${hour}:{minute}:00"
    if layout is not None:
        minute_layout = _width("m", values[minutes[0]]) if minutes else "mm"
        layout = f"{layout} {_width('H', values[hour])}:{minute_layout}:ss"
    interval = _minute_grain(values[minutes[0]]) if minutes else timedelta(hours=1)
    return pattern, layout, interval, used, why


def _minute_grain(minutes: Sequence[str]) -> timedelta:
    """Minutes 00, 15, 30, 45 are quarter-hour partitions; a lone minute says one minute
    (minute 25 alone is no evidence of five-minute partitions: a young stream of minute
    partitions has written one so far)."""
    distinct = {int(m) for m in minutes}
    step = math.gcd(60, *distinct) if len(distinct) > 1 else 1
    return timedelta(minutes=step)


def _grain_of_times(reading: Reading, values: Sequence[str]) -> timedelta:
    """The largest unit every full time value is a whole number of (a day, an hour...)."""
    if reading.role is Role.DATE_HOUR:
        return timedelta(hours=1)
    times = [DefaultPartTimeExtractor(None, None).parse(v) for v in values]
    for unit in (timedelta(days=1), timedelta(hours=1), timedelta(minutes=1)):
        if all((t - datetime(t.year, t.month, t.day)) % unit == timedelta(0) for t in times):
            return unit
    return timedelta(seconds=1)


def _left_out(
    readings: Mapping[str, Reading | None], values: Mapping[str, list[str]], used: set[str]
) -> list[str]:
    """Why each key outside the pattern is left out."""
    notes = []
    for key, reading in readings.items():
        if key in used:
            continue
        if not values[key]:
            notes.append(f"{key} is left out (only null values)")
        elif reading is None:
            notes.append(f"{key} is left out (not a time, e.g. {shown(values[key][0])})")
        elif reading.role is Role.EPOCH:
            notes.append(
                f"{key} is left out ({reading.shape}, e.g. {values[key][0]}: not a time the "
                "default extractor reads; a custom one can, partition.time-extractor.kind)"
            )
        else:
            notes.append(f"{key} is left out (its {reading.role} values have no date to go with)")
    return notes


def _interval_evidence(
    readings: Mapping[str, Reading | None],
    values: Mapping[str, list[str]],
    used: set[str],
    interval: timedelta | None,
) -> str:
    if interval is None:
        return "no partition key holds a time"
    finest = next(
        (k for role in (Role.MINUTE, Role.HOUR) for k in used if _role(readings, k) is role),
        None,
    )
    if finest is None and interval == timedelta(days=1):
        return "no key holds a time of day: daily partitions"
    if finest is None:
        return f"the finest field the partition time's values hold: {format_duration(interval)}"
    listed = ", ".join(values[finest][:4]) + (", …" if len(values[finest]) > 4 else "")
    return f"the finest time key is {finest}: {listed}"


def _role(readings: Mapping[str, Reading | None], key: str) -> Role | None:
    reading = readings.get(key)
    return reading.role if reading else None


def _check_reads_every_partition(partitioning: Partitioning, specs: list[PartitionSpec]) -> None:
    """The inferred pattern must read every staged partition whose values it uses."""
    if partitioning.timestamp_pattern is None:
        return
    extractor = DefaultPartTimeExtractor(
        partitioning.timestamp_pattern, partitioning.timestamp_formatter
    )
    for spec in specs:
        if None in spec.values:
            continue  # a null partition has no time, whatever the pattern
        try:
            extractor.extract(spec.keys, spec.values)
        except PartitionTimeError as exc:
            raise SpecInferenceError(
                f"the inferred pattern {partitioning.timestamp_pattern!r} cannot read "
                f"partition {spec.path()}: {exc}; set the timestamp pattern and formatter "
                "yourself (--timestamp-pattern, --timestamp-formatter)"
            ) from None


# What the stream wrote.


def staged_directories(staging_uri: str, snapshot: SinkLogSnapshot) -> list[str]:
    """The directories of the sink log's committed files, relative to the staging root."""
    root = normalize_uri(staging_uri)
    found = []
    for directory in snapshot.directories["dir"].to_pylist():
        relative = relative_path(normalize_uri(directory), root)
        if relative is None:
            raise SpecInferenceError(
                f"the sink log of {staging_uri} lists committed files outside it (under "
                f"{directory}): the directory was moved or copied after the query wrote it; "
                "point the staging path at the directory the query writes"
            )
        found.append(relative)
    return sorted(found)


def infer_trigger(checkpoint: CheckpointState, staged_files: int, has_time: bool) -> Finding:
    """``partition-time`` when the query has an event-time watermark and the partitions a
    time (``has_time``: a pattern inferred or given).

    Only a query that has committed two batches or more, with files, and still reports a
    watermark of 0 both for its last batch and the next certainly has none (the rule
    ``partition-time`` itself refuses by); before that, both readings fit.
    """
    key = _key(o.SINK_PARTITION_COMMIT_TRIGGER)
    if not has_time:
        return Finding(
            key,
            str(o.TriggerKind.PROCESS_TIME),
            "no partition key holds a date, so partition-time cannot place a partition in "
            "time; process-time commits one once the clock passes its creation plus the delay",
        )
    batch = checkpoint.latest_committed_batch
    if checkpoint.has_watermark:
        watermark = iso_ms(checkpoint.watermark_ms or checkpoint.next_batch_watermark_ms)
        return Finding(
            key,
            str(o.TriggerKind.PARTITION_TIME),
            f"the checkpoint has an event-time watermark ({watermark} at batch {batch})",
        )
    if (batch or 0) >= 1 and staged_files:
        return Finding(
            key,
            str(o.TriggerKind.PROCESS_TIME),
            f"the checkpoint has committed batches 0 to {batch}, with files in the sink, and no "
            "event-time watermark (the query does not call withWatermark), so partition-time "
            "would never commit; process-time commits once the clock passes a partition's "
            "creation plus the delay",
        )
    raise SpecInferenceError(
        f"the checkpoint {checkpoint.path} cannot tell yet whether the query has an event-time "
        f"watermark ({'no batch' if batch is None else f'batch {batch}'} committed, watermark "
        "0): partition-time fits a query that calls withWatermark, process-time one that does "
        "not; set sink.partition-commit.trigger (--trigger) to say which"
    )


def infer_format(snapshot: SinkLogSnapshot) -> Finding | None:
    """The staged files' format as their names give it (None: none, or several)."""
    paths = snapshot.files["path"]
    found = formats_of_names(paths)
    if len(found) != 1:
        return None
    example = paths[0].as_py().rsplit("/", 1)[-1]
    return Finding(
        _key(o.FORMAT),
        str(found.pop()),
        f"read from the names of the {len(paths)} staged files, e.g. {example}",
    )


def infer_spec(given: Mapping[str, Any], *, whole: bool = True) -> SpecInference:
    """The options ``given`` (by any name) lack, read off its stream, with the evidence.

    ``whole`` adds the trigger, the delay and the format to the partitioning (which
    ``fscommit status`` and ``plan`` take alone). Given options win: they are not
    inferred, and a time pattern or formatter given means the partition time is the user's.
    """
    named = given_options(given)
    own_time = bool(
        named.keys()
        & {
            o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_PATTERN.name,
            o.PARTITION_TIME_EXTRACTOR_TIMESTAMP_FORMATTER.name,
            o.PARTITION_TIME_EXTRACTOR_KIND.name,
        }
    )
    staging_uri = named.get(o.STAGING_PATH.name)
    checkpoint_uri = named.get(o.CHECKPOINT_PATH.name)
    if not staging_uri or not checkpoint_uri:
        raise SpecInferenceError(
            "a spec is inferred from the stream's staging directory and checkpoint: give both "
            "(--staging-path, --checkpoint-path)"
        )
    keys = named.get(o.PARTITION_KEYS.name)
    default_name = named.get(o.PARTITION_DEFAULT_NAME.name, DEFAULT_PARTITION_NAME)
    snapshot = FileSinkLog(staging_uri).read()
    directories = staged_directories(staging_uri, snapshot)
    partitioning = infer_partitioning(directories, keys, default_name, time=not own_time)
    findings = partitioning.findings()
    if not whole:
        return SpecInference(partitioning, tuple(findings), tuple(directories))
    if o.SINK_PARTITION_COMMIT_TRIGGER.name not in named:
        has_time = own_time or partitioning.timestamp_pattern is not None
        checkpoint = read_checkpoint(checkpoint_uri)
        findings.append(infer_trigger(checkpoint, snapshot.files.num_rows, has_time))
    if o.SINK_PARTITION_COMMIT_DELAY.name not in named:
        findings.append(_delay(partitioning))
    file_format = infer_format(snapshot) if o.FORMAT.name not in named else None
    if file_format is not None:
        findings.append(file_format)
    return SpecInference(partitioning, tuple(findings), tuple(directories))


def _delay(partitioning: Partitioning) -> Finding:
    """The delay: the partitions' span, so a partition commits once its time is over."""
    interval = partitioning.time_interval
    if interval is None:
        why = (
            "no partition key holds a date"
            if partitioning.time_inferred
            else "the partition time is given, and its span is not read from it"
        )
        return Finding(
            _key(o.SINK_PARTITION_COMMIT_DELAY),
            None,
            f"not inferred: {why}; set it (--delay) to the partitions' span, e.g. '1 h' for "
            "hourly partitions (unset, a partition commits as soon as its trigger fires)",
        )
    span = format_duration(interval)
    return Finding(
        _key(o.SINK_PARTITION_COMMIT_DELAY),
        span,
        f"a partition spans {span} ({partitioning.interval_evidence}), so it is complete "
        "once the watermark (or the clock) passes its time plus that",
    )


def given_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """The options set in ``given`` (by any name), converted, under their Python names;
    Flink-only keys (``connector``...) are left out, as the spec leaves them out."""
    ignored = set(o.flink_only(given))
    return {
        o.lookup(name).name: o.lookup(name).convert(value)
        for name, value in given.items()
        if name not in ignored and value not in (None, "")
    }


def never_staged(staging_uri: str, partition: str) -> str | None:
    """Why ``partition`` (an escaped path) is not a partition the stream staged, naming
    the staged one it likely means (``hour=3`` for ``hour=03``); None when the sink log
    lists committed files under it. Every view reads the same sink log as inference."""
    wanted = partition.strip("/")
    directories = staged_directories(staging_uri, FileSinkLog(staging_uri).read())
    if wanted in directories:
        return None
    near = [d for d in directories if _same_values(d, wanted)]
    hint = (
        f"; the stream writes {near[0]}, the name differs"
        if near
        else f" (the sink log lists {_directories(len(directories))}, e.g. {directories[0]})"
        if directories
        else " (the sink log lists no committed file yet)"
    )
    return f"the stream never staged {wanted}: the sink log lists no file under it{hint}"


def _same_values(directory: str, partition: str) -> bool:
    """The same keys and values, numbers compared as numbers (``03`` and ``3``)."""
    ours, theirs = directory.split("/"), partition.split("/")
    if len(ours) != len(theirs):
        return False
    for one, other in zip(ours, theirs, strict=True):
        (key, _, value), (key2, _, value2) = one.partition("="), other.partition("=")
        numbers = value.isdigit() and value2.isdigit() and int(value) == int(value2)
        if key != key2 or not (value == value2 or numbers):
            return False
    return True
