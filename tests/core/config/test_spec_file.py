"""Spec files as the DAG factory and ``fscommit validate`` read them: the table, the ``dag``
section, the schedule, and every problem naming its file and option."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import yaml

from airflow_provider_fscommit.core.config.spec_file import (
    claimed_dag_id,
    read_spec_file,
    read_spec_folder,
    spec_paths,
)
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.partition.time_extractor import PartitionTimeExtractor

TABLE = {
    "staging_path": "/data/streaming/events",
    "checkpoint_path": "/data/checkpoints/events",
    "partition_keys": "dt,hour",
    "table_path": "/data/warehouse/events",
    "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
}


def write(folder, name, table=TABLE, dag=None, **changes):
    spec = {**table, **changes}
    spec["dag"] = {"start_date": "2026-11-20"} if dag is None else dag
    path = folder / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_a_spec_file_gives_its_table_its_dag_and_its_schedule(tmp_path):
    dag = {
        "start_date": "2026-11-20",
        "dag_id": "events_hourly",
        "tags": "events,hourly",
        "retries": 4,
        "retry_delay": "5 min",
        "owner": "data-platform",
        "pool": "spark",
        "catchup": "false",
        "spark_conf": {"spark.executor.memory": "2g", "spark.sql.adaptive.enabled": True},
        "aws_conn_id": "aws_lake",
    }
    spec, problems = read_spec_file(write(tmp_path, "events.yaml", dag=dag))
    assert problems == []
    assert spec.table == TableSpec.from_options(TABLE)
    assert spec.dag.dag_id == "events_hourly" and spec.dag.start_date == datetime(2026, 11, 20)
    assert spec.dag.tags == ("events", "hourly") and spec.dag.retries == 4
    assert spec.dag.retry_delay == timedelta(minutes=5) and not spec.dag.catchup
    assert spec.dag.spark_conf == {
        "spark.executor.memory": "2g",
        "spark.sql.adaptive.enabled": "true",
    }
    assert spec.partitioning.cron == "0 * * * *"
    # The defaults are the hourly example DAG's.
    spec, _ = read_spec_file(write(tmp_path, "plain.yaml"))
    assert spec.dag.dag_id == "fscommit_plain" and spec.dag.retries == 2 and spec.dag.catchup


def test_the_same_file_serves_fscommit_status_spec(tmp_path):
    """``TableSpec.from_file`` (``--spec``, the example DAGs) skips the dag section."""
    path = write(tmp_path, "events.yaml")
    assert TableSpec.from_file(str(path)) == TableSpec.from_options(TABLE)


@pytest.mark.parametrize(
    ("changes", "dag", "option", "message"),
    [
        (
            {"sink.partition-commit.delay": "soon"},
            None,
            "sink.partition-commit.delay",
            "cannot parse duration",
        ),
        ({"bogus.option": 1}, None, "bogus.option", "unknown table option"),
        ({"staging_path": ""}, None, "staging_path", "non-empty string"),
        ({"table_path": None}, None, "table_path", "the table spec has no table_path"),
        (
            {"sink.partition-commit.policy.kind": "metastore"},
            None,
            "sink.partition-commit.policy.kind",
            "no metastore table",
        ),
        (
            {"partition_keys": "dt,country"},
            None,
            "partition.time-extractor.timestamp-pattern",
            "country",
        ),
        ({}, {}, "dag.start_date", "is required"),
        ({}, {"start_date": "yesterday"}, "dag.start_date", "expected a date"),
        ({}, {"start_date": "2026-11-20", "retries": -1}, "dag.retries", "at least 0"),
        ({}, {"start_date": "2026-11-20", "colour": "red"}, "dag.colour", "unknown DAG setting"),
        ({}, {"start_date": "2026-11-20", "dag_id": "a b"}, "dag.dag_id", "is not a DAG id"),
        (
            {},
            {"start_date": "2026-11-20", "retry_delay": "x"},
            "dag.retry_delay",
            "cannot parse duration",
        ),
        ({}, {"start_date": "2026-11-20", "catchup": "maybe"}, "dag.catchup", "true or false"),
        ({}, {"start_date": "2026-11-20", "spark_conf": ["x"]}, "dag.spark_conf", "mapping"),
        (
            {},
            {"start_date": "2026-11-20", "interval": "1 d"},
            "dag.interval",
            "spans 1 hour",
        ),
        ({}, ["start_date"], "dag", "mapping of DAG settings"),
    ],
)
def test_each_problem_names_the_file_and_the_option(tmp_path, changes, dag, option, message):
    path = write(tmp_path, "broken.yaml", dag=dag, **changes)
    spec, problems = read_spec_file(path)
    assert spec is None
    assert [(p.file, p.option) for p in problems] == [(str(path), option)]
    assert message in problems[0].message
    assert str(problems[0]).startswith(f"{path}: {option}: ")


def test_every_problem_of_a_file_at_once_each_on_one_line(tmp_path):
    path = write(tmp_path, "b.yaml", dag={"retries": "x"}, **{"bogus": 1})
    _, problems = read_spec_file(path)
    assert [p.option for p in problems] == ["bogus", "dag.retries", "dag.start_date"]
    (tmp_path / "c.yaml").write_text("staging_path: /s\n  x: [\n")
    _, problems = read_spec_file(tmp_path / "c.yaml")
    assert problems[0].option == "file" and "\n" not in str(problems[0])


def test_a_folder_keeps_its_good_files_and_reports_the_others(tmp_path):
    write(tmp_path, "a.yaml", dag={"start_date": "2026-11-20", "dag_id": "same"})
    write(tmp_path, "b.yaml", dag={"start_date": "2026-11-20", "dag_id": "same"}, table_path="/t/b")
    write(tmp_path, "c.yml", table_path="/t/c")
    write(tmp_path, "d.json", table_path="/data/warehouse/events")
    (tmp_path / "README.md").write_text("not a spec")
    folder = read_spec_folder([tmp_path])
    assert [s.dag.dag_id for s in folder.specs] == ["same", "fscommit_c"]
    assert [(p.file.rsplit("/", 1)[-1], p.option) for p in folder.problems] == [
        ("b.yaml", "dag.dag_id"),
        ("d.json", "table_path"),
    ]
    assert list(folder.problem_files()) == [str(tmp_path / "b.yaml"), str(tmp_path / "d.json")]
    with pytest.raises(ConfigError, match="neither a spec file nor a folder"):
        spec_paths([tmp_path / "missing"])


def test_a_broken_file_keeps_the_dag_id_it_asks_for(tmp_path):
    asks = write(tmp_path, "a.yaml", dag={"dag_id": "events_hourly"}, bogus=1)
    assert claimed_dag_id(asks) == "events_hourly"
    (tmp_path / "b c.yaml").write_text("[not, a, mapping]")
    assert claimed_dag_id(tmp_path / "b c.yaml") == "fscommit_b_c"


class ExplodingExtractor(PartitionTimeExtractor):
    """A user's class that fails in a way no check foresees."""

    def __init__(self) -> None:
        raise RuntimeError("cannot reach the config service")

    def extract(self, keys, values):  # pragma: no cover - never built
        raise AssertionError


