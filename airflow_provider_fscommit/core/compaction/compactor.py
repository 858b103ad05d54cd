"""The compactor (Flink's ``CompactOperator``): rewrites one unit's inputs into one file.

Runs inside Spark tasks, one unit per task, with pyarrow, reading and writing through
``pyarrow.fs`` so staging and table may be local, HDFS or S3. Fidelity is the point: the
output must read back in Spark with the same schema and rows. For Parquet

* INT96 timestamps stay INT96 (read with ``coerce_int96_timestamp_unit``, written with
  ``use_deprecated_int96_timestamps``); INT64 ones stay INT64;
* small decimals are stored as INT32/INT64 as Spark stores them;
* Spark's footer metadata (its schema, with types Parquet cannot express) is kept, merged
  when files of a partition have different columns (a nullable column added mid-stream:
  older rows get nulls, :mod:`.plan_schema`); incompatible schemas fail the unit with the
  files named;
* a unit with a single input whose schema is the plan's is copied byte for byte.

A unit reads its inputs' footers itself, once each (its scan then uses them), and writes
their merged schema unless the task gives one; its result carries that schema and the
inputs' distinct ones, and the publisher checks that a partition's units agree before its
commit point (the units that differ are written again with the partition's schema).

ORC is rewritten the same way, stripe by stripe, with the inputs' compression, Spark's
type attributes and its user metadata (:mod:`orc_user_metadata`). JSON, CSV and text are
concatenated (:mod:`line_files`), which is exact for every codec Spark writes them with.

Outputs are laid out for readers (:mod:`.layout`). A table with a sort order has each
partition's rows sorted across all its outputs in one task (:mod:`.external_sort`), so
files and row groups cover disjoint ranges; a rewrite (:mod:`.fragmentation`) deals its
rows out to its outputs in one task too, the same number to each.

Memory is bounded: inputs are streamed batch by batch (:mod:`.readers`); a writer holds one
row group, a sort at most ``compaction.sort-memory``. Outputs are written under hidden
names; the publisher renames them after the commit point.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as po
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compaction.external_sort import sorted_tables
from airflow_provider_fscommit.core.compaction.layout import OutputLayout
from airflow_provider_fscommit.core.compaction.plan_schema import FooterSchemas
from airflow_provider_fscommit.core.compaction.readers import (
    UnitInputs,
    input_rows,
    opened,
    unreadable,
)
from airflow_provider_fscommit.core.compat import PARQUET_DECIMALS_AS_INTEGERS
from airflow_provider_fscommit.core.errors import FsCommitError, UnreadableLineFileError
from airflow_provider_fscommit.core.faults import fault_point
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.formats.line_files import codec_of, merge_lines
from airflow_provider_fscommit.core.formats.orc_user_metadata import OrcUserMetadataSink
from airflow_provider_fscommit.core.storage.filesystem import renames_atomically, resolve_filesystem
from airflow_provider_fscommit.core.storage.object_store import S3Settings, explain, use_s3_settings


def hidden_name(output: str) -> str:
    """The in-progress name of an output: dot-prefixed, so no reader lists it."""
    return f".fscommit-inprogress-{output}"


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
    # The schema to write, serialized; b"": the merged schema of the unit's own inputs.
    schema: bytes = b""
    int96: bool = False  # write INT96 timestamps (also when an input of the unit has them)
    bytes: int = 0  # the inputs' total size: what balances units over Spark tasks
    input_sizes: tuple[int, ...] = ()  # per input, as the sink log records them
    # The driver's S3 identity when it is explicit (object_store.task_settings): executors
    # on other hosts do not share the driver's environment. In memory only.
    s3: S3Settings | None = None
    format: FileFormat = FileFormat.PARQUET
    header: bool = False  # CSV files that each start with a header line
    # Parquet: PlanSchema.dictionary_columns; (): those of the unit's largest input.
    dictionary_columns: tuple[str, ...] = ()
    rows: int = 0  # the inputs' rows, as their footers count them (the unit counts them)
    layout: OutputLayout = field(default_factory=OutputLayout)
    # A sorted partition, or a rewrite, is one task writing every unit's output: (unit,
    # output) after this task's own, in order; its rows are dealt out across all of them.
    more_outputs: tuple[tuple[int, str], ...] = ()
    directory: str = ""  # the outputs' directory under the partition's (a rewrite's own)
    # The task's inputs are all of its partition's: its own schema is the partition's, and
    # it refuses a sort or bloom filter column they lack before writing anything.
    whole: bool = False

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
    # What the unit's inputs' footers said (columnar formats): the rows they hold (on the
    # first output of a task with several; None: unknown, line files), the schema written
    # and the inputs' distinct schemas (serialized), whether an input has INT96 timestamps.
    input_rows: int | None = None
    schema: bytes = b""
    schemas: tuple[bytes, ...] = ()
    int96: bool = False


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
    if task.format.is_lines:
        table_fs, target = _target(task, task.output)
        return [_merge(task, table_fs, target)]
    inputs = UnitInputs(task.inputs, task.input_sizes, task.format)
    footers = FooterSchemas()
    inputs.read_footers(footers.add)
    own = footers.plan_schema(task.inputs)
    schema = pa.ipc.read_schema(pa.py_buffer(task.schema)) if task.schema else own.schema
    if task.whole and not task.schema:
        task.layout.check(schema, task.partition, task.format)
    task.layout.refuse_unwritable(task.format)
    rows = sum(footers.rows.values())
    task = replace(
        task,
        int96=task.int96 or own.int96,
        rows=rows,
        dictionary_columns=task.dictionary_columns or own.dictionary_columns,
        layout=task.layout.within(schema, task.format),
    )
    table_fs, target = _target(task, task.output)
    if task.layout.sort is not None or task.more_outputs:
        results = _dealt(task, table_fs, schema, inputs)
    elif (
        len(task.inputs) == 1
        and not task.layout.rewrites(task.format)
        and (own.schemas[0].equals(schema, check_metadata=False))
    ):
        results = [_copied(task, table_fs, target, rows)]
    else:
        results = [_rewrite(task, table_fs, target, schema, inputs)]
    said = {
        "schema": schema.serialize().to_pybytes(),
        "schemas": tuple(s.serialize().to_pybytes() for s in own.schemas),
        "int96": task.int96,
    }
    return [
        replace(result, input_rows=rows if index == 0 else 0, **said)
        for index, result in enumerate(results)
    ]


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


def _copied(task: UnitTask, table_fs: pafs.FileSystem, target: str, rows: int) -> UnitResult:
    """A single input that already has the plan's schema, copied byte for byte.

    Rewriting it would only cost time and risk fidelity (an older file of a partition
    whose columns grew has another schema: it is rewritten).
    """
    filesystem, path = resolve_filesystem(task.inputs[0])
    if filesystem is table_fs and not renames_atomically(table_fs):
        table_fs.copy_file(path, target)  # a copy inside the store (CopyObject)
    else:
        pafs.copy_files(path, target, filesystem, table_fs)
    return _written(task, table_fs, target, rows, copied=True)


def _rewrite(
    task: UnitTask, table_fs: pafs.FileSystem, target: str, schema: pa.Schema, inputs: UnitInputs
) -> UnitResult:
    """The inputs streamed, in input order, into row groups of the plan's schema."""
    with _RowGroups(task, table_fs, target, schema) as output:
        for batch in input_rows(inputs, schema):
            output.add(batch)
    return _written(task, table_fs, target, output.rows)


