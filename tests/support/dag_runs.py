"""DAG runs as the scheduler plans them and as a task's templates see them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pendulum
from airflow.sdk import DAG
from airflow.sdk.api.datamodels._generated import DagRun, DagRunState, DagRunType
from airflow.serialization.serialized_objects import DagSerialization


def dag_run(
    *,
    key: str | None = None,
    interval: tuple[pendulum.DateTime, pendulum.DateTime] | None = None,
    run_after: pendulum.DateTime | None = None,
) -> DagRun:
    """The run a task's template sees (the Task SDK's model of it)."""
    start, end = interval or (None, None)
    when = run_after or end or pendulum.datetime(2026, 11, 21, tz=pendulum.UTC)
    return DagRun(
        dag_id="fscommit_hourly",
        run_id="r",
        logical_date=start,
        data_interval_start=start,
        data_interval_end=end,
        run_after=when,
        start_date=when,
        end_date=None,
        run_type=DagRunType.SCHEDULED,
        state=DagRunState.RUNNING,
        consumed_asset_events=[],
        partition_key=key,
    )


def scheduled(timetable: Any, start_date: datetime = datetime(2026, 11, 1)) -> Any:
    """The timetable as the scheduler and a backfill hold it (serialized, then read)."""
    with DAG("t", schedule=timetable, start_date=start_date) as dag:
        pass
    return DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
