"""The metrics reach a real StatsD (a UDP listener on 127.0.0.1) from real task runs and a
real triggerer, with the values the runs report, and nothing is sent when metrics are off.

The task runs are ``airflow dags test`` of the example DAGs on a real stream, compacting on
the run's Spark Connect server and committing to the metastore; Airflow writes the tags
into the names (``statsd_influxdb_enabled``), so each metric shows its tags.
"""

from __future__ import annotations

import json
import time

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.spark.checkpoint import CheckpointReader
from airflow_provider_fscommit.core.status.committable import TableStatusReader
from airflow_provider_fscommit.core.status.discovery import discover
from airflow_provider_fscommit.core.status.freshness import committable_since_ms
from airflow_provider_fscommit.metrics import TableMetrics, table_name
from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.metastore.client import create_table
from fscommit_dev.statsd import Metric, StatsdListener
from tests.support.example_dags import (
    DAY,
    connect_connection,
    example_airflow_extra_env,
    example_spec,
)

PREFIX = "airflow.fscommit."


@pytest.fixture
def statsd():
    listener = StatsdListener()
    yield listener
    listener.close()


def test_the_table_name_is_the_metastore_tables_else_the_paths_last_folder_statsd_safe():
    base = {"staging_path": "/s/orders_staging", "checkpoint_path": "/c", "partition_keys": "dt"}
    assert table_name(TableSpec.from_options(base)) == "orders_staging"
    published = base | {"table_path": "s3a://lake/sales/orders v2/"}
    assert table_name(TableSpec.from_options(published)) == "orders_v2"
    named = published | {"metastore_table": "Orders.2026", "metastore_database": "sales"}
    assert table_name(TableSpec.from_options(named)) == "Orders_2026"


def test_a_metric_that_cannot_be_sent_is_logged_and_the_task_goes_on(caplog):
    spec = TableSpec.from_options(
        {"staging_path": "/s/orders", "checkpoint_path": "/c", "partition_keys": "dt"}
    )

    def unreachable(*args, **kwargs):
        raise OSError("no route to the StatsD host")

    TableMetrics(spec)._send(unreachable, "stalls", 1)
    assert "metric fscommit.stalls of table orders not sent" in caplog.text
    assert "no route to the StatsD host" in caplog.text


def _tagged(metrics: list[Metric], name: str, table: str, **tags: str) -> list[float]:
    """The values of ``name`` with the table (and ``tags``) as tags, checking that each was
    sent under the name that carries them too, for a StatsD without tags."""
    tagged = [m for m in metrics if m.name == PREFIX + name and m.tags.get("table") == table]
    tagged = [m for m in tagged if all(m.tags.get(k) == v for k, v in tags.items())]
    dotted = ".".join([PREFIX + name, table, *tags.values()])
    named = [m for m in metrics if m.name == dotted]
    assert [m.tags for m in tagged] == [{"table": table, **tags}] * len(tagged), name
    assert [m.value for m in named] == [m.value for m in tagged], dotted
    assert {m.type for m in tagged} <= {"c", "g", "ms"}
    return [m.value for m in tagged]