def test_a_failure_nobody_foresaw_is_its_files_problem_only(tmp_path):
    write(tmp_path, "a.yaml", table_path="/t/a")
    write(
        tmp_path,
        "b.yaml",
        table_path="/t/b",
        **{
            "partition.time-extractor.kind": "custom",
            "partition.time-extractor.class": f"{__name__}.ExplodingExtractor",
        },
    )
    folder = read_spec_folder([tmp_path])
    assert [s.dag.dag_id for s in folder.specs] == ["fscommit_a"]
    (problem,) = folder.problems
    assert (problem.file, problem.option) == (str(tmp_path / "b.yaml"), "file")
    assert problem.message == "reading it failed: RuntimeError: cannot reach the config service"


def test_a_spec_is_a_tables_whole_life_sweep_on_expiry_and_clean_up_when_asked(tmp_path):
    """By default the commit DAG and an hourly sweep; expiry only with an expiration time,
    clean-up only with an age (written ``clean-staging`` or ``clean_staging``)."""
    plain, problems = read_spec_file(write(tmp_path, "plain.yaml"))
    assert problems == [] and plain.dag.sweep == timedelta(hours=1)
    assert plain.dag_ids == ("fscommit_plain", "fscommit_plain_maintenance")
    plan = plain.plan()
    assert plan["dags"]["fscommit_plain_maintenance"] == {
        "schedule": "every 1 h",
        "tasks": ["sweep.discover", "sweep.compact", "sweep.commit"],
        "catchup": False,
    }
    assert (plan["sweep"], plan["expire"], plan["clean_staging"]) == ("1 h", None, None)

    dag = {"start_date": "2026-11-20", "sweep": "15 min", "clean-staging": "7 d"}
    full, problems = read_spec_file(
        write(tmp_path, "full.yaml", dag=dag, **{"partition.expiration-time": "90 d"})
    )
    assert problems == []
    plan = full.plan()
    assert plan["dags"]["fscommit_full_maintenance"]["tasks"] == [
        "sweep.discover",
        "sweep.compact",
        "sweep.commit",
        "expire",
        "clean",
    ]
    assert plan["dags"]["fscommit_full_maintenance"]["schedule"] == "every 15 min"
    assert plan["expire"] == "after 90 d (values-time)"
    assert plan["clean_staging"] == "published staged files older than 7 d"

    # No sweep: a daily run when there is still expiry or clean-up, else no second DAG.
    dag = {"start_date": "2026-11-20", "sweep": False, "clean_staging": "2 d"}
    cleans, _ = read_spec_file(write(tmp_path, "cleans.yaml", dag=dag))
    assert cleans.plan()["dags"]["fscommit_cleans_maintenance"] == {
        "schedule": "every 1 d",
        "tasks": ["clean"],
        "catchup": False,
    }
    dag = {"start_date": "2026-11-20", "sweep": "false"}
    alone, _ = read_spec_file(write(tmp_path, "alone.yaml", dag=dag))
    assert alone.dag_ids == ("fscommit_alone",) and alone.maintenance_dag_id is None

    for bad in ("now and then", "10 s"):
        _, problems = read_spec_file(
            write(tmp_path, "bad.yaml", dag={"start_date": "2026-11-20", "sweep": bad})
        )
        assert [p.option for p in problems] == ["dag.sweep"], problems


def test_a_maintenance_dag_id_another_table_claims_is_a_problem(tmp_path):
    write(tmp_path, "a.yaml")  # fscommit_a and fscommit_a_maintenance
    write(
        tmp_path,
        "b.yaml",
        dag={"start_date": "2026-11-20", "dag_id": "fscommit_a_maintenance"},
        table_path="/data/warehouse/b",
    )
    found = read_spec_folder([tmp_path])
    assert [s.path for s in found.specs] == [str(tmp_path / "a.yaml")]
    (problem,) = found.problems
    assert (problem.file, problem.option) == (str(tmp_path / "b.yaml"), "dag.dag_id")
