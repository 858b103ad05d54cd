"""``PartitionExpireOperator``: the task over the core's expiration (tested in depth, with a
real metastore, in tests/core/ledger/test_expiration.py; in the example DAG, in
tests/dags/test_examples.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.hooks.commit import PartitionCommitHook
from airflow_provider_fscommit.operators.partition_expire import PartitionExpireOperator
from fscommit_dev.tables import hourly_table
from tests.support.compaction import published_ledger

OLD = "dt=2026-11-20/hour=03"
FUTURE = "dt=2099-01-01/hour=00"


def test_old_hours_expire_once_per_interval_without_a_metastore_in_the_chain(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    options = hourly_table(
        str(tmp_path / "staging"),
        str(tmp_path / "checkpoint"),
        table_path=str(tmp_path / "table"),
        **{"sink.partition-commit.policy.kind": "success-file", "expiration_time": "1 d"},
    )
    spec = TableSpec.from_options(options)
    for partition in (OLD, FUTURE):
        published_ledger(spec, partition, rows=3)
    PartitionCommitHook().commit(spec, [OLD, FUTURE])
    ti = SimpleNamespace(dag_id="expire_dag", run_id="r", task_id="expire", map_index=-1)
    # No metastore policy: its connection (none is defined) is never looked up.
    kwargs = {"table": options, "metastore_conn_id": "no_such_metastore"}

    dry = PartitionExpireOperator(task_id="dry", dry_run=True, **kwargs).execute({"ti": ti})
    assert [p["partition"] for p in dry["partitions"]] == [OLD]
    assert Path(spec.table_path, OLD).is_dir()

    operator = PartitionExpireOperator(task_id="expire", **kwargs)
    summary = operator.execute({"ti": ti})
    assert [p["partition"] for p in summary["partitions"]] == [OLD] and not summary["errors"]
    assert not Path(spec.table_path, OLD).exists() and Path(spec.table_path, FUTURE).is_dir()
    assert CommitLedger(spec.table_path).read(OLD).expired["origin"]["dag_id"] == "expire_dag"
    again = operator.execute({"ti": ti})  # within partition.expiration-check-interval
    assert again["skipped_until"] and not again["partitions"]
