"""The table's state: every partition's ledger summarized, read in what changed.

The per-partition records (:mod:`.ledger`) are the protocol's truth, and stay where they
are: the commit point ``commit-<seq>.json`` is created once there, whatever else fails.
Reading them costs a listing and every record per partition, which grows with the table's
age (a year of hourly partitions is 8,760 of them). So, as Spark's file sink compacts its
``_spark_metadata`` every 10 batches and Delta checkpoints its ``_delta_log``, the ledger
keeps a **state log** of summaries beside them, ``_fscommit/state/``:

- ``<version>.json`` (``version`` ≥ 1, created once): the summaries of the partitions a
  run changed, each made from their records as they were *after* the run wrote them;
- ``<version>.checkpoint.arrow`` (created once): every partition's summary as of that
  version, written when a reader had to apply ``CHECKPOINT_INTERVAL`` entries or more. An
  Arrow IPC file, a row per partition and a column per fact, LZ4-compressed: a year of
  hourly partitions is 0.13 MB (on S3, one GET per process) and decodes in milliseconds,
  where the same summaries as JSON (``<version>.checkpoint.json``, which earlier builds
  wrote and this one still reads) were 4.4 MB and took a tenth of a routine run;
- ``_last_checkpoint.json``: the latest checkpoint's version and format, a hint
  (overwritten). Its format tells an earlier build that it cannot read the checkpoint.

A reader reads the hint, that checkpoint and the entries after it until one is missing:
a bounded number of objects, however old the table. Versions older than the checkpoint
before the latest are deleted once a new checkpoint is written, so the folder stays small.

**A summary may lag the records, never lead them.** It is made from records already
written, so it never claims more than they hold; a run killed before it records leaves
the summary behind, and so does a run whose entry lands after a newer one. Every user of
the state therefore follows one rule: *the summary may tell that a partition needs no
work; whatever acts on a partition reads its records first* (and a record found behind
its summary is an error: records were lost). A lagging summary costs the next run one
look at the partition, which then records it again; it never publishes anything twice.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import threading
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.json as pajson

from airflow_provider_fscommit.core.compaction.fragmentation import Fragmentation
from airflow_provider_fscommit.core.compat import strict_zip
from airflow_provider_fscommit.core.errors import LedgerError
from airflow_provider_fscommit.core.formats.arrow_arrays import booleans, numbers
from airflow_provider_fscommit.core.gc_pause import gc_paused
from airflow_provider_fscommit.core.storage.conditional_writes import ConditionalStore
from airflow_provider_fscommit.core.storage.filesystem import (
    delete_if_exists,
    list_names,
    write_json,
)

STATE_DIR = "state"
CHECKPOINT_INTERVAL = 10
# 2: checkpoints are Arrow IPC files (1: JSON, still read). Entries are the same in both.
STATE_FORMAT = 2
_ARROW_FORMAT = 2
_HINT = "_last_checkpoint.json"
_ENTRY = re.compile(r"(\d{10})\.json")
_CHECKPOINT = re.compile(r"(\d{10})\.checkpoint\.(json|arrow)")
_CHECKPOINT_SUFFIX = {1: "checkpoint.json", _ARROW_FORMAT: "checkpoint.arrow"}
_APPEND_ATTEMPTS = 20
# Checkpoint path -> (its size and modification time, its summaries: a JSON checkpoint's,
# or an Arrow checkpoint's columns), for the last few tables read: a checkpoint is created
# once and never changed, so a file of the same size and time is the one decoded (a table
# state deleted and made again gets new times).
_DECODED: dict[str, tuple[tuple[int, object], dict[str, PartitionSummary] | CheckpointColumns]] = {}
# Rows made one at a time before the rest are made at once (:class:`CheckpointColumns`).
_ONE_BY_ONE = 64
_DECODED_CHECKPOINTS = 16
_DECODED_LOCK = threading.Lock()


class PartitionSummary(NamedTuple):
    """What the routine runs need of one partition's records, without reading them.

    A named tuple, not a dataclass: a table state's checkpoint holds one per partition (a
    year-old table 8,760), and a tuple is made from a checkpoint's row as it is, where a
    dataclass's instance needs a dictionary of its 22 facts (5 us a summary, against 0.3).

    ``settled_files`` counts the staged files published or quarantined: a partition whose
    sink log lists as many committed files has nothing left to publish (a file sink's log
    never drops an entry, so the settled files are among the logged ones).
    """

    settled_files: int = 0
    published_inputs: int = 0
    quarantined_files: int = 0
    cleaned_files: int = 0
    open_plans: int = 0
    latest_commit: int | None = None
    policies_current: bool = False
    policy_commits: int = 0
    published_files: int = 0
    published_bytes: int = 0
    published_rows: int = 0
    last_commit_ms: int | None = None
    last_origin: dict[str, Any] | None = None
    last_update_ms: int | None = None
    # When the latest compaction was published (None: nothing published, or a summary
    # older than this fact): how long its policies have been left to finish.
    published_ms: int | None = None
    expired_at_ms: int | None = None
    # The latest published compaction's facts, which a commit's summary carries.
    watermark_ms: int | None = None
    max_batch_id: int | None = None
    format: str | None = None
    # The compactions whose outputs the partition holds (None: a summary older than
    # rewrites, whose files are every compaction's), and whether files a rewrite replaced
    # wait for deletion (:mod:`.ledger`).
    published_compactions: int | None = None
    retire_pending: bool = False
    # What the policies of the latest policy commit said of it, by policy kind (e.g. the
    # snapshot an Iceberg table holds it in): kept for the status, never read here.
    receipts: dict[str, dict[str, Any]] | None = None

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> PartitionSummary:
        """A summary as the state log keeps it. Facts a newer release added are left out:
        one that would change what a summary allows bumps ``STATE_FORMAT`` instead, which
        a release before refuses to read."""
        try:
            return cls(**document)
        except TypeError:  # a fact this release does not know
            return cls(**{k: v for k, v in document.items() if k in _FIELDS})

    def to_dict(self) -> dict[str, Any]:
        """The summary as the state log keeps it: its fields, shallow (a checkpoint encodes
        one per partition of the table)."""
        return dict(strict_zip(self._fields, self))

    def fragmentation(self, target_file_size: int) -> Fragmentation:
        """The partition's published files against one compaction of their bytes. A
        summary older than rewrites does not count compactions: two files or more are
        taken as two compactions' (the records, once looked at, tell)."""
        return Fragmentation(
            self.published_files, self.published_bytes, self._compactions, target_file_size
        )

    def fragmented(self, target_file_size: int, sorted_table: bool) -> bool:
        """:meth:`fragmentation`'s verdict, asked of every partition of a table: the files
        of one compaction answer without building it."""
        if self._compactions < 2:
            return False
        return self.fragmentation(target_file_size).fragmented(sorted_table)

    @property
    def _compactions(self) -> int:
        if self.published_compactions is None:
            return 2 if self.published_files > 1 else 1
        return self.published_compactions

    def settles(self, staged_files: int) -> bool:
        """Whether nothing of ``staged_files`` committed files is left to publish, and no
        run left a plan open: the partition needs no compaction (a lagging summary says
        no, never yes)."""
        return self.open_plans == 0 and self.settled_files == staged_files

    def behind(self, newer: PartitionSummary) -> bool:
        """Whether these facts (from records) miss what ``newer`` (the state) recorded."""
        return (
            self.settled_files < newer.settled_files
            or (self.latest_commit or -1) < (newer.latest_commit or -1)
            or self.policy_commits < newer.policy_commits
            or (newer.expired_at_ms is not None and self.expired_at_ms is None)
        )


