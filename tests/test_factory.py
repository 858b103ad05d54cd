"""The DAG factory in real Airflow: one DAG per spec file, a broken spec hiding nothing, and
a generated DAG committing its hour with ``airflow dags test`` on a real stream."""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import sys
from datetime import timedelta
from pathlib import Path

import pendulum
import pytest
import yaml
from airflow.timetables.base import TimeRestriction

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.factory import BROKEN_SPEC_TAG
from airflow_provider_fscommit.version_compat import AirflowException
from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.tables import hourly_table
from tests.support.dag_runs import dag_run, scheduled
from tests.support.example_dags import connect_connection

DAG_FILE = Path(__file__).resolve().parents[1] / "dags" / "fscommit_tables.py"
TASKS = ["partition_commit.wait", "partition_commit.compact", "partition_commit.commit"]
SWEEP = ["sweep.discover", "sweep.compact", "sweep.commit"]


def table_specs(streams, count: int, tables: Path) -> list[dict]:
    """``count`` tables over the streams, each published at its own path."""
    specs = []
    for i in range(count):
        stream = streams[i % len(streams)]
        spec = hourly_table(
            stream.staging,
            stream.checkpoint,
            table_path=str(tables / f"t{i:02d}"),
            **{"sink.partition-commit.policy.kind": "success-file"},
        )
        spec["dag"] = {
            "start_date": "2026-11-20",
            "dag_id": f"table_{i:02d}",
            "tags": [f"team{i % 3}"],
        }
        specs.append(spec)
    return specs


def dag_folder(base: Path, specs: list[dict]) -> Path:
    """The example DAG file with ``specs`` in its ``specs/`` folder."""
    folder = base / "dags"
    (folder / "specs").mkdir(parents=True)
    shutil.copy(DAG_FILE, folder)
    for i, spec in enumerate(specs):
        (folder / "specs" / f"table_{i:02d}.yaml").write_text(yaml.safe_dump(spec))
    return folder


_AUDITED: list[list[str]] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _AUDITED and isinstance(args[0], str):
        _AUDITED[-1].append(args[0])


sys.addaudithook(_audit)


@contextlib.contextmanager
def opened_files():
    """Every file this process opens inside the block (Python's ``open`` audit events)."""
    _AUDITED.append([])
    try:
        yield _AUDITED[-1]
    finally:
        _AUDITED.pop()


def dagbag(folder: Path, monkeypatch):
    from airflow.dag_processing.dagbag import DagBag

    monkeypatch.setenv("AIRFLOW_HOME", str(folder.parent / "airflow"))
    return DagBag(str(folder))


def test_twenty_specs_make_twenty_dags(
    compacted_stream, late_stateless_stream, tmp_path, monkeypatch
):
    specs = table_specs([compacted_stream, late_stateless_stream], 20, tmp_path / "tables")
    # Parsing reads the spec files only: a table whose stream is not there (or on an S3
    # bucket nobody can reach) parses the same.
    specs[19] |= {
        "staging_path": "s3a://no-such-bucket/staging",
        "checkpoint_path": "s3a://no-such-bucket/cp",
    }
    folder = dag_folder(tmp_path, specs)
    with opened_files() as opened:
        bag = dagbag(folder, monkeypatch)
    assert bag.import_errors == {}
    assert sorted(bag.dags) == sorted(
        f"table_{i:02d}{kind}" for i in range(20) for kind in ("", "_maintenance")
    )
    streams = [str(s.base) for s in (compacted_stream, late_stateless_stream)]
    assert [path for path in opened if path.startswith(tuple(streams))] == []
    assert {str(folder / "specs" / f"table_{i:02d}.yaml") for i in range(20)} <= set(opened)
    for dag_id, dag in bag.dags.items():
        assert "fscommit" in dag.tags and dag.doc_md
        if dag_id.endswith("_maintenance"):  # the hourly sweep, nothing destructive
            assert [t.task_id for t in dag.topological_sort()] == SWEEP
            assert not dag.catchup and dag.max_active_runs == 1
            assert dag.timetable.delta == timedelta(hours=1)
            continue
        assert [t.task_id for t in dag.topological_sort()] == TASKS
        assert dag.catchup and dag.timetable.expression == "0 * * * *"
    dag = bag.dags["table_07"]
    assert set(dag.tags) == {"fscommit", "team1"}
    assert dag.get_task("partition_commit.compact").table["table_path"] == str(
        tmp_path / "tables" / "t07"
    )
    wait = dag.get_task("partition_commit.wait")
    run = dag_run(key="2026-11-20T03:00:00")  # or its data interval before Airflow 3.2
    rendered = wait.render_template(wait.partition, {"dag_run": run}, dag.get_template_env())
    assert rendered == {"dt": "2026-11-20", "hour": "03"}


