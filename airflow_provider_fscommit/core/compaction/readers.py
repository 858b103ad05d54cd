"""Reading a unit's staged inputs: opened in order (fetched ahead on object stores), their
rows streamed batch by batch in the plan's schema, and every failure naming its file.

Memory is bounded: rows come a batch at a time, at most one ORC stripe of a file in memory,
on an object store at most a window of small files fetched ahead, and a unit holds at most
``_HELD_BYTES`` of its inputs (files read whole, decoded footers) between their footers and
their rows, whatever the number of its inputs. A staged
file that cannot be read (missing, truncated, damaged pages, a timestamp pyarrow's ORC
reader would wrap around) fails its partition's unit with the file named and the way out
(``fscommit quarantine``): nothing of the partition is published.
"""

from __future__ import annotations

import contextvars
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Union

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as po
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compat import (
    ORC_READER_REFUSES_FAR_TIMESTAMPS,
    concat_batches,
    strict_zip,
)
from airflow_provider_fscommit.core.errors import FsCommitError, OrcTailError
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.formats.orc_tail import read_footer, timestamp_range_ms
from airflow_provider_fscommit.core.storage.filesystem import renames_atomically, resolve_filesystem

BATCH_ROWS = 64 * 1024
# Inputs fetched ahead per unit on object stores, and the size up to which an input (of
# known size) is read whole, in one request.
_PREFETCH_FILES = 8
_WHOLE_FILE_BYTES = 8 * 1024 * 1024
# What a unit holds of its inputs between their footers and their rows: local Parquet files
# read whole, and decoded footers, each counted as _DECODED_FOOTER times its serialized size
# (a footer of Spark's with 20 columns: 4.3 KB serialized, 48 KB decoded). An input past it
# has its footer decoded again when its rows are read (workload (c), one unit of 5,000
# inputs: keeping every footer took 240 MB more).
_HELD_BYTES = 64 * 1024 * 1024
_DECODED_FOOTER = 12

Reader = Union[pq.ParquetFile, po.ORCFile, pa.NativeFile]


class UnitInputs:
    """A unit's inputs with their footers read once, by :meth:`read_footers`, and its
    rows then read through the footers kept (:func:`input_rows`): within ``_HELD_BYTES``,
    no footer is decoded twice.

    A local Parquet input of up to ``_WHOLE_FILE_BYTES`` is read whole, in one read, and
    its footer decoded from memory; the unit holds the opened files, up to ``_HELD_BYTES``
    from the first, until their rows are read (workload (b), an hour of 800 files of 34
    KB: footers and rows in 0.48-0.56 s of CPU, against 0.59-0.63 s when each file is read
    again and 0.68-0.84 s in a dataset scan, whose threads cost more than they overlap).
    Parquet files not held, and Parquet on an object store, keep their decoded footer
    while it fits, which opens the file again; ORC keeps nothing (its reader opens the
    file again).
    """

    def __init__(self, uris: Sequence[str], sizes: Sequence[int], file_format: FileFormat):
        self.uris, self.sizes, self.format = tuple(uris), tuple(sizes), file_format
        self._metadata: dict[str, pq.FileMetaData] = {}
        self._held: dict[str, pq.ParquetFile] = {}
        self._held_bytes = 0  # of _HELD_BYTES
        # On a local disk or HDFS.
        self._local = bool(uris) and renames_atomically(resolve_filesystem(uris[0])[0])

    def read_footers(self, add: Callable[[str, pa.Schema, int, pq.FileMetaData | None], None]):
        """Each input's footer, decoded once: ``add(uri, schema, rows, parquet footer)``.

        Local Parquet inputs are opened as their rows will be (:func:`opened`: a small one
        read whole), and held from the first on while they fit, so the rows read the held
        ones first, in order; on an object store only the footers are fetched here.
        """
        holds = self._local and self.format is FileFormat.PARQUET
        sizes = self.sizes if holds and len(self.sizes) == len(self.uris) else ()
        for index, (uri, reader) in enumerate(opened(self.uris, sizes, self.format)):
            if isinstance(reader, po.ORCFile):
                add(uri, reader.schema, reader.nrows, None)
                continue
            metadata = reader.metadata
            add(uri, reader.schema_arrow, metadata.num_rows, metadata)
            whole = bool(sizes) and sizes[index] <= _WHOLE_FILE_BYTES
            if whole and len(self._held) == index and self._reserve(metadata, sizes[index]):
                self._held[uri] = reader
            elif self._reserve(metadata):
                self._metadata[uri] = metadata

    def _reserve(self, metadata: pq.FileMetaData, size: int = 0) -> bool:
        """Count a decoded footer (and ``size`` bytes of its file) as held, if they fit in
        what is left of ``_HELD_BYTES``; whether they did."""
        wanted = self._held_bytes + size + metadata.serialized_size * _DECODED_FOOTER
        if wanted > _HELD_BYTES:
            return False
        self._held_bytes = wanted
        return True

    def _opened(self) -> Iterator[tuple[str, Reader]]:
        """The inputs opened in order for their rows: the held ones first, as they are."""
        count = len(self._held)
        for uri in self.uris[:count]:
            yield uri, self._held.pop(uri)
        sizes = self.sizes[count:] if self.sizes else ()
        yield from opened(self.uris[count:], sizes, self.format, self._metadata)