_FIELDS = frozenset(PartitionSummary._fields)


class CheckpointColumns:
    """An Arrow checkpoint as decoded: a row per partition and a column per fact, and each
    partition's row, for a step that asks something of every partition at once.

    Its summaries are made from their rows as they are asked for: a routine run of a
    year-old table asks for the few partitions with work (the columns settle the rest,
    :mod:`..status.settlement`), and making all 8,760 costs 25-45 ms. A row alone costs
    ~10 us (after ~2 ms to view the columns), a few times what it costs among all of them,
    so once ``_ONE_BY_ONE`` rows were asked (a step that walks every partition:
    expiration, a new checkpoint) the rest are made at once. Shared by every read of the
    same checkpoint in the process (it never changes).
    """

    def __init__(self, table: pa.Table, path: str, directory: str) -> None:
        self.table = table
        self.rows = {p: row for row, p in enumerate(table.column("partition").to_pylist())}
        self._path, self._directory = path, directory
        self._made: dict[str, PartitionSummary] = {}
        self._all: dict[str, PartitionSummary] | None = None
        self._facts: list[Callable[[int], Any]] | None = None

    def summary(self, partition: str) -> PartitionSummary:
        """The partition's summary (KeyError: the checkpoint has no row for it)."""
        if self._all is not None:
            return self._all[partition]
        made = self._made.get(partition)
        if made is None:
            row = self.rows[partition]
            if len(self._made) >= _ONE_BY_ONE:
                return self.summaries()[partition]
            facts = self._facts if self._facts is not None else self._row_facts()
            made = self._made[partition] = PartitionSummary._make(fact(row) for fact in facts)
        return made

    def summaries(self) -> dict[str, PartitionSummary]:
        """Every row's summary, by partition (made at once, then kept)."""
        if self._all is None:
            rows = self.table.num_rows
            with gc_paused():  # a summary per partition: thousands of a year-old table
                columns = []
                for name, default in _DEFAULTS.items():
                    if name not in self.table.column_names:
                        columns.append([default] * rows)
                        continue
                    values = self.table.column(name).to_pylist()
                    if name in _JSON_FIELDS:
                        values = [self._document(v) for v in values]
                    columns.append(values)
                summaries = map(PartitionSummary._make, strict_zip(*columns))
                self._all = dict(strict_zip(self.rows, summaries))
        return self._all

    def _row_facts(self) -> list[Callable[[int], Any]]:
        """Each fact of a row, in the summary's order, read from its column as numpy views
        where it is an integer or a flag (an Arrow scalar costs microseconds)."""
        facts = []
        for name, default in _DEFAULTS.items():
            if name not in self.table.column_names:
                facts.append(lambda row, default=default: default)
                continue
            column = self.table.column(name).combine_chunks()
            valid = booleans(column.is_valid()) if column.null_count else None
            if pa.types.is_int64(column.type) or pa.types.is_boolean(column.type):
                kind = int if pa.types.is_int64(column.type) else bool
                values = numbers(column) if kind is int else booleans(column)
                facts.append(_fact(values, valid, kind))
            elif name in _JSON_FIELDS:
                facts.append(lambda row, column=column: self._document(column[row].as_py()))
            else:
                facts.append(lambda row, column=column: column[row].as_py())
        self._facts = facts
        return facts

    def _document(self, text: str | None) -> Any:
        try:
            return None if text is None else json.loads(text)
        except ValueError as exc:
            raise LedgerError(_unreadable(self._path, exc, self._directory)) from None


