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
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.json as pajson

from airflow_provider_fscommit.core.errors import SinkLogError
from airflow_provider_fscommit.core.filesystem import resolve_filesystem
from airflow_provider_fscommit.core.metadata_log import LogFile, list_log, split_version

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


@dataclass(frozen=True)
class SinkLogSnapshot:
    """The committed files at one moment: columns ``path``, ``size``, ``modificationTime``."""

    staging_path: str
    latest_batch: int | None
    files: pa.Table


@dataclass
class _ParsedCompact:
    log_file: LogFile
    entries: pa.Table
    tail: bytes


class FileSinkLog:
    """Reads a staging directory's sink log, re-parsing only what changed since last read."""

    def __init__(self, staging_uri: str) -> None:
        self.staging_uri = staging_uri
        self._filesystem, self._root = resolve_filesystem(staging_uri)
        self._log_dir = f"{self._root.rstrip('/')}/{SINK_LOG_DIR}"
        self._compact: _ParsedCompact | None = None
        self._deltas: dict[int, tuple[LogFile, pa.Table]] = {}

    def read(self) -> SinkLogSnapshot:
        """The currently committed files.

        The query may compact and purge log files between our listing and our reads; a
        file that vanished that way means the listing is stale, so it is simply redone.
        """
        attempts = 3
        while True:
            try:
                return self._read()
            except FileNotFoundError:
                attempts -= 1
                if not attempts:
                    raise SinkLogError(
                        f"files of {self._log_dir} kept disappearing while being read; "
                        "something other than the streaming query is deleting the sink log"
                    ) from None

    def _read(self) -> SinkLogSnapshot:
        listing = list_log(self._filesystem, self._log_dir)
        if listing is None:
            self._raise_missing_log()
        if not listing:
            return SinkLogSnapshot(self.staging_uri, None, _ENTRY_SCHEMA.empty_table())
        latest = listing[-1].batch_id
        compacts = [f for f in listing if f.compact]
        deltas = {f.batch_id: f for f in listing if not f.compact}
        start = compacts[-1].batch_id + 1 if compacts else 0
        missing = [b for b in range(start, latest + 1) if b not in deltas]
        if missing:
            raise SinkLogError(
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
            if b >= start and cached[0] == deltas.get(b)
        }
        for batch_id in range(start, latest + 1):
            if batch_id not in self._deltas:
                log_file = deltas[batch_id]
                body = self._read_body(self._read_bytes(log_file), log_file)
                self._deltas[batch_id] = (log_file, _parse_lines(body, log_file.path))
        tables = [self._compact.entries] if self._compact else []
        tables += [self._deltas[b][1] for b in range(start, latest + 1)]
        return SinkLogSnapshot(self.staging_uri, latest, _live_files(tables))

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
        if old is not None and old.log_file == log_file:
            return
        if old is not None and log_file.batch_id > old.log_file.batch_id:
            start = old.log_file.size - len(old.tail)
            with self._filesystem.open_input_file(log_file.path) as handle:
                handle.seek(start)
                appended = handle.read()
            if appended.startswith(old.tail):
                added = _parse_lines(appended[len(old.tail) :], log_file.path)
                entries = pa.concat_tables([old.entries, added])
                self._compact = _ParsedCompact(log_file, entries, appended[-_TAIL_CHECK_BYTES:])
                return
        content = self._read_bytes(log_file)
        entries = _parse_lines(self._read_body(content, log_file), log_file.path)
        self._compact = _ParsedCompact(log_file, entries, content[-_TAIL_CHECK_BYTES:])

    def _read_bytes(self, log_file: LogFile) -> bytes:
        with self._filesystem.open_input_stream(log_file.path) as stream:
            return stream.read()

    @staticmethod
    def _read_body(content: bytes, log_file: LogFile) -> bytes:
        return split_version(content, log_file.path, _SINK_LOG_VERSION, SinkLogError)[1]


def _parse_lines(lines: bytes, path: str) -> pa.Table:
    """Parse JSON entry lines (blank lines are fine: Spark separates entries by newlines)."""
    if not lines.strip():
        return _ENTRY_SCHEMA.empty_table()
    try:
        return pajson.read_json(pa.BufferReader(lines), parse_options=_PARSE_OPTIONS)
    except pa.ArrowInvalid as exc:
        raise SinkLogError(
            f"{path} is not a valid sink log file ({exc}); it is corrupt or truncated: "
            "restore _spark_metadata from a backup"
        ) from None


def _live_files(tables: list[pa.Table]) -> pa.Table:
    """Apply ``delete`` actions as Spark's compaction does: a deleted path is gone."""
    entries = pa.concat_tables(tables) if tables else _ENTRY_SCHEMA.empty_table()
    is_delete = pc.equal(entries["action"], "delete")
    if pc.any(is_delete).as_py():
        deleted = pc.unique(entries.filter(is_delete)["path"])
        entries = entries.filter(pc.invert(pc.is_in(entries["path"], value_set=deleted)))
    return entries.select(["path", "size", "modificationTime"])
