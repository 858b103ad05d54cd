"""The streaming query's checkpoint: its latest committed batch and its safe watermark.

A micro-batch N is planned in ``offsets/N`` (with the watermark it runs with, in
``batchWatermarkMs``) and finished in ``commits/N`` (with ``nextBatchWatermarkMs``, the
watermark batch N+1 will run with). The *safe* watermark is ``batchWatermarkMs`` of the
latest committed batch: it is what Spark has actually applied to data that is now in the
sink. ``nextBatchWatermarkMs`` is one batch too optimistic, since batch N+1 may still be
running and write rows between the two watermarks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.errors import CheckpointError
from airflow_provider_fscommit.core.spark.metadata_log import (
    LogChanged,
    LogFile,
    list_log,
    read_consistently,
    split_version,
)
from airflow_provider_fscommit.core.storage.filesystem import resolve_filesystem

# As Spark 4.3's OffsetSeqLog and CommitLog declare them. Spark 3.5 writes v1 of both; 4.x
# writes offsets v2 (sourceMetadataInfo, then `sourceId:offset` lines) when
# spark.sql.streaming.offsetLog.formatVersion=2 (4.3 does, 4.0 does not know the setting),
# and commits v2 (state ids) with stateStore.checkpointFormatVersion=2, v3 (sink
# metadata) later. Every version keeps the watermark field of its first JSON line.
_MAX_OFFSET_VERSION = 2
_MAX_COMMIT_VERSION = 3


@dataclass(frozen=True)
class CheckpointState:
    """What the checkpoint says about progress, read at one moment."""

    path: str
    latest_committed_batch: int | None
    latest_planned_batch: int | None
    watermark_ms: int | None
    next_batch_watermark_ms: int | None
    last_commit_time_ms: int | None

    @property
    def has_watermark(self) -> bool:
        """False when no committed batch carries a watermark (e.g. no ``withWatermark``)."""
        return bool(self.watermark_ms or self.next_batch_watermark_ms)

    @property
    def watermark_advanced(self) -> bool:
        """Whether the safe watermark has left 0.

        Spark runs a query's first batch with watermark 0, and every batch after it too
        until a batch has seen event times; until then no partition is complete.
        """
        return bool(self.watermark_ms)


def read_checkpoint(checkpoint_uri: str) -> CheckpointState:
    """Read the latest committed batch and its watermark from a checkpoint directory."""
    return CheckpointReader(checkpoint_uri).read()


class CheckpointReader:
    """Reads one checkpoint again and again, each batch file once.

    Spark writes ``offsets/N`` and ``commits/N`` once (to a temporary name, then renamed)
    and only ever deletes them afterwards, so what a file says is kept by its name, size
    and modification time: a look at a live checkpoint costs two listings (as long as
    ``minBatchesToRetain``, 100 by default, whatever the stream's age) and the files of
    the batches that are new since the last look. Not thread-safe: one thread at a time.
    """

    def __init__(self, checkpoint_uri: str) -> None:
        self.checkpoint_uri = checkpoint_uri
        self._metadata: dict[LogFile, dict[str, Any]] = {}
        # The last state read and the listings it was read from: asked about that state
        # (when its watermark passed a time, since when it holds), the listings answer, and
        # the checkpoint is listed once per look rather than once per question.
        self._listed: tuple[CheckpointState, list[LogFile], list[LogFile]] | None = None
        # The last answer to "since when has the watermark stood", and the state it is of:
        # a triggerer's waiting partitions of one table all ask it of the same look.
        self._since: tuple[CheckpointState, int | None] | None = None

    def read(self) -> CheckpointState:
        """The latest committed batch and its safe watermark, now."""
        # Resolved at each look: the S3 settings in effect may differ between looks.
        self._filesystem, self._root = resolve_filesystem(self.checkpoint_uri)
        if self._filesystem.get_file_info(self._root).type != pafs.FileType.Directory:
            raise CheckpointError(
                f"checkpoint {self.checkpoint_uri} does not exist; point the checkpoint path "
                "at the streaming query's checkpointLocation"
            )
        return read_consistently(self._read, CheckpointError)

    def _read(self) -> CheckpointState:
        # Commits are listed before offsets: offsets/N is written before commits/N, so every
        # commit listed has its offsets file in the later listing (unless purged meanwhile).
        commits = list_log(self._filesystem, f"{self._root}/commits")
        offsets = list_log(self._filesystem, f"{self._root}/offsets")
        if offsets is None:
            raise CheckpointError(
                f"{self.checkpoint_uri} is not a Structured Streaming checkpoint (it has no "
                "offsets/ directory); point the checkpoint path at the query's "
                "checkpointLocation"
            )
        self._forget_all_but([*(commits or []), *offsets])
        latest_planned = offsets[-1].batch_id if offsets else None
        if not commits:
            return CheckpointState(self.checkpoint_uri, None, latest_planned, None, None, None)
        committed = commits[-1]
        offset_file = next((f for f in offsets if f.batch_id == committed.batch_id), None)
        if offset_file is None:
            raise LogChanged(
                f"{committed.path} exists but offsets/{committed.batch_id} does not: the "
                "checkpoint is damaged (a partial copy?); restore the whole checkpoint directory"
            )
        offset_meta = self._read_metadata(offset_file, _MAX_OFFSET_VERSION)
        commit_meta = self._read_metadata(committed, _MAX_COMMIT_VERSION)
        state = CheckpointState(
            path=self.checkpoint_uri,
            latest_committed_batch=committed.batch_id,
            latest_planned_batch=latest_planned,
            watermark_ms=_int_field(offset_meta, "batchWatermarkMs", offset_file),
            next_batch_watermark_ms=_int_field(commit_meta, "nextBatchWatermarkMs", committed),
            last_commit_time_ms=committed.mtime_ms,
        )
        self._listed = (state, commits, offsets)
        return state

    def _listings(self, state: CheckpointState) -> tuple[list[LogFile], list[LogFile]]:
        """The ``commits/`` and ``offsets/`` listings ``state`` was read from, or new ones
        for a state another look read."""
        if self._listed is not None and self._listed[0] is state:
            return self._listed[1], self._listed[2]
        self._filesystem, self._root = resolve_filesystem(self.checkpoint_uri)

        def listings() -> tuple[list[LogFile], list[LogFile]]:
            commits = list_log(self._filesystem, f"{self._root}/commits") or []
            return commits, list_log(self._filesystem, f"{self._root}/offsets") or []

        return read_consistently(listings, CheckpointError)

    def watermark_since_ms(self, state: CheckpointState) -> int | None:
        """When the checkpoint's safe watermark reached its current value (epoch ms).

        That is when the first retained batch running with this watermark was planned:
        the stream has not advanced event time since. Purged batches make it a lower bound.
        """
        if state.latest_committed_batch is None:
            return None
        if self._since is not None and self._since[0] == state:
            return self._since[1]
        _, offsets = self._listings(state)
        since = None
        for log_file in reversed(offsets):
            if log_file.batch_id > state.latest_committed_batch:
                continue
            try:
                metadata = self._read_metadata(log_file, _MAX_OFFSET_VERSION)
            except FileNotFoundError:
                break  # purged since the listing: older than what is kept, a lower bound
            if _int_field(metadata, "batchWatermarkMs", log_file) != state.watermark_ms:
                break
            since = log_file.mtime_ms
        self._since = (state, since)
        return since

    def watermark_passed_ms(self, state: CheckpointState, time_ms: int) -> int | None:
        """When the safe watermark first passed ``time_ms`` (epoch ms): when the first
        batch running with a watermark after it was committed (its ``commits/N`` written),
        as the safe watermark is that of the latest committed batch.

        None when it has not passed yet. A watermark that had passed already in the oldest
        retained batch gives that batch's commit: purged batches make it an upper bound.
        """
        latest = state.latest_committed_batch
        if latest is None or not state.watermark_ms or state.watermark_ms <= time_ms:
            return None
        commits, offsets = self._listings(state)
        committed = {f.batch_id: f for f in commits if f.batch_id <= latest}
        passed = None
        for log_file in reversed(offsets):
            if log_file.batch_id not in committed:
                continue
            try:
                metadata = self._read_metadata(log_file, _MAX_OFFSET_VERSION)
            except FileNotFoundError:
                break  # purged since the listing: the earliest retained batch decides
            if _int_field(metadata, "batchWatermarkMs", log_file) <= time_ms:
                break
            passed = committed[log_file.batch_id].mtime_ms
        return passed

    def _forget_all_but(self, listed: list[LogFile]) -> None:
        """Keep what the files still listed said: memory stays that of the retained batches."""
        keep = set(listed)
        self._metadata = {f: m for f, m in self._metadata.items() if f in keep}

    def _read_metadata(self, log_file: LogFile, max_version: int) -> dict[str, Any]:
        """The JSON metadata line that follows the version header of an offsets/commits
        file. A file the query purged since it was listed raises ``FileNotFoundError``."""
        cached = self._metadata.get(log_file)
        if cached is not None:
            return cached
        with self._filesystem.open_input_stream(log_file.path) as stream:
            content = stream.read()
        _, body = split_version(content, log_file.path, max_version, CheckpointError)
        line = body.partition(b"\n")[0]
        try:
            metadata = json.loads(line)
        except ValueError:
            metadata = None
        if not isinstance(metadata, dict):
            raise CheckpointError(
                f"{log_file.path} has no JSON metadata line; the file is corrupt or "
                "truncated: restore the checkpoint from a backup"
            )
        self._metadata[log_file] = metadata
        return metadata


def _int_field(metadata: dict[str, Any], name: str, log_file: LogFile) -> int:
    value = metadata.get(name, 0)
    if not isinstance(value, int) or isinstance(value, bool):
        raise CheckpointError(f"{log_file.path}: field {name} is {value!r}, not a number")
    return value