class RowFacts:
    """Some partitions' facts in a checkpoint's columns, as numpy arrays in the order the
    partitions were given, for a verdict over all of them at once. ``found``: whether each
    has a row (where not, its facts are undefined); ``rows``: each one's row."""

    def __init__(self, checkpoint: CheckpointColumns, partitions: Sequence[str]) -> None:
        if not checkpoint.rows:
            raise ValueError("an empty checkpoint has no rows to read facts from")
        self.table, known = checkpoint.table, checkpoint.rows
        found = map(known.get, partitions, itertools.repeat(-1))
        self.rows = np.fromiter(found, np.int64, len(partitions))
        self.found = self.rows >= 0

    def has(self, names: Iterable[str]) -> bool:
        """Whether the checkpoint has each fact (an older one may lack some)."""
        return all(name in self.table.column_names for name in names)

    def number(self, name: str) -> np.ndarray:
        """An integer fact (a null's: undefined, see :meth:`present`)."""
        return numbers(self.table[name])[self.rows]

    def present(self, name: str) -> np.ndarray:
        """Whether a fact is not null."""
        return booleans(self.table[name].combine_chunks().is_valid())[self.rows]

    def flag(self, name: str) -> np.ndarray:
        """A flag (a null's: false)."""
        return booleans(self.table[name].combine_chunks())[self.rows] & self.present(name)


