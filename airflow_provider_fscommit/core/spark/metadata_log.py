"""Reading Spark's ``HDFSMetadataLog`` directories, the format shared by the checkpoint's
``offsets/`` and ``commits/`` and the file sink's ``_spark_metadata``.

Each batch is one file named after its batch id (``17``, or ``19.compact`` for a compacted
sink log), written to a hidden temporary name and renamed, so a listing only ever shows
complete files. Checksums (``.17.crc``) and leftovers of a crash (``.….tmp``) are hidden
files and are skipped. The first line of a file is the log format version (``v1``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.errors import FsCommitError

_BATCH_FILE = re.compile(r"(\d+)(\.compact)?")
# The newest Spark line whose log versions the readers know (its checkpoint tests run it).
NEWEST_SPARK = "4.3"
_READ_ATTEMPTS = 5
T = TypeVar("T")


class LogChanged(Exception):
    """What was listed changed before it was read: the query wrote or purged log files.

    Carries the message to report should the log still look that way after every retry.
    """


def read_consistently(read: Callable[[], T], error: type[FsCommitError]) -> T:
    """Run ``read`` again while the running query changes the log under it.

    A live query writes new batch files, compacts its sink log and purges old batches
    (``minBatchesToRetain``, ``fileSink.log.cleanupDelay``) at any moment, so a file
    listed can be gone when read, and a listing can catch a compaction half-way. Each
    of those resolves on a fresh look; only a state that persists is reported.
    """
    for attempt in range(_READ_ATTEMPTS):
        try:
            return read()
        except LogChanged as exc:
            message = str(exc)
        except FileNotFoundError as exc:
            message = (
                f"{exc.filename or exc} kept disappearing while being read; something other "
                "than the streaming query is deleting its logs"
            )
        time.sleep(0.02 * 2**attempt)
    raise error(message)


@dataclass(frozen=True)
class LogFile:
    """One batch file of a metadata log."""

    batch_id: int
    compact: bool
    path: str
    size: int
    mtime_ms: int


def list_log(filesystem: pafs.FileSystem, directory: str) -> list[LogFile] | None:
    """The batch files of a log directory sorted by batch id, or None if it is missing."""
    try:
        infos = filesystem.get_file_info(pafs.FileSelector(directory, recursive=False))
    except FileNotFoundError:
        if filesystem.get_file_info(directory).type == pafs.FileType.NotFound:
            return None
        # A file deleted between reading the directory and looking at the file.
        raise LogChanged(f"files of {directory} kept disappearing while it was listed") from None
    files = []
    for info in infos:
        match = _BATCH_FILE.fullmatch(info.base_name)
        if match and info.type == pafs.FileType.File:
            files.append(
                LogFile(
                    batch_id=int(match.group(1)),
                    compact=match.group(2) is not None,
                    path=info.path,
                    size=info.size or 0,
                    mtime_ms=(info.mtime_ns or 0) // 1_000_000,
                )
            )
    return sorted(files, key=lambda f: f.batch_id)


def split_version(
    content: bytes, path: str, max_version: int, error: type[FsCommitError]
) -> tuple[int, bytes]:
    """Check a log file's ``vN`` header line and return the version and the body."""
    header, _, body = content.partition(b"\n")
    match = re.fullmatch(rb"v(\d+)", header.strip())
    if not match:
        raise error(
            f"{path} is not a Spark metadata log file (first line {header[:20]!r}, expected "
            "'v1'); the file is corrupt or truncated: restore it from a backup"
        )
    version = int(match.group(1))
    if not 1 <= version <= max_version:
        raise error(
            f"{path} uses log format v{version}, which no Spark up to {NEWEST_SPARK} writes "
            f"(they write v1 to v{max_version} here): the query ran on a newer Spark. "
            "Upgrade airflow-provider-fscommit to a release that reads it; nothing was read"
        )
    return version, body
