"""How to launch the compaction application, shared by the Airflow hook and the CLI.

:class:`CompactionSubmission` is the one description of what is submitted; the CLI turns
it into a spark-submit command line, the hook hands it to the Spark provider.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import airflow_provider_fscommit
from airflow_provider_fscommit.core.compaction.publisher import CompactionPublisher
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.jobs.compact import run_group

PACKAGE_DIR = Path(airflow_provider_fscommit.__file__).resolve().parent
APPLICATION = str(PACKAGE_DIR / "jobs" / "compact.py")
APPLICATION_NAME = "fscommit-compact"


def default_spark_submit() -> str:
    """The ``spark-submit`` to run: ``$SPARK_HOME``'s, else pyspark's next to this Python,
    else the one on PATH (a deployment's Spark comes first, never assumed to be a wheel's)."""
    spark_home = os.environ.get("SPARK_HOME")
    candidates = [Path(spark_home) / "bin" / "spark-submit"] if spark_home else []
    candidates.append(Path(sys.executable).parent / "spark-submit")
    found = next((str(c) for c in candidates if c.exists()), None)
    return found or shutil.which("spark-submit") or "spark-submit"


def submit_env() -> dict[str, str]:
    """Environment for spark-submit: this process's, with :func:`spark_env_defaults`."""
    return dict(os.environ) | spark_env_defaults()


def spark_env_defaults() -> dict[str, str]:
    """pyspark's Spark home, and loopback, unless this process's environment sets them.

    pyspark's ``spark-submit`` looks for its home with whatever ``python3`` is on PATH,
    which need not be this environment's; naming it avoids that guess. Only these two:
    where the Spark provider copies the environment onto the command line (YARN,
    Kubernetes), the rest of this process's environment is not the application's business.
    """
    spark_home = os.environ.get("SPARK_HOME")
    if not spark_home:
        import pyspark

        spark_home = str(Path(pyspark.__file__).resolve().parent)
    return {
        "SPARK_HOME": spark_home,
        "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
    }


def default_conf() -> dict[str, str]:
    """Run the driver and the workers on ``PYSPARK_PYTHON`` where the deployment sets it
    (Spark's own variable for the cluster's Python), else on this environment's Python.

    On a cluster whose nodes have another Python, set ``PYSPARK_PYTHON`` or override
    ``spark.pyspark.python``.
    """
    python = os.environ.get("PYSPARK_PYTHON") or sys.executable
    return {
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": os.environ.get("PYSPARK_DRIVER_PYTHON") or python,
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


@dataclass(frozen=True)
class CompactionSubmission:
    """One run of the compaction application: everything about what Spark is asked to run.

    Built once (:meth:`prepare`) for both ways of submitting it, so the CLI and the Airflow
    hook cannot drift apart on the application, its arguments, the shipped package, the
    conf or the environment. Where it runs (master, deploy mode, spark-submit binary) is
    the caller's: the CLI's flags, or the hook's Spark connection, whose command line and
    driver tracking stay the Spark provider's ``SparkSubmitHook``'s.
    """

    run_id: str  # the ledger key of the run's summary
    application_args: tuple[str, ...]
    py_files: str  # this package zipped, for executors on other hosts
    conf: dict[str, Any]
    env: dict[str, str]  # added to spark-submit's environment
    application: str = APPLICATION
    name: str = APPLICATION_NAME

    @classmethod
    def prepare(
        cls,
        spec: TableSpec,
        partitions: Sequence[str] | None,
        scratch: str,
        *,
        codec: str = "snappy",
        conf: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CompactionSubmission:
        """A new run: the package zipped into ``scratch`` (which must outlive the run);
        ``conf`` over :func:`default_conf`, ``env`` over :func:`spark_env_defaults`."""
        run_id = uuid.uuid4().hex
        return cls(
            run_id=run_id,
            application_args=tuple(job_arguments(spec, partitions, run_id, codec)),
            py_files=package_zip(scratch),
            conf=default_conf() | dict(conf or {}),
            env=spark_env_defaults() | dict(env or {}),
        )

    def command(self, spark_submit: str, master: str) -> list[str]:
        """The spark-submit command line, for a caller without the Spark provider."""
        command = [spark_submit, "--master", master, "--name", self.name]
        for key, value in self.conf.items():
            command += ["--conf", f"{key}={value}"]
        return [*command, "--py-files", self.py_files, self.application, *self.application_args]


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
