"""
### Hourly partition commit

One run per hour partition of the table in `fscommit_table.yaml` (or the file that
`FSCOMMIT_TABLE_SPEC` names). Each run:

1. **wait** until the stream's watermark passes the hour plus the commit delay
   (deferred in the triggerer; fails with a clear message when the stream stalls),
2. **compact** the hour's small files with one Spark application,
3. **commit** it: Hive metastore partition, then `_SUCCESS`; hours the stream wrote
   nothing to are committed as empty partitions.

A run covers its data interval: the scheduled run of 01:00 commits hour 01 once that
hour is over. A manual run (or `airflow dags test fscommit_hourly 2026-11-20T02:00`)
covers the hour that ended at its date, here hour 01 too.

`catchup` is on, so past hours are committed in order after a pause. To redo a range of
hours, backfill it (UI: *Trigger → Backfill*, or
`airflow backfill create --dag-id fscommit_hourly --from-date ... --to-date ...`): hours
already committed are left as they are, hours with late data are committed again.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.task_groups.partition_commit import (
    partition_commit_group,
    partition_time_zone,
)
from airflow_provider_fscommit.version_compat import CronDataIntervalTimetable

SPEC_FILE = os.environ.get(
    "FSCOMMIT_TABLE_SPEC", str(Path(__file__).with_name("fscommit_table.yaml"))
)
TABLE = TableSpec.from_file(SPEC_FILE)
# The AWS connection of a table on S3 (unset: the workers' own AWS identity).
AWS_CONN_ID = os.environ.get("FSCOMMIT_AWS_CONN_ID") or None

# The run's hour on the wall clock the partition values are written in.
ZONE = partition_time_zone(TABLE)
HOUR = "data_interval_start.in_timezone(partition_zone)"
PARTITION = {
    "dt": "{{ " + HOUR + ".strftime('%Y-%m-%d') }}",
    "hour": "{{ " + HOUR + ".strftime('%H') }}",
}

with DAG(
    dag_id="fscommit_hourly",
    # Data intervals: the run of 01:00 covers [01:00, 02:00), i.e. partition hour=01.
    schedule=CronDataIntervalTimetable("0 * * * *", timezone=ZONE),
    start_date=pendulum.datetime(2026, 11, 20, tz="UTC"),
    catchup=True,
    max_active_runs=3,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=1)},
    doc_md=__doc__,
    tags=["fscommit"],
    user_defined_macros={"partition_zone": ZONE},
):
    partition_commit_group(
        table=TABLE,
        partition=PARTITION,
        stall_timeout=timedelta(hours=2),
        commit_empty_partitions=True,
        aws_conn_id=AWS_CONN_ID,
        sensor_kwargs={"deferrable": True, "poke_interval": 60, "timeout": 6 * 3600},
    )