def test_a_daily_table_on_its_wall_clock(tmp_path, monkeypatch):
    """The example's daily table: dt=yyyyMMdd at Shanghai's midnight; its pool, conf, owner."""
    folder = dag_folder(tmp_path, [])
    shutil.rmtree(folder / "specs")
    shutil.copytree(DAG_FILE.parent / "specs", folder / "specs")
    bag = dagbag(folder, monkeypatch)
    assert bag.import_errors == {} and sorted(bag.dags) == [
        "clicks",
        "clicks_maintenance",
        "fscommit_orders",
        "fscommit_orders_maintenance",
    ]
    orders = bag.dags["fscommit_orders"]
    # The first day to commit, 2026-11-01, is due at the next midnight: then its run starts.
    assert orders.start_date == pendulum.datetime(2026, 11, 2, tz="Asia/Shanghai")
    assert orders.max_active_runs == 1 and orders.get_task("partition_commit.wait").pool == "spark"
    # The scheduler's (serialized) timetable cuts days at Shanghai's midnight: the first
    # run is due at 00:00 on the 2nd there (16:00 UTC on the 1st) and commits the 1st.
    timetable = scheduled(orders.timetable, orders.start_date)
    first = timetable.next_dagrun_info_v2(
        last_dagrun_info=None, restriction=TimeRestriction(orders.start_date, None, True)
    )
    assert first.run_after == pendulum.datetime(2026, 11, 1, 16, tz="UTC")
    assert first.partition_key == "2026-11-01T00:00:00"
    (info,) = timetable.iter_partition_dagrun_infos(
        earliest=pendulum.datetime(2026, 11, 20, tz="Asia/Shanghai"),
        latest=pendulum.datetime(2026, 11, 20, tz="Asia/Shanghai"),
    )
    wait = orders.get_task("partition_commit.wait")
    run = dag_run(key=info.partition_key)
    rendered = wait.render_template(wait.partition, {"dag_run": run}, orders.get_template_env())
    assert rendered == {"dt": "20261120"}
    clicks = bag.dags["clicks"]
    assert clicks.get_task("partition_commit.compact").conf == {"spark.executor.memory": "2g"}
    assert clicks.owner == "data-platform"
    # The sweep compacts with the same Spark settings, in the same pool.
    assert bag.dags["clicks_maintenance"].get_task("sweep.compact").conf == {
        "spark.executor.memory": "2g"
    }
    assert bag.dags["fscommit_orders_maintenance"].get_task("sweep.compact").pool == "spark"