def input_rows(inputs: UnitInputs, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """A unit's input rows in input order, with the plan's schema, in batches of at least
    ``BATCH_ROWS`` rows (the last may hold fewer).

    The files are read one after the other (the held ones first); a file that fails names
    itself and the way out. A small input file gives a small batch: consecutive ones are
    joined, and given the plan's schema once per joined batch, since the Parquet writer
    pays per batch and column (workload (b), 375-row files: 0.28 s -> 0.21 s to write an
    hour), and so does attaching the schema (an hour's 800 batches: 0.03 s).
    """
    small: list[pa.RecordBatch] = []
    count = 0
    for batch in _file_rows(inputs):
        if not batch.schema.equals(schema, check_metadata=False):
            batch = _align(batch, schema)
        small.append(batch)
        count += batch.num_rows
        if count >= BATCH_ROWS:
            yield _joined(small, schema)
            small, count = [], 0
    if small:
        yield _joined(small, schema)


def _file_rows(inputs: UnitInputs) -> Iterator[pa.RecordBatch]:
    """The inputs' rows as each file holds them, a file after the other."""
    for uri, reader in inputs._opened():
        if inputs.format is FileFormat.ORC and not ORC_READER_REFUSES_FAR_TIMESTAMPS:
            _refuse_far_timestamps(uri)
        batches = _batches(reader)
        while True:
            try:  # a file whose footer reads can still have damaged pages
                batch = next(batches, None)
            except (pa.ArrowInvalid, OSError) as exc:
                raise _unreadable_rows(uri, exc, inputs.format) from None
            if batch is None:
                break
            yield batch


def _joined(batches: list[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatch:
    """Batches of the plan's fields as one batch with its schema (Spark's metadata too)."""
    return pa.RecordBatch.from_arrays(concat_batches(batches).columns, schema=schema)


def schema_of(reader: Reader) -> pa.Schema:
    """The Arrow schema of an opened Parquet or ORC file."""
    return reader.schema if isinstance(reader, po.ORCFile) else reader.schema_arrow


def rows_of(reader: Reader) -> int:
    """The rows of an opened Parquet or ORC file, as its footer counts them."""
    return reader.nrows if isinstance(reader, po.ORCFile) else reader.metadata.num_rows


def _batches(reader: Reader) -> Iterator[pa.RecordBatch]:
    """The file's rows in batches of at most ``BATCH_ROWS``, one stripe in memory at most.

    One thread: units already run one per core, and with small files pyarrow's per-column
    threads cost more than they save (workload (b), 800 files: 0.60 s -> 0.46 s to read).
    """
    if isinstance(reader, pq.ParquetFile):
        yield from reader.iter_batches(batch_size=BATCH_ROWS, use_threads=False)
        return
    for index in range(reader.nstripes):
        stripe = reader.read_stripe(index)
        for offset in range(0, stripe.num_rows, BATCH_ROWS):
            yield stripe.slice(offset, BATCH_ROWS)


def opened(
    uris: Sequence[str],
    sizes: Sequence[int],
    file_format: FileFormat,
    footers: Mapping[str, pq.FileMetaData] | None = None,
) -> Iterator[tuple[str, Reader]]:
    """The inputs opened in order; on an object store the next few are fetched ahead.

    Each request to an object store waits milliseconds for the store, and a unit reads
    hundreds of small files: opened one after another, a unit would spend most of its
    time waiting (a compaction of workload (a) on the S3 server: 44 s, of which 40 s in
    opening and reading inputs). Threads fetch up to ``_PREFETCH_FILES`` files ahead, a
    small file of known size whole in one request (memory stays bounded by the window),
    others by their footer. Local files are opened as they come, a small one of known size
    read whole too: decoding a Parquet file from memory costs less than reading it column
    chunk by column chunk (workload (b), an hour of 800 files of 34 KB: 0.27 s to decode
    against 0.44-0.54 s from the file, the read itself 0.04-0.10 s). A Parquet file whose
    decoded footer is in ``footers`` is opened with it, not decoded again.
    """
    footers = footers or {}
    if not uris:
        return
    known = list(sizes) if len(sizes) == len(uris) else [None] * len(uris)
    first_fs, _ = resolve_filesystem(uris[0])
    if renames_atomically(first_fs):  # local disk or HDFS: opened as they come
        for uri, size in strict_zip(uris, known):
            yield uri, _fetch(uri, size, file_format, footers.get(uri))
        return
    context = contextvars.copy_context()  # the S3 settings in effect, for the threads
    with ThreadPoolExecutor(_PREFETCH_FILES, thread_name_prefix="fscommit-fetch") as pool:
        window: deque[tuple[str, Future[Reader]]] = deque()
        items = iter(strict_zip(uris, known))
        try:
            while True:
                while len(window) < _PREFETCH_FILES:
                    item = next(items, None)
                    if item is None:
                        break
                    footer = footers.get(item[0])
                    fetch = pool.submit(context.copy().run, _fetch, *item, file_format, footer)
                    window.append((item[0], fetch))
                if not window:
                    return
                uri, future = window.popleft()
                yield uri, future.result()
        finally:
            for _, future in window:
                future.cancel()


def _fetch(
    uri: str, size: int | None, file_format: FileFormat, footer: pq.FileMetaData | None = None
) -> Reader:
    """One input: a small one whole, in one read (one GET on an object store), else by
    its footer."""
    filesystem, path = resolve_filesystem(uri)
    if size is None or size > _WHOLE_FILE_BYTES:
        return open_input(filesystem, path, uri, file_format, footer)
    try:
        with filesystem.open_input_file(path) as handle:
            data = handle.read_buffer()
    except FileNotFoundError:
        raise _missing(uri) from None
    except OSError as exc:
        raise unreadable(uri, exc, file_format) from None
    return _reader(pa.BufferReader(data), uri, file_format, footer)


def open_input(
    filesystem: pafs.FileSystem,
    path: str,
    uri: str,
    file_format: FileFormat,
    footer: pq.FileMetaData | None = None,
) -> Reader:
    """One staged file opened for its format; a missing or unreadable one is named."""
    try:
        source = filesystem.open_input_file(path)
    except FileNotFoundError:
        raise _missing(uri) from None
    except OSError as exc:
        raise unreadable(uri, exc, file_format) from None
    return _reader(source, uri, file_format, footer)


def _reader(
    source: pa.NativeFile, uri: str, file_format: FileFormat, footer: pq.FileMetaData | None
) -> Reader:
    """The file opened for its format: Parquet and ORC read their footers here (Parquet's
    unless ``footer`` is it, decoded before)."""
    try:
        if file_format is FileFormat.ORC:
            return po.ORCFile(source)
        if file_format is FileFormat.PARQUET:
            return pq.ParquetFile(source, metadata=footer, coerce_int96_timestamp_unit="us")
    except (pa.ArrowInvalid, OSError) as exc:
        raise unreadable(uri, exc, file_format) from None
    return source


def _unreadable_rows(uri: str, exc: Exception, file_format: FileFormat) -> FsCommitError:
    """A file whose rows do not read; pyarrow's ORC reader has one limit of its own."""
    if file_format is FileFormat.ORC and "out of range for nanosecond resolution" in str(exc):
        return _far_timestamps(uri, str(exc))
    return unreadable(uri, exc, file_format)


# What pyarrow's ORC reader holds: nanoseconds since the epoch in an int64, as ms.
_NANOSECOND_RANGE_MS = (-(2**63) // 10**6, (2**63 - 1) // 10**6)


def _refuse_far_timestamps(uri: str) -> None:
    """Refuse an ORC input whose Footer records a timestamp pyarrow (before 25) would wrap
    around silently, before any of its rows is read."""
    filesystem, path = resolve_filesystem(uri)
    try:
        bounds = timestamp_range_ms(read_footer(filesystem, path))
    except OrcTailError as exc:
        raise unreadable(uri, exc, FileFormat.ORC) from None
    low, high = _NANOSECOND_RANGE_MS
    if bounds is not None and not low <= bounds[0] <= bounds[1] <= high:
        raise _far_timestamps(uri, f"its Footer records {bounds[0]}..{bounds[1]} ms")


def _far_timestamps(uri: str, detail: str) -> FsCommitError:
    return FsCommitError(
        f"staged file {uri} holds a timestamp outside 1677-09-21..2262-04-11, which "
        f"Spark writes but pyarrow's ORC reader cannot read ({detail}); nothing of its "
        "partition was published. Set auto-compaction: false for this table: files are "
        "then published as they are, byte for byte, without reading their rows"
    )


def _missing(uri: str) -> FsCommitError:
    return FsCommitError(
        f"staged file {uri} is in the sink log but missing on disk; nothing of its "
        f"partition was published. {_WAY_OUT.format(uri=uri)}"
    )


_WAY_OUT = (
    "Restore the file and rerun; if its rows are lost for good, give them up with "
    "`fscommit quarantine {uri} --reason ...` and rerun to publish the rest"
)


_FORMAT_NAMES = {FileFormat.PARQUET: "Parquet", FileFormat.ORC: "ORC"}


def unreadable(uri: str, exc: Exception, file_format: FileFormat) -> FsCommitError:
    """The error of a staged file that is not readable in its format, with the way out."""
    name = _FORMAT_NAMES.get(file_format, file_format.value.upper())
    return FsCommitError(
        f"staged file {uri} is not a readable {name} file ({exc}); nothing of its "
        f"partition was published. {_WAY_OUT.format(uri=uri)}"
    )


def _align(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A batch of a file whose columns differ from the merged schema's, with its columns:
    the file's cast to their types, the ones it lacks all null."""
    columns = [
        batch.column(f.name).cast(f.type)
        if f.name in batch.schema.names
        else pa.nulls(batch.num_rows, f.type)
        for f in schema
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)
