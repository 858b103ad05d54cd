"""The table lock: one run at a time changes a published table.

A scheduled run, a run triggered from the UI and a backfill may reach the same partition
at the same moment. The protocol in :mod:`coordinator` is safe against crashes, not
against a second live writer: a run's recovery discards an *open* plan, which is how a
crashed run is cleaned up, but would also discard the plan of a run still executing. So
every run that changes a table (compaction and publish, the commit policies) holds this
lock, a lease file ``<table>/_fscommit/lock.json``:

- **Exclusive create.** The lease is written under a private name and then linked (local
  disks) or renamed (HDFS, whose rename never replaces) to its final name, which fails
  when the name exists, so two runs cannot both take it.
- **Expiry.** The holder renews the lease while it works; a lease that expired is taken
  over. A holder on this host whose process is gone (SIGKILLed) is taken over at once.
- **Scope.** One lock per table directory: two tables never wait for each other.

Object stores have no exclusive create through ``pyarrow.fs``; there the lease is written
and read back, which narrows the race but does not close it: keep runs of one table on
S3 from overlapping (an Airflow pool of one slot per table).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from types import TracebackType

import pyarrow.fs as pafs

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.filesystem import resolve_filesystem
from airflow_provider_fscommit.core.fsutil import delete_if_exists, read_json, write_json
from airflow_provider_fscommit.core.ledger import LEDGER_DIR

log = logging.getLogger(__name__)

LOCK_NAME = "lock.json"
DEFAULT_TTL_S = 120.0
DEFAULT_WAIT_S = 1800.0


class LockTimeout(FsCommitError):
    """Another live run kept the table for longer than we wait."""


@dataclass(frozen=True)
class Lease:
    owner: str
    purpose: str
    host: str
    pid: int
    acquired_ms: int
    expires_ms: int

    def describe(self) -> str:
        return (
            f"run {self.owner} ({self.purpose}) on host {self.host}, pid {self.pid}, "
            f"since {_iso(self.acquired_ms)}, lease until {_iso(self.expires_ms)}"
        )


class TableLock:
    """Hold the lock of the table at ``table_path`` for a ``with`` block.

    :param purpose: what the holder does, shown to those who wait (``compact``, ``commit``).
    :param ttl_s: lease length; renewed every third of it while held.
    :param wait_s: how long to wait for another run before failing with who holds it.
    """

    def __init__(
        self,
        table_path: str,
        purpose: str,
        ttl_s: float = DEFAULT_TTL_S,
        wait_s: float = DEFAULT_WAIT_S,
        poll_s: float = 1.0,
    ) -> None:
        self.filesystem, root = resolve_filesystem(table_path)
        self.directory = f"{root.rstrip('/')}/{LEDGER_DIR}"
        self.path = f"{self.directory}/{LOCK_NAME}"
        self.purpose = purpose
        self.ttl_s = ttl_s
        self.wait_s = wait_s
        self.poll_s = poll_s
        self.owner = uuid.uuid4().hex
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._lost: str | None = None

    def __enter__(self) -> TableLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lease, waiting for a live holder up to ``wait_s``."""
        deadline = time.monotonic() + self.wait_s
        try:
            self.filesystem.create_dir(self.directory, recursive=True)
        except OSError as exc:
            raise FsCommitError(f"cannot create {self.directory}: {exc}") from exc
        announced = False
        while True:
            if self._try_create():
                break
            holder = self.holder()
            if holder is not None and self._is_dead(holder):
                self._take_over(holder)
                continue
            if not announced:  # a run that seems stuck says what it waits for, once
                log.info(
                    "waiting for the table lock %s, held by %s",
                    self.path,
                    holder.describe() if holder else "another run",
                )
                announced = True
            if time.monotonic() > deadline:
                raise LockTimeout(
                    f"the table lock {self.path} is held by "
                    f"{holder.describe() if holder else 'another run'}; waited "
                    f"{self.wait_s:.0f} s. Let that run finish; if it is gone for good "
                    "and its lease does not expire, delete the lock file"
                )
            time.sleep(self.poll_s)
        self._renewer = threading.Thread(target=self._renew, name="fscommit-lock", daemon=True)
        self._renewer.start()

    def release(self) -> None:
        """Give the lease back (only if it is still ours)."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        holder = self.holder()
        if holder is not None and holder.owner == self.owner:
            delete_if_exists(self.filesystem, self.path)

    def check(self) -> None:
        """Fail when the lease was lost (not renewed in time): stop before the commit point."""
        if self._lost:
            raise FsCommitError(self._lost)
        holder = self.holder()
        if holder is None or holder.owner != self.owner:
            raise FsCommitError(
                f"this run lost the table lock {self.path} (now "
                f"{holder.describe() if holder else 'free'}); nothing more is committed, rerun"
            )

    def holder(self) -> Lease | None:
        try:
            return Lease(**read_json(self.filesystem, self.path))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError) as exc:
            raise FsCommitError(
                f"the table lock {self.path} is unreadable ({exc}); if no run of this table "
                "is active, delete it"
            ) from None

    def _lease(self) -> Lease:
        now = _now_ms()
        return Lease(
            owner=self.owner,
            purpose=self.purpose,
            host=socket.gethostname(),
            pid=os.getpid(),
            acquired_ms=now,
            expires_ms=now + int(self.ttl_s * 1000),
        )

    def _try_create(self) -> bool:
        data = json.dumps(asdict(self._lease())).encode()
        private = f"{self.directory}/.{LOCK_NAME}.{self.owner}.tmp"
        try:
            with self.filesystem.open_output_stream(private) as stream:
                stream.write(data)
        except OSError as exc:
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(private)
            raise FsCommitError(
                f"cannot write the table lock {self.path}: {exc}; make room on (or make "
                "writable) the table directory and rerun"
            ) from exc
        try:
            return self._publish(private)
        finally:
            delete_if_exists(self.filesystem, private)

    def _publish(self, private: str) -> bool:
        """Give ``private`` the lock's name unless the name exists (exclusive create)."""
        if isinstance(self.filesystem, pafs.LocalFileSystem):
            try:
                os.link(private, self.path)
            except FileExistsError:
                return False
            return True
        if isinstance(self.filesystem, pafs.HadoopFileSystem):
            try:
                self.filesystem.move(private, self.path)  # HDFS rename never replaces
            except OSError:
                return False
            return True
        # Object stores: no exclusive create; write if absent, then read back.
        if self.holder() is not None:
            return False
        self.filesystem.copy_file(private, self.path)
        time.sleep(0.2)
        holder = self.holder()
        return holder is not None and holder.owner == json.loads(self._read(private))["owner"]

    def _read(self, path: str) -> bytes:
        with self.filesystem.open_input_stream(path) as stream:
            return stream.read()

    def _is_dead(self, holder: Lease) -> bool:
        if holder.expires_ms < _now_ms():
            return True
        if holder.host == socket.gethostname():
            try:
                os.kill(holder.pid, 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
        return False

    def _take_over(self, stale: Lease) -> None:
        """Move a dead holder's lease aside; of two runs doing so, one succeeds.

        The lease moved aside is checked afterwards: if it was not the stale one (another
        run took over first and already holds a fresh lease), it is put back. Should that
        fail, the fresh holder finds its lease gone at its next :meth:`check` and stops
        before its commit point.
        """
        aside = f"{self.directory}/.{LOCK_NAME}.stale-{self.owner}"
        try:
            self.filesystem.move(self.path, aside)
        except (FileNotFoundError, OSError):
            return
        try:
            moved = Lease(**read_json(self.filesystem, aside))
        except (FileNotFoundError, ValueError, TypeError):
            moved = None
        if moved is not None and moved.owner != stale.owner:
            with contextlib.suppress(OSError):
                self._publish(aside)
        delete_if_exists(self.filesystem, aside)

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            holder = self.holder()
            if holder is None or holder.owner != self.owner:
                self._lost = (
                    f"this run lost the table lock {self.path} while working; nothing more "
                    "is committed, rerun"
                )
                return
            renewed = Lease(**{**asdict(holder), "expires_ms": _now_ms() + int(self.ttl_s * 1000)})
            write_json(self.filesystem, self.path, asdict(renewed))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _iso(epoch_ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_ms / 1000))
