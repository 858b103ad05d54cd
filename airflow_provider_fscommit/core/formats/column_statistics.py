"""Partition column statistics from the published files' footers, for the metastore.

Hive's cost-based optimizer, Trino and Impala read a partition's column statistics from
the metastore; without them they guess. Compaction has just written the partition's
files, and their footers already hold them: a Parquet footer has every column chunk's
minimum, maximum and null count; an ORC Footer has each column's bounds and count of
values over the file (the merge of its stripe statistics). The statistics cost a footer
read per file and no data.

Only what the footers give exactly is written: low and high values and null counts of
integer (Hive ``long``), floating-point (``double``) and date columns. A column is left out
when any chunk or file lacks statistics, and so are strings, booleans, decimals and
timestamps (Hive wants string lengths, true counts or types the footers do not carry).
``numDVs`` is 0, which Hive reads as unknown: footers carry no distinct counts.
"""

from __future__ import annotations

import datetime
import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compat import StrEnum, strict_zip
from airflow_provider_fscommit.core.errors import ColumnStatisticsError, OrcTailError
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.formats.orc_tail import (
    LENGTH_DELIMITED,
    fields,
    read_footer,
    read_varint,
)

_EPOCH = datetime.date(1970, 1, 1)


class StatsKind(StrEnum):
    """Hive's ``ColumnStatisticsData`` member a column's statistics go into."""

    LONG = "long"
    DOUBLE = "double"
    DATE = "date"


# Hive column types (lower case) and the statistics they take.
HIVE_KINDS = {
    "tinyint": StatsKind.LONG,
    "smallint": StatsKind.LONG,
    "int": StatsKind.LONG,
    "bigint": StatsKind.LONG,
    "float": StatsKind.DOUBLE,
    "double": StatsKind.DOUBLE,
    "date": StatsKind.DATE,
}


@dataclass(frozen=True)
class ColumnStatistics:
    """One column over a partition's files; ``low``/``high`` None when it is all null.

    Dates are days since the epoch, as Hive keeps them.
    """

    name: str
    kind: StatsKind
    low: int | float | None
    high: int | float | None
    nulls: int


def partition_column_statistics(
    filesystem: pafs.FileSystem, paths: Sequence[str], file_format: FileFormat
) -> list[ColumnStatistics]:
    """Merge the top-level columns' statistics of every file, in schema order.

    ``file_format`` is Parquet or ORC; the other formats have no footers (nothing).
    """
    read = _READERS.get(file_format)
    if read is None:
        return []
    merged: dict[str, ColumnStatistics | None] = {}
    seen: dict[str, int] = {}
    for path in paths:
        try:
            found = read(filesystem, path)
        except (OSError, pa.ArrowException, OrcTailError) as exc:
            raise ColumnStatisticsError(
                f"cannot read the footer of {path} for column statistics ({exc}); restore the "
                "file, or set metastore.column-statistics: false to commit without them"
            ) from exc
        for name, stats in found.items():
            seen[name] = seen.get(name, 0) + 1
            if name not in merged or merged[name] is not None:
                merged[name] = None if stats is None else _merge(merged.get(name), stats)
    # A column missing from some file has nulls there that no footer counts.
    return [s for name, s in merged.items() if s is not None and seen[name] == len(paths)]


def _parquet_file(filesystem: pafs.FileSystem, path: str) -> dict[str, ColumnStatistics | None]:
    """Each top-level column of one Parquet file (None: no exact statistics for it)."""
    with filesystem.open_input_file(path) as source:
        metadata = pq.read_metadata(source)
    schema = metadata.schema.to_arrow_schema()
    found: dict[str, ColumnStatistics | None] = {}
    for arrow_field in schema:
        kind = _kind(arrow_field.type)
        column = _leaf_index(metadata, arrow_field.name)
        if kind is None or column is None:
            continue
        stats: ColumnStatistics | None = ColumnStatistics(arrow_field.name, kind, None, None, 0)
        for group in range(metadata.num_row_groups):
            chunk = metadata.row_group(group).column(column).statistics
            if chunk is None or chunk.null_count is None:
                stats = None
                break
            if chunk.num_values and not chunk.has_min_max:
                stats = None
                break
            low, high = (
                (_value(chunk.min, kind), _value(chunk.max, kind))
                if chunk.has_min_max
                else (None, None)
            )
            chunk_stats = ColumnStatistics(arrow_field.name, kind, low, high, chunk.null_count)
            stats = _merge(stats, chunk_stats)
        found[arrow_field.name] = stats
    return found


def _leaf_index(metadata: pq.FileMetaData, name: str) -> int | None:
    """The column chunk index of a top-level primitive column (None: nested or absent)."""
    for index in range(metadata.num_columns):
        if metadata.schema.column(index).path == name:
            return index
    return None


def _kind(arrow_type: pa.DataType) -> StatsKind | None:
    if pa.types.is_integer(arrow_type) and arrow_type != pa.uint64():
        return StatsKind.LONG
    if pa.types.is_floating(arrow_type):
        return StatsKind.DOUBLE
    if pa.types.is_date32(arrow_type):
        return StatsKind.DATE
    return None


def _value(value: object, kind: StatsKind) -> int | float:
    if kind == StatsKind.DATE:
        assert isinstance(value, datetime.date)
        return (value - _EPOCH).days
    if kind == StatsKind.DOUBLE:
        return float(value)  # type: ignore[arg-type]
    return int(value)  # type: ignore[call-overload]


def _merge(into: ColumnStatistics | None, more: ColumnStatistics) -> ColumnStatistics:
    if into is None:
        return more
    return ColumnStatistics(
        into.name,
        into.kind,
        _pick(min, into.low, more.low),
        _pick(max, into.high, more.high),
        into.nulls + more.nulls,
    )


