"""Extras as Airflow's providers make them: the base install is the core, the Spark provider
and pyarrow; each catalog's client is an extra (``hive``, ``glue``, ``iceberg``, ``s3``),
which the package never imports with itself. A policy used without its extra says which
to install (tests/core/commit/test_policy_factory.py, tests/hooks/); a venv with the base
package and the ``glue`` extra alone commits to Glue (tests/test_packaging.py)."""

from __future__ import annotations

import configparser
import json
import subprocess
import sys

from tests.support.extras import IMPORT_EVERY_MODULE
from tests.support.wheel import ROOT

CATALOG_PACKAGES = ("hive", "amazon", "iceberg", "boto", "thrift", "hmsclient")


def test_importing_every_module_imports_no_catalog_client(tmp_path):
    """In a process of its own (this one has imported them all by now): every module of
    the package, and not one module of an extra's packages (Hive's provider, hmsclient,
    Thrift, boto3, botocore, pyiceberg, the Amazon and Iceberg providers)."""
    probe = IMPORT_EVERY_MODULE + "\nprint(json.dumps({'failures': failures, 'loaded': loaded}))"
    found = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"AIRFLOW_HOME": str(tmp_path / "airflow"), "PATH": "/usr/bin:/bin"},
    )
    assert found.returncode == 0, found.stderr[-3000:]
    result = json.loads(found.stdout.splitlines()[-1])
    assert result == {"failures": {}, "loaded": []}


def test_the_base_install_requires_no_catalog_and_each_catalog_is_an_extra():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    base = config["options"]["install_requires"]
    assert not [name for name in CATALOG_PACKAGES if name in base], base
    extras = config["options.extras_require"]
    assert "apache-airflow-providers-apache-hive" in extras["hive"]
    assert {"apache-airflow-providers-amazon", "boto3"} <= set(_names(extras["glue"]))
    assert {"apache-airflow-providers-amazon", "boto3"} <= set(_names(extras["s3"]))
    assert "pyiceberg" in _names(extras["iceberg"])
    assert "apache-airflow-providers-apache-hive" in _names(extras["test"])  # the suite's


def _names(requirements: str) -> list[str]:
    return [
        line.strip().split("[")[0].split(">")[0].split("=")[0].split("<")[0]
        for line in requirements.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
