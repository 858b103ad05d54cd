"""``partition_commit_group``: one call adds wait → compact → commit for a partition."""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.operators.commit import table_asset
from airflow_provider_fscommit.task_groups.partition_commit import (
    partition_commit_group,
    time_commit_group,
)
from fscommit_dev.tables import hourly_table

PARTITION = "dt={{ ds }}/hour=03"


def test_the_group_chains_its_three_tasks_and_hands_each_its_arguments(tmp_path):
    options = hourly_table(
        str(tmp_path / "staging"), str(tmp_path / "checkpoint"), table_path=str(tmp_path / "t")
    )
    with DAG("hourly", schedule=None, start_date=pendulum.datetime(2026, 11, 1)) as dag:
        group = partition_commit_group(
            table=TableSpec.from_options(options),
            partition=PARTITION,
            group_id="events",
            stall_timeout=timedelta(minutes=30),
            commit_empty_partitions=True,
            spark_conn_id="spark_cluster",
            metastore_conn_id="metastore_prod",
            aws_conn_id="aws_lake",
            sensor_kwargs={"mode": "reschedule"},
            compact_kwargs={"codec": "zstd"},
        )
    assert [t.task_id for t in dag.topological_sort()] == [
        "events.wait",
        "events.compact",
        "events.commit",
    ]
    assert set(group.children) == {"events.wait", "events.compact", "events.commit"}
    wait, compact, commit = (
        dag.get_task(f"events.{step}") for step in ("wait", "compact", "commit")
    )
    # A TableSpec travels as its plain options, the same for the three tasks.
    assert wait.table == compact.table == commit.table == TableSpec.from_options(options).to_dict()
    assert wait.partition == compact.partitions == commit.partitions == PARTITION
    assert (wait.stall_timeout, wait.mode) == (timedelta(minutes=30), "reschedule")
    assert (compact.conn_id, compact.codec) == ("spark_cluster", "zstd")
    assert (commit.metastore_conn_id, commit.commit_empty_partitions) == ("metastore_prod", True)
    assert {t.aws_conn_id for t in (wait, compact, commit)} == {"aws_lake"}


def test_the_time_group_finds_the_times_partitions_then_compacts_once_and_commits_each(
    tmp_path,
):
    options = hourly_table(
        str(tmp_path / "staging"),
        str(tmp_path / "checkpoint"),
        table_path=str(tmp_path / "t"),
        partition_keys="region,dt,hour",
    )
    glob = "region=*/dt={{ ds }}/hour=03"
    with DAG("regions", schedule=None, start_date=pendulum.datetime(2026, 11, 1)) as dag:
        time_commit_group(
            table=options,
            partitions=glob,
            spark_conn_id="spark_cluster",
            aws_conn_id="aws_lake",
            sensor_kwargs={"mode": "reschedule"},
        )
    assert [t.task_id for t in dag.topological_sort()] == [
        f"partition_commit.{step}" for step in ("wait", "discover", "compact", "commit")
    ]
    wait, discover, compact, commit = (
        dag.get_task(f"partition_commit.{step}")
        for step in ("wait", "discover", "compact", "commit")
    )
    assert wait.partition == discover.within == glob and wait.mode == "reschedule"
    assert compact.conn_id == "spark_cluster"
    # One commit per discovered partition, each announcing it on the table asset.
    assert commit.is_mapped and commit.outlets == [table_asset(str(tmp_path / "t"))]
    assert {t.aws_conn_id for t in (wait, discover, compact)} == {"aws_lake"}
