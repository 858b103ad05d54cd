"""The provider goes into the Airflow a deployment already runs, on every supported line.

For each Airflow line, a fresh virtualenv on one of the Pythons that line supports plays a
user's deployment: Airflow and the Spark and Hive providers installed first and frozen
(the deployment's constraints file). The provider's wheel is then installed with those
constraints and the extras the line tests (``hive``: the hourly DAG commits to a
metastore; ``iceberg`` last, below), as the README says, and must change none of the
packages already there. The oldest line also holds every dependency at the floor
``setup.cfg`` declares (those of the ``hive`` extra too), so the floors are tested, not
guessed. Then, in that environment: every module imports, the provider
info is valid for that Airflow's schema, the plugin loads, the example DAGs parse, and the
hourly DAG runs for real (``airflow dags test``: the deferrable sensor waits in its
trigger until a real stream's watermark moves, the compaction runs through a
spark-submit, the metastore and success-file commit, the asset event). On 3.2, whose
partitioned runs the main suite (3.3) does not run, a factory DAG runs under the line's
own scheduler, api-server, dag-processor and triggerer too: catch-up, ``airflow backfill
create`` and a cleared run.

Each line proves only what that line can show: the manual, sweep, expire and rollup DAGs
run end to end once, on the main environment (``tests/dags/test_examples.py``), and no line
repeats the main environment's Airflow (3.3.2).

The compaction application runs on the main environment's Spark and Python (``SPARK_HOME``
and ``PYSPARK_PYTHON``), as a deployment's worker submits to its cluster's.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from pyiceberg.catalog import load_catalog

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.airflow_services import running_services, services_airflow_env
from fscommit_dev.metastore.client import create_table, hive_sql
from fscommit_dev.streams import StreamingTable, hourly_batches
from fscommit_dev.tables import hourly_table, table_flags
from tests.support.compaction import ids_by_partition
from tests.support.example_dags import (
    DAY,
    SECRET,
    example_airflow_extra_env,
    example_spec,
)
from tests.support.iceberg import iceberg_ids
from tests.support.pythons import fresh_venv, pip, require_python
from tests.support.wheel import ROOT, run_wheel

pytestmark = pytest.mark.slow

PACKAGE = "airflow-provider-fscommit"
PROBE = Path(__file__).resolve().parents[1] / "support" / "compat_probe.py"
# What `airflow dags test` prints when the sensor defers: 3.1+ names the trigger, 3.0 not.
DEFERRED = re.compile(r"PartitionWatermarkTrigger|running trigger in line")
EXAMPLE_DAGS = {"fscommit_hourly", "fscommit_sweep", "fscommit_manual", "fscommit_expire"}


# The extras every line installs with the wheel (the iceberg extra's test adds its own).
EXTRAS = ("hive",)


def declared_floors(*extras: str) -> list[str]:
    """``setup.cfg``'s install_requires, then the ``extras``' requirements, with each floor
    pinned (``name>=v`` → ``name==v``)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    floors = []
    declared = [config["options"]["install_requires"]]
    declared += [config["options.extras_require"][extra] for extra in extras]
    for line in "\n".join(declared).split("\n"):
        if line.strip() and not line.strip().startswith("#"):
            name, _, version = line.strip().partition(">=")
            assert version and "," not in version, f"{line}: a floor only, no cap"
            floors.append(f"{name}=={version}")
    return floors


