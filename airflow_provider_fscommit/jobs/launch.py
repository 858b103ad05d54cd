"""How to launch the compaction application, shared by the Airflow hook and the CLI.

:class:`CompactionSubmission` is the one description of what is submitted; the CLI turns
it into a spark-submit command line, the hook hands it to the Spark provider.
"""

from __future__ import annotations

import hashlib
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
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError

PACKAGE_DIR = Path(airflow_provider_fscommit.__file__).resolve().parent
APPLICATION = str(PACKAGE_DIR / "jobs" / "compact.py")
APPLICATION_NAME = "fscommit-compact"


@dataclass(frozen=True)
class SparkInstallation:
    """The Spark that runs the application: its ``spark-submit`` and its ``SPARK_HOME``.

    Found as the deployment has it, never assuming the Airflow side's pyspark wheel: an
    explicit Spark home (``--spark-home``), else ``$SPARK_HOME``; an explicit spark-submit
    (``--spark-submit``, the operator's ``spark_binary``, the Spark connection's
    ``spark-binary``) keeps the home it finds itself. Without either, the pyspark next to
    this Python when it carries Spark's jars (the ``spark`` extra; the Spark provider's
    ``pyspark-client`` has none), else ``spark-submit`` on PATH.
    """

    spark_submit: str
    home: str | None  # exported as SPARK_HOME; None: spark-submit finds its own

    @classmethod
    def locate(
        cls, spark_home: str | None = None, spark_submit: str | None = None
    ) -> SparkInstallation:
        home = spark_home or os.environ.get("SPARK_HOME") or None
        if spark_submit:
            return cls(spark_submit, home)
        if home is None:
            home = _pyspark_with_jars()
            if home is None:
                return cls(shutil.which("spark-submit") or "spark-submit", None)
        binary = Path(home) / "bin" / "spark-submit"
        if not binary.exists():
            named = "--spark-home" if spark_home else "SPARK_HOME"
            raise ConfigError(
                f"{named} {home} has no bin/spark-submit; point it at the Spark installation "
                "the cluster runs (the directory holding bin/ and jars/)"
            )
        return cls(str(binary), home)

    def env(self) -> dict[str, str]:
        """What spark-submit's environment needs: this Spark's home, and loopback unless
        this process says otherwise.

        pyspark's ``spark-submit`` looks for its home with whatever ``python3`` is on
        PATH, which need not be this environment's; naming it avoids that guess. Only
        these two: where the Spark provider copies the environment onto the command line
        (YARN, Kubernetes), the rest of this process's environment is not the
        application's business.
        """
        env = {"SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
        return env | ({"SPARK_HOME": self.home} if self.home else {})


def _pyspark_with_jars() -> str | None:
    """The pyspark package's directory when it is a whole Spark (its ``jars/``)."""
    try:
        import pyspark
    except ImportError:
        return None
    home = Path(pyspark.__file__).resolve().parent
    return str(home) if (home / "jars").is_dir() else None


def submit_env() -> dict[str, str]:
    """Environment for the located spark-submit: this process's, with what it needs."""
    return dict(os.environ) | SparkInstallation.locate().env()


def default_conf(conf: Mapping[str, Any]) -> dict[str, Any]:
    """``conf`` with the Pythons of the driver and the tasks filled in.

    In Spark's own order: the tasks run ``spark.pyspark.python``, else ``$PYSPARK_PYTHON``;
    the driver ``spark.pyspark.driver.python``, else ``spark.pyspark.python``, else
    ``$PYSPARK_DRIVER_PYTHON``, else ``$PYSPARK_PYTHON``. Where none is set, this
    environment's Python (Spark would take whatever ``python3`` is on PATH). So a
    cluster's Python named once, as ``spark.pyspark.python``, runs the driver too.
    """
    python = conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")
    driver = (
        conf.get("spark.pyspark.driver.python")
        or conf.get("spark.pyspark.python")
        or os.environ.get("PYSPARK_DRIVER_PYTHON")
        or python
    )
    defaults = {
        "spark.pyspark.python": python or sys.executable,
        "spark.pyspark.driver.python": driver or sys.executable,
    }
    return defaults | dict(conf)


def package_zip(directory: str | None = None) -> str:
    """Zip this package for ``--py-files``, so executors on other hosts can import it."""
    target = (
        Path(directory or tempfile.mkdtemp(prefix="fscommit-")) / "airflow_provider_fscommit.zip"
    )
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in _package_files(PACKAGE_DIR):
            archive.write(path, path.relative_to(PACKAGE_DIR.parent))
    return str(target)


def package_digest(package: Path = PACKAGE_DIR) -> str:
    """A hash of the code :func:`package_zip` ships: each file's name and content.

    Not of the zip itself, whose entries carry the files' modification times: the same
    code installed twice hashes the same, and it is known without zipping it.
    """
    digest = hashlib.sha256()
    for path in _package_files(package):
        name = path.relative_to(package).as_posix().encode()
        content = path.read_bytes()
        digest.update(b"%d:%s%d:" % (len(name), name, len(content)))
        digest.update(content)
    return digest.hexdigest()


def _package_files(package: Path) -> list[Path]:
    """The package's Python sources, in a stable order: what travels to the executors."""
    return sorted(package.rglob("*.py"))


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
        spark: SparkInstallation | None = None,
    ) -> CompactionSubmission:
        """A new run: the package zipped into ``scratch`` (which must outlive the run);
        ``conf`` through :func:`default_conf`, ``env`` over what ``spark`` (default: the
        located installation) needs."""
        run_id = uuid.uuid4().hex
        return cls(
            run_id=run_id,
            application_args=tuple(job_arguments(spec, partitions, run_id, codec)),
            py_files=package_zip(scratch),
            conf=default_conf(conf or {}),
            env=(spark or SparkInstallation.locate()).env() | dict(env or {}),
        )

    def command(self, spark_submit: str, master: str) -> list[str]:
        """The spark-submit command line, for a caller without the Spark provider."""
        command = [spark_submit, "--master", master, "--name", self.name]
        for key, value in self.conf.items():
            command += ["--conf", f"{key}={value}"]
        return [*command, "--py-files", self.py_files, self.application, *self.application_args]
