"""The compaction hook: it hands the Spark provider the one description of a run the
launcher makes (the CLI submits the same), and an AWS connection's S3 settings reach
spark-submit only through an environment it keeps."""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.hooks.aws import s3_settings
from airflow_provider_fscommit.hooks.compaction import CompactionHook
from airflow_provider_fscommit.jobs.launch import APPLICATION, CompactionSubmission
from fscommit_dev.tables import hourly_table

SPARK_SUBMIT = "/opt/spark/bin/spark-submit"


def parts(command: list[str]) -> tuple[str, list[tuple[str, str]], list[str]]:
    """spark-submit, its options as sorted (flag, value) pairs, the application and its args."""
    options, rest = [], command[1:]
    while rest[0].startswith("--"):
        options.append((rest[0], rest[1]))
        rest = rest[2:]
    return command[0], sorted(options), rest


def test_the_spark_provider_is_handed_what_the_cli_submits(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", "spark://local%5B2%5D")
    spec = TableSpec.from_options(
        hourly_table(
            str(tmp_path / "staging"),
            str(tmp_path / "checkpoint"),
            table_path=str(tmp_path / "table"),
        )
    )
    submission = CompactionSubmission.prepare(
        spec,
        ["dt=2026-11-20/hour=03"],
        str(tmp_path),
        codec="zstd",
        conf={"spark.sql.shuffle.partitions": "4"},
        env={"AWS_REGION": "eu-west-3"},
    )
    hook = CompactionHook(conn_id="spark_local", spark_binary=SPARK_SUBMIT)
    provider = hook._spark_submit_hook(submission, hook._spark_installation(), {})
    from_hook = provider._build_spark_submit_command(submission.application)
    from_cli = submission.command(SPARK_SUBMIT, "local[2]")
    assert parts(from_hook) == parts(from_cli)
    binary, options, application = parts(from_cli)
    assert ("--conf", "spark.sql.shuffle.partitions=4") in options
    assert binary == SPARK_SUBMIT and ("--name", "fscommit-compact") in options
    assert application[0] == APPLICATION
    assert application[application.index("--run-id") + 1] == submission.run_id
    assert application[application.index("--codec") + 1] == "zstd"
    # What spark-submit's process gets on top of the environment (a local master: all of it).
    assert provider._env == submission.env
    assert submission.env["AWS_REGION"] == "eu-west-3" and "SPARK_HOME" in submission.env


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


def test_the_spark_connections_spark_binary_submits_unless_the_operator_names_one(
    monkeypatch, tmp_path
):
    """As the Spark provider's own operator: a cluster whose Spark is ``spark3-submit`` on
    PATH says so in the connection; that Spark then finds its own home."""
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setenv(
        "AIRFLOW_CONN_SPARK_CLUSTER",
        json.dumps(
            {"conn_type": "spark", "host": "spark://127.0.0.1", "port": 7077,
             "extra": {"spark-binary": "spark3-submit"}}
        ),
    )  # fmt: skip
    spec = TableSpec.from_options(
        hourly_table(str(tmp_path / "s"), str(tmp_path / "c"), table_path=str(tmp_path / "t"))
    )
    for spark_binary, expected in ((None, "spark3-submit"), (SPARK_SUBMIT, SPARK_SUBMIT)):
        hook = CompactionHook(conn_id="spark_cluster", spark_binary=spark_binary)
        spark = hook._spark_installation()
        submission = CompactionSubmission.prepare(spec, None, str(tmp_path), spark=spark)
        provider = hook._spark_submit_hook(submission, spark, {})
        command = provider._build_spark_submit_command(submission.application)
        assert command[0] == expected
        assert ("--master", "spark://127.0.0.1:7077") in parts(command)[1]
        assert "SPARK_HOME" not in submission.env
