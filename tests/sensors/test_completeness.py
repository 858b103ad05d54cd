"""``TableCompletenessSensor``: downstream waits on the catalog table alone.

Against the real catalogs a commit run publishes to: the loopback Hive metastore (in DAG
runs under a real scheduler and triggerer: poke, reschedule, deferrable) and the Glue API
of the S3 test server, through an Airflow AWS connection. The table's parameters are set
the way a commit run sets them (the catalog policies' ``update_table_parameters``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import asdict

import pendulum
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from airflow_provider_fscommit.core.commit.glue_policy import GlueCommitPolicy
from airflow_provider_fscommit.core.commit.iceberg_policy import IcebergCommitPolicy
from airflow_provider_fscommit.core.commit.metastore_policy import MetastoreCommitPolicy
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.hooks.glue import glue_client_factory
from airflow_provider_fscommit.hooks.metastore import uri_metastore_client
from airflow_provider_fscommit.sensors.completeness import TableCompletenessSensor
from airflow_provider_fscommit.triggers.completeness import TableCompletenessTrigger
from airflow_provider_fscommit.version_compat import AirflowException
from fscommit_dev.airflow_services import running_services, services_airflow_env
from fscommit_dev.metastore.client import create_table
from fscommit_dev.s3_server import aws_connection_env
from tests.support.completeness import publish_completeness
from tests.support.glue import create_glue_table

SECRET = "completeness-connection-secret-4Rw"


DAGS = """
import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.sensors.completeness import TableCompletenessSensor

for dag_id, table, through in (
    ("downstream", "complete", "2026-11-20T03:00:00+00:00"),
    ("missing", "nope", "2026-11-20T03:00:00+00:00"),
):
    with DAG(dag_id, schedule=None, start_date=pendulum.datetime(2026, 11, 1)):
        for mode, deferrable in (("poke", False), ("reschedule", False), ("poke", True)):
            TableCompletenessSensor(
                task_id=f"{mode}_{deferrable}",
                catalog="metastore",
                database="fscommit",
                table_name=table,
                through=through,
                mode=mode,
                deferrable=deferrable,
                # A reschedule shorter than the executor's report of the poke before races
                # it in Airflow (the task is queued again and then failed as a zombie).
                poke_interval=10 if mode == "reschedule" else 2,
                timeout=300,
                retries=0,
            )
