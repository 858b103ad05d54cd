"""The example DAGs parse, document themselves, and the manual DAG's form refuses bad input."""

from __future__ import annotations

from pathlib import Path

import pendulum
import pytest

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
        # dags/fscommit_tables.py: one DAG per file of dags/specs/
        "events_hourly",
        "fscommit_orders",
    }
    for dag in dagbag.dags.values():
        assert dag.doc_md and "fscommit" in dag.tags


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


def test_the_readme_dag_parses(tmp_path, monkeypatch):
    from airflow.dag_processing.dagbag import DagBag

    readme = (DAGS_DIR.parent / "README.md").read_text()
    section = readme[readme.index("## In a DAG") :]
    code = section[section.index("```python") + len("```python") : section.index("```\n", 10)]
    assert len(code.strip().splitlines()) <= 16
    spec = DAGS_DIR / "fscommit_table.yaml"
    (tmp_path / "readme_dag.py").write_text(
        code.replace("/opt/airflow/dags/events.yaml", str(spec))
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
    ("zone", "dt", "hour"),
    [
        ("UTC", "2026-11-20", "16"),
        ("Asia/Shanghai", "2026-11-21", "00"),
        ("GMT-05:30", "2026-11-20", "10"),
    ],
)
def test_the_hourly_dag_names_the_hour_on_the_tables_wall_clock(
    tmp_path, monkeypatch, zone, dt, hour
):
    """A TZDB id or Flink's fixed offset ('GMT-05:30', unknown to pendulum) alike."""
    import yaml
    from airflow.dag_processing.dagbag import DagBag

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
    start = pendulum.datetime(2026, 11, 20, 16, tz="UTC")
    rendered = wait.render_template(
        wait.partition,
        {"data_interval_start": start},
        dag.get_template_env(),  # holds the DAG's macros, as in a task's rendering
    )
    assert rendered == {"dt": dt, "hour": hour}
    # The scheduler's (serialized) timetable cuts hours on the same wall clock.
    from airflow.serialization.serialized_objects import DagSerialization

    timetable = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
    interval = timetable.infer_manual_data_interval(run_after=start)
    assert interval.end - interval.start == pendulum.duration(hours=1)
    assert interval.start.in_timezone(dag.user_defined_macros["partition_zone"]).minute == 0
