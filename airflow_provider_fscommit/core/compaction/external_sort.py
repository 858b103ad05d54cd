"""The external sort of one partition's rows, in bounded memory (a distribution sort).

A partition that fits in ``memory`` (Arrow bytes) is sorted in memory, in one pyarrow
sort. A larger one is cut into ranges of its routing key (the first sort column, or the
Z-value) by the quantiles of the rows read so far; each row is appended to its range's
spill file (Arrow IPC on the executor's local disk) in one pass over the inputs, and the
ranges are then sorted one at a time, in order. A range still larger than ``memory`` is
cut again by its own values; one whose key is a single value is cut by the next sort
column, or, with no column left, is a tie that is already in order. Every cut separates
at least the range's smallest value from the rest, so each pass makes progress and memory
stays bounded by ``memory`` plus one input batch, whatever the partition's size or skew.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_fscommit.core.compaction.sort_order import (
    SortKey,
    SortOrder,
    ascending,
    canonical,
    quantiles,
    ranks,
)
from airflow_provider_fscommit.core.formats.arrow_arrays import numpy_array

#: Ranges per pass: enough that a partition a few times larger than memory needs one pass.
FAN_OUT = 32


def sorted_tables(
    batches: Iterable[pa.RecordBatch], order: SortOrder, memory: int
) -> Iterator[pa.Table]:
    """``batches`` as consecutive tables in ``order``; their concatenation is sorted."""
    batches = iter(batches)
    head: list[pa.RecordBatch] = []
    held = 0
    for batch in batches:
        head.append(batch)
        held += batch.nbytes
        if held > memory:
            break
    else:
        if head:
            sample = pa.Table.from_batches(head)
            yield order.keyed(sample).sort(sample)
        return
    sample = pa.Table.from_batches(head)
    key = order.keyed(sample)
    cuts = _cuts(key.route(sample, 0))
    stream = itertools.chain(head, batches)
    del head, sample  # routed from the stream, then released: memory holds one range
    with tempfile.TemporaryDirectory(prefix="fscommit-sort-", dir=_spill_root()) as directory:
        yield from _split(stream, key, 0, cuts, memory, Path(directory), exact=False)


def _spill_root() -> str | None:
    """Spark's local directories on an executor (its scratch disks), else the temp dir."""
    local = os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0]
    return local if local and os.path.isdir(local) else None


class _Range:
    """One range's spill file, its size, and whether its routing key is one value."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bytes = 0
        self.rows = 0
        self._writer: pa.ipc.RecordBatchFileWriter | None = None
        self._first: pa.Array | None = None
        self.constant = True

    def append(self, rows: pa.RecordBatch, route: pa.Array) -> None:
        if self._writer is None:
            self._writer = pa.ipc.new_file(str(self.path), rows.schema)
            self._first = route.slice(0, 1)
        self._writer.write_batch(rows)
        self.bytes += rows.nbytes
        self.rows += rows.num_rows
        if self.constant:  # hashed: NaN equals NaN and null equals null here, as in a sort
            both = canonical(pa.concat_arrays([self._first, route]))
            self.constant = pc.count_distinct(both, mode="all").as_py() == 1

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()

    def table(self) -> pa.Table:
        with pa.memory_map(str(self.path)) as source:
            return pa.ipc.open_file(source).read_all()

    def batches(self) -> Iterator[pa.RecordBatch]:
        with pa.memory_map(str(self.path)) as source:
            reader = pa.ipc.open_file(source)
            for index in range(reader.num_record_batches):
                yield reader.get_batch(index)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _split(
    batches: Iterable[pa.RecordBatch],
    key: SortKey,
    level: int,
    cuts: pa.Array,
    memory: int,
    directory: Path,
    exact: bool = True,
) -> Iterator[pa.Table]:
    """Route ``batches`` into the ranges ``cuts`` makes of key ``level``, then emit them in
    order, each sorted (:func:`_emit`). ``exact``: the cuts are of these rows (not of a
    sample), so they must make progress."""
    depth = len(list(directory.iterdir()))  # unique names for nested passes
    ranges = [_Range(directory / f"{depth}-{level}-{i}.arrow") for i in range(len(cuts) + 1)]
    try:
        for batch in batches:
            route = key.route(batch, level)
            numbers = ranks(route, cuts)
            order = numpy_array(np.argsort(numbers, kind="stable"))
            counts = np.bincount(numbers, minlength=len(ranges))
            rows, routed = batch.take(order), route.take(order)
            offset = 0
            for index in np.flatnonzero(counts):
                count = int(counts[index])
                ranges[index].append(rows.slice(offset, count), routed.slice(offset, count))
                offset += count
    finally:
        for each in ranges:
            each.close()
    # Exact cuts make progress; should one range still hold every row, it is not cut by
    # this key again (no pass may repeat itself).
    stuck = exact and sum(1 for each in ranges if each.rows) == 1
    for each in ranges:
        if each.rows:
            yield from _emit(each, key, level, memory, directory, stuck)
        each.remove()


def _emit(
    spilled: _Range, key: SortKey, level: int, memory: int, directory: Path, stuck: bool
) -> Iterator[pa.Table]:
    """One range in order: sorted in memory, cut again, or (a tie on every key) as it is."""
    if spilled.bytes <= memory:
        yield key.sort(spilled.table())
    elif not spilled.constant and not stuck:
        route = pa.chunked_array([key.route(b, level) for b in spilled.batches()])
        yield from _split(spilled.batches(), key, level, _cuts(route), memory, directory)
    elif spilled.constant and level + 1 < key.levels:
        route = pa.chunked_array([key.route(b, level + 1) for b in spilled.batches()])
        yield from _split(spilled.batches(), key, level + 1, _cuts(route), memory, directory)
    elif spilled.constant:
        for batch in spilled.batches():
            yield pa.Table.from_batches([batch])
    else:  # not reached while the cuts make progress; correct order beats the bound
        yield key.sort(spilled.table())


def _cuts(route: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The quantiles of ``route``, plus a cut just above its smallest value (nulls count
    as the smallest), so that those rows always land apart from the rest: a pass over rows
    that are not all equal makes progress, however skewed they are."""
    values = route.combine_chunks() if isinstance(route, pa.ChunkedArray) else route
    cuts = quantiles(values, FAN_OUT - 1)
    distinct = ascending(pc.unique(canonical(values)).drop_null())
    above_smallest = 0 if values.null_count else 1
    if len(distinct) <= above_smallest:
        return cuts  # one value: a tie
    extra = distinct.slice(above_smallest, 1)
    return ascending(pc.unique(pa.concat_arrays([cuts, extra.cast(cuts.type)])))
