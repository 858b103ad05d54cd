"""Staging retention: only published staged files past the age are deleted; the sink log, the
checkpoint and everything not yet published stay."""

from __future__ import annotations

import json
import os
from pathlib import Path

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.operators.clean_staging import CleanStagingOperator
from tests.support.compaction import clean_args, compact, table_options


def tree(root: str) -> dict[str, int]:
    return {
        os.path.relpath(os.path.join(d, f), root): os.stat(os.path.join(d, f)).st_mtime_ns
        for d, _, files in os.walk(root)
        for f in files
    }


def clean(stream, table: Path, capsys, *extra: str) -> dict:
    assert main(clean_args(stream, table, *extra)) == 0
    return json.loads(capsys.readouterr().out)


def test_only_published_staged_files_older_than_the_age_are_deleted(
    hourly_stream, tmp_path, capsys
):
    stream, table = hourly_stream, tmp_path / "table"
    assert compact(stream.staging, stream.checkpoint, str(table)).returncode == 0
    ledger = CommitLedger(str(table))
    published = {
        os.path.relpath(uri.removeprefix("file://"), stream.staging)
        for partition in ("dt=2026-11-20/hour=00", "dt=2026-11-20/hour=01", "dt=2026-11-20/hour=02")
        for uri in ledger.read(partition).published_inputs
    }
    assert published
    staging_before, checkpoint_before = tree(stream.staging), tree(stream.checkpoint)

    assert clean(stream, table, capsys, "--older-than", "7d")["count"] == 0
    dry = clean(stream, table, capsys, "--older-than", "0s", "--dry-run")
    assert {f["path"] for f in dry["files"]} == published
    assert tree(stream.staging) == staging_before

    done = clean(stream, table, capsys, "--older-than", "0s")
    assert {f["path"] for f in done["files"]} == published
    left = tree(stream.staging)
    assert set(staging_before) - set(left) == published
    assert all(left[p] == staging_before[p] for p in left)  # the sink log included
    assert tree(stream.checkpoint) == checkpoint_before

    # The published table does not need them: a rerun has nothing to do, without Spark.
    again = compact(stream.staging, stream.checkpoint, str(table), "--spark-submit", "/bin/false")
    assert again.returncode == 0, again.stderr
    assert {p["state"] for p in json.loads(again.stdout)["partitions"]} == {"up-to-date"}
    operator = CleanStagingOperator(
        task_id="clean", table=table_options(stream, str(table)), older_than="0 s"
    )
    assert operator.execute({})["count"] == 0
