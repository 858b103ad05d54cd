"""The whole pipeline on an S3 API server: status, compaction through spark-submit, commit.

Staging and checkpoint are a real Spark run placed on the server as S3A writes them
(``tests/s3_tables.py``); the CLI and the Spark job reach the server through the standard
AWS variables (``AWS_ENDPOINT_URL`` and keys), as on a real cluster with an S3-compatible
store.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.s3_tables import (
    assert_exactly_once,
    place_on_s3,
    staged_ids,
    success_files,
)

FSCOMMIT = str(Path(sys.executable).parent / "fscommit")


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
