"""The compactor (Flink's ``CompactOperator``): rewrites one unit's inputs into one file.

Runs inside Spark tasks, one unit per task, with pyarrow, reading and writing through
``pyarrow.fs`` so staging and table may be local, HDFS or S3. Fidelity is the point: the
output must read back in Spark with the same schema and rows. For Parquet

* INT96 timestamps stay INT96 (read with ``coerce_int96_timestamp_unit``, written with
  ``use_deprecated_int96_timestamps``); INT64 ones stay INT64;
* small decimals are stored as INT32/INT64 as Spark stores them;
* Spark's footer metadata (its schema, with types Parquet cannot express) is kept, merged
  when files of a partition have different columns (a nullable column added mid-stream:
  older rows get nulls); incompatible schemas fail the unit with the files named;
* a unit with a single input whose schema is the plan's is copied byte for byte.

ORC is rewritten the same way, stripe by stripe, with the inputs' compression, Spark's
type attributes and its user metadata (:mod:`orc_user_metadata`). JSON, CSV and text are
concatenated (:mod:`line_files`), which is exact for every codec Spark writes them with.

Outputs are laid out for readers (:class:`OutputLayout`): Parquet row groups of about
``parquet.block.size`` on disk (rows per group estimated from the inputs' bytes per row),
statistics and the page index, optional bloom filters; ORC stripes, row index and bloom
filters as ORC's keys say. A table with a sort order (:mod:`.sort_order`) has each
partition's rows sorted across all its outputs in one task (:mod:`.external_sort`), so
files and row groups cover disjoint ranges; a rewrite (:mod:`.fragmentation`) deals its
rows out to its outputs in one task too, the same number to each.

Memory is bounded: inputs are streamed batch by batch; a writer holds one row group, a
sort at most ``compaction.sort-memory``. Outputs are written under hidden names; the
publisher renames them after the commit point.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Union

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as po
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compaction.external_sort import sorted_tables
from airflow_provider_fscommit.core.compaction.sort_order import SortOrder
from airflow_provider_fscommit.core.compat import (
    ORC_READER_REFUSES_FAR_TIMESTAMPS,
    PARQUET_BLOOM_FILTERS,
    PARQUET_DECIMALS_AS_INTEGERS,
    PYARROW_VERSION,
    concat_batches,
    strict_zip,
)
from airflow_provider_fscommit.core.config import options as o
from airflow_provider_fscommit.core.errors import (
    ConfigError,
    FsCommitError,
    OrcTailError,
    SchemaMismatchError,
    UnreadableLineFileError,
)
from airflow_provider_fscommit.core.faults import fault_point
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.formats.line_files import codec_of, merge_lines
from airflow_provider_fscommit.core.formats.orc_tail import read_footer, timestamp_range_ms
from airflow_provider_fscommit.core.formats.orc_user_metadata import OrcUserMetadataSink
from airflow_provider_fscommit.core.storage.filesystem import renames_atomically, resolve_filesystem
from airflow_provider_fscommit.core.storage.object_store import S3Settings, explain, use_s3_settings

if TYPE_CHECKING:
    from airflow_provider_fscommit.core.config.table_spec import TableSpec

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"
_BATCH_ROWS = 64 * 1024
# Spark's (parquet-mr's) default false positive probability of a Parquet bloom filter.
_BLOOM_FPP = 0.01
# Object stores: inputs fetched ahead per unit, and the size up to which one is read whole.
_PREFETCH_FILES = 8
_WHOLE_FILE_BYTES = 8 * 1024 * 1024


def hidden_name(output: str) -> str:
    """The in-progress name of an output: dot-prefixed, so no reader lists it."""
    return f".fscommit-inprogress-{output}"


@dataclass(frozen=True)
class PlanSchema:
    """The merged schema of a plan's inputs, and whether Spark wrote INT96 timestamps.

    ``rows`` is None for line formats: their rows are only known by reading them whole.
    """

    schema: pa.Schema
    int96: bool
    rows: dict[str, int] | None
    dictionary_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputLayout:
    """How outputs are laid out for readers: the table spec's format and sort options, as
    plain values a Spark task takes."""

    parquet_block_size: int = 128 * 1024 * 1024
    # (column, expected distinct values or None: the output's rows)
    parquet_bloom_filters: tuple[tuple[str, int | None], ...] = ()
    orc_stripe_size: int = 64 * 1024 * 1024
    orc_row_index_stride: int = 10000
    orc_bloom_filter_columns: tuple[str, ...] = ()
    orc_bloom_filter_fpp: float = 0.05
    sort: SortOrder | None = None
    sort_memory: int = 256 * 1024 * 1024

    @classmethod
    def of(cls, spec: TableSpec) -> OutputLayout:
        order = (
            SortOrder(spec.sort_columns, z_order=bool(spec.compaction_z_order_by))
            if spec.sort_columns
            else None
        )
        return cls(
            parquet_block_size=spec.parquet_block_size,
            parquet_bloom_filters=tuple(spec.parquet_bloom_filters.items()),
            orc_stripe_size=spec.orc_stripe_size,
            orc_row_index_stride=spec.orc_row_index_stride,
            orc_bloom_filter_columns=spec.orc_bloom_filter_columns,
            orc_bloom_filter_fpp=spec.orc_bloom_filter_fpp,
            sort=order,
            sort_memory=spec.compaction_sort_memory,
        )

    @property
    def names_columns(self) -> bool:
        """Whether it names columns of the table (to check against its files)."""
        return bool(self.sort or self.parquet_bloom_filters or self.orc_bloom_filter_columns)

    def check(self, schema: pa.Schema, partition: str, file_format: FileFormat) -> None:
        """Refuse what names a column the partition's files lack, before anything runs."""
        if self.sort is not None:
            self.sort.check(schema, partition)
        bloom = (
            (o.ORC_BLOOM_FILTER_COLUMNS.key, self.orc_bloom_filter_columns)
            if file_format is FileFormat.ORC
            else (o.BLOOM_ENABLED_PREFIX + "<column>", [c for c, _ in self.parquet_bloom_filters])
        )
        missing = [name for name in bloom[1] if name not in schema.names]
        if missing:
            raise ConfigError(
                f"{bloom[0]} names column {missing[0]!r}, which the files of partition "
                f"{partition} do not have (their columns: {', '.join(schema.names)}); "
                "nothing was planned. Fix the table spec"
            )

    def rewrites(self, file_format: FileFormat) -> bool:
        """Whether every output must be written row by row (no byte copy of an input):
        its rows are sorted, or it carries bloom filters an input may lack."""
        if self.sort is not None:
            return True
        if file_format is FileFormat.ORC:
            return bool(self.orc_bloom_filter_columns)
        return bool(self.parquet_bloom_filters)


