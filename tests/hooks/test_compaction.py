"""The compaction hook: how an AWS connection's S3 settings reach spark-submit."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.hooks.aws import s3_settings
from airflow_provider_fscommit.hooks.compaction import CompactionHook


@pytest.mark.parametrize(
    ("spark_conn", "keys_passed"), [("spark_local", True), ("spark_yarn", False)]
)
def test_credentials_reach_spark_submit_only_through_an_environment_it_keeps(
    aws_tables_secret, spark_conn, keys_passed
):
    """The Spark provider turns env_vars into --conf arguments for YARN and Kubernetes:
    there the application uses the cluster's identity and gets only endpoint and region."""
    hook = CompactionHook(conn_id=spark_conn, aws_conn_id="aws_tables")
    env = hook._aws_env(s3_settings("aws_tables"))
    assert env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9" and env["AWS_REGION"] == "eu-west-3"
    assert (env.get("AWS_SECRET_ACCESS_KEY") == aws_tables_secret) is keys_passed
    assert ("AWS_ACCESS_KEY_ID" in env) is keys_passed
