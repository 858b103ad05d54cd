"""The table lock: one run at a time changes a published table.

A scheduled run, a run triggered from the UI and a backfill may reach the same partition
at the same moment. Exactly once does not depend on this lock: the ledger's commit point
is created once (:mod:`conditional_writes`), so of two runs that both believe they hold
the table, at most one publishes a plan. The lock keeps them from getting that far: a
run's recovery abandons an *open* plan, which is how a crashed run is cleaned up, and
without the lock it would abandon the plan of a run still executing, which then fails.

So every run that changes a table (compaction and publish, the commit policies, clean-up
and quarantine) holds this lock, a lease file ``<table>/_fscommit/lock.json``:

- **Create once.** The lease is created only if absent (a hard link on local disks, a
  rename on HDFS, ``If-None-Match: *`` on S3), so two runs cannot both take it.
- **Expiry.** The holder renews the lease while it works, replacing it only if it is
  unchanged (``If-Match`` on S3), so a run whose lease was taken over cannot renew it
  back. An expired lease is taken over the same way; a holder on this host whose process
  is gone (SIGKILLed) is taken over at once.
- **Scope.** One lock per table directory: two tables never wait for each other.
- **Clocks.** Expiry compares the holder's wall clock with the waiter's; hosts whose
  clocks disagree by minutes may take a lease early (wasted work, never a double publish).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from types import TracebackType

from airflow_provider_fscommit.core.errors import FsCommitError, LockTimeout
from airflow_provider_fscommit.core.ledger.ledger import LEDGER_DIR
from airflow_provider_fscommit.core.storage.conditional_writes import (
    ConditionalStore,
    conditional_store,
)
from airflow_provider_fscommit.core.storage.filesystem import renames_atomically, resolve_filesystem

log = logging.getLogger(__name__)

LOCK_NAME = "lock.json"
DEFAULT_TTL_S = 120.0
DEFAULT_WAIT_S = 1800.0


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

    def encode(self) -> bytes:
        return json.dumps(asdict(self)).encode()


class TableLock:
    """Hold the lock of the table at ``table_path`` for a ``with`` block.

    :param purpose: what the holder does, shown to those who wait (``compact``, ``commit``).
    :param ttl_s: lease length (default ``DEFAULT_TTL_S``); renewed every third of it.
    :param wait_s: how long to wait for another run before failing with who holds it.
    :param single_writer: the table spec's declaration that runs never overlap (for stores
        without conditional writes).
    """

    store: ConditionalStore  # the store's conditional writes, looked up by acquire()

    def __init__(
        self,
        table_path: str,
        purpose: str,
        ttl_s: float | None = None,
        wait_s: float = DEFAULT_WAIT_S,
        poll_s: float = 1.0,
        single_writer: bool = False,
    ) -> None:
        self.filesystem, root = resolve_filesystem(table_path)
        self.directory = f"{root.rstrip('/')}/{LEDGER_DIR}"
        self.path = f"{self.directory}/{LOCK_NAME}"
        self.purpose = purpose
        self.ttl_s = DEFAULT_TTL_S if ttl_s is None else ttl_s
        self.wait_s = wait_s
        self.poll_s = poll_s
        self.single_writer = single_writer
        self.owner = uuid.uuid4().hex
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._held: Lease | None = None  # our lease and its version, as last written
        self._version: str | None = None
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
        if renames_atomically(self.filesystem):  # object stores have no directories
            try:
                self.filesystem.create_dir(self.directory, recursive=True)
            except OSError as exc:
                raise FsCommitError(f"cannot create {self.directory}: {exc}") from exc
        self.store = conditional_store(self.filesystem, self.directory, self.single_writer)
        announced = False
        while True:
            self._held = self._lease()
            self._version = self.store.create(self.path, self._held.encode())
            if self._version is not None:
                break
            current = self.store.read(self.path)
            if current is None:  # released in between: try again at once, while in time
                if time.monotonic() > deadline:
                    raise LockTimeout(f"the table lock {self.path} could not be taken in time")
                continue
            holder = self._parse(current.data)
            if self._is_dead(holder):
                self._held = self._lease()
                self._version = self.store.replace(self.path, self._held.encode(), current.version)
                if self._version is not None:
                    break
                continue
            if not announced:  # a run that seems stuck says what it waits for, once
                log.info("waiting for the table lock %s, held by %s", self.path, holder.describe())
                announced = True
            if time.monotonic() > deadline:
                raise LockTimeout(
                    f"the table lock {self.path} is held by {holder.describe()}; waited "
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
        if self._version is not None:
            self.store.delete(self.path, self._version)

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
            with self.filesystem.open_input_stream(self.path) as stream:
                return self._parse(stream.read())
        except FileNotFoundError:
            return None

    def _parse(self, data: bytes) -> Lease:
        try:
            return Lease(**json.loads(data))
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

    def _renew(self) -> None:
        """Extend the lease every third of its length, only while it is unchanged."""
        while not self._stop.wait(self.ttl_s / 3):
            version = self._version
            if version is not None:
                held = self._held or self._lease()
                renewed = Lease(
                    **{**asdict(held), "expires_ms": _now_ms() + int(self.ttl_s * 1000)}
                )
                try:
                    version = self.store.replace(self.path, renewed.encode(), version)
                except (FsCommitError, OSError):
                    continue  # the store failed this once: try again next period
                self._held = renewed
            self._version = version
            if version is None:
                self._lost = (
                    f"this run lost the table lock {self.path} while working; nothing more "
                    "is committed, rerun"
                )
                return


def _now_ms() -> int:
    return int(time.time() * 1000)


def _iso(epoch_ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_ms / 1000))
