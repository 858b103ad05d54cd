"""Where the compaction application is launched from: the deployment's Spark first."""

from __future__ import annotations

import sys
from pathlib import Path

import pyspark
import pytest

from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.jobs.launch import SparkInstallation, default_conf

PYSPARK_HOME = Path(pyspark.__file__).resolve().parent


@pytest.fixture
def no_spark_settings(monkeypatch):
    for name in ("SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        monkeypatch.delenv(name, raising=False)


def test_without_settings_the_spark_extras_pyspark_submits_on_this_python(no_spark_settings):
    spark = SparkInstallation.locate()
    assert spark == SparkInstallation(str(PYSPARK_HOME / "bin" / "spark-submit"), str(PYSPARK_HOME))
    assert spark.env()["SPARK_HOME"] == str(PYSPARK_HOME)
    assert default_conf({}) == {
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }


def spark_home(base: Path) -> Path:
    home = base / "spark-3.5.9"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    return home


def test_the_deployments_spark_home_and_python_come_first(monkeypatch, tmp_path):
    home = spark_home(tmp_path)
    monkeypatch.setenv("SPARK_HOME", str(home))
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/cluster/python3.9")
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    spark = SparkInstallation.locate()
    assert spark.spark_submit == str(home / "bin" / "spark-submit")
    assert spark.env()["SPARK_HOME"] == str(home)
    assert default_conf({}) == {
        "spark.pyspark.python": "/opt/cluster/python3.9",
        "spark.pyspark.driver.python": "/opt/cluster/python3.9",
    }
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/usr/bin/python3.11")
    assert default_conf({})["spark.pyspark.driver.python"] == "/usr/bin/python3.11"


def test_an_explicit_spark_home_wins_and_a_wrong_one_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("SPARK_HOME", str(PYSPARK_HOME))
    home = spark_home(tmp_path)
    assert SparkInstallation.locate(str(home)).home == str(home)
    with pytest.raises(ConfigError, match=r"--spark-home .*/nowhere has no bin/spark-submit"):
        SparkInstallation.locate(str(tmp_path / "nowhere"))
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match=r"^SPARK_HOME .*/nowhere has no bin/spark-submit"):
        SparkInstallation.locate()


def test_a_named_spark_submit_keeps_the_home_it_finds_itself(no_spark_settings):
    """pyspark's home is never forced on another Spark's spark-submit."""
    assert SparkInstallation.locate(spark_submit="spark3-submit") == SparkInstallation(
        "spark3-submit", None
    )


def test_the_clusters_python_named_once_runs_the_driver_too(no_spark_settings, monkeypatch):
    """Spark's own order: spark.pyspark.python stands for the driver's unless it is set."""
    cluster = {"spark.pyspark.python": "/opt/cluster/python3.9"}
    assert default_conf(cluster)["spark.pyspark.driver.python"] == "/opt/cluster/python3.9"
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/usr/bin/python3.11")
    assert default_conf(cluster)["spark.pyspark.driver.python"] == "/opt/cluster/python3.9"
    both = cluster | {"spark.pyspark.driver.python": "/usr/bin/python3.11"}
    assert default_conf(both) == both
