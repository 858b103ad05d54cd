"""The operator submits through the Spark provider's hook and connection."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.core.errors import ConfigError, FsCommitError
from airflow_provider_fscommit.operators.compact import PartitionCompactOperator
from fscommit_dev.listeners import free_port
from tests.support.compaction import (
    check_exactly_once,
    committable,
    table_options,
    visible_data_files,
)


@pytest.fixture
def spark_connection(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", "spark://local%5B2%5D")
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))


@pytest.mark.usefixtures("spark_connection")
def test_operator_compacts_every_committable_partition(spark, hourly_stream, tmp_path):
    table = str(tmp_path / "table")
    operator = PartitionCompactOperator(
        task_id="compact", table=table_options(hourly_stream, table)
    )
    result = operator.execute(context={})
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert {p["partition"] for p in result["partitions"]} == {f"dt={d}/hour={h}" for d, h in ready}
    assert result["rows"] == check_exactly_once(spark, hourly_stream.staging, table, ready)
    assert result["files_out"] == len(visible_data_files(table))


@pytest.mark.usefixtures("spark_connection")
def test_dry_run_plans_and_writes_nothing(hourly_stream, tmp_path):
    table = str(tmp_path / "table")
    operator = PartitionCompactOperator(
        task_id="compact",
        table=table_options(hourly_stream, table),
        partitions="dt=2026-11-20/hour=00",
        dry_run=True,
    )
    result = operator.execute(context={})
    (plan,) = result["plans"]
    assert plan["partition"] == "dt=2026-11-20/hour=00"
    assert sum(len(u["inputs"]) for u in plan["units"]) == 2
    assert not (tmp_path / "table").exists()


@pytest.mark.usefixtures("spark_connection")
def test_a_sort_column_the_files_lack_is_refused_before_anything_is_planned(
    hourly_stream, tmp_path
):
    table = tmp_path / "table"
    operator = PartitionCompactOperator(
        task_id="compact",
        table=table_options(hourly_stream, str(table)) | {"compaction.sort-by": "k"},
        z_order_by="id,user_id",  # the argument wins over the spec's order
        dry_run=True,
    )
    preview = operator.execute(context={})
    failed = preview["refused"]
    assert (
        not preview["plans"]
        and failed
        and all(
            p["error"].startswith("compaction.z-order-by names column 'user_id', which the files")
            for p in failed
        )
    )
    assert not table.exists()


def test_a_table_spec_without_table_path_is_refused(hourly_stream):
    options = table_options(hourly_stream, "x")
    del options["table_path"]
    operator = PartitionCompactOperator(task_id="compact", table=options)
    with pytest.raises(ConfigError, match="has no table_path"):
        operator.execute(context={})


@pytest.mark.slow
def test_a_spark_connect_connection_runs_the_units_on_that_server(
    spark, connect_server, hourly_stream, monkeypatch, tmp_path
):
    port = connect_server.url.rsplit(":", 1)[1]
    connection = {"conn_type": "spark_connect", "host": "127.0.0.1", "port": int(port)}
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_TEST", json.dumps(connection))
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    table = str(tmp_path / "table")
    operator = PartitionCompactOperator(
        task_id="compact",
        table=table_options(hourly_stream, table),
        conn_id="spark_connect_test",
        sort_by=["k", "id"],  # sorted partitions are one task each, with all their outputs
    )
    result = operator.execute(context={})
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert {p["partition"] for p in result["partitions"]} == {f"dt={d}/hour={h}" for d, h in ready}
    assert result["rows"] == check_exactly_once(spark, hourly_stream.staging, table, ready)
    for output in visible_data_files(table):
        group = pq.read_metadata(output).row_group(0)
        assert [group.column(c.column_index).path_in_schema for c in group.sorting_columns] == [
            "k",
            "id",
        ]
    runs = list((tmp_path / "table").rglob("runs/*.json"))
    assert [json.loads(run.read_text()) for run in runs] == [result]


@pytest.mark.slow
def test_a_spark_connect_server_that_is_down_fails_the_task_with_its_name(
    hourly_stream, monkeypatch, tmp_path
):
    connection = {"conn_type": "spark_connect", "host": "127.0.0.1", "port": free_port()}
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_TEST", json.dumps(connection))
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    table = tmp_path / "table"
    operator = PartitionCompactOperator(
        task_id="compact",
        table=table_options(hourly_stream, str(table)),
        conn_id="spark_connect_test",
    )
    with pytest.raises(
        FsCommitError, match=r"Spark Connect server at sc://127\.0\.0\.1:\d+/ did not answer"
    ):
        operator.execute(context={})
    assert not visible_data_files(str(table))
