"""Exactly once on an S3 API server: SIGKILLs, concurrent runs, a slow and faulty store.

The table lives on the S3 server (``fscommit_dev/s3_tables.py``); runs reach it through a proxy
that delays, throttles (503 SlowDown) and resets writes to the lock, the ledger and the
data (``tests/s3_proxy.py``). Every trial ends with a clean rerun and the independent
checker: every committed row published exactly once, nothing the sink log does not
commit, no hidden leftovers, a success file for every committable partition.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from airflow_provider_fscommit.core.faults import FAULT_POINTS
from fscommit_dev.s3_tables import (
    S3Table,
    assert_exactly_once,
    place_on_s3,
    staged_ids,
    success_files,
)
from fscommit_dev.streams import ROOT, StreamingTable
from tests.support.s3_proxy import S3FaultProxy

WORKER = str(ROOT / "tests" / "support" / "fault_worker.py")
RANDOM_TRIALS = 16
COMMITTABLE = {f"dt=2026-11-20/hour={h:02d}" for h in range(5)}


@pytest.fixture(scope="module")
def proxy(s3_server):
    proxy = S3FaultProxy(s3_server.port, seed=20261123)
    yield proxy
    proxy.close()


def fresh_table(stream: StreamingTable, s3_server, name: str) -> S3Table:
    bucket = s3_server.create_bucket(name)
    return place_on_s3(stream, s3_server, bucket, "events")


def start_worker(
    table: S3Table, endpoint: str, fault: str | None = None, lease_ttl_s: float | None = None
) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "FSCOMMIT_FAULT"}
    env.update(table.server.env(endpoint))
    if fault:
        env["FSCOMMIT_FAULT"] = fault
    if lease_ttl_s is not None:
        env["FSCOMMIT_TEST_LEASE_TTL_S"] = str(lease_ttl_s)
    return subprocess.Popen(
        [sys.executable, WORKER, json.dumps(table.spec())],
        env=env,
        start_new_session=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen, kill_after: float | None = None) -> int:
    """Wait (or SIGKILL after ``kill_after`` s); the exit code, stderr kept as ``.errors``."""
    try:
        _, process.errors = process.communicate(timeout=kill_after or 600)  # type: ignore[attr-defined]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, process.errors = process.communicate(timeout=60)  # type: ignore[attr-defined]
    return process.returncode


def check(table: S3Table) -> int:
    rows = assert_exactly_once(table, staged_ids(table), COMMITTABLE)
    assert sorted(success_files(table)) == sorted(COMMITTABLE)
    return rows


@pytest.mark.slow
def test_sigkill_at_every_step_and_at_random_moments_on_s3(fault_stream, s3_server, capsys):
    started = time.monotonic()
    baseline = fresh_table(fault_stream, s3_server, "kill-baseline")
    assert finish(start_worker(baseline, s3_server.endpoint)) == 0
    clean_run_s = time.monotonic() - started
    check(baseline)
    rng = random.Random(20261123)
    trials = [(point, None) for point in FAULT_POINTS]
    trials += [(None, rng.uniform(0.0, clean_run_s)) for _ in range(RANDOM_TRIALS)]
    counts: Counter = Counter()
    rows = 0
    for number, (point, delay) in enumerate(trials):
        table = fresh_table(fault_stream, s3_server, f"kill-{number}")
        code = finish(start_worker(table, s3_server.endpoint, fault=point), kill_after=delay)
        if point:
            assert code == -signal.SIGKILL, f"fault point {point} was never reached"
            counts[point] += 1
        else:
            counts["random, killed" if code == -signal.SIGKILL else "random, finished"] += 1
        rerun = start_worker(table, s3_server.endpoint)
        assert finish(rerun) == 0, f"trial {number}: the rerun failed: {rerun.errors}"
        rows += check(table)
    with capsys.disabled():
        print(
            f"\nS3 kill trials: {sum(counts.values())} ({dict(sorted(counts.items()))}), "
            f"rows checked {rows}, violations 0"
        )
    assert sum(counts.values()) >= 20


@pytest.mark.slow
@pytest.mark.parametrize(
    "faults",
    [
        pytest.param({"delay_s": 1.5}, id="slow-puts"),
        pytest.param(
            {"delay_s": 0.5, "slowdown": 0.15, "reset_before": 0.05, "reset_after": 0.1},
            id="slowdown-and-resets",
        ),
    ],
)
def test_three_concurrent_runs_that_lose_their_leases_publish_once(
    fault_stream, s3_server, proxy, faults, capsys
):
    """Leases of 1 s behind writes of up to 1.5 s: the runs overlap all the time, so the
    lock cannot keep them apart and the create-once commit point must."""
    proxy.configure(delay_s=0.0, slowdown=0.0, reset_before=0.0, reset_after=0.0, only="")
    proxy.configure(**faults)
    proxy.counts.clear()
    outcomes: Counter = Counter()
    table = fresh_table(fault_stream, s3_server, f"race-{int(faults['delay_s'] * 10)}")
    runs = [start_worker(table, proxy.endpoint, lease_ttl_s=1.0) for _ in range(3)]
    for run in runs:
        if finish(run) == 0:
            outcomes["succeeded"] += 1
        else:  # each failure says why, e.g. "lost the table lock", "abandoned this run's plan"
            outcomes[_reason(run.errors)] += 1
    # Whatever each run did, what is visible is never duplicated nor uncommitted.
    assert_exactly_once(table, staged_ids(table), set(), settled=False)
    assert finish(start_worker(table, s3_server.endpoint)) == 0
    rows = check(table)
    with capsys.disabled():
        print(
            f"\nconcurrent runs on S3 ({', '.join(f'{k}={v}' for k, v in faults.items())}): "
            f"{dict(outcomes)}, proxy {dict(proxy.counts)}, rows checked {rows}"
        )


def _reason(stderr: str) -> str:
    last = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
    for known in ("lost the table lock", "abandoned this run's plan", "created the same plan"):
        if known in last:
            return f"failed: {known}"
    return f"failed: {last[:120]}"
