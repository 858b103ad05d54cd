"""The sensor in real DAG runs: poke, reschedule and deferrable; stalls fail clearly."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from fscommit_dev.airflow_env import AIRFLOW, AirflowEnv
from fscommit_dev.s3_server import aws_connection_env
from fscommit_dev.s3_tables import place_on_s3
from fscommit_dev.streams import StreamingTable, hourly_batches
from tests.support.compaction import table_options

DAG = """
import json
from datetime import timedelta

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.sensors.watermark import PartitionWatermarkSensor

TABLE = json.loads('''{table}''')
AWS_CONN_ID = {aws_conn_id!r}

with DAG("fscommit_wait", schedule=None, start_date=pendulum.datetime(2026, 11, 1)):
    for mode, deferrable in (("poke", False), ("reschedule", False), ("poke", True)):
        PartitionWatermarkSensor(
            task_id=f"{{mode}}_{{deferrable}}",
            table=TABLE,
            partition="dt=2026-11-20/hour=00",
            mode=mode,
            deferrable=deferrable,
            poke_interval=1,
            timeout=120,
            aws_conn_id=AWS_CONN_ID,
        )

with DAG("fscommit_stall", schedule=None, start_date=pendulum.datetime(2026, 11, 1)):
    PartitionWatermarkSensor(
        task_id="stalled",
        table=TABLE,
        partition="dt=2026-11-20/hour=03",
        stall_timeout=timedelta(seconds=2),
        poke_interval=1,
        timeout=120,
        retries=0,
        aws_conn_id=AWS_CONN_ID,
    )
    # The DAG ran the query to its end (availableNow): the hour the watermark will never
    # pass is complete, waited for by the trigger.
    PartitionWatermarkSensor(
        task_id="ended",
        table=TABLE,
        partition="dt=2026-11-20/hour=03",
        end_of_input=True,
        deferrable=True,
        poke_interval=1,
        timeout=120,
        aws_conn_id=AWS_CONN_ID,
    )
"""


def run_sensor_dags(airflow: AirflowEnv, table: dict, aws_conn_id: str | None = None) -> None:
    """Every mode waits for hour 00 and succeeds; a stalled stream fails the sensor, unless
    the query has ended (end of input)."""
    (airflow.dags_folder / "wait.py").write_text(
        DAG.format(table=json.dumps(table), aws_conn_id=aws_conn_id)
    )
    run = airflow.run("dags", "test", "fscommit_wait")
    assert run.returncode == 0, run.stdout[-3000:]
    states = dict(
        airflow.query("SELECT task_id, state FROM task_instance WHERE dag_id = 'fscommit_wait'")
    )
    assert states == {
        "poke_False": "success",
        "reschedule_False": "success",
        "poke_True": "success",
    }
    xcoms = airflow.query("SELECT value FROM xcom WHERE dag_id = 'fscommit_wait'")
    assert xcoms and all("dt=2026-11-20/hour=00" in str(v) for (v,) in xcoms)

    stall = airflow.run("dags", "test", "fscommit_stall")
    states = dict(
        airflow.query("SELECT task_id, state FROM task_instance WHERE dag_id = 'fscommit_stall'")
    )
    assert states == {"stalled": "failed", "ended": "success"}
    assert "stalled or idle" in stall.stdout + stall.stderr
    assert "end of input: the query stopped after batch" in stall.stdout + stall.stderr


@pytest.mark.slow
def test_sensor_modes_and_stall_in_dag_runs(hourly_stream, tmp_path):
    airflow = AirflowEnv(tmp_path / "airflow", {}).setup()
    run_sensor_dags(airflow, table_options(hourly_stream, str(tmp_path / "table")))


@pytest.mark.slow
def test_sensor_modes_on_s3_through_an_aws_connection(hourly_stream, s3_server, tmp_path):
    """The checkpoint and sink log on S3, reached with the connection's keys and endpoint
    only (no AWS variables in the environment): poke, reschedule and the trigger."""
    bucket = s3_server.create_bucket("sensor-modes")
    s3 = place_on_s3(hourly_stream, s3_server, bucket, "events")
    unreachable = aws_connection_env(s3_server, "aws_nowhere")
    unreachable["AIRFLOW_CONN_AWS_NOWHERE"] = unreachable["AIRFLOW_CONN_AWS_NOWHERE"].replace(
        s3_server.endpoint, "http://127.0.0.1:9"
    )
    airflow = AirflowEnv(
        tmp_path / "airflow", aws_connection_env(s3_server, "aws_events") | unreachable
    ).setup()
    run_sensor_dags(airflow, s3.spec(), aws_conn_id="aws_events")

    # A store that cannot be reached fails the sensor with the reason, not at its timeout.
    (airflow.dags_folder / "wait.py").write_text(
        DAG.format(table=json.dumps(s3.spec()), aws_conn_id="aws_nowhere")
    )
    run = airflow.run("dags", "test", "fscommit_stall")
    assert "cannot reach the store for s3://sensor-modes" in run.stdout + run.stderr
    states = airflow.query(
        "SELECT task_id, state FROM task_instance WHERE dag_id = 'fscommit_stall' AND run_id IN "
        "(SELECT run_id FROM dag_run WHERE dag_id = 'fscommit_stall' ORDER BY id DESC LIMIT 1)"
    )
    assert dict(states) == {"stalled": "failed", "ended": "failed"}  # end of input or not


FIRST_BATCHES_DAG = """
import json

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.sensors.watermark import PartitionWatermarkSensor

