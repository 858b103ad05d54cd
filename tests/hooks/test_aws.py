"""S3 settings from an Airflow AWS connection, and how they reach spark-submit."""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.hooks.aws import s3_settings
from airflow_provider_fscommit.hooks.compaction import CompactionHook

SECRET = "connection-secret-Kq7"


@pytest.fixture
def connections(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    monkeypatch.setenv(
        "AIRFLOW_CONN_AWS_TABLES",
        json.dumps(
            {
                "conn_type": "aws",
                "login": "AKIATABLES",
                "password": SECRET,
                "extra": {"endpoint_url": "http://127.0.0.1:9", "region_name": "eu-west-3"},
            }
        ),
    )
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", "spark://local%5B2%5D")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN", "spark://yarn")


def test_a_connection_gives_endpoint_region_and_keys(connections):
    settings = s3_settings("aws_tables")
    assert settings.endpoint_url == "http://127.0.0.1:9" and settings.region == "eu-west-3"
    assert settings.credentials.access_key == "AKIATABLES"
    assert settings.credentials.secret_key == SECRET
    assert SECRET not in repr(settings)  # secrets never print
    assert s3_settings(None) is None  # the standard chain, without the Amazon provider


@pytest.mark.parametrize(
    ("spark_conn", "keys_passed"), [("spark_local", True), ("spark_yarn", False)]
)
def test_credentials_reach_spark_submit_only_through_an_environment_it_keeps(
    connections, spark_conn, keys_passed
):
    """The Spark provider turns env_vars into --conf arguments for YARN and Kubernetes:
    there the application uses the cluster's identity and gets only endpoint and region."""
    hook = CompactionHook(conn_id=spark_conn, aws_conn_id="aws_tables")
    env = hook._aws_env(s3_settings("aws_tables"))
    assert env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9" and env["AWS_REGION"] == "eu-west-3"
    assert (env.get("AWS_SECRET_ACCESS_KEY") == SECRET) is keys_passed
    assert ("AWS_ACCESS_KEY_ID" in env) is keys_passed