def _fact(values: np.ndarray, valid: np.ndarray | None, kind: type) -> Callable[[int], Any]:
    if valid is None:
        return lambda row: kind(values[row])
    return lambda row: kind(values[row]) if valid[row] else None


class PartitionSummaries(Mapping[str, PartitionSummary]):
    """A state read from an Arrow checkpoint: its rows (:class:`CheckpointColumns`), and
    the summaries entries after it changed (``changes``), which win. A row is made a
    summary where it is asked for: a routine run asks for few of a year-old table's."""

    def __init__(
        self, checkpoint: CheckpointColumns, changes: Mapping[str, PartitionSummary]
    ) -> None:
        self.checkpoint = checkpoint
        self.changes = dict(changes)

    def __getitem__(self, partition: str) -> PartitionSummary:
        changed = self.changes.get(partition)
        return self.checkpoint.summary(partition) if changed is None else changed

    def __contains__(self, partition: object) -> bool:
        return partition in self.changes or partition in self.checkpoint.rows

    def __iter__(self) -> Iterator[str]:
        rows = iter(self.checkpoint.rows)
        if not self.changes:
            return rows
        return itertools.chain(self.changes, itertools.filterfalse(self.changes.__contains__, rows))

    def __len__(self) -> int:
        return len(self.checkpoint.rows) + sum(p not in self.checkpoint.rows for p in self.changes)

    def items(self) -> ItemsView[str, PartitionSummary]:
        return self._whole().items()

    def values(self) -> ValuesView[PartitionSummary]:
        return self._whole().values()

    def _whole(self) -> dict[str, PartitionSummary]:
        """Every partition's summary: the rows made at once, then the changes over them."""
        return {**self.checkpoint.summaries(), **self.changes}


def _updated(
    partitions: Mapping[str, PartitionSummary], changes: Mapping[str, PartitionSummary]
) -> Mapping[str, PartitionSummary]:
    """``partitions`` with ``changes`` over them, a checkpoint's rows still unmade."""
    if isinstance(partitions, PartitionSummaries):
        return PartitionSummaries(partitions.checkpoint, {**partitions.changes, **changes})
    return {**partitions, **changes}


@dataclass(frozen=True)
class TableState:
    """Every partition's summary at one version of the state log.

    ``version`` -1: the table has no state log yet (a table of today's layout, read
    partition by partition, or a new table). ``errors``: partitions whose records could
    not be read when the state was made from them (never in the state log itself).

    A state read from an Arrow checkpoint holds its ``partitions`` as
    :class:`PartitionSummaries`: the checkpoint's rows, each made a summary when asked,
    under the summaries of the entries after it.
    """

    version: int
    partitions: Mapping[str, PartitionSummary]
    checkpoint_version: int = -1
    errors: dict[str, str] = field(default_factory=dict)

    def get(self, partition: str) -> PartitionSummary | None:
        return self.partitions.get(partition)

    @property
    def columns(self) -> CheckpointColumns | None:
        """The Arrow checkpoint the state was read from, for a step that asks something of
        every partition at once (:mod:`..status.settlement`); its rows are the summaries of
        ``partitions`` but for those of :attr:`changed`. None: no Arrow checkpoint read."""
        partitions = self.partitions
        return partitions.checkpoint if isinstance(partitions, PartitionSummaries) else None

    @property
    def changed(self) -> frozenset[str]:
        """The partitions whose summary is not their checkpoint row: entries after the
        checkpoint, or this process's appends (none without :attr:`columns`)."""
        partitions = self.partitions
        changes = partitions.changes if isinstance(partitions, PartitionSummaries) else {}
        return frozenset(changes)

    @property
    def entries_since_checkpoint(self) -> int:
        return self.version - self.checkpoint_version