"""


def task_logs(airflow) -> dict[str, str]:
    """Every task log of the Airflow home (triggers' included), by path."""
    logs = airflow.home / "logs"
    return {str(p.relative_to(logs)): p.read_text() for p in logs.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_dag_runs_wait_on_the_metastore_until_complete_through_reaches_their_time(
    metastore, postgres, tmp_path
):
    create_table(metastore, "complete", tmp_path / "table")
    policy = MetastoreCommitPolicy(
        uri_metastore_client(f"thrift://127.0.0.1:{metastore.port}"), "fscommit", "complete"
    )
    connection = f"hive-metastore://fscommit:{SECRET}@127.0.0.1:{metastore.port}"
    airflow = services_airflow_env(
        tmp_path / "airflow", {"AIRFLOW_CONN_METASTORE_DEFAULT": connection}, postgres
    )
    (airflow.dags_folder / "downstream.py").write_text(DAGS)
    assert airflow.run("dags", "reserialize").returncode == 0
    tasks = "SELECT task_id, state FROM task_instance WHERE dag_id = '{}'"
    below = "fscommit.complete is complete through 2026-11-20T02:00:00.000+00:00; waiting"

    with running_services(airflow) as services:
        for dag_id in ("downstream", "missing"):
            assert services.rest("PATCH", f"/dags/{dag_id}", json={"is_paused": False}).ok
            assert services.trigger(dag_id, {}).ok
        # A missing table fails each mode at once, with one message naming it.
        assert set(services.wait_for_runs("missing", 1).values()) == {"failed"}
        assert set(dict(airflow.query(tasks.format("missing"))).values()) == {"failed"}
        # No parameter yet: every mode waits, the deferrable one in the triggerer.
        services.wait_for_state(
            tasks.format("downstream") + " AND task_id = 'poke_True' AND state = 'deferred'"
        )
        services.wait_for_state(tasks.format("downstream") + " AND state = 'up_for_reschedule'")
        publish_completeness(
            policy, tmp_path, 2
        )  # below the time waited for: each mode sees it, waits
        services.wait_until(
            "every mode saw hour 02",
            lambda: sum(below in text for text in task_logs(airflow).values()) >= 3,
            120,
        )
        assert "success" not in dict(airflow.query(tasks.format("downstream"))).values()
        publish_completeness(policy, tmp_path, 3)  # at it: done
        assert set(services.wait_for_runs("downstream", 1).values()) == {"success"}
    logs = task_logs(airflow)
    text = "\n".join(logs.values())
    assert SECRET not in text
    assert "table fscommit.nope does not exist in the metastore" in text
    assert "is complete through 2026-11-20T03:00:00.000+00:00, at or after" in text
    waiting = "fscommit.complete has no fscommit.complete-through yet"
    (poke_log,) = [t for p, t in logs.items() if "task_id=poke_False" in p and "downstream" in p]
    assert poke_log.count(waiting) == 1  # said once, not every poke


def test_glue_below_at_and_past_complete_through_through_a_connection(
    s3_server, monkeypatch, tmp_path, caplog, capfd
):
    for key, value in aws_connection_env(s3_server, "aws_glue", SECRET).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "awaited", tmp_path / "table")
    policy = GlueCommitPolicy(glue_client_factory("aws_glue"), "fscommit", "awaited")
    sensor = TableCompletenessSensor(
        task_id="complete",
        catalog="glue",
        database="fscommit",
        table_name="awaited",
        through="2026-11-20T03:00:00",  # no offset: UTC, as the catalog writes it
        aws_conn_id="aws_glue",
    )
    caplog.set_level(logging.INFO)
    assert not sensor.poke({}) and not sensor.poke({})  # no parameter yet: waits
    for hour, done in ((2, False), (3, True), (5, True)):  # below, at, past
        publish_completeness(policy, tmp_path, hour)
        assert sensor.poke({}) is done, hour
    out, err = capfd.readouterr()
    said = caplog.text + out + err  # the task's log
    assert said.count("fscommit.awaited has no fscommit.complete-through yet") == 1
    assert "is complete through 2026-11-20T05:00:00.000+00:00, at or after" in said

    missing = TableCompletenessSensor(
        task_id="missing", catalog="glue", database="fscommit", table_name="nope",
        through="2026-11-20T03:00:00", aws_conn_id="aws_glue",
    )  # fmt: skip
    with pytest.raises(AirflowException, match=r"table fscommit\.nope does not exist in the Glue"):
        missing.poke({})
    refused = {"login": "AKIAUNKNOWNUSER00001", "password": SECRET}
    connection = json.loads(
        aws_connection_env(s3_server, "aws_refused")["AIRFLOW_CONN_AWS_REFUSED"]
    )
    monkeypatch.setenv("AIRFLOW_CONN_AWS_REFUSED", json.dumps(connection | refused))
    sensor.aws_conn_id = "aws_refused"
    s3_server.set_auth(True)
    try:
        with pytest.raises(
            AirflowException, match=r"refused the AWS credentials for fscommit\.awaited"
        ):
            sensor.poke({})
    finally:
        s3_server.set_auth(False)
    out, err = capfd.readouterr()
    assert SECRET not in said + caplog.text + out + err


def test_the_default_time_is_the_last_partition_of_the_runs_interval(
    metastore, monkeypatch, tmp_path
):
    """A daily run over an hourly table waits for the day's 23:00 partition; a daily table
    says so; a run without an interval must name its time."""
    monkeypatch.setenv(
        "AIRFLOW_CONN_METASTORE_COMPLETE", f"hive-metastore://127.0.0.1:{metastore.port}"
    )
    create_table(metastore, "complete_daily", tmp_path / "table")
    policy = MetastoreCommitPolicy(
        uri_metastore_client(f"thrift://127.0.0.1:{metastore.port}"), "fscommit", "complete_daily"
    )
    day = pendulum.datetime(2026, 11, 20, tz="UTC")
    interval = {"data_interval_start": day, "data_interval_end": day.add(days=1)}

    def sensor(**kwargs) -> TableCompletenessSensor:
        return TableCompletenessSensor(
            task_id="day", catalog="metastore", database="fscommit", table_name="complete_daily",
            metastore_conn_id="metastore_complete", **kwargs,
        )  # fmt: skip

    publish_completeness(policy, tmp_path, 22)
    assert not sensor().poke(interval)
    publish_completeness(policy, tmp_path, 23)
    assert sensor().poke(interval)
    # A daily table's next day is its partition of the 21st: not committed yet.
    assert not sensor(partition_interval="1 d").poke(
        {"data_interval_start": day.add(days=1), "data_interval_end": day.add(days=2)}
    )
    with pytest.raises(AirflowException, match="this run has no data interval"):
        sensor().poke({"data_interval_start": day, "data_interval_end": day})
    with pytest.raises(AirflowException, match="through: 'tomorrow' is not an ISO-8601"):
        sensor(through="tomorrow").poke(interval)


def test_an_iceberg_tables_properties_below_at_and_past_complete_through(tmp_path):
    catalog = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": f"file://{tmp_path}/warehouse",
    }
    lake = load_catalog("default", **catalog)
    lake.create_namespace("lake")
    lake.create_table("lake.awaited", schema=Schema(NestedField(1, "id", LongType())))
    policy = IcebergCommitPolicy(lambda: load_catalog("default", **catalog), "lake", "awaited")
    sensor = TableCompletenessSensor(
        task_id="complete", catalog="iceberg", database="lake", table_name="awaited",
        through="2026-11-20T03:00:00", iceberg_catalog=catalog, deferrable=True,
    )  # fmt: skip
    assert not sensor.poke({})  # no property yet: waits
    for hour, done in ((2, False), (3, True), (5, True)):  # below, at, past
        publish_completeness(policy, tmp_path, hour)
        assert sensor.poke({}) is done, hour
    # Deferred, the trigger reads the same table from what it stores (no secret in it).
    trigger = TableCompletenessTrigger(asdict(sensor._table()), sensor._through_ms({}), 0.1)
    _, kwargs = trigger.serialize()
    assert kwargs["table"]["iceberg_catalog"] == catalog

    async def first_event():
        return await anext(TableCompletenessTrigger(**kwargs).run())

    assert asyncio.run(first_event()).payload["complete"] is True

    missing = TableCompletenessSensor(
        task_id="missing", catalog="iceberg", database="lake", table_name="nope",
        through="2026-11-20T03:00:00", iceberg_catalog=catalog,
    )  # fmt: skip
    with pytest.raises(AirflowException, match=r"Iceberg table lake\.nope does not exist"):
        missing.poke({})
    with pytest.raises(ConfigError, match="is a credential"):
        TableCompletenessSensor(
            task_id="secret", catalog="iceberg", database="lake", table_name="awaited",
            iceberg_catalog=catalog | {"s3.secret-access-key": "x"},
        )  # fmt: skip