@dataclass(frozen=True)
class UnitTask:
    """Everything a Spark task needs to execute one unit (plain, picklable values)."""

    table_path: str
    partition: str
    plan_id: str
    unit: int
    inputs: tuple[str, ...]
    output: str
    codec: str
    schema: bytes
    int96: bool
    bytes: int = 0  # the inputs' total size: what balances units over Spark tasks
    input_sizes: tuple[int, ...] = ()  # per input, as the sink log records them
    # The driver's S3 identity when it is explicit (object_store.task_settings): executors
    # on other hosts do not share the driver's environment. In memory only.
    s3: S3Settings | None = None
    format: FileFormat = FileFormat.PARQUET
    header: bool = False  # CSV files that each start with a header line
    dictionary_columns: tuple[str, ...] = ()  # Parquet: PlanSchema.dictionary_columns
    rows: int = 0  # the inputs' rows, as their footers count them (0: unknown, line files)
    layout: OutputLayout = field(default_factory=OutputLayout)
    # A sorted partition, or a rewrite, is one task writing every unit's output: (unit,
    # output) after this task's own, in order; its rows are dealt out across all of them.
    more_outputs: tuple[tuple[int, str], ...] = ()
    directory: str = ""  # the outputs' directory under the partition's (a rewrite's own)

    @property
    def outputs(self) -> tuple[tuple[int, str], ...]:
        return ((self.unit, self.output), *self.more_outputs)