class StateLog:
    """Reads and appends the state log of one table's ledger (``<ledger>/state``)."""

    def __init__(self, filesystem: pafs.FileSystem, ledger_root: str) -> None:
        self.filesystem = filesystem
        self.directory = f"{ledger_root}/{STATE_DIR}"

    def read(self) -> TableState | None:
        """The latest state (None: the table has no state log yet)."""
        hinted = self._hinted_checkpoint()
        read = None if hinted is None else self._read_checkpoint(hinted, required=False)
        checkpoint = hinted
        if read is None:  # no hint yet, or its checkpoint was cleaned away meanwhile
            checkpoint = self._listed_checkpoint()
            if checkpoint is None:
                return None
            read = self._read_checkpoint(checkpoint, required=True)
        assert read is not None and checkpoint is not None
        version = checkpoint[0]
        if isinstance(read, CheckpointColumns):
            state = TableState(version, PartitionSummaries(read, {}), version)
        else:
            state = TableState(version, dict(read), version)
        return self._forward(state)

    def _read_checkpoint(
        self, checkpoint: tuple[int, int], required: bool
    ) -> dict[str, PartitionSummary] | CheckpointColumns | None:
        """A checkpoint's summaries (``checkpoint``: its version and format), read and
        decoded once per process: a run reads the state several times (its dry run, under
        the lock, the committer, the completeness step), and a year-old table's checkpoint
        holds thousands (on S3 a GET each time); a look at its size and time tells it is
        the same. An Arrow checkpoint's are its columns, each row made a summary when
        asked."""
        path = self._checkpoint_path(*checkpoint)
        info = self.filesystem.get_file_info(path)
        if info.type == pafs.FileType.NotFound and not required:
            return None
        stamp = (info.size, info.mtime_ns)
        known = _DECODED.get(path)
        if known is None or known[0] != stamp:
            raw = self._read_bytes(path, required)
            if raw is None:
                return None
            if checkpoint[1] == _ARROW_FORMAT:
                decoded: dict[str, PartitionSummary] | CheckpointColumns = self._columns(path, raw)
            else:
                with gc_paused():  # a summary per partition: thousands of a year-old table
                    decoded = self._summaries(self._decode(path, raw), path)
            known = (stamp, decoded)
            with _DECODED_LOCK:
                _DECODED[path] = known
                while len(_DECODED) > _DECODED_CHECKPOINTS:
                    del _DECODED[next(iter(_DECODED))]
        return known[1]

    def _forward(self, state: TableState) -> TableState:
        """``state`` with every entry after its version applied, in version order."""
        version, partitions = state.version, state.partitions
        while True:
            path = self._entry_path(version + 1)
            document = self._read(path, required=False)
            if document is None:
                return TableState(version, partitions, state.checkpoint_version)
            version += 1
            partitions = _updated(partitions, self._summaries(document, path))

    def create_checkpoint(self, state: TableState, store: ConditionalStore) -> None:
        """Make ``state`` the one readers start from (created once per version)."""
        # Taken already: the same version's state, by another run.
        path = self._checkpoint_path(state.version, _ARROW_FORMAT)
        store.create(path, _encode_checkpoint(state.version, state.partitions))
        hint = {"format": STATE_FORMAT, "version": state.version}
        write_json(self.filesystem, f"{self.directory}/{_HINT}", hint)

    def append(
        self,
        changes: Mapping[str, PartitionSummary],
        base: TableState,
        store: ConditionalStore,
    ) -> TableState:
        """Add the next version with ``changes``; a version taken meanwhile moves it on.

        Another run's entry that lands first is applied before ours, so ours (made from
        the records after that run's, or before: then it lags, which is allowed) wins.
        A checkpoint follows when the state read took ``CHECKPOINT_INTERVAL`` entries.
        """
        state = base
        for _ in range(_APPEND_ATTEMPTS):
            version = state.version + 1
            if store.create(self._entry_path(version), _encode(version, changes)) is not None:
                state = TableState(
                    version, _updated(state.partitions, changes), state.checkpoint_version
                )
                if state.entries_since_checkpoint >= CHECKPOINT_INTERVAL:
                    self.create_checkpoint(state, store)
                    self._clean(base.checkpoint_version)
                return state
            state = self._forward(state)
        raise LedgerError(
            f"could not add an entry to the table state {self.directory}: other runs kept "
            "adding entries at the same time; rerun"
        )

    def _clean(self, previous_checkpoint: int) -> None:
        """Delete versions older than the checkpoint before the new one: a reader that
        took the hint a moment ago still finds its checkpoint and entries."""
        for name in list_names(self.filesystem, self.directory):
            match = _ENTRY.fullmatch(name) or _CHECKPOINT.fullmatch(name)
            if match and int(match.group(1)) < previous_checkpoint:
                delete_if_exists(self.filesystem, f"{self.directory}/{name}")

    def _hinted_checkpoint(self) -> tuple[int, int] | None:
        """The version and format of the checkpoint the hint names (a hint without a
        format is an earlier build's, whose checkpoints are JSON)."""
        hint = self._read(f"{self.directory}/{_HINT}", required=False)
        version = None if hint is None else hint.get("version")
        if not isinstance(version, int):
            return None
        assert hint is not None
        return version, _ARROW_FORMAT if hint.get("format", 1) >= _ARROW_FORMAT else 1

    def _listed_checkpoint(self) -> tuple[int, int] | None:
        """The latest checkpoint's version and format as a listing of the (small) folder
        finds it."""
        found = [
            (int(match.group(1)), _ARROW_FORMAT if match.group(2) == "arrow" else 1)
            for match in map(_CHECKPOINT.fullmatch, list_names(self.filesystem, self.directory))
            if match
        ]
        return max(found, default=None)

    def _read(self, path: str, required: bool) -> dict[str, Any] | None:
        raw = self._read_bytes(path, required)
        return None if raw is None else self._decode(path, raw)

    def _read_bytes(self, path: str, required: bool) -> bytes | None:
        try:
            with self.filesystem.open_input_stream(path) as stream:
                return stream.read()
        except FileNotFoundError:
            if not required:
                return None
            raise LedgerError(
                f"the table state {path} is missing; restore it from a backup, or delete "
                f"{self.directory}: the next run that changes the table makes it again from "
                "the partitions' records"
            ) from None

    def _decode(self, path: str, raw: bytes) -> dict[str, Any]:
        try:
            document = json.loads(raw)
        except ValueError as exc:
            raise LedgerError(_unreadable(path, exc, self.directory)) from None
        if not isinstance(document, dict):
            raise LedgerError(_unreadable(path, "not a JSON object", self.directory))
        _check_format(path, document.get("format", STATE_FORMAT))
        return document

    def _columns(self, path: str, raw: bytes) -> CheckpointColumns:
        """An Arrow checkpoint's columns (a fact the file lacks takes its default; one it
        adds is left out, as in :meth:`PartitionSummary.from_dict`)."""
        try:
            table = pa.ipc.open_file(pa.py_buffer(raw)).read_all()
            _check_format(path, int((table.schema.metadata or {}).get(b"format", b"0")))
            return CheckpointColumns(table, path, self.directory)
        except (pa.ArrowException, KeyError, TypeError, ValueError) as exc:
            raise LedgerError(_unreadable(path, exc, self.directory)) from None

    def _summaries(self, document: dict[str, Any], path: str) -> dict[str, PartitionSummary]:
        try:
            return {p: PartitionSummary.from_dict(s) for p, s in document["partitions"].items()}
        except (KeyError, TypeError, AttributeError) as exc:
            raise LedgerError(_unreadable(path, exc, self.directory)) from None

    def _entry_path(self, version: int) -> str:
        return f"{self.directory}/{version:010d}.json"

    def _checkpoint_path(self, version: int, format_: int) -> str:
        return f"{self.directory}/{version:010d}.{_CHECKPOINT_SUFFIX[format_]}"


