"""Metastore faults during ``fscommit commit``: down, dying mid-call, slow; then back.

Each failure is one clear, retryable error, with no success file and no ledger record;
the rerun once the metastore answers commits every partition exactly once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.metastore.client import create_table, hive_sql
from tests.support.compaction import commit, committable, compact
from tests.support.fault_proxy import FaultProxy


@pytest.mark.slow
def test_a_metastore_down_dying_or_slow_fails_cleanly_and_the_rerun_commits_once(
    hourly_stream, metastore, tmp_path
):
    table = tmp_path / "table"
    create_table(metastore, "faulty", table)
    assert compact(hourly_stream.staging, hourly_stream.checkpoint, str(table)).returncode == 0
    ready = sorted(
        f"dt={d}/hour={h}" for d, h in committable(hourly_stream.staging, hourly_stream.checkpoint)
    )
    proxy = FaultProxy(metastore.port)

    def commit_through_proxy() -> subprocess.CompletedProcess:
        return commit(hourly_stream, table, f"thrift://127.0.0.1:{proxy.port}", name="faulty")

    def nothing_committed() -> None:
        assert not list(table.rglob("_SUCCESS"))
        ledger = CommitLedger(str(table))
        assert not any(ledger.read(p).policy_commits for p in ready)

    try:
        for mode, settings in (("refuse", {}), ("cut", {"cut_after": 40})):
            proxy.mode = mode
            for name, value in settings.items():
                setattr(proxy, name, value)
            failed = commit_through_proxy()
            assert failed.returncode == 1, failed.stdout[-2000:]
            assert "fscommit: error:" in failed.stderr and "retry" in failed.stderr
            assert failed.stderr.count("fscommit: error:") == 1, failed.stderr[-3000:]
            nothing_committed()

        proxy.mode, proxy.delay_s = "delay", 0.5  # slow, but it answers
        slow = commit_through_proxy()
        assert slow.returncode == 0, slow.stderr[-3000:]
        proxy.mode = "pass"
        again = commit_through_proxy()
        assert again.returncode == 0
        document = json.loads(again.stdout)
        assert (document["commits"], document["compaction"]["unchanged"]) == ([], len(ready))
    finally:
        proxy.close()

    ledger = CommitLedger(str(table))
    assert all(len(ledger.read(p).policy_commits) == 1 for p in ready)
    assert sorted(str(p.relative_to(table).parent) for p in Path(table).rglob("_SUCCESS")) == ready
    partitions = hive_sql(metastore, "SHOW PARTITIONS fscommit.faulty")
    assert sorted(p["partition"] for p in partitions) == ready
