"""Conditional writes: create a file only if it is absent, replace it only if unchanged.

The exactly-once protocol rests on one primitive: a ledger record that is **created
once**. Two runs that reach the same commit point (the commit record of a plan, or the
mark that abandons it) cannot both succeed, whatever the table lock believes, so a run
that lost its lease (a stalled process, a store slow enough to outlast the lease) can
waste work but never publish twice. The lock's lease is **replaced only if unchanged**
(compare-and-swap), so a run whose lease was taken over cannot renew it back.

How each store provides it:

- **Local disks**: create = a hard link of a private file, which fails when the name
  exists; replace and delete under an ``flock`` of a guard file beside it (one host).
- **HDFS**: create = rename, which never replaces there; replace = rename the current
  file aside (one run wins that), verify it is the expected version, create the new one.
- **S3 and compatible stores**: ``PUT`` with ``If-None-Match: *`` (create) and
  ``If-Match: <ETag>`` (replace; ``DELETE`` with ``If-Match``), through boto3. A store is
  probed once per process and bucket: one that lets a second ``If-None-Match: *`` PUT of
  the same key through ignores the header, and is refused (no silent race).
- **Single writer** (the table spec's ``single_writer: true``): check, then write. Only
  as safe as the user's guarantee that one run at a time changes the table (the DAG's
  ``max_active_runs=1`` and an Airflow pool of one slot per table); the way to use a store
  without conditional writes (older MinIO or Ceph releases, GCS and Azure through pyarrow).

A write whose answer was lost (a connection reset after the store applied it) is retried
by the client and then meets its own earlier write: every call therefore compares the
content it finds with its own and counts an identical file as its own success. Records
carry a unique id (a run's owner id, a plan id), so identical content means the same writer.
"""

from __future__ import annotations

import abc
import contextlib
import fcntl
import hashlib
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.storage.filesystem import unwritable, write_atomically
from airflow_provider_fscommit.core.storage.object_store import (
    current_settings,
    explain,
    s3_client,
)

_CONFLICT_RETRIES = 5  # S3 answers 409 when two conditional writes of a key overlap


@dataclass(frozen=True)
class Versioned:
    """A file's content and its version (an ETag on S3, a content digest elsewhere)."""

    data: bytes
    version: str


class ConditionalStore(abc.ABC):
    """Create-once and compare-and-swap on one filesystem (paths as pyarrow takes them)."""

    def __init__(self, filesystem: pafs.FileSystem) -> None:
        self.filesystem = filesystem

    @abc.abstractmethod
    def create(self, path: str, data: bytes) -> str | None:
        """Write ``path`` if it does not exist; its version, or None if another file is there."""

    def read(self, path: str) -> Versioned | None:
        """The file and its version (here its digest), or None when it does not exist."""
        try:
            with self.filesystem.open_input_stream(path) as stream:
                data = stream.read()
        except FileNotFoundError:
            return None
        return Versioned(data, _digest(data))

    @abc.abstractmethod
    def replace(self, path: str, data: bytes, version: str) -> str | None:
        """Overwrite ``path`` if it is still at ``version``; the new version, or None."""

    @abc.abstractmethod
    def delete(self, path: str, version: str) -> bool:
        """Delete ``path`` if it is still at ``version``."""

    def _ours(self, path: str, data: bytes) -> str | None:
        """After a refused write: the version of ``path`` if it holds exactly ``data``."""
        current = self.read(path)
        return current.version if current is not None and current.data == data else None


def conditional_store(
    filesystem: pafs.FileSystem, directory: str, single_writer: bool = False
) -> ConditionalStore:
    """The conditional writes of ``filesystem`` (``directory``: where records go).

    Raises with the fix when the store offers none and the table does not declare a
    single writer.
    """
    if isinstance(filesystem, pafs.LocalFileSystem):
        return LocalConditionalStore(filesystem)
    if isinstance(filesystem, pafs.HadoopFileSystem):
        return HadoopConditionalStore(filesystem)
    if single_writer:
        return SingleWriterStore(filesystem)
    if isinstance(filesystem, pafs.S3FileSystem):
        store = S3ConditionalStore(filesystem)
        store.verify(directory)
        return store
    raise FsCommitError(
        f"{directory} is on a {filesystem.type_name} filesystem, where fscommit has no "
        "conditional writes (create-once) to keep concurrent runs from publishing twice. "
        "Guarantee that one run at a time changes the table (max_active_runs=1 and an "
        "Airflow pool of one slot) and declare it with single_writer: true in the table spec"
    )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _split(path: str) -> tuple[str, str]:
    directory, _, name = path.rpartition("/")
    return directory, name


class LocalConditionalStore(ConditionalStore):
    """Local disks: hard links for create, an ``flock``-guarded swap for replace."""

    def create(self, path: str, data: bytes) -> str | None:
        directory, name = _split(path)
        private = f"{directory}/.{name}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            os.makedirs(directory, exist_ok=True)
            with open(private, "wb") as handle:
                handle.write(data)
            try:
                os.link(private, path)
            except FileExistsError:
                return self._ours(path, data)
            return _digest(data)
        except OSError as exc:
            raise unwritable(path, exc) from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(private)

    def replace(self, path: str, data: bytes, version: str) -> str | None:
        with self._guard(path):
            current = self.read(path)
            if current is None or current.version != version:
                return None
            write_atomically(self.filesystem, path, data)  # a rename over the old file
            return _digest(data)

    def delete(self, path: str, version: str) -> bool:
        with self._guard(path):
            current = self.read(path)
            if current is None or current.version != version:
                return False
            os.unlink(path)
            return True

    @contextlib.contextmanager
    def _guard(self, path: str) -> Iterator[None]:
        directory, name = _split(path)
        with open(f"{directory}/.{name}.guard", "a+b") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            yield