@dataclass(frozen=True)
class UnitResult:
    partition: str
    plan_id: str
    unit: int
    rows: int = 0
    bytes: int = 0
    copied: bool = False
    error: str | None = None


def read_plan_schema(uris: list[str], file_format: FileFormat = FileFormat.PARQUET) -> PlanSchema:
    """Read the inputs' footers and merge their schemas (fails on incompatible ones).

    Runs in the driver before any unit can start, over every input of the plan (thousands
    of small files, nearly all with one schema): schemas are compared in C++ and only the
    distinct ones are inspected and merged (9,600 footers: 2.05 s -> 1.42 s here).

    Parquet: the columns Spark dictionary-encoded in the plan's largest input are the ones
    the outputs dictionary-encode (:func:`_dictionary_columns`).
    """
    if file_format.is_lines:
        return PlanSchema(pa.schema([]), False, None)
    schemas: list[pa.Schema] = []
    parquet_schemas: list[pq.ParquetSchema] = []
    rows: dict[str, int] = {}
    largest: pq.FileMetaData | None = None
    for uri, reader in _opened(uris, (), file_format):  # footers only: units read data
        if isinstance(reader, po.ORCFile):
            rows[uri], schema = reader.nrows, reader.schema
        else:
            metadata = reader.metadata
            rows[uri], schema = metadata.num_rows, reader.schema_arrow
            if largest is None or metadata.num_rows > largest.num_rows:
                largest = metadata
            if not any(metadata.schema.equals(known) for known in parquet_schemas):
                parquet_schemas.append(metadata.schema)
        if not any(schema.equals(known, check_metadata=True) for known in schemas):
            schemas.append(schema)
    int96 = any(
        schema.column(i).physical_type == "INT96"
        for schema in parquet_schemas
        for i in range(len(schema))
    )
    try:
        merged = pa.unify_schemas(schemas)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaMismatchError(
            f"the committed files of this partition have incompatible schemas ({exc}); "
            f"first files: {uris[:3]}. Nothing was published. Rewrite the partition's staged "
            "data with one schema, or exclude it from the commit"
        ) from None
    # A column some files lack holds nulls in the output, whatever one file declared.
    partial = {name for name in merged.names if any(name not in s.names for s in schemas)}
    merged = pa.schema(
        [f.with_nullable(True) if f.name in partial else f for f in merged],
        metadata=merged.metadata,
    )
    return PlanSchema(
        merged.with_metadata(_merged_metadata(schemas, merged, partial)),
        int96,
        rows,
        _dictionary_columns(largest),
    )


def _dictionary_columns(metadata: pq.FileMetaData | None) -> tuple[str, ...]:
    """The leaf columns Spark dictionary-encoded in an input: the ones worth encoding so.

    pyarrow would otherwise try a dictionary for every column, hashing each value of the
    high-cardinality ones (ids, unique strings) until the dictionary outgrows its page and
    falls back to plain encoding; Spark's writer already made that call per column, so the
    outputs follow it. Workload (a), one partition: the write took 0.30 s instead of 0.22 s,
    and the file was 28 MB instead of 24 MB. The largest input (most rows) is asked: its
    dictionaries had the most values to outgrow. Only the encoding follows: rows and types
    are the same either way.
    """
    if metadata is None or metadata.num_row_groups == 0:
        return ()
    group = metadata.row_group(0)
    return tuple(
        group.column(i).path_in_schema
        for i in range(group.num_columns)
        if group.column(i).has_dictionary_page
    )


