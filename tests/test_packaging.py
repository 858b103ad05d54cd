"""The built wheel works on its own: installed into a fresh venv as users and the Docker image
install it (scripts/install.sh, with the constraints), away from the source tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.compaction import compact_command
from tests.support.pythons import installed_venv
from tests.support.wheel import ROOT, run_wheel

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return run_wheel(tmp_path_factory)


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new venv with the wheel installed exactly as scripts/install.sh installs it.

    Kept (tests/support/pythons.py) under what decides its content: the wheel's files,
    ``constraints.txt``, ``install.sh`` and this Python; a change to any of them builds a
    new one, so the test still sees what a fresh install of this tree makes."""

    def install(path: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        installed = subprocess.run(
            [str(ROOT / "scripts" / "install.sh"), str(path / "bin" / "python"), f"{wheel}[spark]"],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    files = sorted((i.filename, i.CRC) for i in zipfile.ZipFile(wheel).infolist())
    inputs = [
        "packaging",
        files,
        *((ROOT / name).read_text() for name in ("constraints.txt", "scripts/install.sh")),
    ]
    scratch = tmp_path_factory.mktemp("venv") / "venv"
    return installed_venv(Path(sys.executable), inputs, install, scratch).parent


def run(venv: Path, *command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``command`` from the venv, in ``cwd`` (not the source tree), without this venv's path."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environ["PATH"] = f"{venv}:{environ['PATH']}"
    return subprocess.run(
        [str(venv / command[0]), *command[1:]],
        cwd=cwd,
        env=environ | env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_wheel_ships_the_provider_and_no_development_tooling(wheel):
    """A user's Airflow gets the provider alone: the demo, the loopback metastore launcher
    and its Java source, the tests, the benchmarks and ``fscommit_dev`` stay in the checkout."""
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"airflow_provider_fscommit"}
    tooling = [
        name
        for name in names
        if name.endswith((".java", "/demo.py"))
        or name.startswith("airflow_provider_fscommit/metastore/")
    ]
    assert not tooling, tooling


def test_the_installed_wheel_runs_the_cli_airflow_and_a_compaction(
    venv, spark, hourly_stream, tmp_path
):
    where = run(
        venv, "python", "-c", "import airflow_provider_fscommit as p; print(p.__file__)",
        cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.startswith(str(venv.parent)), where.stdout + where.stderr

    help_text = run(venv, "fscommit", "--help", cwd=tmp_path)
    assert help_text.returncode == 0, help_text.stderr
    assert "compact" in help_text.stdout and "expire" in help_text.stdout

    providers = run(
        venv, "airflow", "providers", "list", "--output", "plain", cwd=tmp_path,
        AIRFLOW_HOME=str(tmp_path / "airflow"),
    )  # fmt: skip
    assert providers.returncode == 0, providers.stderr
    assert "airflow-provider-fscommit" in providers.stdout

    table = tmp_path / "table"
    command = compact_command(
        hourly_stream.staging, hourly_stream.checkpoint, str(table), "--spark-master", "local[2]"
    )
    compacted = run(venv, "fscommit", *command[1:], cwd=tmp_path)
    assert compacted.returncode == 0, compacted.stderr
    report = json.loads(compacted.stdout)
    # The watermark is 03:10, the delay 1 h: hours 00 to 02 (from 02:00 + 1 h), late rows too.
    published = [p["partition"] for p in report["partitions"] if p["state"] == "published"]
    assert sorted(published) == [f"dt=2026-11-20/hour={hour:02d}" for hour in range(3)]
    assert spark.read.parquet(str(table)).count() == 3 * 3 + 2
