"""The file sink log (``<staging>/_spark_metadata``): which files Spark has committed.

Spark's file sink writes part files straight into the output directory and then records
them in this log; a file that is on disk but not in the log belongs to a failed batch (an
*orphan*) and must never be read. Spark's own readers of the directory read the log, and
so do we.

Layout: batch ``N`` is a delta file ``N``; every ``compactInterval``-th batch is written as
``N.compact`` holding all live entries so far, after which older deltas may be deleted.
The interval is not assumed: the newest compact file and the deltas after it are read,
and any missing delta in between is an error. Entries are JSON lines (``path`` is an
absolute, percent-encoded URI), ``action`` is ``add`` or ``delete``.

Reads are incremental: a :class:`FileSinkLog` keeps what it parsed. A new compact file
is the old one plus the lines of the batches since (unless a delete removed lines), so
only the appended tail is parsed once its prefix is verified; unchanged deltas are kept.
Each parsed file also keeps its per-directory summary (files, bytes, first modification),
so a re-read merges a few small tables instead of regrouping every entry of the log: on
a million-entry log that is what makes the sensor's and the sweep's polls cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.json as pajson

from airflow_provider_fscommit.core.errors import SinkLogError
from airflow_provider_fscommit.core.formats.arrow_arrays import numbers, numpy_array, string_array
from airflow_provider_fscommit.core.spark.metadata_log import (
    LogChanged,
    LogFile,
    list_log,
    read_consistently,
    split_version,
)
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem

SINK_LOG_DIR = "_spark_metadata"
_SINK_LOG_VERSION = 1
_TAIL_CHECK_BYTES = 4096
_ENTRY_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("size", pa.int64()),
        ("modificationTime", pa.int64()),
        ("action", pa.string()),
    ]
)
_PARSE_OPTIONS = pajson.ParseOptions(
    explicit_schema=_ENTRY_SCHEMA, unexpected_field_behavior="ignore"
)


# The scalar compared with is built from buffers: converting a Python value would import
# pandas on every fresh process's first read of the log (:mod:`..formats.arrow_arrays`).
_DELETE = string_array(["delete"])[0]
_FILE_COLUMNS = ["path", "size", "modificationTime", "dir"]
_HEADER_BYTES = 64  # the "v1" line, with room to report a malformed one
_SUMMARY_SCHEMA = pa.schema(
    [
        ("dir", pa.string()),
        ("files", pa.int64()),
        ("bytes", pa.int64()),
        ("first_modified", pa.int64()),
        ("last_modified", pa.int64()),
    ]
)


@dataclass(frozen=True)
class SinkLogSnapshot:
    """The committed files at one moment.

    ``files`` has columns ``path``, ``size``, ``modificationTime`` and ``dir`` (the URI of
    the file's directory, dictionary-encoded); ``directories`` summarizes it per ``dir``:
    ``files``, ``bytes``, ``first_modified``, ``last_modified``.
    """

    staging_path: str
    latest_batch: int | None
    files: pa.Table
    directories: pa.Table


@dataclass(frozen=True)
class _Parsed:
    """One parsed log file: its entries, whether any is a delete, and their summary."""

    log_file: LogFile
    entries: pa.Table
    has_deletes: bool
    directories: pa.Table

    @classmethod
    def of(cls, log_file: LogFile, entries: pa.Table) -> _Parsed:
        entries = _with_directory(entries)
        has_deletes = bool(pc.any(pc.equal(entries["action"], _DELETE)).as_py())
        return cls(log_file, entries, has_deletes, _summarize(entries))


@dataclass(frozen=True)
class _ParsedCompact:
    parsed: _Parsed
    tail: bytes


class FileSinkLog:
    """Reads a staging directory's sink log, re-parsing only what changed since last read."""

    def __init__(self, staging_uri: str) -> None:
        self.staging_uri = staging_uri
        self._filesystem, self._root = resolve_filesystem(staging_uri)
        self._log_dir = f"{self._root.rstrip('/')}/{SINK_LOG_DIR}"
        self._compact: _ParsedCompact | None = None
        self._deltas: dict[int, _Parsed] = {}
        # The last snapshot and the listing it was made from: an unchanged listing returns
        # the same object, so that readers above it can tell nothing changed by identity
        # (a run reads the log several times: its dry run, its run, the committer).
        self._last: tuple[list[LogFile], SinkLogSnapshot] | None = None

    def read(self) -> SinkLogSnapshot:
        """The currently committed files.

        The query may compact and purge log files between our listing and our reads, and
        a listing can catch a compaction half-way (the new compact file not yet seen, the
        deltas it replaced already deleted); either way the log is simply looked at again.
        """
        return read_consistently(self._read, SinkLogError)

    def _read(self) -> SinkLogSnapshot:
        listing = list_log(self._filesystem, self._log_dir)
        if listing is None:
            self._raise_missing_log()
        if not listing:
            return _snapshot(self.staging_uri, None, [])
        if self._last is not None and self._last[0] == listing:
            return self._last[1]
        latest = listing[-1].batch_id
        compacts = [f for f in listing if f.compact]
        deltas = {f.batch_id: f for f in listing if not f.compact}
        start = compacts[-1].batch_id + 1 if compacts else 0
        missing = [b for b in range(start, latest + 1) if b not in deltas]
        if missing:
            raise LogChanged(
                f"{self._log_dir} is missing batch file(s) {missing[:5]} between "
                f"{'compact ' + str(start - 1) if compacts else 'batch 0'} and batch {latest}; "
                "the sink log is incomplete (a partial copy or manual deletion): restore "
                "_spark_metadata completely before committing"
            )
        if compacts:
            self._load_compact(compacts[-1])
        else:
            self._compact = None
        self._deltas = {
            b: cached
            for b, cached in self._deltas.items()
            if b >= start and cached.log_file == deltas.get(b)
        }
        for batch_id in range(start, latest + 1):
            if batch_id not in self._deltas:
                log_file = deltas[batch_id]
                body = self._read_body(self._read_buffer(log_file), log_file)
                self._deltas[batch_id] = _Parsed.of(log_file, _parse_lines(body, log_file.path))
        parsed = [self._compact.parsed] if self._compact else []
        parsed += [self._deltas[b] for b in range(start, latest + 1)]
        snapshot = _snapshot(self.staging_uri, latest, parsed)
        self._last = (listing, snapshot)
        return snapshot

    def require(self) -> None:
        """Refuse a staging path without a sink log, as :meth:`read` does, in one request."""
        if self._filesystem.get_file_info(self._log_dir).type != pafs.FileType.Directory:
            self._raise_missing_log()

    def _raise_missing_log(self) -> None:
        if self._filesystem.get_file_info(self._root).type == pafs.FileType.NotFound:
            raise SinkLogError(
                f"staging directory {self.staging_uri} does not exist; point the staging "
                "path at the streaming query's file sink path (its option 'path')"
            )
        raise SinkLogError(
            f"{self.staging_uri} has no {SINK_LOG_DIR} log, so it is not the output of a "
            "Spark file sink (or the log was deleted); point the staging path at the "
            "streaming query's output directory"
        )

    def _load_compact(self, log_file: LogFile) -> None:
        old = self._compact
        if old is not None and old.parsed.log_file == log_file:
            return
        if old is not None and log_file.batch_id > old.parsed.log_file.batch_id:
            start = old.parsed.log_file.size - len(old.tail)
            with self._filesystem.open_input_file(log_file.path) as handle:
                handle.seek(start)
                appended = handle.read()
            if appended.startswith(old.tail):
                added = _Parsed.of(
                    log_file, _parse_lines(pa.py_buffer(appended[len(old.tail) :]), log_file.path)
                )
                parsed = _Parsed(
                    log_file,
                    pa.concat_tables([old.parsed.entries, added.entries]),
                    old.parsed.has_deletes or added.has_deletes,
                    _merge_summaries([old.parsed.directories, added.directories]),
                )
                self._compact = _ParsedCompact(parsed, appended[-_TAIL_CHECK_BYTES:])
                return
        content = self._read_buffer(log_file)
        entries = _parse_lines(self._read_body(content, log_file), log_file.path)
        tail = content[max(0, content.size - _TAIL_CHECK_BYTES) :].to_pybytes()
        self._compact = _ParsedCompact(_Parsed.of(log_file, entries), tail)

    def _read_buffer(self, log_file: LogFile) -> pa.Buffer:
        """The whole file as an Arrow buffer: not copied into a Python ``bytes`` object."""
        with self._filesystem.open_input_stream(log_file.path) as stream:
            return stream.read_buffer()

    @staticmethod
    def _read_body(content: pa.Buffer, log_file: LogFile) -> pa.Buffer:
        """The entry lines after the version header, a zero-copy slice of ``content``."""
        head = content[:_HEADER_BYTES].to_pybytes()
        newline = head.find(b"\n")
        header = head[: newline + 1] if newline >= 0 else head
        split_version(header, log_file.path, _SINK_LOG_VERSION, SinkLogError)
        return content[newline + 1 :] if newline >= 0 else content[content.size :]


def _parse_lines(lines: pa.Buffer, path: str) -> pa.Table:
    """Parse JSON entry lines (blank lines are fine: Spark separates entries by newlines)."""
    if lines.size == 0:
        return _ENTRY_SCHEMA.empty_table()
    try:
        entries = pajson.read_json(pa.BufferReader(lines), parse_options=_PARSE_OPTIONS)
    except pa.ArrowInvalid as exc:
        raise SinkLogError(
            f"{path} is not a valid sink log file ({exc}); it is corrupt or truncated: "
            "restore _spark_metadata from a backup"
        ) from None
    # Spark writes every field of every entry; a line without one was not written by it.
    incomplete = [name for name in _ENTRY_SCHEMA.names if entries[name].null_count]
    if incomplete:
        raise SinkLogError(
            f"{path} has entries without {', '.join(repr(n) for n in incomplete)}, so it is "
            "not a sink log written by Spark (or it is corrupt): restore _spark_metadata "
            "from a backup"
        )
    return entries


def _snapshot(staging_uri: str, latest: int | None, parsed: list[_Parsed]) -> SinkLogSnapshot:
    """The live files of the parsed log files, and their per-directory summary."""
    if not parsed:
        files = _with_directory(_ENTRY_SCHEMA.empty_table()).select(_FILE_COLUMNS)
        return SinkLogSnapshot(staging_uri, latest, files, _SUMMARY_SCHEMA.empty_table())
    # Each file's ``dir`` dictionary is its own; unifying them costs a pass over every
    # entry, so only the rare path that must group the concatenation does it.
    entries = pa.concat_tables([p.entries for p in parsed])
    if any(p.has_deletes for p in parsed):
        entries = _apply_deletes(entries).unify_dictionaries()
        directories = _summarize(entries)
    else:
        directories = _merge_summaries([p.directories for p in parsed])
    files = entries.select(_FILE_COLUMNS)
    return SinkLogSnapshot(staging_uri, latest, files, directories)


def _apply_deletes(entries: pa.Table) -> pa.Table:
    """Apply ``delete`` actions as Spark's compaction does: a deleted path is gone."""
    is_delete = pc.equal(entries["action"], _DELETE)
    deleted = pc.unique(entries.filter(is_delete)["path"])
    return entries.filter(pc.invert(pc.is_in(entries["path"], value_set=deleted)))


def _with_directory(entries: pa.Table) -> pa.Table:
    """Add each file's directory (the URI before its last ``/``), dictionary-encoded."""
    directories = pc.replace_substring_regex(entries["path"], pattern=r"/[^/]*$", replacement="")
    return entries.append_column("dir", pc.dictionary_encode(directories))


def _summarize(entries: pa.Table) -> pa.Table:
    """Files, bytes, first and last modification per directory (``delete`` lines aside)."""
    adds = entries.filter(pc.not_equal(entries["action"], _DELETE)).unify_dictionaries()
    modified = numbers(adds["modificationTime"])
    return _group(
        adds["dir"].combine_chunks(),
        np.ones(adds.num_rows, np.int64),
        numbers(adds["size"]),
        modified,
        modified,
    )


def _merge_summaries(summaries: list[pa.Table]) -> pa.Table:
    """One summary of several: the same directory's counts and bytes add up."""
    if len(summaries) == 1:
        return summaries[0]
    merged = pa.concat_tables(summaries)
    return _group(
        merged["dir"].combine_chunks(),
        numbers(merged["files"]),
        numbers(merged["bytes"]),
        numbers(merged["first_modified"]),
        numbers(merged["last_modified"]),
    )


def _group(
    directories: pa.Array,
    files: np.ndarray,
    sizes: np.ndarray,
    first_modified: np.ndarray,
    last_modified: np.ndarray,
) -> pa.Table:
    """Sum ``files`` and ``sizes``, take the least ``first_modified`` and the greatest
    ``last_modified`` per directory.

    numpy over dictionary indices, not Arrow's ``group_by``: loading its engine
    (``pyarrow.acero``) imports pandas (:mod:`..formats.arrow_arrays`).
    """
    if len(directories) == 0:
        return _SUMMARY_SCHEMA.empty_table()
    if not pa.types.is_dictionary(directories.type):
        directories = pc.dictionary_encode(directories)
    group = numbers(directories.indices)
    groups = len(directories.dictionary)
    counts = np.zeros(groups, np.int64)
    np.add.at(counts, group, files)
    total = np.zeros(groups, np.int64)
    np.add.at(total, group, sizes)
    first = np.full(groups, np.iinfo(np.int64).max)
    np.minimum.at(first, group, first_modified)
    last = np.full(groups, np.iinfo(np.int64).min)
    np.maximum.at(last, group, last_modified)
    # A filtered array keeps its whole dictionary: directories of delete lines only.
    present = np.flatnonzero(counts)
    return pa.Table.from_arrays(
        [
            directories.dictionary.take(numpy_array(present)),
            numpy_array(counts[present]),
            numpy_array(total[present]),
            numpy_array(first[present]),
            numpy_array(last[present]),
        ],
        schema=_SUMMARY_SCHEMA,
    )
