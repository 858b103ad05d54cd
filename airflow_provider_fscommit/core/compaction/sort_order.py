"""The order a compacted partition's rows are laid out in (Iceberg's sort order, Delta's
``ZORDER BY``), so that a reader's filter on a column skips most files and row groups.

Two kinds, both ascending with nulls first as Spark's ``ORDER BY``:

* **linear** (``compaction.sort-by``): by the columns in turn; the first one's ranges are
  disjoint across files and row groups, the later ones only within equal earlier values.
* **Z-order** (``compaction.z-order-by``, 2 to 4 columns): rows ordered by the
  interleaved bits of each column's *range number*, as Delta does: each column's values are
  numbered by the ranges a sample's quantiles cut (up to 1,024 per column), whatever their
  type, so skewed and string columns cluster as well as uniform integers, and a filter on
  any one of the columns prunes.

Floating-point NaN sorts after every number, as in Spark. Values are compared by pyarrow
with one ordering everywhere (sorting, cutting ranges, numbering rows), so the ranges the
external sort (:mod:`.external_sort`) routes rows by agree with the order inside each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_fscommit.core.compat import sort_indices_nulls_first
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.formats import arrow_arrays

#: Range numbers per Z-order column: 10 bits each, 40 at most for 4 columns.
Z_RANGE_BITS = 10
_SAMPLE_PER_RANGE = 64
_Z_KEY = "__fscommit_z"


@dataclass(frozen=True)
class SortOrder:
    """Columns and kind; plain values, so it travels to Spark tasks."""

    columns: tuple[str, ...]
    z_order: bool = False

    @property
    def option(self) -> str:
        return "compaction.z-order-by" if self.z_order else "compaction.sort-by"

    def check(self, schema: pa.Schema, partition: str) -> None:
        """Refuse a column the partition's files lack, or one without an order (nested)."""
        for name in self.columns:
            if name not in schema.names:
                raise ConfigError(
                    f"{self.option} names column {name!r}, which the files of partition "
                    f"{partition} do not have (their columns: {', '.join(schema.names)}); "
                    "nothing was published. Fix the table spec"
                )
            kind = schema.field(name).type
            if pa.types.is_nested(kind) or pa.types.is_dictionary(kind) or pa.types.is_null(kind):
                raise ConfigError(
                    f"{self.option} names column {name!r} of type {kind}, which has no "
                    "order to sort by (a struct, list or map); name a plain column, e.g. "
                    "one of its fields' values copied into a column by the stream"
                )

    def keyed(self, sample: pa.Table) -> SortKey:
        """The key rows are ordered and routed by; Z-order cuts its ranges from ``sample``."""
        if not self.z_order:
            return SortKey(self.columns)
        # Quantiles of a strided sample: 64 rows per range number are plenty to cut them,
        # and sorting the whole sample per column would cost as much as the sort itself.
        step = max(1, len(sample) // (_SAMPLE_PER_RANGE * 2**Z_RANGE_BITS))
        rows = arrow_arrays.numpy_array(np.arange(0, len(sample), step, dtype=np.int64))
        picked = sample.select(list(self.columns)).take(rows)
        cuts = tuple(quantiles(picked.column(name), 2**Z_RANGE_BITS - 1) for name in self.columns)
        return SortKey(self.columns, cuts)


@dataclass(frozen=True)
class SortKey:
    """A sort order ready to compare rows: linear by ``columns``, or Z-order by the ranges
    ``cuts`` (one array of ascending values per column)."""

    columns: tuple[str, ...]
    cuts: tuple[pa.Array, ...] | None = None

    @property
    def levels(self) -> int:
        """How many routing keys there are: the columns in turn, or the one Z-value."""
        return 1 if self.cuts is not None else len(self.columns)

    def route(self, table: pa.Table | pa.RecordBatch, level: int) -> pa.Array:
        """The ``level``-th routing key of each row: a sort column, or the Z-value."""
        if self.cuts is None:
            return _column(table, self.columns[level])
        numbers = [ranks(_column(table, name), cut) for name, cut in zip(self.columns, self.cuts)]
        return arrow_arrays.numpy_array(_interleave(numbers))

    def sort(self, table: pa.Table) -> pa.Table:
        """``table`` in this order (a stable sort: ties keep their input order)."""
        if self.cuts is not None:
            keyed = pa.table({_Z_KEY: self.route(table, 0)})
            return table.take(sort_indices_nulls_first(keyed, [_Z_KEY]))
        keys, names = _comparable({name: _column(table, name) for name in self.columns})
        return table.take(sort_indices_nulls_first(keys, names))


def _column(table: pa.Table | pa.RecordBatch, name: str) -> pa.Array:
    column = table.column(name)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _comparable(columns: dict[str, pa.Array]) -> tuple[pa.Table, list[str]]:
    """The columns as sort keys, each floating one preceded by whether it is NaN, so that
    NaN sorts after every number as in Spark (pyarrow would put it first, next to nulls)."""
    arrays: dict[str, pa.Array] = {}
    for index, (name, values) in enumerate(columns.items()):
        if pa.types.is_floating(values.type):
            arrays[f"{index}_nan"] = pc.is_nan(values)
        arrays[f"{index}_{name}"] = values
    return pa.table(arrays), list(arrays)


def ascending(values: pa.Array) -> pa.Array:
    """``values`` in this module's order: nulls first, NaN after every number."""
    keys, names = _comparable({"v": values})
    return values.take(sort_indices_nulls_first(keys, names))


def canonical(values: pa.Array) -> pa.Array:
    """``values`` with the values this order holds equal made identical, for hash-based
    counting: floating -0.0 as 0.0, every NaN as one NaN."""
    if not pa.types.is_floating(values.type):
        return values
    floats = np.array([0.0, np.nan], np.dtype(f"f{values.type.bit_width // 8}"))
    zero, nan = arrow_arrays.numpy_array(floats)
    return pc.if_else(pc.is_nan(values), nan, pc.add(values, zero))


def quantiles(values: pa.Array | pa.ChunkedArray, count: int) -> pa.Array:
    """Up to ``count`` distinct ascending values that cut ``values`` into ranges of similar
    size (nulls aside: they sort first, before every cut)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    ordered = ascending(values.drop_null())
    if len(ordered) == 0:
        return ordered
    step = len(ordered) / (count + 1)
    positions = sorted({min(int(step * (i + 1)), len(ordered) - 1) for i in range(count)})
    picked = ordered.take(arrow_arrays.numpy_array(np.array(positions, np.int64)))
    # Equal neighbours cut nothing apart, nor does the smallest value (nothing is below
    # it): keep the first of each run above it (still ascending).
    distinct = [i for i in range(len(picked)) if picked[i] != (picked[i - 1] if i else ordered[0])]
    return picked.take(arrow_arrays.numpy_array(np.array(distinct, np.int64)))


def ranks(values: pa.Array, cuts: pa.Array) -> np.ndarray:
    """Per value, how many of the ascending ``cuts`` are at most it: its range's number
    (nulls: 0).

    Numbers and times are looked up among the cuts (numpy's order is this module's: NaN
    after every number, -0.0 equal to 0.0). Other values (strings, decimals) are counted
    in one sort of the cuts and the values together: a cut sorts before a value equal to
    it, so the running count of cuts at a value is that number."""
    if len(cuts) == 0:
        return np.zeros(len(values), np.int64)
    cuts = cuts.cast(values.type)
    kind = values.type
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind) or pa.types.is_time(kind):
        values, cuts = values.view(_INTEGER[kind.bit_width]), cuts.view(_INTEGER[kind.bit_width])
    if pa.types.is_integer(values.type) or pa.types.is_floating(values.type):
        # What a null's slot holds is undefined: its rank is set apart below.
        found = np.searchsorted(
            arrow_arrays.numbers(cuts), arrow_arrays.numbers(values), side="right"
        )
        return np.where(arrow_arrays.booleans(values.is_null()), 0, found)
    combined = pa.concat_arrays([cuts, values])
    is_cut = np.zeros(len(combined), np.int64)
    is_cut[: len(cuts)] = 1
    keys, names = _comparable({"v": combined})
    keys = keys.append_column("after_cuts", arrow_arrays.numpy_array(1 - is_cut))
    order = arrow_arrays.numbers(sort_indices_nulls_first(keys, [*names, "after_cuts"]))
    counted = np.empty(len(combined), np.int64)
    counted[order] = np.cumsum(is_cut[order])
    return counted[len(cuts) :]


_INTEGER = {32: pa.int32(), 64: pa.int64()}


def _interleave(numbers: list[np.ndarray]) -> np.ndarray:
    """The Z-value of each row: the bits of its range numbers interleaved, most
    significant first, the first column's bit ahead at each level."""
    width = len(numbers)
    z = np.zeros(len(numbers[0]), np.uint64)
    for bit in range(Z_RANGE_BITS - 1, -1, -1):
        for column, values in enumerate(numbers):
            shift = np.uint64(bit * width + (width - 1 - column))
            z |= ((values.astype(np.uint64) >> np.uint64(bit)) & np.uint64(1)) << shift
    return z