def test_a_broken_spec_hides_no_other_table(
    compacted_stream, late_stateless_stream, tmp_path, monkeypatch, caplog
):
    specs = table_specs([compacted_stream, late_stateless_stream], 20, tmp_path / "tables")
    specs[13]["sink.partition-commit.delay"] = "an hour or so"
    folder = dag_folder(tmp_path, specs)
    broken = folder / "specs" / "table_13.yaml"
    with caplog.at_level(logging.ERROR, logger="airflow_provider_fscommit.factory"):
        bag = dagbag(folder, monkeypatch)
    # An import error would hide every DAG of the file; there is none.
    assert bag.import_errors == {}
    good = [
        d
        for d in bag.dags.values()
        if BROKEN_SPEC_TAG not in d.tags and not d.dag_id.endswith("_maintenance")
    ]
    assert len(good) == 19 and all([t.task_id for t in d.topological_sort()] == TASKS for d in good)
    assert "table_13_maintenance" not in bag.dags  # a broken table runs nothing
    # The broken table keeps its DAG id, which says what is wrong and commits nothing.
    standin = bag.dags["table_13"]
    assert BROKEN_SPEC_TAG in standin.tags and standin.schedule is None
    assert f"{broken}: sink.partition-commit.delay: cannot parse duration" in standin.description
    assert str(broken) in standin.doc_md
    assert [t.task_id for t in standin.tasks] == ["broken_spec"]
    with pytest.raises(AirflowException, match=r"sink\.partition-commit\.delay"):
        standin.get_task("broken_spec").execute({})
    # The DAG processor's log of the DAG file names the spec file and the option.
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(f"{broken}: sink.partition-commit.delay: " in message for message in errors), errors


@pytest.mark.slow
def test_airflow_dags_test_of_a_generated_dag_commits_its_hour(
    compacted_stream, connect_server, tmp_path
):
    specs = table_specs([compacted_stream], 2, tmp_path / "tables")
    airflow = AirflowEnv(
        tmp_path / "airflow", {"AIRFLOW_CONN_SPARK_DEFAULT": connect_connection(connect_server)}
    )
    dag_folder(airflow.home, specs)  # the home's dags/, its DAG folder
    airflow.setup()
    # A manual run at 02:00 covers the hour that ended then: hour 01.
    run = airflow.run("dags", "test", "table_01", "2026-11-20T02:00:00+00:00")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert airflow.task_states("table_01") == {t: "success" for t in TASKS}
    table = tmp_path / "tables" / "t01"
    assert CommitLedger(str(table)).read("dt=2026-11-20/hour=01").policies_current
    assert (table / "dt=2026-11-20" / "hour=01" / "_SUCCESS").exists()
    assert not (tmp_path / "tables" / "t00").exists()  # the other table's DAG did not run


@pytest.mark.slow
def test_the_dag_processor_logs_a_broken_spec_and_keeps_every_table(tmp_path):
    """Airflow's own DAG processor: the problem in its log of the DAG file, every table's
    DAG in the metadata database (none stale), no import error to hide them."""
    specs = table_specs([_Paths(tmp_path)], 5, tmp_path / "tables")
    specs[2]["sink.partition-commit.delay"] = "soon"
    airflow = AirflowEnv(tmp_path / "airflow", {})
    broken = dag_folder(airflow.home, specs) / "specs" / "table_02.yaml"
    airflow.setup()
    parsed = airflow.run("dag-processor", "--num-runs", "1", timeout=300)
    assert parsed.returncode == 0, parsed.stderr[-3000:]
    (log,) = (airflow.home / "logs" / "dag_processor").rglob("fscommit_tables.py.log")
    assert f"{broken}: sink.partition-commit.delay: cannot parse duration" in log.read_text()
    assert '"level":"error"' in log.read_text()
    assert airflow.query("SELECT count(*) FROM import_error") == [(0,)]
    dags = dict(airflow.query("SELECT dag_id, is_stale FROM dag"))
    assert dags == {
        f"table_{i:02d}{kind}": 0
        for i in range(5)
        for kind in ("", "_maintenance")
        if i != 2 or not kind
    }
    (description,) = airflow.query("SELECT description FROM dag WHERE dag_id = 'table_02'")[0]
    assert description.startswith(f"BROKEN SPEC: {broken}: sink.partition-commit.delay: ")
    tags = airflow.query("SELECT name FROM dag_tag WHERE dag_id = 'table_02'")
    assert (BROKEN_SPEC_TAG,) in tags


