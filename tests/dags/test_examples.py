"""The example DAGs, run with ``airflow dags test`` against a real stream, Spark and metastore.

The stream wrote hours 00, 01, 03, 04 and 05 of 2026-11-20 (none for 02); its watermark
(04:10, from the batch before the last) makes 00 to 03 committable and leaves 04 pending.
"""

from __future__ import annotations

import json

import pytest

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.metastore.client import create_table, hive_sql
from fscommit_dev.streams import StreamingTable, hourly_batches
from tests.support.example_dags import (
    DAY,
    SECRET,
    connect_connection,
    example_airflow_extra_env,
    example_spec,
)


@pytest.fixture
def gap_stream(spark, tmp_path) -> StreamingTable:
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4, 5]))
    stream.run(spark)
    return stream


@pytest.mark.slow
def test_hourly_manual_and_sweep_dags_commit_a_real_stream(
    gap_stream, metastore, connect_server, tmp_path
):
    """``spark_default`` is a ``spark_connect`` connection: the compactions run on the
    run's Connect server, no spark-submit (the launch from a DAG is the Airflow lines')."""
    table = tmp_path / "table"
    create_table(metastore, "examples", table)
    spec = example_spec(gap_stream, table, "examples")
    env = example_airflow_extra_env(tmp_path, spec, metastore, connect_connection(connect_server))
    airflow = AirflowEnv(tmp_path / "airflow", env).setup()
    ledger = CommitLedger(str(table))

    # Hourly: hour 01, then the empty hour 02. A run dated T without a partition key covers
    # the hour that ended at T (scheduled and backfill runs are keyed by their hour).
    for hour, run_at in (("01", "02"), ("02", "03")):
        run = airflow.run("dags", "test", "fscommit_hourly", f"2026-11-20T{run_at}:00:00+00:00")
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        assert SECRET not in run.stdout + run.stderr
        assert ledger.read(f"{DAY}/hour={hour}").policies_current
    assert (table / DAY / "hour=02" / "_SUCCESS").exists()
    assert not [p for p in (table / DAY / "hour=02").iterdir() if p.suffix == ".parquet"]

    # Manual: one partition from conf; a dry run only plans; bad conf runs nothing.
    manual = airflow.run(
        "dags",
        "test",
        "fscommit_manual",
        "-c",
        json.dumps({"partition": {"dt": "2026-11-20", "hour": "00"}}),
    )
    assert manual.returncode == 0, manual.stdout[-3000:]
    assert SECRET not in manual.stdout + manual.stderr
    assert ledger.read(f"{DAY}/hour=00").policies_current
    dry = airflow.run(
        "dags",
        "test",
        "fscommit_manual",
        "-c",
        json.dumps({"partition": {"dt": "2026-11-20", "hour": "03"}, "dry_run": True}),
    )
    assert dry.returncode == 0, dry.stdout[-3000:]
    assert not (table / DAY / "hour=03").exists()
    for conf, message in (
        ({"partition": {"dt": "..", "hour": "03"}}, "Invalid input for param partition"),
        ({"partition": {"dt": "2026-11-20", "hour": "04"}}, "is pending, not committable"),
    ):
        refused = airflow.run("dags", "test", "fscommit_manual", "-c", json.dumps(conf))
        assert message in refused.stdout + refused.stderr
    assert not (table / DAY / "hour=04").exists()

    # Sweep: what is left (hour 03), compacted in one application, one mapped commit.
    sweep = airflow.run("dags", "test", "fscommit_sweep")
    assert sweep.returncode == 0, sweep.stdout[-3000:]
    assert SECRET not in sweep.stdout + sweep.stderr
    assert "compaction units run on the Spark Connect server of spark_default" in sweep.stdout
    assert "spark-submit" not in sweep.stdout
    mapped = airflow.query(
        "SELECT rendered_map_index, state FROM task_instance "
        "WHERE dag_id = 'fscommit_sweep' AND task_id = 'commit'"
    )
    assert mapped == [(f"{DAY}/hour=03", "success")]

    rows = hive_sql(
        metastore,
        "SELECT hour, count(*) AS n FROM fscommit.examples GROUP BY hour ORDER BY hour",
    )
    assert {r["hour"]: r["n"] for r in rows} == {"00": 3, "01": 3, "03": 3}
    lineage = [json.loads(line) for line in (tmp_path / "lineage.jsonl").open()]
    commits = [
        e
        for e in lineage
        if e["eventType"] == "COMPLETE" and e["job"]["name"] == "fscommit_sweep.commit"
    ]
    assert commits and commits[0]["outputs"] == [
        {
            "namespace": f"hive://127.0.0.1:{metastore.port}",
            "name": "fscommit.examples",
            "facets": {},
        }
    ]
    # The connection's password appears nowhere: task logs, XCom, asset events, lineage.
    assert not [p for p in airflow.home.rglob("*.log") if SECRET in p.read_text(errors="replace")]
    stored = airflow.query("SELECT value FROM xcom") + airflow.query(
        "SELECT extra FROM asset_event"
    )
    assert stored and not [v for (v,) in stored if SECRET in str(v)]
    assert SECRET not in (tmp_path / "lineage.jsonl").read_text()
    partitions = hive_sql(metastore, "SHOW PARTITIONS fscommit.examples")
    assert [p["partition"] for p in partitions] == [
        f"{DAY}/hour={h}" for h in ("00", "01", "02", "03")
    ]

    # Expire: with a day's retention every committed hour goes, from Hive and from disk.
    spec_file = tmp_path / "table.json"
    spec_file.write_text(json.dumps(spec | {"partition.expiration-time": "1 d"}))
    expire = airflow.run("dags", "test", "fscommit_expire")
    assert expire.returncode == 0, expire.stdout[-3000:]
    assert SECRET not in expire.stdout + expire.stderr
    assert hive_sql(metastore, "SHOW PARTITIONS fscommit.examples") == []
    assert not [p for p in table.glob(f"{DAY}/*") if p.is_dir()]
    record = ledger.read(f"{DAY}/hour=03").expired
    assert record["origin"]["dag_id"] == "fscommit_expire"
    events = [json.loads(line) for line in (tmp_path / "lineage.jsonl").open()]
    (expired,) = [
        e
        for e in events
        if e["eventType"] == "COMPLETE" and e["job"]["name"] == "fscommit_expire.expire"
    ]
    changes = {
        (o["name"], o["facets"]["lifecycleStateChange"]["lifecycleStateChange"])
        for o in expired["outputs"]
    }
    assert changes == {(str(table), "ALTER"), ("fscommit.examples", "ALTER")}
    # The sweep finds nothing to commit: expired hours are never published again.
    again = airflow.run("dags", "test", "fscommit_sweep")
    assert again.returncode == 0, again.stdout[-3000:]
    assert not [p for p in table.glob(f"{DAY}/*") if p.is_dir()]


