"""``fscommit``'s exit codes and error lines, whatever the command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from airflow_provider_fscommit.cli.main import main
from fscommit_dev.tables import table_flags


def test_errors_are_one_line_with_exit_code_1(tmp_path, capsys):
    table = {
        "staging_path": str(tmp_path / "s"),
        "checkpoint_path": str(tmp_path / "nope"),
        "partition_keys": "dt",
    }
    code = main(["status", *table_flags(table)])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("fscommit: error: checkpoint ") and err.count("\n") == 1


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["status", "--staging-path", "/s"])
    assert exit_info.value.code == 2


def test_the_command_starts_without_loading_airflow():
    """``fscommit`` runs where Airflow is installed but not configured, and starts in a
    second or two: only ``--metastore-uri`` brings Airflow's hook, when it is given."""
    code = "import sys, airflow_provider_fscommit.cli.main; print('airflow' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.stdout.strip() == "False", loaded.stderr[-2000:]