with DAG("fscommit_first_batches", schedule=None, start_date=pendulum.datetime(2026, 11, 1)):
    previous = None
    for mode, deferrable in (("poke", False), ("reschedule", False), ("poke", True)):
        sensor = PartitionWatermarkSensor(
            task_id=f"{{mode}}_{{deferrable}}",
            table=json.loads('''{table}'''),
            partition="dt=2026-11-20/hour=00",
            mode=mode,
            deferrable=deferrable,
            poke_interval=1,
            # dags test runs a trigger in-line, without its timeout: it waits for the stream.
            timeout=120 if deferrable else 4,
            soft_fail=True,
            retries=0,
            trigger_rule="all_done",  # one after the other, whatever the one before did
        )
        if previous is not None:
            previous >> sensor
        previous = sensor
"""


@pytest.mark.slow
def test_sensor_modes_wait_on_a_stream_that_has_just_started(spark, tmp_path):
    """Watermark 0 after the first batches: every mode waits, none fails the task for a
    query without withWatermark. Poke and reschedule soft-fail at their timeout (skipped);
    the trigger waits until the stream moves its watermark past the hour."""
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches([], *hourly_batches("2026-11-20", range(1)))
    stream.run(spark)
    airflow = AirflowEnv(tmp_path / "airflow", {}).setup()
    table = table_options(stream, str(tmp_path / "table"))
    (airflow.dags_folder / "first.py").write_text(FIRST_BATCHES_DAG.format(table=json.dumps(table)))
    log = tmp_path / "dags-test.log"
    with log.open("w") as out:
        run = subprocess.Popen(
            [AIRFLOW, "dags", "test", "fscommit_first_batches"],
            env=airflow.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 300
        while "PartitionWatermarkTrigger" not in log.read_text():
            assert run.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        stream.add_batches(*hourly_batches("2026-11-20", range(1, 4)))
        stream.run(spark)
        assert run.wait(timeout=300) == 0, log.read_text()[-3000:]
    finally:
        if run.poll() is None:
            run.kill()
    states = dict(
        airflow.query(
            "SELECT task_id, state FROM task_instance WHERE dag_id = 'fscommit_first_batches'"
        )
    )
    output = log.read_text()
    assert states == {
        "poke_False": "skipped",
        "reschedule_False": "skipped",
        "poke_True": "success",
    }, output[-3000:]
    waits = [line for line in output.splitlines() if "watermark has not advanced yet" in line]
    for logger in ("PartitionWatermarkSensor", "PartitionWatermarkTrigger"):
        assert any(logger in line for line in waits), output[-3000:]
    assert "withWatermark" not in output
