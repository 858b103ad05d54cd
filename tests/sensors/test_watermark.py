"""The sensor in real DAG runs: poke, reschedule and deferrable; stalls fail clearly."""

from __future__ import annotations

import json

import pytest

from tests.airflow_env import AirflowEnv
from tests.compaction import table_options

DAG = """
import json
from datetime import timedelta

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.sensors.watermark import PartitionWatermarkSensor

TABLE = json.loads('''{table}''')

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
    )
"""


@pytest.mark.slow
def test_sensor_modes_and_stall_in_dag_runs(hourly_stream, tmp_path):
    airflow = AirflowEnv(tmp_path / "airflow", {}).setup()
    table = table_options(hourly_stream, str(tmp_path / "table"))
    (airflow.dags_folder / "wait.py").write_text(DAG.format(table=json.dumps(table)))
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
    (state,) = airflow.query("SELECT state FROM task_instance WHERE dag_id = 'fscommit_stall'")
    assert state == ("failed",)
    assert "stalled or idle" in stall.stdout + stall.stderr