class _Paths:
    """A stream's paths where there is no stream: parsing never looks at them."""

    def __init__(self, base: Path) -> None:
        self.staging = str(base / "no-stream" / "staging")
        self.checkpoint = str(base / "no-stream" / "checkpoint")


@pytest.fixture(scope="module")
def region_stream(spark, tmp_path_factory):
    """``k=…/dt=…/hour=…`` (a region before the time): hour 01 of three regions, the third
    region's first row of that hour in a later batch; the watermark then passes hour 02
    (the query's watermark trails its latest event time by 30 minutes)."""
    from fscommit_dev.streams import StreamingTable, row

    stream = StreamingTable(tmp_path_factory.mktemp("regions"), partition_by=("k", "dt", "hour"))
    stream.add_batches(
        [row(1, "2026-11-20T01:05:00Z", k="US"), row(2, "2026-11-20T01:10:00Z", k="DE")],
        [row(3, "2026-11-20T01:50:00Z", k="FR"), row(4, "2026-11-20T02:30:00Z", k="US")],
        [row(5, "2026-11-20T04:30:00Z", k="US")],
        [row(6, "2026-11-20T05:30:00Z", k="US")],  # its batch runs with watermark 04:00
    )
    stream.run(spark)
    return stream


@pytest.mark.slow
def test_a_table_keyed_before_its_time_commits_every_partition_of_the_runs_hour(
    region_stream, connect_server, tmp_path
):
    """One run per hour commits that hour of every region, as discovered once the hour is
    complete, and announces each partition on the table asset."""
    spec = hourly_table(
        region_stream.staging,
        region_stream.checkpoint,
        table_path=str(tmp_path / "tables" / "regions"),
        partition_keys="k,dt,hour",
        **{"sink.partition-commit.policy.kind": "success-file"},
    )
    spec["dag"] = {"start_date": "2026-11-20", "dag_id": "regions", "wait_timeout": "3 min"}
    airflow = AirflowEnv(
        tmp_path / "airflow", {"AIRFLOW_CONN_SPARK_DEFAULT": connect_connection(connect_server)}
    )
    folder = airflow.home / "dags"
    (folder / "specs").mkdir(parents=True)
    shutil.copy(DAG_FILE, folder)
    (folder / "specs" / "regions.yaml").write_text(yaml.safe_dump(spec))
    airflow.setup()
    run = airflow.run("dags", "test", "regions", "2026-11-20T02:00:00+00:00")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    hour = [f"k={k}/dt=2026-11-20/hour=01" for k in ("DE", "FR", "US")]
    states = airflow.task_states("regions")
    assert states == {
        "partition_commit.wait": "success",
        "partition_commit.discover": "success",
        "partition_commit.compact": "success",
        **{f"partition_commit.commit[{i}]": "success" for i in range(3)},
    }, states
    ledger = CommitLedger(spec["table_path"])
    for partition in hour:
        assert ledger.read(partition).policies_current, partition
        assert (Path(spec["table_path"]) / partition / "_SUCCESS").exists()
    assert not (Path(spec["table_path"]) / "k=US" / "dt=2026-11-20" / "hour=02").exists()
    # One event per partition, keyed by the hour (what the run is keyed by, and what
    # Airflow's temporal mappers read); its path in the event's extra.
    events = airflow.query("SELECT partition_key, extra FROM asset_event")
    assert {key for key, _ in events} == {"2026-11-20T01:00:00"}
    assert sorted(p for _, extra in events for p in json.loads(extra)["partitions"]) == hour