def _merged_metadata(
    schemas: list[pa.Schema], merged: pa.Schema, partial: set[str]
) -> dict[bytes, bytes]:
    """The inputs' footer metadata, with Spark's schema JSON merged field by field."""
    metadata: dict[bytes, bytes] = {}
    for schema in schemas:
        metadata.update(schema.metadata or {})
    spark_fields: dict[str, dict] = {}
    for schema in schemas:
        raw = (schema.metadata or {}).get(SPARK_SCHEMA_KEY)
        if raw is None:
            metadata.pop(SPARK_SCHEMA_KEY, None)
            return metadata
        for spark_field in json.loads(raw)["fields"]:
            spark_fields.setdefault(spark_field["name"], spark_field)
    for name in partial:
        spark_fields[name] = spark_fields[name] | {"nullable": True}
    if SPARK_SCHEMA_KEY in metadata:
        metadata[SPARK_SCHEMA_KEY] = json.dumps(
            {"type": "struct", "fields": [spark_fields[name] for name in merged.names]},
            separators=(",", ":"),
        ).encode()
    return metadata


def compact_units(tasks: Iterable[UnitTask]) -> list[UnitResult]:
    """Execute tasks one after the other (what a Spark task does with its share)."""
    return [result for task in tasks for result in compact_task(task)]


def compact_task(task: UnitTask) -> list[UnitResult]:
    """Execute one task: its unit's output, or a sorted partition's outputs. Failures are
    returned (not raised) so other tasks go on."""
    settings = use_s3_settings(task.s3) if task.s3 is not None else contextlib.nullcontext()
    try:
        with settings:
            return _compact(task)
    except FsCommitError as exc:
        return _failed(task, str(exc))
    except (OSError, pa.ArrowException) as exc:
        # e.g. a full or read-only disk, a denied prefix: name the file this unit was writing.
        explained = explain(exc) if isinstance(exc, OSError) else None
        return _failed(task, f"compacting into {task.partition}/{task.output}: {explained or exc}")


def _failed(task: UnitTask, error: str) -> list[UnitResult]:
    return [UnitResult(task.partition, task.plan_id, unit, error=error) for unit, _ in task.outputs]


def _compact(task: UnitTask) -> list[UnitResult]:
    """The task's outputs: lines concatenated, one input of the plan's schema copied, the
    inputs rewritten into that schema, or sorted across outputs (the module docstring
    says why each)."""
    table_fs, target = _target(task, task.output)
    if task.format.is_lines:
        return [_merge(task, table_fs, target)]
    schema = pa.ipc.read_schema(pa.py_buffer(task.schema))
    _refuse_unsupported(task.layout, task.format)
    if task.layout.sort is not None or task.more_outputs:
        return _dealt(task, table_fs, schema)
    copied = None
    if len(task.inputs) == 1 and not task.layout.rewrites(task.format):
        copied = _copied(task, table_fs, target, schema)
    return [copied or _rewrite(task, table_fs, target, schema)]


def _refuse_unsupported(layout: OutputLayout, file_format: FileFormat) -> None:
    if (
        file_format is FileFormat.PARQUET
        and layout.parquet_bloom_filters
        and not PARQUET_BLOOM_FILTERS
    ):
        raise FsCommitError(
            "parquet.bloom.filter.enabled is set but the executors run pyarrow "
            f"{'.'.join(map(str, PYARROW_VERSION))}, which writes Parquet bloom filters from "
            "24.0 on; install pyarrow 24+ on the cluster's Python, or drop the bloom filter "
            "keys. Nothing of the partition was published"
        )


def _target(task: UnitTask, output: str) -> tuple[pafs.FileSystem, str]:
    """The table's filesystem and an output's hidden path in its directory (the
    partition's, or a rewrite's under it).

    The directory is created first where directories exist; object stores have none.
    """
    table_fs, root = resolve_filesystem(task.table_path)
    directory = "/".join(p for p in (root.rstrip("/"), task.partition, task.directory) if p)
    if renames_atomically(table_fs):
        table_fs.create_dir(directory, recursive=True)
    return table_fs, f"{directory}/{hidden_name(output)}"


