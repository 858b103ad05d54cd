"""The example DAGs parse, document themselves, and the manual DAG's form refuses bad input."""

from __future__ import annotations

from pathlib import Path

import pendulum
import pytest

from tests.support.dag_runs import dag_run, scheduled
from tests.support.documents import code_block

DAGS_DIR = Path(__file__).resolve().parents[2] / "dags"


@pytest.fixture(scope="module")
def dagbag(tmp_path_factory):
    from airflow.dag_processing.dagbag import DagBag

    mp = pytest.MonkeyPatch()
    mp.setenv("AIRFLOW_HOME", str(tmp_path_factory.mktemp("airflow")))
    mp.setenv("FSCOMMIT_TABLE_SPEC", str(DAGS_DIR / "fscommit_table.yaml"))
    yield DagBag(str(DAGS_DIR))
    mp.undo()


def test_every_example_dag_parses_with_docs(dagbag):
    assert dagbag.import_errors == {}
    assert set(dagbag.dags) == {
        "fscommit_hourly",
        "fscommit_sweep",
        "fscommit_manual",
        "fscommit_expire",
        "fscommit_daily_rollup",  # Airflow 3.3's rollup of the hourly asset events
        # dags/fscommit_tables.py: each file of dags/specs/ a commit and a maintenance DAG
        "clicks",
        "clicks_maintenance",
        "fscommit_orders",
        "fscommit_orders_maintenance",
    }
    for dag in dagbag.dags.values():
        assert dag.doc_md and "fscommit" in dag.tags


def test_no_example_drops_data_or_commits_a_table_twice(dagbag):
    """Expiry is never a default: the example table sets no expiration time, so its expire
    DAG has no schedule (a triggered run refuses), and the spec folder's tables expire and
    clean nothing. Each published table has one family of commit DAGs."""
    expire = dagbag.dags["fscommit_expire"]
    assert expire.schedule is None and expire.is_paused_upon_creation
    for dag_id in ("clicks_maintenance", "fscommit_orders_maintenance"):
        assert {t.task_id for t in dagbag.dags[dag_id].tasks} == {
            "sweep.discover",
            "sweep.compact",
            "sweep.commit",
        }
    # The example DAGs (fscommit_hourly, _sweep, _manual) are one family of one table; the
    # spec folder's DAGs commit other tables.
    examples = {
        dagbag.dags[d].get_task("compact").table["table_path"]
        for d in ("fscommit_sweep", "fscommit_manual")
    }
    spec_tables = {
        dagbag.dags[d].get_task("partition_commit.compact").table["table_path"]
        for d in ("clicks", "fscommit_orders")
    }
    assert len(examples) == 1 and not examples & spec_tables, (examples, spec_tables)


def test_the_hourly_dag_is_one_task_group_per_hour(dagbag):
    dag = dagbag.dags["fscommit_hourly"]
    assert dag.catchup
    assert [t.task_id for t in dag.topological_sort()] == [
        "partition_commit.wait",
        "partition_commit.compact",
        "partition_commit.commit",
    ]


def _validate(dag, conf):
    """Validate ``conf`` as the api-server does on trigger: on the serialized DAG."""
    from airflow.serialization.serialized_objects import DagSerialization

    serialized = DagSerialization.from_dict(DagSerialization.to_dict(dag))
    serialized.params.deep_merge(conf).validate()


GOOD = {"partition": {"dt": "2026-11-20", "hour": "03"}}


def test_the_manual_dag_accepts_a_partition_and_defaults_the_rest(dagbag):
    dag = dagbag.dags["fscommit_manual"]
    _validate(dag, GOOD)
    _validate(dag, GOOD | {"policies": ["success-file"], "dry_run": True})