@dataclass(frozen=True)
class AirflowLine:
    """A deployment: an Airflow release on a Python, with the Spark and Hive providers."""

    airflow: str
    python: str
    at_floors: bool = False  # every dependency at setup.cfg's floor
    # What Airflow's constraints file for the release pins and a bare install would not
    # (these machines cannot fetch the official files): a newer release breaks Airflow.
    pins: tuple[str, ...] = ()
    # Its scheduler, api-server and triggerer run too: PostgreSQL's drivers (sync and
    # async), as a deployment with a PostgreSQL metadata database has them.
    services_database: bool = False

    def __str__(self) -> str:
        return f"airflow{self.airflow}-py{self.python}"

    @property
    def minor(self) -> tuple[int, int]:
        """The Airflow line, ``(3, 2)`` for 3.2.2: what decides what degrades."""
        major, minor = self.airflow.split(".")[:2]
        return int(major), int(minor)

    def requirements(self) -> list[str]:
        if self.at_floors:
            floors = declared_floors(*EXTRAS)
            assert f"apache-airflow=={self.airflow}" in floors, "the floor line is the floor"
            return floors
        return [
            f"apache-airflow=={self.airflow}",
            "apache-airflow-providers-apache-spark",
            "apache-airflow-providers-apache-hive",
            *(["psycopg2-binary", "asyncpg"] if self.services_database else []),
            *self.pins,
        ]


# Each line once, none the main environment's (Airflow 3.3.2 on 3.11); the oldest and the
# newest Python each somewhere.
LINES = [
    AirflowLine("3.0.0", "3.10", at_floors=True),
    AirflowLine("3.1.8", "3.13"),
    # Airflow 3.2.2's in-process execution API (`dags test`, the task SDK) fails with
    # FastAPI 0.165 (a pydantic discriminator) and with svcs 26 (no registry in its state).
    AirflowLine("3.2.2", "3.12", pins=("fastapi==0.136.3", "svcs==25.1.0"), services_database=True),
]


