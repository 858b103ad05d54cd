"""Partition column statistics from the published files' footers, for the metastore.

Hive's cost-based optimizer, Trino and Impala read a partition's column statistics from
the metastore; without them they guess. Compaction has just written the partition's
files, and their Parquet footers already hold every column chunk's minimum, maximum and
null count, so the statistics cost a footer read per file and no data.

Only what the footers give exactly is written: low and high values and null counts of
integer (Hive ``long``), floating-point (``double``) and date columns. A column is left out
when any chunk lacks statistics, and so are strings, booleans, decimals and timestamps
(Hive wants string lengths, true counts or types the footers do not carry). ``numDVs`` is
0, which Hive reads as unknown: footers carry no distinct counts. ORC files get none.
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.errors import FsCommitError

_EPOCH = datetime.date(1970, 1, 1)


class StatsKind(enum.StrEnum):
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


class ColumnStatisticsError(FsCommitError):
    """A published file's footer could not be read for its statistics."""


def parquet_column_statistics(
    filesystem: pafs.FileSystem, paths: Sequence[str]
) -> list[ColumnStatistics]:
    """Merge the top-level columns' chunk statistics of every file, in schema order."""
    merged: dict[str, ColumnStatistics | None] = {}
    seen: dict[str, int] = {}
    for path in paths:
        try:
            with filesystem.open_input_file(path) as source:
                metadata = pq.read_metadata(source)
        except (OSError, pa.ArrowException) as exc:
            raise ColumnStatisticsError(
                f"cannot read the footer of {path} for column statistics ({exc}); restore the "
                "file, or set metastore.column-statistics: false to commit without them"
            ) from exc
        for name, stats in _file_statistics(metadata).items():
            seen[name] = seen.get(name, 0) + 1
            if name not in merged or merged[name] is not None:
                merged[name] = None if stats is None else _merge(merged.get(name), stats)
    # A column missing from some file has nulls there that no footer counts.
    return [s for name, s in merged.items() if s is not None and seen[name] == len(paths)]


def _file_statistics(metadata: pq.FileMetaData) -> dict[str, ColumnStatistics | None]:
    """Each top-level column of one file (None: no exact statistics for it)."""
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
