"""
### Sweep: commit everything committable

Every ten minutes: find the partitions that have something to commit (new ones whose
watermark passed, committed ones that received late data, ones whose policies did not
finish), compact all of them in **one** Spark application, then commit each as a mapped
task named after its partition.

Use it instead of, or next to, the hourly DAG when partitions are not hourly, or as a
safety net for late data.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.operators.commit import PartitionCommitOperator, table_asset
from airflow_provider_fscommit.operators.committable_partitions import CommittablePartitionsOperator
from airflow_provider_fscommit.operators.compact import PartitionCompactOperator

SPEC_FILE = os.environ.get(
    "FSCOMMIT_TABLE_SPEC", str(Path(__file__).with_name("fscommit_table.yaml"))
)
TABLE = TableSpec.from_file(SPEC_FILE)
# The AWS connection of a table on S3 (unset: the workers' own AWS identity).
AWS_CONN_ID = os.environ.get("FSCOMMIT_AWS_CONN_ID") or None

with DAG(
    dag_id="fscommit_sweep",
    schedule=timedelta(minutes=10),
    start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=1)},
    doc_md=__doc__,
    tags=["fscommit"],
):
    pending = CommittablePartitionsOperator(
        task_id="discover", table=TABLE, aws_conn_id=AWS_CONN_ID
    )
    compact = PartitionCompactOperator(
        task_id="compact", table=TABLE, partitions=pending.output, aws_conn_id=AWS_CONN_ID
    )
    commit = PartitionCommitOperator.partial(
        task_id="commit",
        table=TABLE,
        aws_conn_id=AWS_CONN_ID,
        outlets=[table_asset(TABLE.require_table_path())],
        map_index_template="{{ task.partitions }}",
    ).expand(partitions=pending.output)
    compact >> commit
