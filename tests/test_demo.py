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
