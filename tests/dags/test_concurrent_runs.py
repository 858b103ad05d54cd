"""The scheduled run, a UI-triggered run and a backfill run of one hour, all at once.

In production they are task instances on different workers that share nothing but the
table; here each is an ``airflow dags test`` of its own Airflow installation (its own
metadata DB, so SQLite's single writer cannot serialize them), started together against
one real stream, Spark and metastore. The table lock decides; the ledger makes the
losers' work a no-op. The run that plans first holds the lock for ``HOLD_S`` at its plan
(a stall injected at the ``after-plan`` point, as a slow store would make it), so the
others meet it there however a busy machine staggers their starts.

``dags test`` makes manual-type runs: the "scheduled" and "backfill" runs are the hourly
DAG's tasks for the same data interval, as the scheduler and a backfill would run them;
a real ``airflow backfill create`` over committed hours is tests/dags/test_services.py.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from airflow_provider_fscommit.core.faults import FAULT_ENV, STALL_ENV
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.airflow_env import AIRFLOW, AirflowEnv
from fscommit_dev.metastore.client import create_table, hive_sql
from fscommit_dev.streams import StreamingTable, hourly_batches
from tests.support.compaction import check_exactly_once
from tests.support.example_dags import (
    DAY,
    connect_connection,
    example_airflow_extra_env,
    example_spec,
)
from tests.support.processes import communicate_all

HOUR = ("2026-11-20", "01")
HOLD_S = 60
RUNS = {
    # `dags test` at 02:00 runs the hourly DAG for the hour that ended then: hour 01.
    "scheduled": ("fscommit_hourly", "2026-11-20T02:00:00+00:00"),
    "ui-triggered": (
        "fscommit_manual",
        "-c",
        json.dumps({"partition": {"dt": HOUR[0], "hour": HOUR[1]}}),
    ),
    "backfill": ("fscommit_hourly", "2026-11-20T02:00:00+00:00"),
}


@pytest.mark.slow
def test_three_runs_of_one_hour_at_once_commit_it_exactly_once(
    spark, metastore, connect_server, tmp_path
):
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4]))
    stream.run(spark)  # hours 00 to 02 committable
    table = tmp_path / "table"
    create_table(metastore, "raced", table)
    spec = example_spec(stream, table, "raced")
    for name in RUNS:
        (tmp_path / name).mkdir()
    hold = {FAULT_ENV: "after-plan", STALL_ENV: str(HOLD_S)}
    homes = {
        name: AirflowEnv(
            tmp_path / name,
            example_airflow_extra_env(
                tmp_path / name, spec, metastore, connect_connection(connect_server)
            )
            | hold,
        )
        for name in RUNS
    }
    with ThreadPoolExecutor(len(homes)) as pool:
        list(pool.map(AirflowEnv.setup, homes.values()))

    # Start all three before waiting for any.
    processes = {
        name: subprocess.Popen(
            [AIRFLOW, "dags", "test", *RUNS[name]],
            env=homes[name].env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in RUNS
    }
    outputs = {name: out for name, (out, _) in communicate_all(processes, 900).items()}
    for name, process in processes.items():
        assert process.returncode == 0, f"{name}:\n{outputs[name][-3000:]}"

    records = CommitLedger(str(table)).read(f"{DAY}/hour=01")
    assert len(records.commits) == 1 and len(records.policy_commits) == 1
    check_exactly_once(spark, stream.staging, str(table), complete={HOUR})
    partitions = hive_sql(metastore, "SHOW PARTITIONS fscommit.raced")
    assert [p["partition"] for p in partitions] == [f"{DAY}/hour=01"]
    # They met at the table lock: one worked, the others waited for it.
    waited = [name for name, out in outputs.items() if "waiting for the table lock" in out]
    print(f"runs that waited for the table lock: {waited}")
    assert waited, outputs
