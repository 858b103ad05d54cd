"""``PartitionRuns``: one run per partition, and the partition a run commits, on any line.

The timetable is Airflow's own; these tests drive it as the scheduler and a backfill do
(``next_dagrun_info_v2``, ``iter_partition_dagrun_infos``, after a serialization round
trip) and render the DAG's templates for the runs it makes, as the Task SDK's ``DagRun``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pendulum
import pytest
from airflow.sdk import DAG, BaseOperator
from airflow.sdk.api.datamodels._generated import DagRun
from airflow.timetables.base import TimeRestriction

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.partition.partition_key import parse_partition_key
from airflow_provider_fscommit.timetables.partition_runs import PartitionRuns, partition_time_zone
from airflow_provider_fscommit.version_compat import PARTITIONED_RUNS
from fscommit_dev.tables import hourly_table
from tests.support.dag_runs import dag_run, scheduled

UTC = pendulum.UTC


def table(tmp_path, zone: str = "UTC", **options: str) -> TableSpec:
    return TableSpec.from_options(
        hourly_table(
            str(tmp_path / "staging"),
            str(tmp_path / "checkpoint"),
            **{"sink.partition-commit.watermark-time-zone": zone, **options},
        )
    )


def rendered(runs: PartitionRuns, run: DagRun, template: object) -> object:
    """``template`` as a task of a DAG with the runs' macros renders it for ``run``."""
    with DAG("probe", schedule=None, user_defined_macros=runs.macros) as dag:
        task = BaseOperator(task_id="probe")
    return task.render_template(template, {"dag_run": run}, dag.get_template_env())


@pytest.mark.parametrize(
    ("zone", "offset_hours", "name"),
    [("UTC", 0, "UTC"), ("Asia/Shanghai", 8, "Asia/Shanghai"), ("GMT+08:00", 8, "+08:00")],
)
def test_the_time_zone_is_the_tables_watermark_zone_as_pendulum_knows_it(
    tmp_path, zone, offset_hours, name
):
    """Flink's fixed offsets ('GMT+08:00') are no TZDB names: a fixed zone stands in."""
    timezone = partition_time_zone(table(tmp_path, zone))
    assert timezone.name == name
    noon = pendulum.datetime(2026, 11, 20, 12, tz="UTC").in_timezone(timezone)
    assert noon.utcoffset() == timedelta(hours=offset_hours)


@pytest.mark.skipif(not PARTITIONED_RUNS, reason="partitioned runs are Airflow 3.2's")
@pytest.mark.parametrize(
    ("zone", "first_run_utc"),
    [
        ("UTC", (2026, 11, 20, 1)),
        ("Asia/Shanghai", (2026, 11, 19, 17)),
        ("GMT-05:30", (2026, 11, 20, 6, 30)),
    ],
)
def test_scheduled_runs_are_keyed_by_the_partition_they_commit_from_the_first_one(
    tmp_path, zone, first_run_utc
):
    """The scheduler's (serialized) timetable: the first run is due when the first hour
    ends and commits it; each later run the hour before it, keyed by that hour's start."""
    runs = PartitionRuns.of(table(tmp_path, zone))
    start_date = runs.start_date(datetime(2026, 11, 20))  # hour 00 on the partitions' clock
    timetable = scheduled(runs.timetable, start_date)
    assert timetable.partitioned
    restriction = TimeRestriction(start_date, None, catchup=True)
    info, due, committed = None, [], []
    for _ in range(3):
        info = timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction)
        assert info is not None and info.data_interval is None
        due.append(info.run_after)
        run = dag_run(key=info.partition_key, run_after=info.run_after)
        committed.append(rendered(runs, run, runs.partition()))
    assert due[0] == pendulum.datetime(*first_run_utc, tz=UTC)
    assert committed == [{"dt": "2026-11-20", "hour": f"{h:02d}"} for h in (0, 1, 2)]


@pytest.mark.skipif(not PARTITIONED_RUNS, reason="partitioned runs are Airflow 3.2's")
def test_a_backfills_keys_name_the_hours_it_commits(tmp_path):
    """``airflow backfill create`` walks the timetable's keys; each names one hour."""
    runs = PartitionRuns.of(table(tmp_path, "Asia/Shanghai"))
    infos = list(
        scheduled(runs.timetable).iter_partition_dagrun_infos(
            earliest=pendulum.datetime(2026, 11, 20, 1, tz="Asia/Shanghai"),
            latest=pendulum.datetime(2026, 11, 20, 3, tz="Asia/Shanghai"),
        )
    )
    partitions = [rendered(runs, dag_run(key=i.partition_key), runs.partition()) for i in infos]
    assert partitions == [{"dt": "2026-11-20", "hour": f"{h:02d}"} for h in (1, 2, 3)]
    assert [parse_partition_key(i.partition_key).hour for i in infos] == [1, 2, 3]


def test_a_run_of_a_data_interval_commits_the_intervals_partition(tmp_path):
    """Airflow 3.0 and 3.1's runs, and any run with an interval: its start names the hour."""
    runs = PartitionRuns.of(table(tmp_path, "Asia/Shanghai"))
    start = pendulum.datetime(2026, 11, 20, 19, tz=UTC)  # 03:00 on the 21st in Shanghai
    run = dag_run(interval=(start, start.add(hours=1)))
    assert rendered(runs, run, runs.partition()) == {"dt": "2026-11-21", "hour": "03"}


def test_a_run_triggered_without_a_key_commits_the_hour_that_ended_at_its_time(tmp_path):
    """The UI's *Trigger* or ``airflow dags test DAG 2026-11-20T02:30``: hour 01."""
    runs = PartitionRuns.of(table(tmp_path))
    when = pendulum.datetime(2026, 11, 20, 2, 30, tz=UTC)
    now = pendulum.datetime(2026, 11, 28, 8, 3, tz=UTC)
    run = dag_run(interval=(when, when), run_after=now)  # dated 02:30, triggered now
    assert rendered(runs, run, runs.partition()) == {"dt": "2026-11-20", "hour": "01"}
    undated = dag_run(run_after=now)  # the UI's Trigger without a date
    assert rendered(runs, undated, runs.partition()) == {"dt": "2026-11-28", "hour": "07"}


def test_the_glob_of_a_multi_key_tables_time(tmp_path):
    """Other keys any value; the time keys' values escaped as Spark names them."""
    runs = PartitionRuns.of(
        table(
            tmp_path,
            partition_keys="region,dt,hour",
            **{"partition.time-extractor.timestamp-pattern": "$dt $hour:00:00"},
        )
    )
    glob = runs.partition_glob(("region", "dt", "hour"))
    run = dag_run(key="2026-11-20T03:00:00")
    assert rendered(runs, run, glob) == "region=*/dt=2026-11-20/hour=03"


def test_a_key_that_is_no_partition_time_is_refused_naming_the_form(tmp_path):
    runs = PartitionRuns.of(table(tmp_path))
    with pytest.raises(
        ValueError, match=r"'dt=2026-11-20/hour=03' is not a time in '%Y-%m-%dT%H:%M:%S'"
    ):
        runs.start(dag_run(key="dt=2026-11-20/hour=03"))