@pytest.mark.slow
def test_task_runs_send_the_tables_metrics_with_their_values_and_nothing_when_off(
    hourly_stream, metastore, connect_server, tmp_path, statsd
):
    table = tmp_path / "table"
    create_table(metastore, "metered", table)
    spec_options = example_spec(hourly_stream, table, "metered")
    spec = TableSpec.from_options(spec_options)
    env = example_airflow_extra_env(
        tmp_path, spec_options, metastore, connect_connection(connect_server)
    )
    home = tmp_path / "airflow"
    off = AirflowEnv(home, env | statsd.env(on=False)).setup()
    on = AirflowEnv(home, env | statsd.env(on=True))

    # Off: hour 00 waited for, compacted and committed, and not one datagram sent.
    run = off.run("dags", "test", "fscommit_hourly", "2026-11-20T01:00:00+00:00")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert CommitLedger(str(table)).read(f"{DAY}/hour=00").policies_current
    time.sleep(0.5)
    assert statsd.metrics("") == []

    # On: the sweep commits what is left; its discovery saw what the core sees now.
    behind = discover(spec)
    assert behind.uncommitted >= 1 and behind.oldest_committable_ms is not None
    started_ms = time.time() * 1000
    run = on.run("dags", "test", "fscommit_sweep")
    ended_ms = time.time() * 1000
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    statsd.wait_for(PREFIX + "partition.freshness")
    sent = statsd.metrics()
    assert _tagged(sent, "partitions.committable", "metered") == [behind.uncommitted]
    assert _tagged(sent, "partitions.error", "metered") == [0]
    (age,) = _tagged(sent, "partitions.oldest_committable_age_seconds", "metered")
    oldest = behind.oldest_committable_ms
    assert (started_ms - oldest) / 1000 <= age <= (ended_ms - oldest) / 1000

    # The compaction's figures are its run summary's (the task's XCom).
    (summary,) = [
        json.loads(value)
        for (value,) in on.query(
            "SELECT value FROM xcom WHERE dag_id = 'fscommit_sweep' AND task_id = 'compact'"
        )
    ]
    for name in ("files_in", "files_out", "bytes_in", "bytes_out", "rows"):
        assert _tagged(sent, f"compaction.{name}", "metered") == [summary[name]], name
    assert summary["rows"] > 0
    (duration_ms,) = _tagged(sent, "compaction.duration", "metered")
    assert duration_ms == pytest.approx(summary["seconds"] * 1000, abs=1)

    # Commits: one mapped task per partition, each timing its two policies; freshness per
    # partition, from when it became committable to its policies' commit (the ledger's).
    committed = [p["partition"] for p in summary["partitions"] if p["state"] == "published"]
    assert sorted(committed) == sorted(p.partition for p in behind.pending)
    for policy in ("metastore", "success-file"):
        timings = _tagged(sent, "commit.duration", "metered", policy=policy)
        assert len(timings) == len(committed) and all(
            0 < t < ended_ms - started_ms for t in timings
        )
    freshness = sorted(_tagged(sent, "partition.freshness", "metered"))
    reader = CheckpointReader(spec.checkpoint_path)
    checkpoint = reader.read()
    status = TableStatusReader(spec).read(find_orphans=False)
    expected = []
    for partition in committed:
        since = committable_since_ms(
            spec, status.find(partition).commit_time_ms, reader, checkpoint
        )
        record = max(CommitLedger(str(table)).read(partition).policy_commits.items())[1]
        expected.append((record["committed_at_ms"] - since, ended_ms - since))
    assert len(freshness) == len(committed)
    for value, (low, high) in zip(freshness, sorted(expected), strict=True):
        assert low <= value <= high

    # A sensor's look sends the watermark's lag, and a stalled stream a stall: the stream
    # wrote its last batch before this test began, longer ago than the stall timeout.
    dags = tmp_path / "stall_dags"
    dags.mkdir()
    (dags / "metered_stall.py").write_text(STALL_DAG)
    stall = AirflowEnv(home, env | statsd.env() | {"AIRFLOW__CORE__DAGS_FOLDER": str(dags)})
    run = stall.run("dags", "test", "metered_stall")
    assert "the stream looks stalled or idle" in run.stdout + run.stderr
    statsd.wait_for(PREFIX + "stalls")
    sent = statsd.metrics()
    assert _tagged(sent, "stalls", "metered") == [1]
    (lag,) = _tagged(sent, "watermark.lag_seconds", "metered")
    assert lag == pytest.approx(time.time() - checkpoint.watermark_ms / 1000, abs=120)


STALL_DAG = """
import json, os
from datetime import timedelta
import pendulum
from airflow.sdk import DAG
from airflow_provider_fscommit.sensors.watermark import PartitionWatermarkSensor

with DAG("metered_stall", schedule=None, start_date=pendulum.datetime(2026, 11, 1, tz="UTC")):
    PartitionWatermarkSensor(
        task_id="wait",
        table=json.load(open(os.environ["FSCOMMIT_TABLE_SPEC"])),
        partition="dt=2026-11-20/hour=05",
        mode="poke",
        poke_interval=1,
        stall_timeout=timedelta(seconds=1),
        retries=0,
    )
"""
