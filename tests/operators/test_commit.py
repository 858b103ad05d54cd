"""PartitionCommitOperator: its execute over the hook, and in real DAG runs (policies, asset
events, partitioned scheduling)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.operators.commit import PartitionCommitOperator
from airflow_provider_fscommit.version_compat import AirflowSkipException
from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.metastore.client import create_table
from tests.support.compaction import committable, compact, published_ledger
from tests.support.http_server import HttpServer


class OutletEvent:
    """What the task's ``outlet_events`` give the operator for its asset."""

    def __init__(self) -> None:
        self.partitions: list[str] = []
        self.extra: dict = {}

    def add_partitions(self, keys: list[str]) -> None:
        self.partitions.extend(keys)


def test_execute_commits_through_the_hook_announces_and_skips_once_nothing_is_new(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    options = {
        "staging_path": str(tmp_path / "staging"),
        "checkpoint_path": str(tmp_path / "checkpoint"),
        "table_path": str(tmp_path / "table"),
        "partition_keys": "dt,hour",
        "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
        "sink.partition-commit.policy.kind": "success-file",
    }
    published_ledger(TableSpec.from_options(options), "dt=2026-11-20/hour=03", rows=4)
    operator = PartitionCommitOperator(
        task_id="commit", table=options, partitions={"dt": "2026-11-20", "hour": "03"}
    )
    event = OutletEvent()
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="commit", map_index=-1)
    context = {"ti": ti, "outlet_events": {operator.asset: event}}
    (outcome,) = operator.execute(context)
    assert outcome["partition"] == "dt=2026-11-20/hour=03" and outcome["state"] == "committed"
    assert event.partitions == ["2026-11-20T03:00:00"]  # what Airflow 3.3 keys the event by
    assert event.extra["table_path"] == options["table_path"]
    assert event.extra["partitions"]["dt=2026-11-20/hour=03"]["rows"] == 4
    assert (tmp_path / "table" / "dt=2026-11-20" / "hour=03" / "_SUCCESS").exists()
    with pytest.raises(AirflowSkipException, match="nothing new to commit in 1 partition"):
        operator.execute({"ti": ti, "outlet_events": {operator.asset: OutletEvent()}})


DAGS = """
import json

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, PartitionedAssetTimetable

from airflow_provider_fscommit.operators.commit import PartitionCommitOperator, table_asset

TABLE = json.loads('''{table}''')

with DAG("fscommit_commit", schedule=None, start_date=pendulum.datetime(2026, 11, 1)):
    PartitionCommitOperator(
        task_id="commit",
        table=TABLE,
        partitions={partitions},
        commit_empty_partitions=True,
    )

with DAG(
    "fscommit_downstream",
    schedule=PartitionedAssetTimetable(assets=table_asset(TABLE["table_path"])),
    start_date=pendulum.datetime(2026, 11, 1),
):
    EmptyOperator(task_id="use_partition")
"""