@pytest.mark.slow
def test_the_sweep_dag_commits_an_orc_stream_that_hive_reads(
    spark, metastore, connect_server, tmp_path
):
    stream = StreamingTable(tmp_path / "stream", file_format="orc")
    stream.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4, 5]))
    stream.run(spark)
    table = tmp_path / "table"
    hive_sql(
        metastore,
        "CREATE DATABASE IF NOT EXISTS fscommit",
        "CREATE TABLE fscommit.orc_examples (id BIGINT, ts TIMESTAMP, k STRING, v DOUBLE) "
        f"PARTITIONED BY (dt STRING, hour STRING) STORED AS ORC LOCATION '{table}'",
    )
    spec = example_spec(stream, table, "orc_examples") | {"format": "orc"}
    env = example_airflow_extra_env(tmp_path, spec, metastore, connect_connection(connect_server))
    airflow = AirflowEnv(tmp_path / "airflow", env).setup()
    sweep = airflow.run("dags", "test", "fscommit_sweep")
    assert sweep.returncode == 0, sweep.stdout[-3000:]
    states = airflow.task_states("fscommit_sweep")
    assert states and set(states.values()) <= {"success", "skipped"}
    rows = hive_sql(
        metastore,
        "SELECT hour, count(*) AS n FROM fscommit.orc_examples GROUP BY hour ORDER BY hour",
    )
    assert {r["hour"]: r["n"] for r in rows} == {"00": 3, "01": 3, "03": 3}
    assert [p.name for p in (table / DAY / "hour=00").glob("*.orc")]


@pytest.mark.slow
def test_the_daily_rollup_runs_once_after_the_days_24th_hourly_commit(
    spark, metastore, connect_server, tmp_path
):
    """The downstream example on Airflow 3.3: 22 hours committed make no run of the day,
    the 23rd and 24th make exactly one, keyed by the day, holding all 24 partitions."""
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", range(24)))
    stream.run(spark)  # watermark 22:10: hours 00 to 21 committable
    table = tmp_path / "table"
    create_table(metastore, "rollup", table)
    spec = example_spec(stream, table, "rollup")
    env = example_airflow_extra_env(tmp_path, spec, metastore, connect_connection(connect_server))
    airflow = AirflowEnv(tmp_path / "airflow", env).setup()
    # The consumer must be known (serialized, unpaused) when the events happen.
    assert airflow.run("dags", "reserialize").returncode == 0
    assert airflow.run("dags", "unpause", "fscommit_daily_rollup").returncode == 0
    rollups = "SELECT partition_key FROM dag_run WHERE dag_id = 'fscommit_daily_rollup'"
    hour_keys = (
        "SELECT DISTINCT partition_key FROM asset_event WHERE partition_key LIKE '2026-11-20T%'"
    )

    def sweep_then_schedule() -> None:
        sweep = airflow.run("dags", "test", "fscommit_sweep")
        assert sweep.returncode == 0, sweep.stdout[-3000:]
        # --skip-serve-logs: the log server would listen on every interface.
        scheduler = airflow.run("scheduler", "--num-runs", "5", "--skip-serve-logs", timeout=300)
        assert scheduler.returncode == 0, scheduler.stdout[-3000:]

    sweep_then_schedule()
    assert len(airflow.query(hour_keys)) == 22
    assert airflow.query(rollups) == []  # 22 of the day's 24 hours: no run yet
    stream.add_batches(*hourly_batches("2026-11-21", [0, 1], start_id=1000))
    stream.run(spark)  # watermark 00:10 on the 21st: hours 22 and 23 committable
    sweep_then_schedule()
    assert len(airflow.query(hour_keys)) == 24
    assert airflow.query(rollups) == [("2026-11-20",)]
    ((consumed,),) = airflow.query(
        "SELECT count(*) FROM dagrun_asset_event c JOIN dag_run r ON c.dag_run_id = r.id "
        "WHERE r.dag_id = 'fscommit_daily_rollup'"
    )
    assert consumed == 24  # every hour's event, each once
