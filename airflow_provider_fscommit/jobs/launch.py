"""How to launch the compaction application, shared by the Airflow hook and the CLI."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import airflow_provider_fscommit
from airflow_provider_fscommit.core.compaction.publisher import CompactionPublisher
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.jobs.compact import run_group

PACKAGE_DIR = Path(airflow_provider_fscommit.__file__).resolve().parent
APPLICATION = str(PACKAGE_DIR / "jobs" / "compact.py")


def default_spark_submit() -> str:
    """``spark-submit`` of the running environment (pyspark's), else the one on PATH."""
    beside = Path(sys.executable).parent / "spark-submit"
    return str(beside) if beside.exists() else shutil.which("spark-submit") or "spark-submit"


def submit_env() -> dict[str, str]:
    """Environment for spark-submit: pyspark's Spark home, and loopback unless set.

    pyspark's ``spark-submit`` looks for its home with whatever ``python3`` is on PATH,
    which need not be this environment's; naming it avoids that guess.
    """
    import pyspark

    env = dict(os.environ)
    env.setdefault("SPARK_HOME", str(Path(pyspark.__file__).resolve().parent))
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def default_conf() -> dict[str, str]:
    """Run the driver and the workers on this environment's Python (it has pyarrow).

    On a cluster whose nodes have another Python, override ``spark.pyspark.python``.
    """
    return {
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }


def package_zip(directory: str | None = None) -> str:
    """Zip this package for ``--py-files``, so executors on other hosts can import it."""
    target = (
        Path(directory or tempfile.mkdtemp(prefix="fscommit-")) / "airflow_provider_fscommit.zip"
    )
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE_DIR.rglob("*.py")):
            archive.write(path, path.relative_to(PACKAGE_DIR.parent))
    return str(target)


def job_arguments(
    spec: TableSpec, partitions: Sequence[str] | None, run_id: str, codec: str = "snappy"
) -> list[str]:
    """The application arguments of ``compact.py``."""
    args = ["--spec", spec.to_json(), "--run-id", run_id, "--codec", codec]
    for partition in partitions or ():
        args += ["--partition", partition]
    return args


def run_here_if_idle(
    spec: TableSpec, partitions: Sequence[str] | None, codec: str = "snappy"
) -> dict[str, Any] | None:
    """Finish a run that has nothing to compact without starting a Spark application.

    An hourly DAG meets idle hours and reruns of published ones; each would cost seconds
    of JVM start for no work. The dry run decides (it also refuses partitions that are not
    committable, before anything is submitted); the run itself is the same protocol, so
    recovery (discarding a crashed run's plan, finishing a publish) still happens. Should
    late rows arrive between the two looks, their units run in this process, with the same
    code the executors run. Returns None when there is work for Spark.
    """
    publisher = CompactionPublisher(spec, codec)
    if publisher.preview(partitions).plans:
        return None
    return publisher.run(run_group, partitions).to_dict()
