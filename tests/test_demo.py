"""The README's main command: stream, compact, commit, and read back through Hive."""

import re
import subprocess
import sys

import pytest

from fscommit_dev.streams import ROOT, spark_env


@pytest.mark.slow
def test_demo_commits_partitions_that_hive_reads_back_completely(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fscommit_dev.demo",
            "--output",
            str(tmp_path),
            "--seconds",
            "16",
        ],
        capture_output=True,
        text=True,
        env=spark_env(),
        cwd=ROOT,  # fscommit_dev is importable from the checkout only
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "committed (metastore, success-file)" in out
    hive_rows = sum(
        int(n)
        for n in re.findall(r"^\|\d{4}-\d{2}-\d{2}\|\d{2}\s*\|(\d+)\s*\|$", out, re.MULTILINE)
    )
    staged_rows = int(
        re.search(r"Rows in the sink log for the same \d+ partition\(s\): (\d+)", out).group(1)
    )
    assert hive_rows == staged_rows > 0
    assert not (tmp_path / "metastore" / "metastore.pid").exists()  # stopped by PID


@pytest.mark.slow
def test_the_iceberg_demo_commits_partitions_that_pyiceberg_reads_back_completely(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "fscommit_dev.demo", "--output", str(tmp_path), "--seconds", "16",
         "--catalog", "iceberg"],
        capture_output=True,
        text=True,
        env=spark_env(),
        cwd=ROOT,
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "committed (iceberg, success-file)" in out
    iceberg_rows = sum(
        int(n) for n in re.findall(r"^\d{4}-\d{2}-\d{2}  \d{2}    (\d+)$", out, re.MULTILINE)
    )
    staged_rows = int(
        re.search(r"Rows in the sink log for the same \d+ partition\(s\): (\d+)", out).group(1)
    )
    assert iceberg_rows == staged_rows > 0
    assert re.search(r"^table property fscommit.complete-through = 2026-11-20T", out, re.M)
    assert not (tmp_path / "metastore").exists()  # no Hive metastore in this variant
