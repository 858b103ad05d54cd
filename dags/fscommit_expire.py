"""
### Expire: drop partitions past their retention

Daily: partitions of the published table older than `partition.expiration-time` (by
their partition time, or their last commit with `partition.expiration-strategy:
update-time`) are dropped from the Hive metastore, their published files deleted, and
the ledger records them as expired, so late data for them is never published again.
The streaming query's staged files are not touched: `CleanStagingOperator` deletes those.

The table spec's `partition.expiration-time` sets the age. Dropping data is never a
default: while the spec sets none, this DAG has no schedule, is paused when new, and a
triggered run fails saying so, having dropped nothing. To see what would go without
changing anything: `fscommit expire --spec <the spec file>`.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.operators.partition_expire import PartitionExpireOperator

SPEC_FILE = os.environ.get(
    "FSCOMMIT_TABLE_SPEC", str(Path(__file__).with_name("fscommit_table.yaml"))
)
TABLE = TableSpec.from_file(SPEC_FILE)
# Only a spec that asks for expiry gets it: no age, no schedule.
EXPIRES = TABLE.expiration_time is not None
# The AWS connection of a table on S3 (unset: the workers' own AWS identity).
AWS_CONN_ID = os.environ.get("FSCOMMIT_AWS_CONN_ID") or None

with DAG(
    dag_id="fscommit_expire",
    schedule="@daily" if EXPIRES else None,
    start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    is_paused_upon_creation=True if not EXPIRES else None,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
    doc_md=__doc__,
    tags=["fscommit"],
):
    PartitionExpireOperator(
        task_id="expire",
        table=TABLE,
        aws_conn_id=AWS_CONN_ID,
    )
