"""Airflow connections of the hook tests, as environment variables (how Airflow reads them)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def aws_tables_secret(monkeypatch, tmp_path) -> str:
    """Connections ``aws_tables`` (keys, endpoint, region), ``spark_local`` and
    ``spark_yarn``; returns the secret key ``aws_tables`` holds."""
    secret = "connection-secret-Kq7"
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    monkeypatch.setenv(
        "AIRFLOW_CONN_AWS_TABLES",
        json.dumps(
            {
                "conn_type": "aws",
                "login": "AKIATABLES",
                "password": secret,
                "extra": {"endpoint_url": "http://127.0.0.1:9", "region_name": "eu-west-3"},
            }
        ),
    )
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", "spark://local%5B2%5D")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN", "spark://yarn")
    return secret
