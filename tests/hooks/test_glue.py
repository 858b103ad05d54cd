"""``GlueHook``: Glue clients from an Airflow AWS connection or boto3's standard chain,
used by the commit hook's glue policy; the connection's secret never shows."""

from __future__ import annotations

import json
import logging

import pytest

from airflow_provider_fscommit.core.errors import MissingExtraError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.hooks.commit import PartitionCommitHook
from airflow_provider_fscommit.hooks.glue import GlueHook, glue_client_factory
from fscommit_dev.s3_server import REGION, aws_connection_env
from tests.support.compaction import published_ledger
from tests.support.extras import without_extra
from tests.support.glue import create_glue_table, glue_partitions, glue_table_spec

SECRET = "glue-connection-secret-7Qz"


def test_a_connection_gives_the_client_its_endpoint_region_and_keys(s3_server, monkeypatch):
    for key, value in aws_connection_env(s3_server, "aws_glue", SECRET).items():
        monkeypatch.setenv(key, value)
    client = GlueHook("aws_glue").get_conn()
    assert client.meta.region_name == REGION and client.meta.endpoint_url == s3_server.endpoint
    assert client.meta.config.retries["mode"] == "standard"
    assert client._request_signer._credentials.secret_key == SECRET


def test_without_a_connection_the_standard_chain_applies(s3_env):
    client = glue_client_factory(None)()
    assert client.meta.region_name == REGION and client.meta.endpoint_url == s3_env.endpoint


def test_the_commit_hook_commits_to_glue_through_the_connection_without_showing_its_secret(
    s3_server, monkeypatch, tmp_path, caplog, capfd
):
    for key, value in aws_connection_env(s3_server, "aws_glue", SECRET).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    create_glue_table(s3_server.client("glue"), "fscommit", "hooked", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "hooked")
    published_ledger(spec, "dt=2026-11-20/hour=00", rows=3)
    caplog.set_level(logging.DEBUG)
    hook = PartitionCommitHook(aws_conn_id="aws_glue")
    outcomes = hook.commit(spec, ["dt=2026-11-20/hour=00"], origin={"dag_id": "d"})
    assert [o.state for o in outcomes] == ["committed"]
    held = glue_partitions(s3_server.client("glue"), "fscommit", "hooked")
    assert held[("2026-11-20", "00")]["Parameters"]["numRows"] == "3"
    ledger = CommitLedger(spec.table_path).read("dt=2026-11-20/hour=00")
    out, err = capfd.readouterr()
    for shown in (caplog.text, out, err, json.dumps(ledger.policy_commits, default=str)):
        assert SECRET not in shown


def test_without_the_glue_extra_a_client_names_the_extra(monkeypatch):
    """boto3 and the Amazon provider are the ``glue`` extra's: a client asked for without
    them, with or without a connection, says to install it."""
    without_extra(monkeypatch, "glue")
    for aws_conn_id in (None, "aws_glue"):
        with pytest.raises(MissingExtraError) as refused:
            GlueHook(aws_conn_id).get_conn()
        assert str(refused.value).startswith("the glue policy (the AWS Glue Data Catalog) needs")
        assert str(refused.value).endswith("pip install 'airflow-provider-fscommit[glue]'")
