"""Submitting the benchmarks' own Spark applications the way fscommit submits its job.

The same ``spark-submit``, environment and Python settings as
``airflow_provider_fscommit.jobs.launch``, and the same master: naive Spark and our job
then differ in what the application does, and in the class archive fscommit's launcher
gives its driver (``jobs/class_archive.py``; a user's own spark-submit has none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from airflow_provider_fscommit.jobs.launch import SparkInstallation, default_conf, submit_env
from bench.settings import REPO, SPARK_MASTER

JOBS = REPO / "bench" / "jobs"


def submit_command(
    application: str, arguments: Sequence[str], conf: Mapping[str, str] | None = None
) -> list[str]:
    """``spark-submit`` of ``bench/jobs/<application>.py`` with fscommit's defaults."""
    command = [SparkInstallation.locate().spark_submit, "--master", SPARK_MASTER]
    for key, value in default_conf(conf or {}).items():
        command += ["--conf", f"{key}={value}"]
    return [*command, str(JOBS / f"{application}.py"), *arguments]


def spark_env() -> dict[str, str]:
    """fscommit's spark-submit environment (pyspark's Spark home, loopback)."""
    return submit_env()
