"""What the core takes from Pythons and pyarrows newer than the oldest it runs on.

The Airflow side runs on every Python its Airflow line supports (3.10 and newer); the
compaction job imports the core on the cluster's own Python, which may be 3.9 (Amazon
Linux 2023's), and the cluster's own pyarrow, 15 and newer (PySpark 3.5's ``numpy<2``
rules out the newest). What only newer releases offer is given here once, so the modules
that use it read the same on all.
"""

from __future__ import annotations

import enum
import itertools
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:

    class StrEnum(str, enum.Enum):
        """Python 3.11's ``enum.StrEnum``: members are their string values, also in ``str()``."""

        __str__ = str.__str__
        __format__ = str.__format__


if sys.version_info >= (3, 10):

    def strict_zip(*iterables: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        """``zip(..., strict=True)``: a length mismatch is a bug, never a silent cut."""
        return zip(*iterables, strict=True)

else:

    def strict_zip(*iterables: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        """``zip(..., strict=True)`` of Python 3.10, for the cluster's Python 3.9."""
        missing = object()
        for items in itertools.zip_longest(*iterables, fillvalue=missing):
            if any(item is missing for item in items):
                raise ValueError("strict_zip() arguments have different lengths")
            yield items


PYARROW_VERSION = tuple(int(part) for part in pa.__version__.split(".")[:2])
#: ``ParquetWriter(store_decimal_as_integer=)`` (pyarrow 17): decimals as INT32/INT64, as
#: Spark writes them; before, they are FIXED_LEN_BYTE_ARRAY, which Spark reads the same.
PARQUET_DECIMALS_AS_INTEGERS = PYARROW_VERSION >= (17, 0)
#: ``S3FileSystem(allow_delayed_open=)`` (pyarrow 21): a small object is one PUT instead of
#: a multipart upload of one part (3 requests).
S3_DELAYED_OPEN = PYARROW_VERSION >= (21, 0)
#: pyarrow 25's ORC reader refuses timestamps outside 1677-09-21..2262-04-11; older ones
#: wrap them around silently.
ORC_READER_REFUSES_FAR_TIMESTAMPS = PYARROW_VERSION >= (25, 0)

#: ``ParquetWriter(bloom_filter_options=)`` (pyarrow 24): Parquet bloom filters.
PARQUET_BLOOM_FILTERS = PYARROW_VERSION >= (24, 0)
#: Sort keys that carry their own null placement (pyarrow 25, which deprecates the global one).
SORT_KEYS_PLACE_NULLS = PYARROW_VERSION >= (25, 0)


def sort_indices_nulls_first(table: pa.Table, names: list[str]) -> pa.Array:
    """The row order of ``table`` by ``names`` ascending, nulls first (Spark's ``ASC``)."""
    if SORT_KEYS_PLACE_NULLS:
        return pc.sort_indices(table, sort_keys=[(name, "ascending", "at_start") for name in names])
    return pc.sort_indices(
        table, sort_keys=[(name, "ascending") for name in names], null_placement="at_start"
    )


def concat_batches(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """``pa.concat_batches`` (pyarrow 19): record batches of one schema as one batch."""
    if hasattr(pa, "concat_batches"):
        return pa.concat_batches(batches)
    combined = pa.Table.from_batches(batches).combine_chunks().to_batches()
    return combined[0] if combined else batches[0].slice(0, 0)


__all__ = [
    "ORC_READER_REFUSES_FAR_TIMESTAMPS",
    "PARQUET_BLOOM_FILTERS",
    "PARQUET_DECIMALS_AS_INTEGERS",
    "PYARROW_VERSION",
    "S3_DELAYED_OPEN",
    "StrEnum",
    "concat_batches",
    "sort_indices_nulls_first",
    "strict_zip",
]
