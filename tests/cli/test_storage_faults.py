"""Storage faults: each yields one clear error naming the file, and nothing is published.

Real files of a real streaming query, damaged the ways crashes and operators damage them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.tables import hourly_table, table_flags
from tests.support.compaction import compact
from tests.support.damage import truncate


def status(stream, capsys) -> tuple[int, str, str]:
    table = table_flags(hourly_table(stream.staging, stream.checkpoint))
    code = main(["status", *table, "--json", "--stall-timeout", "365 d"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def timeless(out: str) -> dict:
    """A status document without the fields that move with the wall clock."""
    moving = ("age", "lag")
    return {
        k: v
        for k, v in json.loads(out).items()
        if not any(m in k for m in moving) and k != "now_ms"
    }


def newest(directory: Path) -> Path:
    files = [p for p in directory.iterdir() if not p.name.startswith(".")]
    return max(files, key=lambda p: int(p.name.split(".")[0]))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("offsets", "offsets"),
        ("commits", "commits"),
        ("sink-log", "_spark_metadata"),
    ],
)
def test_a_truncated_checkpoint_or_sink_log_file_is_named(hourly_stream, capsys, damage, message):
    directory = {
        "offsets": Path(hourly_stream.checkpoint, "offsets"),
        "commits": Path(hourly_stream.checkpoint, "commits"),
        "sink-log": Path(hourly_stream.staging, "_spark_metadata"),
    }[damage]
    victim = newest(directory)
    truncate(victim, len(victim.read_bytes()) // 2)
    code, _, err = status(hourly_stream, capsys)
    assert code == 1 and err.startswith("fscommit: error:") and err.count("\n") == 1
    assert str(victim) in err or victim.name in err, err
    assert message in err


def test_temporary_files_left_by_a_crash_are_ignored(hourly_stream, capsys):
    code, before, _ = status(hourly_stream, capsys)
    assert code == 0
    for directory in (
        Path(hourly_stream.checkpoint, "offsets"),
        Path(hourly_stream.checkpoint, "commits"),
        Path(hourly_stream.staging, "_spark_metadata"),
    ):
        (directory / f".{newest(directory).name}.0f1e2d3c.tmp").write_text("{half")
    code, after, err = status(hourly_stream, capsys)
    assert code == 0, err
    assert timeless(after) == timeless(before)


def test_a_staged_file_listed_in_the_log_but_missing_fails_its_partition_only(
    hourly_stream, tmp_path
):
    victim = sorted(Path(hourly_stream.staging, "dt=2026-11-20", "hour=01").glob("*.parquet"))[0]
    victim.unlink()
    table = tmp_path / "table"
    result = compact(hourly_stream.staging, hourly_stream.checkpoint, str(table))
    assert result.returncode == 1
    outcomes = {p["partition"]: p for p in json.loads(result.stdout)["partitions"]}
    failed = outcomes["dt=2026-11-20/hour=01"]
    assert failed["state"] == "failed" and victim.name in failed["error"]
    assert outcomes["dt=2026-11-20/hour=00"]["state"] == "published"
    assert not list((table / "dt=2026-11-20" / "hour=01").glob("*"))
    assert not CommitLedger(str(table)).read("dt=2026-11-20/hour=01").commits


def test_a_temporary_file_in_the_ledger_is_ignored_and_a_corrupt_record_named(
    hourly_stream, tmp_path
):
    table = tmp_path / "table"
    assert compact(hourly_stream.staging, hourly_stream.checkpoint, str(table)).returncode == 0
    records = table / "_fscommit" / "partitions" / "dt=2026-11-20" / "hour=00"
    (records / ".commit-0.json.1a2b3c4d.tmp").write_text("{half")
    again = compact(hourly_stream.staging, hourly_stream.checkpoint, str(table))
    assert again.returncode == 0, again.stderr
    commit = next(records.glob("commit-*.json"))
    truncate(commit, 10)
    # A run reads a partition's records when it needs them: here the first run of a table
    # without its table state yet (the layout of a release before), which reads them all.
    shutil.rmtree(table / "_fscommit" / "state")
    broken = compact(hourly_stream.staging, hourly_stream.checkpoint, str(table))
    assert broken.returncode == 1
    assert f"ledger record {commit} is unreadable" in broken.stderr


@pytest.fixture
def small_disk(tmp_path):
    """The table directory on a 12 KB tmpfs (fault injection: a full, then read-only disk)."""
    import subprocess

    mount = tmp_path / "table"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(mount)]).returncode:
        pytest.skip("mounting a tmpfs needs root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.mark.slow  # a small filesystem mounted full, then read-only: ~40 s
def test_a_full_or_read_only_table_directory_fails_clearly_and_publishes_nothing(
    spark, hourly_stream, small_disk, tmp_path
):
    import subprocess

    from tests.support.compaction import check_exactly_once

    full = compact(hourly_stream.staging, hourly_stream.checkpoint, str(small_disk))
    assert full.returncode == 1
    assert "fscommit: error: cannot write" in full.stderr and "No space left" in full.stderr
    assert full.stderr.count("fscommit: error:") == 1, full.stderr[-3000:]
    assert not [p for p in small_disk.rglob("*.parquet")]
    assert not [p for p in small_disk.rglob(".*.tmp")]

    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    read_only = compact(hourly_stream.staging, hourly_stream.checkpoint, str(small_disk))
    assert read_only.returncode == 1
    assert "Read-only file system" in read_only.stderr, read_only.stderr[-3000:]
    assert read_only.stderr.count("fscommit: error:") == 1, read_only.stderr[-3000:]
    assert "Traceback" not in full.stderr + read_only.stderr

    # Room again: the rerun recovers the failed run's plans and publishes exactly once.
    subprocess.run(["mount", "-o", "remount,rw,size=4m", str(small_disk)], check=True)
    again = compact(hourly_stream.staging, hourly_stream.checkpoint, str(small_disk))
    assert again.returncode == 0, again.stderr[-3000:]
    ready = {("2026-11-20", h) for h in ("00", "01", "02")}
    check_exactly_once(spark, hourly_stream.staging, str(small_disk), complete=ready)