def frozen(python: Path) -> dict[str, str]:
    lines = pip(python, "freeze", "--all").stdout.splitlines()
    return {
        re.split(r"[=@ ]", line, maxsplit=1)[0].lower().replace("_", "-"): line for line in lines
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return run_wheel(tmp_path_factory)


@dataclass
class Deployment:
    line: AirflowLine
    bin: Path
    before: dict[str, str]
    after: dict[str, str]


@pytest.fixture(scope="module", params=LINES, ids=str)
def deployment(request, wheel, tmp_path_factory) -> Deployment:
    """The line's deployment, then the wheel installed into it with its constraints."""
    line: AirflowLine = request.param
    interpreter = require_python(line.python)
    venv = tmp_path_factory.mktemp(str(line)) / "venv"
    python = fresh_venv(interpreter, venv, installs=(["--upgrade", "pip"], line.requirements()))
    before = frozen(python)
    constraints = venv / "deployment-constraints.txt"
    constraints.write_text("\n".join(before.values()) + "\n")
    pip(
        python,
        "install",
        "--quiet",
        "--constraint",
        str(constraints),
        f"{wheel}[{','.join(EXTRAS)}]",
    )
    return Deployment(line, venv / "bin", before, frozen(python))


def test_installing_the_provider_changes_nothing_in_the_deployment(deployment):
    assert deployment.before["apache-airflow"] == f"apache-airflow=={deployment.line.airflow}"
    added = {k: v for k, v in deployment.after.items() if k not in deployment.before}
    assert list(added) == [PACKAGE], f"installed besides the provider: {added}"
    changed = {
        k: (v, deployment.after[k])
        for k, v in deployment.before.items()
        if deployment.after.get(k) != v
    }
    assert not changed, f"the provider's install changed the deployment: {changed}"
    check = subprocess.run(
        [str(deployment.bin / "python"), "-m", "pip", "check"], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_every_module_imports_and_the_provider_info_is_valid(deployment, tmp_path):
    probe = subprocess.run(
        [str(deployment.bin / "python"), str(PROBE)],
        cwd=tmp_path,  # not the source tree: the installed wheel is what runs
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(deployment, tmp_path),
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout.splitlines()[-1])
    assert found["python"] == [int(p) for p in deployment.line.python.split(".")]
    assert found["airflow"] == deployment.line.airflow
    assert found["package"].startswith(str(deployment.bin.parent))
    assert len(found["modules"]) > 60
    assert found["import_failures"] == {}
    assert found["schema_error"] is None
    # The degradations the README's compatibility table names.
    assert found["partitioned_asset_events"] == (deployment.line.minor >= (3, 3))
    assert found["ui_menu_entries"] == (deployment.line.minor >= (3, 1))
    assert bool(found["external_views"]) == (deployment.line.minor >= (3, 1))


def test_airflow_lists_the_provider_and_its_plugin(deployment, tmp_path):
    env = _env(deployment, tmp_path)
    airflow = str(deployment.bin / "airflow")
    providers = subprocess.run(
        [airflow, "providers", "list", "--output", "json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert providers.returncode == 0, providers.stderr[-3000:]
    assert PACKAGE in providers.stdout
    plugins = subprocess.run(
        [airflow, "plugins", "--output", "json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert plugins.returncode == 0, plugins.stderr[-3000:]
    (plugin,) = [p for p in json_output(plugins.stdout) if p["name"] == "fscommit"]
    assert "fscommit commit status" in str(plugin["fastapi_apps"])


def test_the_example_dags_parse_and_the_hourly_dag_defers_and_commits_a_real_stream(
    deployment, spark, metastore, tmp_path
):
    # Hours 00, 01, 03, 04, 05 of 2026-11-20: the watermark (04:10) leaves hour 04 pending.
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4, 5]))
    stream.run(spark)
    name = re.sub(r"\W", "_", str(deployment.line))
    table = tmp_path / "table"
    create_table(metastore, name, table)
    spec = example_spec(stream, table, name)
    airflow = AirflowEnv(
        tmp_path / "airflow",
        example_airflow_extra_env(tmp_path, spec, metastore) | _spark_of_the_main_env(),
        bin=deployment.bin,
    ).setup()

    # The DAG processor's parse, stored in the metadata database, as the UI shows it.
    reserialized = airflow.run("dags", "reserialize")
    assert reserialized.returncode == 0, reserialized.stderr[-3000:]
    listed = airflow.run("dags", "list", "--output", "json")
    assert listed.returncode == 0, listed.stderr[-3000:]
    listed_ids = {d["dag_id"] for d in json_output(listed.stdout)}
    assert listed_ids >= EXAMPLE_DAGS
    # The daily rollup downstream needs 3.3's rollup mappers; before, its file makes none.
    assert ("fscommit_daily_rollup" in listed_ids) == (deployment.line.minor >= (3, 3))
    errors = airflow.run("dags", "list-import-errors", "--output", "json")
    assert errors.returncode == 0, errors.stderr[-3000:]
    assert json_output(errors.stdout) == [], errors.stdout[-3000:]

    # Hour 04: the sensor defers (its trigger runs in-line) until the stream's watermark
    # passes 05:00 + 1 h; two more batches move it there; then compact and commit.
    log = tmp_path / "dags-test.log"
    with log.open("w") as out:
        run = subprocess.Popen(
            [str(deployment.bin / "airflow"), "dags", "test", "fscommit_hourly",
             "2026-11-20T05:00:00+00:00"],
            env=airflow.env(), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not DEFERRED.search(log.read_text()):
            assert run.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        stream.add_batches(*hourly_batches("2026-11-20", [6, 7], start_id=100))
        stream.run(spark)
        assert run.wait(timeout=600) == 0, log.read_text()[-3000:]
    finally:
        if run.poll() is None:
            run.kill()
    assert SECRET not in log.read_text()
    states = airflow.task_states("fscommit_hourly")
    assert set(states.values()) == {"success"}, states
    assert CommitLedger(str(table)).read(f"{DAY}/hour=04").policies_current
    assert (table / DAY / "hour=04" / "_SUCCESS").exists()

    # The asset event: keyed by the hour from 3.3 (the run `dags test` makes has no key,
    # so before there is none), the partition in its extra on every line.
    ((extra,),) = airflow.query("SELECT extra FROM asset_event")
    extra = extra if isinstance(extra, dict) else json.loads(extra)
    assert list(extra["partitions"]) == [f"{DAY}/hour=04"]
    if deployment.line.minor >= (3, 2):  # events have keys
        ((key,),) = airflow.query("SELECT partition_key FROM asset_event")
        assert key == ("2026-11-20T04:00:00" if deployment.line.minor >= (3, 3) else None)

    # The manual DAG's Params are validated by the line's Airflow: a bad value runs nothing.
    refused = airflow.run(
        "dags", "test", "fscommit_manual", "-c", json.dumps({"partition": {"dt": ".."}})
    )
    assert "Invalid input for param partition" in refused.stdout + refused.stderr
    assert not (table / DAY / "hour=00").exists()


def test_partitioned_runs_catch_up_backfill_and_clear_under_the_services(
    deployment, spark, metastore, postgres, tmp_path
):
    """Airflow 3.2's partitioned runs under its own scheduler, api-server, dag-processor
    and triggerer (3.3's are tests/dags/test_services.py's). Two factory DAGs of one
    stream: one catches up hours 00 to 02 (03 waits for the stream), the other, without
    catch-up, gets them from ``airflow backfill create`` (3.2's form: the runs' due times).
    Each hour is committed once per table, its asset event keyed by its run's key; a
    cleared run runs again and commits nothing new."""
    if not deployment.line.services_database:
        pytest.skip("the services run on the line without a test of its own: 3.2")
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", range(5)))
    stream.run(spark)  # watermark 03:10: hours 00 to 02 committable, 03 pending
    home = tmp_path / "airflow"
    (home / "dags" / "specs").mkdir(parents=True)
    shutil.copy(ROOT / "dags" / "fscommit_tables.py", home / "dags")
    tables = {}
    for dag_id, catchup in (("caught_up", True), ("backfilled", False)):
        name = re.sub(r"\W", "_", f"{deployment.line}_{dag_id}")
        tables[dag_id] = (tmp_path / dag_id, name)
        create_table(metastore, name, tmp_path / dag_id)
        spec = example_spec(stream, tmp_path / dag_id, name) | {
            "dag": {
                "dag_id": dag_id,
                "start_date": "2026-11-20T00:00:00",
                "catchup": catchup,
                "poke_interval": "5 s",
            }
        }
        (home / "dags" / "specs" / f"{dag_id}.yaml").write_text(yaml.safe_dump(spec))
    extra_env = example_airflow_extra_env(tmp_path, spec, metastore) | _spark_of_the_main_env()
    extra_env["AIRFLOW__CORE__DAGS_FOLDER"] = str(home / "dags")
    airflow = services_airflow_env(home, extra_env, postgres, bin=deployment.bin)
    assert airflow.run("dags", "reserialize").returncode == 0
    hours = ("00", "01", "02")
    keys = [(f"2026-11-20T{h}:00:00",) for h in hours]

    with running_services(airflow) as services:
        for dag_id in tables:
            assert airflow.run("dags", "unpause", dag_id).returncode == 0
        backfill = services.backfill(
            "backfilled", "--from-date", "2026-11-20T01:00:00+00:00",
            "--to-date", "2026-11-20T03:00:00+00:00",
        )  # fmt: skip
        services.wait_for_backfill(backfill)
        assert services.backfill_run_states(backfill) == ["success"] * 3
        assert (
            airflow.query(
                f"SELECT partition_key FROM dag_run WHERE backfill_id = {backfill} ORDER BY 1"
            )
            == keys
        )
        caught_up = "run_type = 'scheduled' AND partition_key <= '2026-11-20T02:00:00'"
        assert set(services.wait_for_runs("caught_up", 3, where=caught_up).values()) == {"success"}
        for dag_id, (table, name) in tables.items():
            ledger = CommitLedger(str(table))
            records = {h: ledger.read(f"{DAY}/hour={h}") for h in hours}
            assert {h: (len(r.commits), len(r.policy_commits)) for h, r in records.items()} == {
                h: (1, 1) for h in hours
            }, dag_id
            assert not ledger.read(f"{DAY}/hour=03").commits, dag_id
            rows = hive_sql(
                metastore,
                f"SELECT hour, count(*) AS n FROM fscommit.{name} GROUP BY hour ORDER BY hour",
            )
            assert {r["hour"]: r["n"] for r in rows} == {h: 3 for h in hours}, dag_id
        events = (
            "SELECT partition_key FROM asset_event WHERE source_dag_id = 'backfilled' ORDER BY 1"
        )
        assert airflow.query(events) == keys

        # Clearing hour 01's backfill run runs it again: nothing new committed or announced.
        ledger = CommitLedger(str(tables["backfilled"][0]))
        before = ledger.read(f"{DAY}/hour=01")
        states = services.rerun_cleared("backfilled", "2026-11-20T01:00:00")
        assert states["partition_commit.commit"] == "skipped"
        assert ledger.read(f"{DAY}/hour=01") == before
        assert airflow.query(events) == keys


def test_the_iceberg_extra_installs_and_commits_a_stream_to_an_iceberg_table(
    deployment, wheel, spark, metastore, tmp_path
):
    """Last on each line (it adds packages): the ``iceberg`` extra installs with the
    deployment's packages as constraints (on the floors line at the extra's floors,
    pyiceberg 0.12.0 and pyarrow 18.0.0, pyarrow raised from the provider's 15), and the
    line's ``fscommit commit --policy iceberg`` commits a real stream's partitions into an
    Iceberg table of the Hive catalog (the loopback metastore: no SQLAlchemy 2 needed),
    which pyiceberg in this environment reads back row for row."""
    python = deployment.bin / "python"
    constraints = tmp_path / "constraints.txt"
    pinned = deployment.before.values()  # the deployment's own packages
    floors: list[str] = []
    if deployment.line.at_floors:
        pinned = [p for p in pinned if not p.lower().startswith("pyarrow==")]
        floors = ["pyiceberg==0.12.0", "pyarrow==18.0.0"]
    constraints.write_text("\n".join(pinned) + "\n")
    pip(
        python, "install", "--quiet", "--constraint", str(constraints), f"{wheel}[iceberg]", *floors
    )
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches(DAY.removeprefix("dt="), range(4)))
    stream.run(spark)
    namespace = f"lake_{deployment.line.minor[1]}"  # the metastore serves every line
    warehouse = f"file://{tmp_path}/warehouse"
    options = hourly_table(stream.staging, stream.checkpoint, table_path=str(tmp_path / "table"))
    iceberg = {"type": "hive", "hive.hive2-compatible": "true", "warehouse": warehouse}
    done = subprocess.run(
        [str(deployment.bin / "fscommit"), "commit", *table_flags(options),
         "--policy", "iceberg", "--database", namespace, "--table-name", "events",
         *[f"--option=iceberg.catalog.{k}={v}" for k, v in iceberg.items()],
         "--option=iceberg.create-table=true", "--metastore-uri", metastore.uri,
         "--spark-master", "local[2]", "--json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
        env=_env(deployment, tmp_path) | _spark_of_the_main_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    commits = json.loads(done.stdout)["commits"]
    assert commits and {c["state"] for c in commits} == {"committed"}
    hive = load_catalog("reader", type="hive", uri=metastore.uri)
    table = hive.load_table(f"{namespace}.events")
    staged = ids_by_partition(spark, stream.staging)
    read = iceberg_ids(table)
    assert len(read) == len(commits) and read == {p: staged[p] for p in read}
    assert table.properties["fscommit.complete-through"].startswith(DAY.removeprefix("dt="))


def json_output(stdout: str) -> object:
    """The JSON an Airflow command printed, after whatever it logged to stdout first."""
    documents = [line for line in stdout.splitlines() if line.startswith(("[", "{"))]
    return json.loads(documents[-1]) if documents else []


def _spark_of_the_main_env() -> dict[str, str]:
    """The cluster side: this environment's pyspark (jars, spark-submit) and Python."""
    import pyspark

    return {
        "SPARK_HOME": str(Path(pyspark.__file__).resolve().parent),
        "PYSPARK_PYTHON": sys.executable,
    }


def _env(deployment: Deployment, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | {
        "AIRFLOW_HOME": str(home / "airflow-home"),
        "PATH": f"{deployment.bin}:{env['PATH']}",
    }