@pytest.mark.parametrize(
    "conf",
    [
        {"partition": {"dt": "..", "hour": "03"}},
        {"partition": {"dt": "2026-11-20/../x", "hour": "03"}},
        {"partition": {"dt": "/etc", "hour": "03"}},
        {"partition": {"dt": "a\\b", "hour": "03"}},
        {"partition": {"dt": "x'; DROP TABLE events; --", "hour": "03"}},
        {"partition": {"dt": 'say "hi"', "hour": "03"}},
        {"partition": {"dt": "a`b", "hour": "03"}},
        {"partition": {"dt": "nul\x00byte", "hour": "03"}},
        {"partition": {"dt": "x" * 129, "hour": "03"}},
        {"partition": {"dt": "", "hour": "03"}},
        {"partition": {"dt": "2026-11-20"}},
        {"partition": {"dt": "2026-11-20", "hour": "03", "minute": "00"}},
        {"partition": {"dt": 20261120, "hour": "03"}},
        {"partition": "dt=2026-11-20/hour=03"},
        {"partition": GOOD["partition"], "policies": ["drop-table"]},
        {"partition": GOOD["partition"], "policies": []},
        {"partition": GOOD["partition"], "dry_run": "yes"},
    ],
    ids=lambda conf: repr(conf)[:60],
)
def test_the_manual_dag_refuses_bad_conf_before_anything_runs(dagbag, conf):
    with pytest.raises(ValueError, match="Invalid input for param"):
        _validate(dagbag.dags["fscommit_manual"], conf)


def test_the_documented_dag_parses(tmp_path, monkeypatch):
    """The hand-written DAG the docs show, short enough to copy, as Airflow parses it."""
    from airflow.dag_processing.dagbag import DagBag

    example = code_block("python", "partition_commit_group(", "PartitionRuns.of(")
    assert len(example.code.strip().splitlines()) <= 16, example.name
    spec = DAGS_DIR / "fscommit_table.yaml"
    (tmp_path / "documented_dag.py").write_text(
        example.code.replace("/opt/airflow/dags/events.yaml", str(spec))
    )
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    bag = DagBag(str(tmp_path))
    assert bag.import_errors == {}
    assert [t.task_id for t in bag.dags["events_hourly"].topological_sort()] == [
        "partition_commit.wait",
        "partition_commit.compact",
        "partition_commit.commit",
    ]


@pytest.mark.parametrize(
    ("zone", "interval_hour", "due_utc", "keyed_hour"),
    [
        ("UTC", ("2026-11-20", "16"), (16, 0), ("2026-11-20", "15")),
        ("Asia/Shanghai", ("2026-11-21", "00"), (16, 0), ("2026-11-20", "23")),
        ("GMT-05:30", ("2026-11-20", "10"), (16, 30), ("2026-11-20", "10")),
    ],
)
def test_the_hourly_dag_names_the_hour_on_the_tables_wall_clock(
    tmp_path, monkeypatch, zone, interval_hour, due_utc, keyed_hour
):
    """A TZDB id or Flink's fixed offset ('GMT-05:30', unknown to pendulum) alike."""
    import yaml
    from airflow.dag_processing.dagbag import DagBag
    from airflow.timetables.base import TimeRestriction

    spec = yaml.safe_load((DAGS_DIR / "fscommit_table.yaml").read_text())
    (tmp_path / "table.yaml").write_text(
        yaml.safe_dump(spec | {"sink.partition-commit.watermark-time-zone": zone})
    )
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    monkeypatch.setenv("FSCOMMIT_TABLE_SPEC", str(tmp_path / "table.yaml"))
    bag = DagBag(str(DAGS_DIR / "fscommit_hourly.py"))
    assert bag.import_errors == {}
    dag = bag.dags["fscommit_hourly"]
    wait = dag.get_task("partition_commit.wait")

    def partition(run: object) -> dict[str, str]:
        # The DAG's template environment holds its macros, as in a task's rendering.
        return wait.render_template(wait.partition, {"dag_run": run}, dag.get_template_env())

    # A run with a data interval (Airflow 3.0 and 3.1): the hour of its start.
    start = pendulum.datetime(2026, 11, 20, 16, tz="UTC")
    dt, hour = interval_hour
    assert partition(dag_run(interval=(start, start.add(hours=1)))) == {"dt": dt, "hour": hour}
    # The scheduler's (serialized) timetable cuts hours on the same wall clock: the first
    # run due from 16:00 UTC on commits the hour before it, named by its key.
    timetable = scheduled(dag.timetable, dag.start_date)
    info = timetable.next_dagrun_info_v2(
        last_dagrun_info=None, restriction=TimeRestriction(start, None, catchup=True)
    )
    assert info.run_after == start.replace(hour=due_utc[0], minute=due_utc[1])
    dt, hour = keyed_hour
    assert partition(dag_run(key=info.partition_key)) == {"dt": dt, "hour": hour}