def _dealt(
    task: UnitTask, table_fs: pafs.FileSystem, schema: pa.Schema, inputs: UnitInputs
) -> list[UnitResult]:
    """All the task's inputs dealt out to its outputs in order, the same number of rows to
    each: a sorted partition's sorted first (in bounded memory), so files and their row
    groups cover disjoint ranges of the order; a rewrite's in input order."""
    layout = task.layout
    per_output = -(-task.rows // len(task.outputs))  # ceil: the last output may hold fewer
    rows = input_rows(inputs, schema)
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
        self._group_rows = task.layout.row_group_rows(task.format, task.rows, task.bytes)
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


def _written(
    task: UnitTask, table_fs: pafs.FileSystem, target: str, rows: int, copied: bool = False
) -> UnitResult:
    """The result of a unit whose output is complete: its rows and the size it has."""
    fault_point("after-unit")
    size = table_fs.get_file_info(target).size or 0
    return UnitResult(task.partition, task.plan_id, task.unit, rows, size, copied)


def _merge(task: UnitTask, table_fs: pafs.FileSystem, target: str) -> UnitResult:
    """A line-format unit: its inputs concatenated (headers but the first dropped)."""
    # compression=None: pyarrow would otherwise gzip a stream named *.gz a second time.
    with table_fs.open_output_stream(target, compression=None) as sink:
        try:
            rows = merge_lines(
                opened(task.inputs, task.input_sizes, task.format),
                sink,
                codec_of(task.inputs[0]),
                task.header,
            )
        except UnreadableLineFileError as exc:
            raise unreadable(exc.uri, exc, task.format) from None
        fault_point("during-unit")
    return _written(task, table_fs, target, rows)


@contextlib.contextmanager
def _writer(
    task: UnitTask, sink: pa.NativeFile, schema: pa.Schema, sorting: bool = False
) -> Iterator[Any]:
    """The format's writer into ``sink``, with what Spark's reader needs of the file and
    what the layout asks for readers (``sorting``: the rows are in the layout's order)."""
    layout = task.layout
    if task.format is FileFormat.ORC:
        with OrcUserMetadataSink(sink, schema.metadata or {}) as patched:
            writer = po.ORCWriter(patched, compression=task.codec, **layout.orc_options(schema))
            try:
                yield writer
            finally:
                writer.close()
        return
    options = layout.parquet_options(schema, task.rows, sorting)
    if PARQUET_DECIMALS_AS_INTEGERS:
        options["store_decimal_as_integer"] = True
    with pq.ParquetWriter(
        sink,
        schema,
        compression=task.codec,
        use_dictionary=list(task.dictionary_columns),
        use_deprecated_int96_timestamps=task.int96,
        **options,
    ) as writer:
        yield writer
