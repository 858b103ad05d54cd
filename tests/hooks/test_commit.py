"""``PartitionCommitHook``: the policy chain over the hooks' connections, one outcome per
partition (the operator's asset events and skips: tests/operators/test_commit.py; the
policies against a real metastore: tests/core/commit)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from airflow_provider_fscommit.core.commit.committer import CommitState
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.hooks.commit import PartitionCommitHook
from fscommit_dev.tables import hourly_table
from tests.support.compaction import published_ledger

HOUR = "dt=2026-11-20/hour=03"


@pytest.fixture(autouse=True)
def airflow_home(monkeypatch, tmp_path) -> None:
    """An Airflow home of its own: connections come from the environment only."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))


def table(tmp_path, **options: Any) -> TableSpec:
    return TableSpec.from_options(
        hourly_table(
            str(tmp_path / "staging"),
            str(tmp_path / "checkpoint"),
            table_path=str(tmp_path / "table"),
            **{"sink.partition-commit.policy.kind": "success-file"} | options,
        )
    )


def test_connections_the_chain_does_not_use_are_never_looked_up(tmp_path):
    spec = table(tmp_path)
    published_ledger(spec, HOUR, rows=4)
    hook = PartitionCommitHook("no_such_metastore", aws_conn_id=None, http_conn_id="no_such_http")
    origin = {"dag_id": "d", "run_id": "r", "task_id": "t", "map_index": -1}
    (outcome,) = hook.commit(spec, [HOUR], origin=origin)
    assert outcome.partition == HOUR and outcome.state is CommitState.COMMITTED
    assert outcome.summary.rows == 4
    assert (tmp_path / "table" / HOUR / "_SUCCESS").exists()
    (record,) = CommitLedger(spec.table_path).read(HOUR).policy_commits.values()
    assert record["origin"] == origin
    (again,) = hook.commit(spec, [HOUR])
    assert again.state is CommitState.UP_TO_DATE


def test_a_partition_with_nothing_published_is_logged_with_the_fix(tmp_path, capsys):
    spec = table(tmp_path)
    (outcome,) = PartitionCommitHook().commit(spec, [HOUR])
    assert outcome.state is CommitState.NOTHING_PUBLISHED
    logged = capsys.readouterr().out  # Airflow's logging writes the hook's lines there
    assert f"{HOUR}: nothing committed: no files of it are published" in logged
    assert "set commit_empty_partitions=True to mark an empty partition done" in logged
    (empty,) = PartitionCommitHook().commit(spec, [HOUR], commit_empty=True)
    assert empty.state is CommitState.COMMITTED_EMPTY
    assert f"{HOUR}: committed-empty" in capsys.readouterr().out


def test_the_chain_gets_the_metastore_hook_factory_and_the_http_connection_target(
    tmp_path, monkeypatch
):
    monkeypatch.setenv(
        "AIRFLOW_CONN_REPORT", json.dumps({"conn_type": "http", "host": "https://catalog"})
    )
    spec = table(
        tmp_path,
        **{
            "sink.partition-commit.policy.kind": "metastore,http-report",
            "metastore_database": "fscommit",
            "metastore_table": "events",
            "partition.mark-done-action.http.url": "/done",
        },
    )
    metastore, report = PartitionCommitHook("hms", http_conn_id="report").policies(spec)
    assert metastore.table.client_factory.__self__.metastore_conn_id == "hms"  # not looked up yet
    assert report.target.url == "https://catalog/done"
    # Without an HTTP connection the spec's URL is the whole address.
    spec_url = table(
        tmp_path,
        **{
            "sink.partition-commit.policy.kind": "http-report",
            "partition.mark-done-action.http.url": "http://spec:8080/done",
        },
    )
    (report,) = PartitionCommitHook().policies(spec_url)
    assert report.target.url == "http://spec:8080/done"