@pytest.mark.slow
def test_commit_operator_emits_one_partitioned_asset_event_per_partition_keyed_by_its_time(
    hourly_stream, metastore, tmp_path
):
    table = tmp_path / "table"
    create_table(metastore, "dagrun", table)
    result = compact(hourly_stream.staging, hourly_stream.checkpoint, str(table))
    assert result.returncode == 0, result.stderr
    ready = sorted(
        f"dt={d}/hour={h}" for d, h in committable(hourly_stream.staging, hourly_stream.checkpoint)
    )
    empty = "dt=2026-11-19/hour=23"  # an hour the stream wrote nothing for
    options = {
        "staging_path": hourly_stream.staging,
        "checkpoint_path": hourly_stream.checkpoint,
        "table_path": str(table),
        "partition_keys": "dt,hour",
        "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
        "sink.partition-commit.delay": "1 h",
        "sink.partition-commit.policy.kind": "metastore,success-file",
        "metastore_database": "fscommit",
        "metastore_table": "dagrun",
    }
    airflow = AirflowEnv(
        tmp_path / "airflow",
        {"AIRFLOW_CONN_METASTORE_DEFAULT": f"hive-metastore://127.0.0.1:{metastore.port}"},
    ).setup()
    (airflow.dags_folder / "commit.py").write_text(
        DAGS.format(table=json.dumps(options), partitions=[*ready, empty])
    )
    # The consumer must be known (serialized, unpaused) when the events happen.
    assert airflow.run("dags", "reserialize").returncode == 0
    assert airflow.run("dags", "unpause", "fscommit_downstream").returncode == 0
    run = airflow.run("dags", "test", "fscommit_commit")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # One event per partition, keyed by its time (2026-11-20T03:00:00); the task's extra,
    # shared by its events, holds every committed partition's path and commit facts.
    keys = {TableSpec.from_options(options).partition_time_key(p): p for p in [*ready, empty]}
    events = airflow.query("SELECT partition_key, extra FROM asset_event ORDER BY partition_key")
    assert [key for key, _ in events] == sorted(keys)
    for _, extra in events:
        assert sorted(json.loads(extra)["partitions"]) == sorted(keys.values())
    extra = json.loads(events[0][1])
    assert extra["partitions"][ready[0]]["rows"] > 0
    assert extra["partitions"][empty]["rows"] == 0
    assert (table / "dt=2026-11-19" / "hour=23" / "_SUCCESS").exists()
    # The ledger records which run committed, for the status page's link to it.
    ((run_id,),) = airflow.query("SELECT run_id FROM dag_run WHERE dag_id = 'fscommit_commit'")
    (record,) = CommitLedger(str(table)).read(ready[0]).policy_commits.values()
    assert record["origin"] == {
        "dag_id": "fscommit_commit",
        "run_id": run_id,
        "task_id": "commit",
        "map_index": -1,
    }

    again = airflow.run("dags", "test", "fscommit_commit")
    assert again.returncode == 0
    assert len(airflow.query("SELECT 1 FROM asset_event")) == len(events)  # nothing new
    states = airflow.query(
        "SELECT state FROM task_instance WHERE dag_id = 'fscommit_commit' ORDER BY start_date"
    )
    assert [s for (s,) in states] == ["success", "skipped"]

    # --skip-serve-logs: the log server would listen on every interface.
    scheduler = airflow.run("scheduler", "--num-runs", "5", "--skip-serve-logs", timeout=300)
    deadline = time.monotonic() + 60
    runs: list[tuple] = []
    while time.monotonic() < deadline and len(runs) < len(events):
        runs = airflow.query(
            "SELECT partition_key FROM dag_run WHERE dag_id = 'fscommit_downstream'"
        )
        time.sleep(1)
    assert sorted(r[0] for r in runs) == sorted(keys), scheduler.stdout[-2000:]
    assert Path(table).exists()


REPORT_DAG = """
import json

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.operators.commit import PartitionCommitOperator

with DAG("fscommit_report", schedule=None, start_date=pendulum.datetime(2026, 11, 1)):
    PartitionCommitOperator(
        task_id="commit",
        table=json.loads('''{table}'''),
        partitions="{partition}",
        http_conn_id="partition_report",
    )
"""
SECRET = "Bearer s3cr3t-7c1e9f"


@pytest.mark.slow
def test_http_report_through_a_connection_never_logs_its_secret_header(tmp_path):
    """A DAG's http-report goes to an Airflow HTTP connection's URL with its headers; a
    failing endpoint fails the task (the secret in no log or output) and the next run,
    once the endpoint recovers, reports the partition and commits it."""
    server = HttpServer(tmp_path / "http-server")
    try:
        table = tmp_path / "table"
        options = {
            "staging_path": str(tmp_path / "staging"),
            "checkpoint_path": str(tmp_path / "checkpoint"),
            "table_path": str(table),
            "partition_keys": "dt,hour",
            "partition.mark-done-action": "success-file,http-report",
            "partition.mark-done-action.http.url": "/catalog/partitions",
        }
        spec = TableSpec.from_options(options)
        published_ledger(spec, "dt=2026-11-20/hour=03", rows=4)
        connection = {
            "conn_type": "http",
            "host": "127.0.0.1",
            "port": server.port,
            "extra": {"Authorization": SECRET},
        }
        airflow = AirflowEnv(
            tmp_path / "airflow",
            {"AIRFLOW_CONN_PARTITION_REPORT": json.dumps(connection)},
        ).setup()
        (airflow.dags_folder / "report.py").write_text(
            REPORT_DAG.format(table=json.dumps(options), partition="dt=2026-11-20/hour=03")
        )
        server.answer(500)
        failed = airflow.run("dags", "test", "fscommit_report")
        assert failed.returncode != 0
        output = failed.stdout + failed.stderr
        assert "HTTP 500" in output and "reports it again" in output
        assert SECRET.split()[1] not in output  # `dags test` logs the task to its output
        kept = [p.read_bytes() for p in airflow.home.rglob("*") if p.is_file()]
        assert not [data for data in kept if SECRET.split()[1].encode() in data]
        server.answer(200)
        run = airflow.run("dags", "test", "fscommit_report")
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        first, second = server.requests()
        assert first["path"] == second["path"] == "/catalog/partitions"
        assert second["headers"]["Authorization"] == SECRET
        assert second["body"]["partition"] == "dt=2026-11-20/hour=03"
        assert second["body"]["rows"] == 4 and second["body"]["run_id"].startswith("manual__")
        assert len(CommitLedger(str(table)).read("dt=2026-11-20/hour=03").policy_commits) == 1
    finally:
        server.stop()