def _pick(
    choose: Callable[[float, float], float], a: int | float | None, b: int | float | None
) -> int | float | None:
    """``choose`` of two bounds, a missing one (an all-null chunk) ignored."""
    if a is None or b is None:
        return a if b is None else b
    return choose(a, b)


# ORC's Footer {4: repeated Type types, 6: numberOfRows, 7: repeated ColumnStatistics}; a
# Type {1: kind, 2: packed subtypes, 3: repeated fieldNames}; column i's statistics are the
# i-th, column 0 the root struct whose subtypes are the top-level columns.
_FOOTER_TYPES, _FOOTER_ROWS, _FOOTER_STATISTICS = 4, 6, 7
_TYPE_KIND, _TYPE_SUBTYPES, _TYPE_FIELD_NAMES = 1, 2, 3
_ORC_STRUCT = 12
_ORC_KINDS = {
    1: StatsKind.LONG,  # BYTE
    2: StatsKind.LONG,  # SHORT
    3: StatsKind.LONG,  # INT
    4: StatsKind.LONG,  # LONG
    5: StatsKind.DOUBLE,  # FLOAT (its statistics are doubles)
    6: StatsKind.DOUBLE,  # DOUBLE
    15: StatsKind.DATE,  # DATE (days since the epoch)
}
# ColumnStatistics {1: numberOfValues (non-null), 2: IntegerStatistics, 3: DoubleStatistics,
# 7: DateStatistics}; each of those {1: minimum, 2: maximum} (sint64, double, sint32).
_STATS_VALUES = 1
_STATS_FIELD = {StatsKind.LONG: 2, StatsKind.DOUBLE: 3, StatsKind.DATE: 7}
_MINIMUM, _MAXIMUM = 1, 2


def _orc_file(filesystem: pafs.FileSystem, path: str) -> dict[str, ColumnStatistics | None]:
    """Each top-level column of one ORC file, from its Footer (None: no exact statistics)."""
    types: list[bytes] = []
    statistics: list[bytes] = []
    rows: int | None = None
    for number, _, value, _, _ in fields(read_footer(filesystem, path), "Footer"):
        if number == _FOOTER_TYPES and isinstance(value, bytes):
            types.append(value)
        elif number == _FOOTER_STATISTICS and isinstance(value, bytes):
            statistics.append(value)
        elif number == _FOOTER_ROWS and isinstance(value, int):
            rows = value
    if not types:
        raise OrcTailError("the ORC Footer has no types")
    kind, columns, names = _orc_type(types[0])
    if kind != _ORC_STRUCT or len(columns) != len(names):
        raise OrcTailError("the ORC Footer's root type is not a struct of named columns")
    found: dict[str, ColumnStatistics | None] = {}
    for name, column in strict_zip(names, columns):
        stats_kind = _ORC_KINDS.get(_orc_type(types[column])[0]) if column < len(types) else None
        if stats_kind is None:
            continue
        stats = statistics[column] if column < len(statistics) and rows is not None else None
        found[name] = None if stats is None else _orc_column(name, stats_kind, stats, rows or 0)
    return found


def _orc_type(message: bytes) -> tuple[int, list[int], list[str]]:
    """A Type's kind, subtypes (packed or not) and field names."""
    kind, subtypes, names = 0, [], []
    for number, wire_type, value, _, _ in fields(message, "Type"):
        if number == _TYPE_KIND and isinstance(value, int):
            kind = value
        elif number == _TYPE_SUBTYPES and wire_type == LENGTH_DELIMITED:
            assert isinstance(value, bytes)
            pos = 0
            while pos < len(value):
                subtype, pos = read_varint(value, pos, "Type")
                subtypes.append(subtype)
        elif number == _TYPE_SUBTYPES and isinstance(value, int):
            subtypes.append(value)
        elif number == _TYPE_FIELD_NAMES and isinstance(value, bytes):
            names.append(value.decode("utf-8", "replace"))
    return kind, subtypes, names


def _orc_column(name: str, kind: StatsKind, message: bytes, rows: int) -> ColumnStatistics | None:
    """A top-level column's statistics: its nulls are the rows without a value."""
    values: int | None = None
    bounds: dict[int, int] = {}
    for number, _, value, _, _ in fields(message, "ColumnStatistics"):
        if number == _STATS_VALUES and isinstance(value, int):
            values = value
        elif number == _STATS_FIELD[kind] and isinstance(value, bytes):
            bounds = {n: v for n, _, v, _, _ in fields(value, "statistics") if isinstance(v, int)}
    if values is None or values > rows:
        return None
    if values == 0:
        return ColumnStatistics(name, kind, None, None, rows)
    if _MINIMUM not in bounds or _MAXIMUM not in bounds:
        return None
    low, high = (_orc_value(bounds[n], kind) for n in (_MINIMUM, _MAXIMUM))
    if math.isnan(low) or math.isnan(high):
        return None
    return ColumnStatistics(name, kind, low, high, rows - values)


def _orc_value(raw: int, kind: StatsKind) -> int | float:
    if kind == StatsKind.DOUBLE:
        return struct.unpack("<d", raw.to_bytes(8, "little"))[0]
    return (raw >> 1) ^ -(raw & 1)  # zigzag (sint64, sint32)


_READERS: dict[FileFormat, Callable[[pafs.FileSystem, str], dict[str, ColumnStatistics | None]]] = {
    FileFormat.PARQUET: _parquet_file,
    FileFormat.ORC: _orc_file,
}
