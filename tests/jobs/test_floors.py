"""The compaction job refuses a Python or pyarrow below its floors at its start."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from airflow_provider_fscommit.jobs.floors import refusal, runtime
from tests.support.compaction import compact
from tests.support.pythons import fresh_venv


def test_the_running_environment_is_above_the_floors():
    assert refusal("driver", runtime()) is None


@pytest.mark.parametrize(
    ("found", "named"),
    [
        (("3.8.18", "17.0.0"), "Python 3.8.18 (the floor is 3.9)"),
        (("3.11.7", "14.0.2"), "pyarrow 14.0.2 (the floor is 15.0)"),
        (("3.11.7", None), "no pyarrow (the floor is 15.0)"),
        (("3.8.10", "26.0.0.dev12"), "Python 3.8.10 (the floor is 3.9)"),
    ],
)
def test_a_runtime_below_a_floor_is_refused_naming_it_and_the_conf(found, named):
    message = refusal("executors", found)
    assert message is not None and named in message
    assert "spark.pyspark.python" in message and "nothing was planned or written" in message
    assert "spark.pyspark.driver.python" in refusal("driver", found)


@pytest.mark.parametrize("found", [("3.9.0", "15.0.0"), ("3.13.0", "26.0.1"), ("3.10.1", "16.1")])
def test_a_runtime_at_or_above_the_floors_passes(found):
    assert refusal("executors", found) is None


@pytest.fixture(scope="module")
def old_pyarrow_python(tmp_path_factory) -> Path:
    """A Python whose own pyarrow (14) shadows this environment's, which it otherwise sees."""
    venv = tmp_path_factory.mktemp("pyarrow14") / "venv"
    python = fresh_venv(Path(sys.executable), venv, "pyarrow==14.0.2", "numpy<2")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "main-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.mark.slow
def test_executors_with_an_old_pyarrow_are_refused_before_anything_is_planned(
    old_pyarrow_python, hourly_stream, tmp_path
):
    table = tmp_path / "table"
    result = compact(
        hourly_stream.staging,
        hourly_stream.checkpoint,
        str(table),
        "--conf",
        f"spark.pyspark.python={old_pyarrow_python}",
        # The driver is fine: it would otherwise run spark.pyspark.python too, as in Spark.
        "--conf",
        f"spark.pyspark.driver.python={sys.executable}",
    )
    assert result.returncode != 0, result.stdout[-2000:] + result.stderr[-3000:]
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("fscommit: error")]
    assert "executors run pyarrow 14.0.2 (the floor is 15.0)" in error
    assert "spark.pyspark.python" in error
    # Nothing planned: no ledger, no plan, no published file.
    assert not table.exists() or not any(table.rglob("*"))