def _encode(version: int, partitions: Mapping[str, PartitionSummary]) -> bytes:
    document = {
        "format": STATE_FORMAT,
        "version": version,
        "partitions": {p: s.to_dict() for p, s in sorted(partitions.items())},
    }
    return _json_text(document).encode()


def _encode_checkpoint(version: int, partitions: Mapping[str, PartitionSummary]) -> bytes:
    """Every partition's summary as an Arrow IPC file: a row per partition (sorted), a
    column per fact, the facts that are documents (an origin, receipts) as JSON text.

    The summaries go through JSON lines and Arrow's JSON reader into columns: converting
    Python values to Arrow would import pandas (:mod:`..formats.arrow_arrays`).
    """
    lines = []
    for name, summary in sorted(partitions.items()):
        row = summary.to_dict()
        for fact in _JSON_FIELDS:
            if row[fact] is not None:
                row[fact] = _json_text(row[fact])
        row["partition"] = name
        lines.append(_json_text(row))
    if lines:
        table = pajson.read_json(
            io.BytesIO("\n".join(lines).encode()),
            read_options=pajson.ReadOptions(use_threads=False),
            parse_options=pajson.ParseOptions(
                explicit_schema=_CHECKPOINT_SCHEMA, unexpected_field_behavior="error"
            ),
        ).select(_CHECKPOINT_SCHEMA.names)
    else:
        table = _CHECKPOINT_SCHEMA.empty_table()
    metadata = {"format": str(_ARROW_FORMAT), "version": str(version)}
    table = table.replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, options=_IPC_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _json_text(document: Any) -> str:
    """The state's JSON, compact with its keys sorted: the same facts, the same bytes."""
    return json.dumps(document, separators=(",", ":"), sort_keys=True)


