"""
### Daily rollup: downstream of the hourly table (Airflow 3.3)

One run per day of the table in `fscommit_table.yaml` (or the file that
`FSCOMMIT_TABLE_SPEC` names), once all 24 of the day's hourly partitions are committed,
by whichever DAG committed them (the hourly one, the sweep, a backfill), and not before.

It is scheduled on the table's asset: each committed partition is an asset event keyed by
its hour (`2026-11-20T03:00:00`, the hour's start on the partitions' clock), which
`StartOfDayMapper` reads as it is; `DayWindow` holds the day's run (keyed `2026-11-20`)
until its 24th hour is announced. The partition paths are in each event's `extra`.

Before Airflow 3.3 (no rollup mappers) this file makes no DAG: wait on the catalog with
`TableCompletenessSensor` instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import DAG, task

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.operators.commit import table_asset
from airflow_provider_fscommit.timetables.partition_runs import partition_time_zone
from airflow_provider_fscommit.version_compat import daily_rollup_timetable

SPEC_FILE = os.environ.get(
    "FSCOMMIT_TABLE_SPEC", str(Path(__file__).with_name("fscommit_table.yaml"))
)
TABLE = TableSpec.from_file(SPEC_FILE)
SCHEDULE = daily_rollup_timetable(
    table_asset(TABLE.require_table_path()), partition_time_zone(TABLE)
)

if SCHEDULE is not None:
    with DAG(
        dag_id="fscommit_daily_rollup",
        schedule=SCHEDULE,
        start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
        catchup=False,
        doc_md=__doc__,
        tags=["fscommit"],
    ):

        @task
        def summarize_day(dag_run: Any = None) -> dict[str, Any]:
            """The day's committed partitions, as the events that triggered the run name
            them (a day's reader would start here)."""
            partitions = sorted(
                {
                    partition
                    for event in dag_run.consumed_asset_events
                    for partition in (event.extra or {}).get("partitions", {})
                }
            )
            print(f"day {dag_run.partition_key}: {len(partitions)} partitions committed")
            return {"day": dag_run.partition_key, "partitions": partitions}

        summarize_day()
