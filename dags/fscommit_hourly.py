"""
### Hourly partition commit

One run per hour partition of the table in `fscommit_table.yaml` (or the file that
`FSCOMMIT_TABLE_SPEC` names). Each run:

1. **wait** until the stream's watermark passes the hour plus the commit delay
   (deferred in the triggerer; fails with a clear message when the stream stalls),
2. **compact** the hour's small files with one Spark application,
3. **commit** it: Hive metastore partition, then `_SUCCESS`; hours the stream wrote
   nothing to are committed as empty partitions.

On Airflow 3.2 and later each run is a *partitioned* run: the run due at 02:00 commits
hour 01 and is keyed `2026-11-20T01:00:00` (the hour's start on the partitions' clock;
3.2 writes the key in UTC), and so are its asset events. On 3.0 and 3.1 the run of 02:00
covers the data interval [01:00, 02:00), hour 01 as well. A run triggered without a key
(or `airflow dags test fscommit_hourly 2026-11-20T02:00`) commits the hour that ended at
its date, here hour 01 too.

`catchup` is on, so past hours are committed in order after a pause. To redo a range of
hours, backfill it (UI: *Trigger → Backfill*, or
`airflow backfill create --dag-id fscommit_hourly --from-date ... --to-date ...`; on 3.3
the dates are the hours' starts, on 3.2 the runs' due times): hours already committed are
left as they are, hours with late data are committed again.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import DAG

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.task_groups.partition_commit import partition_commit_group
from airflow_provider_fscommit.timetables.partition_runs import PartitionRuns

SPEC_FILE = os.environ.get(
    "FSCOMMIT_TABLE_SPEC", str(Path(__file__).with_name("fscommit_table.yaml"))
)
TABLE = TableSpec.from_file(SPEC_FILE)
# The AWS connection of a table on S3 (unset: the workers' own AWS identity).
AWS_CONN_ID = os.environ.get("FSCOMMIT_AWS_CONN_ID") or None

# One run per hour partition, on the wall clock the partition values are written in; a
# run's partition: {"dt": "{{ partition_start(dag_run).strftime('%Y-%m-%d') }}", ...}.
RUNS = PartitionRuns.of(TABLE)

with DAG(
    dag_id="fscommit_hourly",
    schedule=RUNS.timetable,
    # The first hour to commit: hour 00 of 2026-11-20.
    start_date=RUNS.start_date(pendulum.datetime(2026, 11, 20, tz="UTC")),
    catchup=True,
    max_active_runs=3,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=1)},
    doc_md=__doc__,
    tags=["fscommit"],
    user_defined_macros=RUNS.macros,
):
    partition_commit_group(
        table=TABLE,
        partition=RUNS.partition(),
        stall_timeout=timedelta(hours=2),
        commit_empty_partitions=True,
        aws_conn_id=AWS_CONN_ID,
        sensor_kwargs={"deferrable": True, "poke_interval": 60, "timeout": 6 * 3600},
    )