def _column_type(annotation: str) -> pa.DataType:
    """A summary fact's column: its annotation's type (documents as JSON text). A fact of
    another type fails here, at import, rather than in a checkpoint."""
    kinds = {"bool": pa.bool_(), "int": pa.int64(), "str": pa.string(), "dict": pa.string()}
    return kinds[annotation.split("[")[0].split(" ")[0]]


# LZ4: a year of hourly partitions in 0.13 MB instead of 1.6 MB (on S3, one GET per
# process), decompressed in 0.4 ms.
_IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4" if pa.Codec.is_available("lz4") else None)
# Each fact's annotation as written (NamedTuple keeps the postponed ones as ForwardRefs).
_SUMMARY_TYPES = {
    name: getattr(kind, "__forward_arg__", kind)
    for name, kind in PartitionSummary.__annotations__.items()
}
_COLUMN_TYPES = {name: _column_type(_SUMMARY_TYPES[name]) for name in PartitionSummary._fields}
_JSON_FIELDS = frozenset(name for name in _COLUMN_TYPES if _SUMMARY_TYPES[name].startswith("dict"))
_CHECKPOINT_SCHEMA = pa.schema([("partition", pa.string()), *_COLUMN_TYPES.items()])
_DEFAULTS = {name: PartitionSummary._field_defaults[name] for name in PartitionSummary._fields}


def _check_format(path: str, format_: int) -> None:
    if format_ > STATE_FORMAT:
        raise LedgerError(
            f"the table state {path} is of a newer format than this release reads; "
            "upgrade airflow-provider-fscommit on every worker that runs this table"
        )


def _unreadable(path: str, exc: BaseException | str, directory: str) -> str:
    return (
        f"the table state {path} is unreadable ({exc}); restore it from a backup, or "
        f"delete {directory}: the next run that changes the table makes it again from the "
        "partitions' records"
    )