def _copied(
    task: UnitTask, table_fs: pafs.FileSystem, target: str, schema: pa.Schema
) -> UnitResult | None:
    """A single input that already has the plan's schema, copied byte for byte.

    Rewriting it would only cost time and risk fidelity. None when its schema differs
    (an older file of a partition whose columns grew): then it is rewritten.
    """
    filesystem, path = resolve_filesystem(task.inputs[0])
    reader = _open(filesystem, path, task.inputs[0], task.format)
    if not _schema(reader).equals(schema, check_metadata=False):
        return None
    if filesystem is table_fs and not renames_atomically(table_fs):
        table_fs.copy_file(path, target)  # a copy inside the store (CopyObject)
    else:
        pafs.copy_files(path, target, filesystem, table_fs)
    return _written(task, table_fs, target, _rows(reader), copied=True)


def _rewrite(
    task: UnitTask, table_fs: pafs.FileSystem, target: str, schema: pa.Schema
) -> UnitResult:
    """The inputs streamed, in input order, into row groups of the plan's schema."""
    with _RowGroups(task, table_fs, target, schema) as output:
        for batch in _coalesced(_input_rows(task, schema), _BATCH_ROWS):
            output.add(batch)
    return _written(task, table_fs, target, output.rows)


def _dealt(task: UnitTask, table_fs: pafs.FileSystem, schema: pa.Schema) -> list[UnitResult]:
    """All the task's inputs dealt out to its outputs in order, the same number of rows to
    each: a sorted partition's sorted first (in bounded memory), so files and their row
    groups cover disjoint ranges of the order; a rewrite's in input order."""
    layout = task.layout
    per_output = -(-task.rows // len(task.outputs))  # ceil: the last output may hold fewer
    rows = _coalesced(_input_rows(task, schema), _BATCH_ROWS)
    ordered = _Rows(
        sorted_tables(rows, layout.sort, layout.sort_memory)
        if layout.sort is not None
        else (pa.Table.from_batches([batch]) for batch in rows)
    )
    results = []
    for unit, output in task.outputs:
        target = _target(task, output)[1]
        sorting = layout.sort is not None
        with _RowGroups(task, table_fs, target, schema, sorting=sorting) as group:
            while group.rows < per_output:
                piece = ordered.take(per_output - group.rows)
                if piece is None:
                    break
                group.add(piece)
        results.append(replace(_written(task, table_fs, target, group.rows), unit=unit))
    if ordered.take(1) is not None:
        raise FsCommitError(
            f"the input files of {task.partition} hold more rows than their footers count "
            f"({task.rows}); nothing of the partition was published. Rerun it"
        )
    return results


class _Rows:
    """Rows of consecutive tables, taken a given number at a time."""

    def __init__(self, tables: Iterable[pa.Table]) -> None:
        self._batches = (batch for table in tables for batch in table.to_batches())
        self._current: pa.RecordBatch | None = None

    def take(self, count: int) -> pa.RecordBatch | None:
        """The next at most ``count`` rows (fewer at a table's end); None when none are left."""
        while self._current is None or self._current.num_rows == 0:
            self._current = next(self._batches, None)
            if self._current is None:
                return None
        piece = self._current.slice(0, count)
        self._current = self._current.slice(piece.num_rows)
        return piece


class _RowGroups:
    """One output: batches collected into row groups and written by the format's writer.

    Parquet: a row group is written once it holds ``parquet.block.size`` bytes as the
    inputs store them (their bytes per row), so memory holds one row group at most; ORC's
    writer cuts stripes by ``orc.stripe.size`` itself.
    """

    def __init__(
        self,
        task: UnitTask,
        table_fs: pafs.FileSystem,
        target: str,
        schema: pa.Schema,
        sorting: bool = False,
    ) -> None:
        self.task, self.schema, self.rows = task, schema, 0
        self._stack = contextlib.ExitStack()
        sink = self._stack.enter_context(table_fs.open_output_stream(target, compression=None))
        self._writer = self._stack.enter_context(_writer(task, sink, schema, sorting))
        self._group_rows = _row_group_rows(task)
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0

    def __enter__(self) -> _RowGroups:
        return self

    def add(self, batch: pa.RecordBatch) -> None:
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        self.rows += batch.num_rows
        if self._pending_rows >= self._group_rows:
            self._flush()
            fault_point("during-unit")

    def _flush(self) -> None:
        if self._pending:
            table = pa.Table.from_batches(self._pending, self.schema)
            self._writer.write(table, **self._group_size())
            self._pending, self._pending_rows = [], 0

    def _group_size(self) -> dict[str, int]:
        return {} if self.task.format is FileFormat.ORC else {"row_group_size": self._group_rows}

    def __exit__(self, *exc: Any) -> None:
        """The last row group written and the file closed; on an error, the writers see it
        (ORC's sink then adds no metadata to a file it never finished)."""
        if exc[0] is None:
            try:
                self._flush()
                fault_point("during-unit")
            except BaseException as failure:
                if not self._stack.__exit__(type(failure), failure, failure.__traceback__):
                    raise
                return
        self._stack.__exit__(*exc)


def _row_group_rows(task: UnitTask) -> int:
    """Rows per Parquet row group (ORC: per write, the writer cuts stripes itself): the
    group's size (``parquet.block.size``, ``orc.stripe.size``) at the inputs' bytes per row.
    Sorted rows compress better, so a group comes out somewhat smaller."""
    layout = task.layout
    size = layout.orc_stripe_size if task.format is FileFormat.ORC else layout.parquet_block_size
    if not task.rows or not task.bytes:
        return 1024 * 1024  # pyarrow's default
    return max(1, size * task.rows // task.bytes)


def _written(
    task: UnitTask, table_fs: pafs.FileSystem, target: str, rows: int, copied: bool = False
) -> UnitResult:
    """The result of a unit whose output is complete: its rows and the size it has."""
    fault_point("after-unit")
    size = table_fs.get_file_info(target).size or 0
    return UnitResult(task.partition, task.plan_id, task.unit, rows, size, copied)


def _input_rows(task: UnitTask, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The unit's input rows in input order, with the plan's schema.

    Parquet on a local disk or HDFS is read as one dataset scan: pyarrow then opens and
    decodes file after file in C++, without a Python reader per file (workload (b), 800
    files of 375 rows: 0.54 s -> 0.41 s to read an hour). Should the scan fail, the inputs
    are read again one by one, so the error names the file and the way out. Object stores
    (inputs fetched ahead, whole) and ORC are read one by one.
    """
    if task.format is FileFormat.PARQUET and renames_atomically(
        resolve_filesystem(task.inputs[0])[0]
    ):
        try:
            yield from _scanned(task.inputs, schema)
            return
        except (pa.ArrowException, OSError) as exc:
            failure = exc
        for _ in _one_by_one(task, schema):  # raises the error of the file that fails
            pass
        raise FsCommitError(
            f"reading the staged files of {task.partition} failed ({failure}), but each of "
            "them reads on its own; nothing of the partition was published. Rerun it"
        )
    yield from _one_by_one(task, schema)


def _scanned(uris: Sequence[str], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Local Parquet inputs in one scan; a column a file lacks is read as nulls."""
    import pyarrow.dataset as ds  # here: it costs 0.2 s to import (pandas with it)

    filesystem, _ = resolve_filesystem(uris[0])
    scan_format = ds.ParquetFileFormat(
        read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us")
    )
    paths = [resolve_filesystem(uri)[1] for uri in uris]
    dataset = ds.dataset(paths, schema=schema, format=scan_format, filesystem=filesystem)
    for batch in dataset.to_batches(batch_size=_BATCH_ROWS, use_threads=False):
        yield _align(batch, schema)


def _one_by_one(task: UnitTask, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The inputs opened and read one after the other, errors naming their file."""
    for uri, reader in _opened(task.inputs, task.input_sizes, task.format):
        if task.format is FileFormat.ORC and not ORC_READER_REFUSES_FAR_TIMESTAMPS:
            _refuse_far_timestamps(uri)
        batches = _batches(reader)
        while True:
            try:  # a file whose footer reads can still have damaged pages
                batch = next(batches, None)
            except (pa.ArrowInvalid, OSError) as exc:
                raise _unreadable_rows(uri, exc, task.format) from None
            if batch is None:
                break
            yield _align(batch, schema)


def _coalesced(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """Consecutive small batches joined into batches of at least ``rows`` rows.

    A small input file gives a small batch, and the Parquet writer pays per batch and
    column (workload (b), 375-row files: 0.28 s -> 0.21 s to write an hour).
    """
    small: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        small.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield concat_batches(small)
            small, count = [], 0
    if small:
        yield concat_batches(small)


def _merge(task: UnitTask, table_fs: pafs.FileSystem, target: str) -> UnitResult:
    """A line-format unit: its inputs concatenated (headers but the first dropped)."""
    # compression=None: pyarrow would otherwise gzip a stream named *.gz a second time.
    with table_fs.open_output_stream(target, compression=None) as sink:
        try:
            rows = merge_lines(
                _opened(task.inputs, task.input_sizes, task.format),
                sink,
                codec_of(task.inputs[0]),
                task.header,
            )
        except UnreadableLineFileError as exc:
            raise unreadable(exc.uri, exc, task.format) from None
        fault_point("during-unit")
    return _written(task, table_fs, target, rows)


Reader = Union[pq.ParquetFile, po.ORCFile, pa.NativeFile]


@contextlib.contextmanager
def _writer(
    task: UnitTask, sink: pa.NativeFile, schema: pa.Schema, sorting: bool = False
) -> Iterator[Any]:
    """The format's writer into ``sink``, with what Spark's reader needs of the file and
    what the layout asks for readers (``sorting``: the rows are in the layout's order)."""
    layout = task.layout
    if task.format is FileFormat.ORC:
        with OrcUserMetadataSink(sink, schema.metadata or {}) as patched:
            writer = po.ORCWriter(
                patched,
                compression=task.codec,
                stripe_size=layout.orc_stripe_size,
                row_index_stride=layout.orc_row_index_stride,
                bloom_filter_columns=_orc_column_ids(schema, layout.orc_bloom_filter_columns)
                or None,
                bloom_filter_fpp=layout.orc_bloom_filter_fpp,
            )
            try:
                yield writer
            finally:
                writer.close()
        return
    options: dict[str, Any] = (
        {"store_decimal_as_integer": True} if PARQUET_DECIMALS_AS_INTEGERS else {}
    )
    if layout.parquet_bloom_filters:
        options["bloom_filter_options"] = {
            name: {"ndv": ndv or max(task.rows, 1), "fpp": _BLOOM_FPP}
            for name, ndv in layout.parquet_bloom_filters
        }
    if sorting and layout.sort is not None and not layout.sort.z_order:
        order = [(name, "ascending") for name in layout.sort.columns]
        options["sorting_columns"] = pq.SortingColumn.from_ordering(
            schema, order, null_placement="at_start"
        )
    with pq.ParquetWriter(
        sink,
        schema,
        compression=task.codec,
        use_dictionary=list(task.dictionary_columns),
        use_deprecated_int96_timestamps=task.int96,
        write_page_index=True,
        **options,
    ) as writer:
        yield writer


def _orc_column_ids(schema: pa.Schema, names: Sequence[str]) -> list[int]:
    """The ORC column ids of top-level columns: ORC numbers every type in pre-order, the
    root struct 0, so a column's id counts the nested types before it."""
    ids, next_id = {}, 1
    for schema_field in schema:
        ids[schema_field.name] = next_id
        next_id += _orc_types(schema_field.type)
    return [ids[name] for name in names]


def _orc_types(kind: pa.DataType) -> int:
    """How many ORC types ``kind`` is: itself and everything nested in it."""
    return 1 + sum(_orc_types(kind.field(i).type) for i in range(kind.num_fields))


def _schema(reader: Reader) -> pa.Schema:
    return reader.schema if isinstance(reader, po.ORCFile) else reader.schema_arrow


def _rows(reader: Reader) -> int:
    return reader.nrows if isinstance(reader, po.ORCFile) else reader.metadata.num_rows


def _batches(reader: Reader) -> Iterator[pa.RecordBatch]:
    """The file's rows in batches of at most ``_BATCH_ROWS``, one stripe in memory at most.

    One thread: units already run one per core, and with small files pyarrow's per-column
    threads cost more than they save (workload (b), 800 files: 0.60 s -> 0.46 s to read).
    """
    if isinstance(reader, pq.ParquetFile):
        yield from reader.iter_batches(batch_size=_BATCH_ROWS, use_threads=False)
        return
    for index in range(reader.nstripes):
        stripe = reader.read_stripe(index)
        for offset in range(0, stripe.num_rows, _BATCH_ROWS):
            yield stripe.slice(offset, _BATCH_ROWS)


def _opened(
    uris: Sequence[str], sizes: Sequence[int], file_format: FileFormat
) -> Iterator[tuple[str, Reader]]:
    """The inputs opened in order; on an object store the next few are fetched ahead.

    Each request to an object store waits milliseconds for the store, and a unit reads
    hundreds of small files: opened one after another, a unit would spend most of its
    time waiting (a compaction of workload (a) on the S3 server: 44 s, of which 40 s in
    opening and reading inputs). Threads fetch up to ``_PREFETCH_FILES`` files ahead, a
    small file of known size whole in one request (memory stays bounded by the window),
    others by their footer; local files are opened as they come.
    """
    if not uris:
        return
    first_fs, _ = resolve_filesystem(uris[0])
    if renames_atomically(first_fs):  # local disk or HDFS
        for uri in uris:
            filesystem, path = resolve_filesystem(uri)
            yield uri, _open(filesystem, path, uri, file_format)
        return
    known = list(sizes) if len(sizes) == len(uris) else [None] * len(uris)
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
                    fetch = pool.submit(context.copy().run, _fetch, *item, file_format)
                    window.append((item[0], fetch))
                if not window:
                    return
                uri, future = window.popleft()
                yield uri, future.result()
        finally:
            for _, future in window:
                future.cancel()


def _fetch(uri: str, size: int | None, file_format: FileFormat) -> Reader:
    """One input from an object store: a small one whole (one GET), else its footer."""
    filesystem, path = resolve_filesystem(uri)
    if size is None or size > _WHOLE_FILE_BYTES:
        return _open(filesystem, path, uri, file_format)
    try:
        with filesystem.open_input_file(path) as handle:
            data = handle.read()
    except FileNotFoundError:
        raise _missing(uri) from None
    except OSError as exc:
        raise unreadable(uri, exc, file_format) from None
    return _reader(pa.BufferReader(data), uri, file_format)


def _open(filesystem: pafs.FileSystem, path: str, uri: str, file_format: FileFormat) -> Reader:
    try:
        source = filesystem.open_input_file(path)
    except FileNotFoundError:
        raise _missing(uri) from None
    except OSError as exc:
        raise unreadable(uri, exc, file_format) from None
    return _reader(source, uri, file_format)


def _reader(source: pa.NativeFile, uri: str, file_format: FileFormat) -> Reader:
    """The file opened for its format: Parquet and ORC read their footers here."""
    try:
        if file_format is FileFormat.ORC:
            return po.ORCFile(source)
        if file_format is FileFormat.PARQUET:
            return pq.ParquetFile(source, coerce_int96_timestamp_unit="us")
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


def unreadable(
    uri: str, exc: Exception, file_format: FileFormat = FileFormat.PARQUET
) -> FsCommitError:
    """The error of a staged file that is not readable in its format, with the way out."""
    name = _FORMAT_NAMES.get(file_format, file_format.value.upper())
    return FsCommitError(
        f"staged file {uri} is not a readable {name} file ({exc}); nothing of its "
        f"partition was published. {_WAY_OUT.format(uri=uri)}"
    )


def _align(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """The batch with the merged schema's columns: missing ones are all null."""
    if batch.schema.equals(schema, check_metadata=False):
        return pa.RecordBatch.from_arrays(batch.columns, schema=schema)
    columns = [
        batch.column(f.name).cast(f.type)
        if f.name in batch.schema.names
        else pa.nulls(batch.num_rows, f.type)
        for f in schema
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)
