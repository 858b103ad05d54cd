"""The whole pipeline on an S3 API server: status, compaction through spark-submit, commit.

Staging and checkpoint are a real Spark run placed on the server as S3A writes them
(``fscommit_dev/s3_tables.py``); the CLI and the Spark job reach the server through the standard
AWS variables (``AWS_ENDPOINT_URL`` and keys), as on a real cluster with an S3-compatible
store.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fscommit_dev.s3_tables import (
    assert_exactly_once,
    place_on_s3,
    staged_ids,
    success_files,
)
from tests.support.compaction import FSCOMMIT
from tests.support.processes import communicate_all
from tests.support.s3_proxy import S3FaultProxy


def spec_file(tmp_path: Path, options: dict) -> str:
    path = tmp_path / "table.json"
    path.write_text(json.dumps(options))
    return str(path)


def fscommit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [FSCOMMIT, *args], capture_output=True, text=True, timeout=600, start_new_session=True
    )


@pytest.fixture
def s3_hourly(hourly_stream, s3_env, request):
    bucket = s3_env.create_bucket(f"cli-{request.node.name[5:30].replace('_', '-')}")
    return place_on_s3(hourly_stream, s3_env, bucket, "streams/events")


@pytest.mark.slow
def test_status_compact_and_commit_on_s3(s3_hourly, tmp_path):
    spec = spec_file(tmp_path, s3_hourly.spec())
    status = fscommit("status", "--spec", spec, "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    states = {p["partition"]: p["state"] for p in report["partitions"]}
    assert states["dt=2026-11-20/hour=00"] == "committable"
    assert states["dt=2026-11-20/hour=03"] == "pending"

    run = fscommit("commit", "--spec", spec, "--spark-master", "local[2]", "--json")
    assert run.returncode == 0, run.stderr
    staged = staged_ids(s3_hourly)
    committed = {"dt=2026-11-20/hour=00", "dt=2026-11-20/hour=01", "dt=2026-11-20/hour=02"}
    assert assert_exactly_once(s3_hourly, staged, committed) == sum(
        sum(staged[p].values()) for p in committed
    )
    assert sorted(success_files(s3_hourly)) == sorted(committed)

    again = fscommit("commit", "--spec", spec, "--spark-master", "local[2]", "--json")
    assert again.returncode == 0, again.stderr
    assert assert_exactly_once(s3_hourly, staged, committed)


@pytest.mark.slow
def test_three_concurrent_compactions_behind_a_slow_store_publish_each_partition_once(
    s3_hourly, s3_server, tmp_path
):
    """The scheduled run, a UI-triggered one and a backfill, on a store whose writes take
    0 to 1.5 s: the lock's lease is created once, so they take turns; each succeeds."""
    proxy = S3FaultProxy(s3_server.port, seed=7)
    proxy.configure(delay_s=1.5)
    spec = spec_file(tmp_path, s3_hourly.spec(policy_kind=""))
    env = {**os.environ, "AWS_ENDPOINT_URL": proxy.endpoint}
    try:
        runs = [
            subprocess.Popen(
                [FSCOMMIT, "compact", "--spec", spec, "--spark-master", "local[1]", "--json"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            for _ in range(3)
        ]
        results = list(communicate_all(dict(enumerate(runs)), 900).values())
    finally:
        proxy.close()
    assert [run.returncode for run in runs] == [0, 0, 0], [err[-1500:] for _, err in results]
    published = [
        p["partition"]
        for out, _ in results
        for p in json.loads(out)["partitions"]
        if p["state"] == "published"
    ]
    committable = {"dt=2026-11-20/hour=00", "dt=2026-11-20/hour=01", "dt=2026-11-20/hour=02"}
    assert sorted(published) == sorted(committable)  # by one run or another, once each
    assert assert_exactly_once(s3_hourly, staged_ids(s3_hourly), committable)
    assert proxy.counts["delayed"] > 0
