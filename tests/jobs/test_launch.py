"""Where the compaction application is launched from: the deployment's Spark first."""

from __future__ import annotations

import sys
from pathlib import Path

import pyspark

from airflow_provider_fscommit.jobs.launch import (
    default_conf,
    default_spark_submit,
    spark_env_defaults,
)

PYSPARK_HOME = Path(pyspark.__file__).resolve().parent


def test_without_settings_pyspark_next_to_this_python_submits_on_this_python(monkeypatch):
    for name in ("SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        monkeypatch.delenv(name, raising=False)
    assert default_spark_submit() == str(Path(sys.executable).parent / "spark-submit")
    assert spark_env_defaults()["SPARK_HOME"] == str(PYSPARK_HOME)
    assert default_conf() == {
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }


def test_the_deployments_spark_home_and_python_come_first(monkeypatch, tmp_path):
    spark_home = tmp_path / "spark-3.5.9"
    (spark_home / "bin").mkdir(parents=True)
    (spark_home / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    monkeypatch.setenv("SPARK_HOME", str(spark_home))
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/cluster/python3.9")
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    assert default_spark_submit() == str(spark_home / "bin" / "spark-submit")
    assert spark_env_defaults()["SPARK_HOME"] == str(spark_home)
    assert default_conf() == {
        "spark.pyspark.python": "/opt/cluster/python3.9",
        "spark.pyspark.driver.python": "/opt/cluster/python3.9",
    }
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/usr/bin/python3.11")
    assert default_conf()["spark.pyspark.driver.python"] == "/usr/bin/python3.11"
