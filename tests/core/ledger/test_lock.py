"""The table lock: exclusive across processes, taken over from the dead, per table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from airflow_provider_fscommit.core.errors import FsCommitError, LockTimeout
from airflow_provider_fscommit.core.ledger.lock import Lease, TableLock

HOLD = textwrap.dedent(
    """
    import os, sys, time
    from airflow_provider_fscommit.core.ledger.lock import TableLock
    table, log, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with TableLock(table, "test", poll_s=0.05):
        with open(log, "a") as f:
            f.write(f"enter {os.getpid()}\\n")
        time.sleep(hold)
        with open(log, "a") as f:
            f.write(f"exit {os.getpid()}\\n")
    """
)


def hold(table, log, seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", HOLD, str(table), str(log), str(seconds)])


def assert_one_at_a_time(holders: list[subprocess.Popen], log) -> None:
    """Every holder entered and left, and each enter is followed by the same process's
    exit: no two inside at once."""
    assert [p.wait(timeout=120) for p in holders] == [0] * len(holders)
    lines = log.read_text().split()
    events = list(zip(lines[::2], lines[1::2], strict=True))
    for i in range(0, len(events), 2):
        (enter, pid), (leave, same) = events[i], events[i + 1]
        assert (enter, leave, pid) == ("enter", "exit", same)
    assert len(events) == 2 * len(holders)


def test_one_process_at_a_time_holds_a_tables_lock(tmp_path):
    log = tmp_path / "log"
    holders = [hold(tmp_path / "table", log, 0.3) for _ in range(4)]
    assert_one_at_a_time(holders, log)
    assert not (tmp_path / "table" / "_fscommit" / "lock.json").exists()


def test_a_killed_holders_lock_is_taken_over_without_waiting_for_expiry(tmp_path):
    log = tmp_path / "log"
    holder = hold(tmp_path / "table", log, 600)
    while not log.exists():
        time.sleep(0.05)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    # Its lease runs for two more minutes, but its process is gone.
    with TableLock(str(tmp_path / "table"), "rerun", wait_s=10):
        pass


def write_lease(table, *, host: str, expires_in_s: float) -> None:
    lock = table / "_fscommit" / "lock.json"
    lock.parent.mkdir(parents=True)
    now = int(time.time() * 1000)
    lock.write_text(
        json.dumps(
            {
                "owner": "other-run",
                "purpose": "compact",
                "host": host,
                "pid": 4242,
                "acquired_ms": now - 1000,
                "expires_ms": now + int(expires_in_s * 1000),
            }
        )
    )


def test_a_live_holder_elsewhere_is_waited_for_then_named(tmp_path):
    write_lease(tmp_path, host="worker-7", expires_in_s=600)
    with pytest.raises(LockTimeout) as error:
        TableLock(str(tmp_path), "commit", wait_s=0.5, poll_s=0.1).acquire()
    message = str(error.value)
    assert "run other-run (compact) on host worker-7, pid 4242" in message
    assert "delete the lock file" in message


def test_an_expired_lease_from_elsewhere_is_taken_over(tmp_path):
    write_lease(tmp_path, host="worker-7", expires_in_s=-1)
    with TableLock(str(tmp_path), "commit", wait_s=0.5) as lock:
        assert lock.holder().owner == lock.owner


def test_two_tables_never_wait_for_each_other(tmp_path):
    with (
        TableLock(str(tmp_path / "a"), "compact"),
        TableLock(str(tmp_path / "b"), "compact", wait_s=0),
    ):
        pass


def test_the_holder_renews_its_lease_while_it_works(tmp_path):
    with TableLock(str(tmp_path), "compact", ttl_s=0.6) as lock:
        time.sleep(1.5)  # more than two lease lengths
        with pytest.raises(LockTimeout):
            TableLock(str(tmp_path), "other", wait_s=0).acquire()
        lock.check()


def test_a_holder_that_lost_its_lease_stops_before_committing(tmp_path):
    with TableLock(str(tmp_path), "compact", ttl_s=60) as lock:
        (tmp_path / "_fscommit" / "lock.json").unlink()  # e.g. deleted by hand
        with pytest.raises(FsCommitError, match="lost the table lock"):
            lock.check()


@pytest.fixture(params=["local", "s3"])
def table_location(request, tmp_path) -> str:
    """A table directory on local disk, or on the S3 server (through the AWS variables)."""
    if request.param == "local":
        return str(tmp_path / "table")
    server = request.getfixturevalue("s3_env")
    return f"s3://{server.create_bucket(f'lock-{tmp_path.name[-20:].lower()}')}/table"


def test_one_process_at_a_time_on_every_store(table_location, tmp_path):
    log = tmp_path / "log"
    holders = [hold(table_location, log, 0.3) for _ in range(3)]
    assert_one_at_a_time(holders, log)


def test_a_holder_whose_lease_was_taken_over_cannot_renew_it_back(table_location):
    """A stalled holder's lease expires and another run takes it: the stalled run's renewal
    must fail (compare-and-swap), not overwrite the new holder's lease."""
    with TableLock(table_location, "compact", ttl_s=0.6) as stalled:
        taken = Lease("other-run", "commit", "worker-7", 4242, 0, 2**62)
        while True:  # the renewer may change the version between our read and our swap
            current = stalled.store.read(stalled.path)
            if stalled.store.replace(stalled.path, taken.encode(), current.version):
                break
        time.sleep(0.6)  # more than one renewal period
        assert stalled.holder() == taken
        with pytest.raises(FsCommitError, match="lost the table lock"):
            stalled.check()
    assert stalled.holder() == taken  # releasing did not delete the new holder's lease