class HadoopConditionalStore(ConditionalStore):
    """HDFS: its rename never replaces an existing name, which gives create-once."""

    def create(self, path: str, data: bytes) -> str | None:
        directory, name = _split(path)
        private = f"{directory}/.{name}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            self.filesystem.create_dir(directory, recursive=True)
            with self.filesystem.open_output_stream(private) as stream:
                stream.write(data)
        except OSError as exc:
            raise unwritable(path, exc) from exc
        try:
            self.filesystem.move(private, path)
        except OSError:
            return self._ours(path, data)
        finally:
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(private)
        return _digest(data)

    def replace(self, path: str, data: bytes, version: str) -> str | None:
        if not self._take_aside(path, version):
            return None
        return self.create(path, data)

    def delete(self, path: str, version: str) -> bool:
        return self._take_aside(path, version)

    def _take_aside(self, path: str, version: str) -> bool:
        """Move ``path`` out of the way if it is at ``version`` (of two runs, one can)."""
        directory, name = _split(path)
        aside = f"{directory}/.{name}.{uuid.uuid4().hex[:8]}.aside"
        try:
            self.filesystem.move(path, aside)
        except OSError:
            return False  # gone, or another run moved it first
        moved = self.read(aside)
        try:
            if moved is not None and moved.version == version:
                return True
            if moved is not None:  # not the version we meant: put it back if we can
                with contextlib.suppress(OSError):
                    self.filesystem.move(aside, path)
            return False
        finally:
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(aside)


class SingleWriterStore(ConditionalStore):
    """Check, then write: correct only under the user's one-run-at-a-time guarantee."""

    def create(self, path: str, data: bytes) -> str | None:
        if self.read(path) is not None:
            return self._ours(path, data)
        write_atomically(self.filesystem, path, data)
        return _digest(data)

    def replace(self, path: str, data: bytes, version: str) -> str | None:
        current = self.read(path)
        if current is None or current.version != version:
            return None
        write_atomically(self.filesystem, path, data)
        return _digest(data)

    def delete(self, path: str, version: str) -> bool:
        current = self.read(path)
        if current is None or current.version != version:
            return False
        self.filesystem.delete_file(path)
        return True


_verified: set[tuple[Any, ...]] = set()
_verified_lock = threading.Lock()


class S3ConditionalStore(ConditionalStore):
    """S3's conditional PUT and DELETE (``If-None-Match: *``, ``If-Match: <ETag>``)."""

    def __init__(self, filesystem: pafs.FileSystem) -> None:
        super().__init__(filesystem)
        # Built now, under the caller's settings: the lock renews from a thread of its own.
        self.settings = current_settings()
        self.client = s3_client()

    def verify(self, directory: str) -> None:
        """Probe once per process and bucket that the store honours the conditions."""
        bucket, prefix = _bucket_key(directory)
        key = (self.settings, bucket)
        with _verified_lock:
            if key in _verified:
                return
        probe = f"{bucket}/{prefix}/.conditional-write-probe-{uuid.uuid4().hex}"
        first = self.create(probe, b"1")
        honoured = (
            first is not None
            and self.create(probe, b"2") is None
            and self.replace(probe, b"3", '"0123456789abcdef0123456789abcdef"') is None
        )
        if first is not None:
            self.delete(probe, first) or self._call("delete_object", probe)
        if not honoured:
            raise FsCommitError(
                f"the store behind s3://{bucket} ({self.settings.describe()}) does not honour "
                "conditional writes (If-None-Match / If-Match): a second create of one object "
                "succeeded. Without them two runs can publish a partition twice. Use a store "
                "that supports them, or guarantee one run at a time per table (the DAG's "
                "max_active_runs=1 and an Airflow pool of one slot) and declare it with "
                "single_writer: true in the table spec"
            )
        with _verified_lock:
            _verified.add(key)

    def create(self, path: str, data: bytes) -> str | None:
        response = self._call("put_object", path, Body=data, IfNoneMatch="*")
        return response["ETag"] if response is not None else self._ours(path, data)

    def read(self, path: str) -> Versioned | None:
        response = self._call("get_object", path)
        if response is None:
            return None
        return Versioned(response["Body"].read(), response["ETag"])

    def replace(self, path: str, data: bytes, version: str) -> str | None:
        response = self._call("put_object", path, Body=data, IfMatch=version)
        return response["ETag"] if response is not None else self._ours(path, data)

    def delete(self, path: str, version: str) -> bool:
        return self._call("delete_object", path, IfMatch=version) is not None

    def _call(self, operation: str, path: str, **kwargs: Any) -> dict[str, Any] | None:
        """One request; None when its condition failed or the object does not exist."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _bucket_key(path)
        for attempt in range(_CONFLICT_RETRIES):
            try:
                return getattr(self.client, operation)(Bucket=bucket, Key=key, **kwargs)
            except ClientError as exc:
                error = exc.response.get("Error", {})
                status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if error.get("Code") in ("PreconditionFailed", "NoSuchKey") or status == 412:
                    return None
                if error.get("Code") == "ConditionalRequestConflict" or status == 409:
                    time.sleep(0.1 * 2**attempt)
                    continue
                raise explain(exc, f"s3://{path}") or unwritable(path, exc) from exc
            except BotoCoreError as exc:
                raise explain(exc, f"s3://{path}") or unwritable(path, exc) from exc
        raise FsCommitError(
            f"s3://{path}: the store kept answering 409 (conflicting conditional writes); rerun"
        )


def _bucket_key(path: str) -> tuple[str, str]:
    bucket, _, key = path.partition("/")
    return bucket, key