@pytest.mark.slow
def test_a_tables_whole_life_late_data_swept_then_expired_and_cleaned(
    spark, connect_server, tmp_path
):
    """The factory's two DAGs over a real stream, with ``airflow dags test``: hour 01's run
    succeeds, late rows for it arrive, and the maintenance DAG's sweep publishes each of
    them once (and the hours no run committed); its clean task deletes only staged files
    the ledger records as published; once the spec sets an expiration time, its expire
    task drops exactly the partitions past it."""
    from fscommit_dev.streams import StreamingTable, hourly_batches, row
    from tests.support.compaction import ids_by_partition, visible_data_files

    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", range(4)))
    stream.run(spark)  # watermark 02:10: hours 00 and 01 committable
    table = tmp_path / "tables" / "life"
    spec = hourly_table(
        stream.staging,
        stream.checkpoint,
        table_path=str(table),
        **{"sink.partition-commit.policy.kind": "success-file"},
    )
    spec["dag"] = {"start_date": "2026-11-20", "dag_id": "life", "clean-staging": "1 ms"}
    airflow = AirflowEnv(
        tmp_path / "airflow", {"AIRFLOW_CONN_SPARK_DEFAULT": connect_connection(connect_server)}
    )
    folder = airflow.home / "dags"
    (folder / "specs").mkdir(parents=True)
    shutil.copy(DAG_FILE, folder)
    spec_file = folder / "specs" / "life.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    airflow.setup()

    def dags_test(*args: str) -> None:
        run = airflow.run("dags", "test", *args)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]

    dags_test("life", "2026-11-20T02:00:00+00:00")  # hour 01's run
    ledger = CommitLedger(str(table))
    assert ledger.read("dt=2026-11-20/hour=01").policies_current
    # Late rows for hour 01, after its run succeeded (the watermark moves on to 03:10).
    stream.add_batches([row(100, "2026-11-20T01:15:00Z"), row(101, "2026-11-20T01:45:00Z")])
    stream.run(spark)
    staged = {p.relative_to(stream.staging) for p in Path(stream.staging).rglob("*.parquet")}

    dags_test("life_maintenance")
    states = airflow.task_states("life_maintenance")
    assert states == {
        "sweep.discover": "success",
        "sweep.compact": "success",
        **{f"sweep.commit[{i}]": "success" for i in range(3)},
        "clean": "success",
    }, states
    published = {
        (dt, f"{int(hour):02d}"): sorted(ids.elements())
        for (dt, hour), ids in ids_by_partition(
            spark, str(table), visible_data_files(table)
        ).items()
    }
    assert published == {
        ("2026-11-20", "00"): [0, 1, 2],
        ("2026-11-20", "01"): [10, 11, 12, 100, 101],  # each late row once
        ("2026-11-20", "02"): [20, 21, 22],
    }
    # Clean-up: the published hours' staged files are gone; hour 03's (pending, never
    # published), the sink log and the checkpoint are all there.
    left = {p.relative_to(stream.staging) for p in Path(stream.staging).rglob("*.parquet")}
    assert left == {p for p in staged if p.parts[1] == "hour=03"} and left
    assert (Path(stream.staging) / "_spark_metadata").is_dir()
    assert Path(stream.checkpoint, "commits").is_dir()

    # Expiry: only once the spec sets an age, and only the partitions past it. Hour 00 is
    # 30 minutes past this age, hour 01 30 minutes short of it.
    now = pendulum.now("UTC")
    age = int((now - pendulum.datetime(2026, 11, 20, 0, 30, tz="UTC")).total_seconds() // 60)
    spec_file.write_text(yaml.safe_dump(spec | {"partition.expiration-time": f"{age} min"}))
    dags_test("life_maintenance")
    states = airflow.task_states("life_maintenance")
    assert states["expire"] == "success" and states["clean"] == "success", states
    assert not (table / "dt=2026-11-20" / "hour=00").exists()
    assert ledger.read("dt=2026-11-20/hour=00").expired
    for hour in ("01", "02"):
        assert (table / "dt=2026-11-20" / f"hour={hour}" / "_SUCCESS").exists()
        assert not ledger.read(f"dt=2026-11-20/hour={hour}").expired
