"""The whole deployment of a soak run, started in order and stopped by PID whatever happens.

PostgreSQL; the loopback Hive metastore; one Spark Connect server for the compactions;
the streams' Spark application with its row generator; a spec per table written by
``fscommit init`` once the stream has committed its first batches (the DAG settings a
platform team adds by hand appended to its ``dag:`` section); and Airflow's scheduler,
triggerer, api-server and dag-processor with the LocalExecutor, running the DAG factory
over the specs. Everything binds 127.0.0.1. A part given (the suite's session PostgreSQL,
Connect server and metastore) is used and left running; a part started here is stopped
here. The supervisor's side (kill one part, start it again as it was) is here too, since
only the deployment knows how each part is started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from airflow_provider_fscommit.core.errors import FsCommitError
from airflow_provider_fscommit.core.spark.checkpoint import read_checkpoint
from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.airflow_services import Services, services_airflow_env
from fscommit_dev.metastore import server as metastore_server
from fscommit_dev.metastore.client import create_table
from fscommit_dev.metastore.server import MetastoreServer
from fscommit_dev.postgres import PostgresServer
from fscommit_dev.soak.generator import RowGenerator
from fscommit_dev.soak.metastore_audit import audit_jvm_options
from fscommit_dev.soak.stream_app import StreamApp
from fscommit_dev.soak.tables import (
    METASTORE_DATABASE,
    PARTITION_KEYS,
    TASK_HEARTBEAT_TIMEOUT_S,
    SoakSettings,
    SoakTable,
    plan_tables,
)
from fscommit_dev.spark_connect import ConnectServer

FSCOMMIT = str(Path(sys.executable).parent / "fscommit")
DAG_FILE = '''"""The soak's tables: one commit DAG and one maintenance DAG per spec of specs/."""

from airflow_provider_fscommit.factory import partition_commit_dags

globals().update(partition_commit_dags("specs/"))
'''


@dataclass
class Deployment:
    """The running parts of one soak, and how a supervisor restarts each."""

    base: Path
    settings: SoakSettings
    tables: list[SoakTable]
    postgres: PostgresServer
    metastore: MetastoreServer
    connect: ConnectServer
    streams: StreamApp
    generator: RowGenerator
    airflow: AirflowEnv | None = None
    services: Services | None = None
    # Which parts were started here (and are stopped here).
    owned: set[str] = field(default_factory=set)
    # The metastore's JVM options (its audit log), again at a restart.
    metastore_jvm_options: list[str] = field(default_factory=list)
    # More Airflow settings (the soak's StatsD).
    airflow_env: dict[str, str] = field(default_factory=dict)

    @property
    def specs_dir(self) -> Path:
        return self.base / "dags" / "specs"

    def restart_service(self, name: str, down_seconds: float = 2.0) -> None:
        """SIGKILL an Airflow service and start it again, as its supervisor would."""
        assert self.services is not None
        self.services.kill_service(name)
        time.sleep(down_seconds)
        self.services.start_service(name)

    def restart_connect(self, down_seconds: float = 2.0) -> None:
        """SIGKILL the Connect server's JVM and start it again on its port."""
        self.connect.kill()
        time.sleep(down_seconds)
        self.connect.start()

    def restart_metastore(self, down_seconds: float = 2.0) -> None:
        """SIGKILL the metastore's JVM and start it again on its port and Derby database."""
        with suppress(ProcessLookupError):
            os.killpg(self.metastore.pid, signal.SIGKILL)
        _wait_gone(self.metastore.pid)
        time.sleep(down_seconds)
        self.metastore = metastore_server.start(
            self.metastore.state_dir, self.metastore.port, jvm_options=self.metastore_jvm_options
        )

    def stop(self) -> None:
        """Everything, in the order that leaves nothing writing: rows, Airflow, streams,
        then the servers started here."""
        self.generator.stop()
        if self.services is not None:
            self.services.stop()
        self.streams.stop()
        if "connect" in self.owned:
            self.connect.stop()
        if "metastore" in self.owned:
            metastore_server.stop(self.metastore.state_dir)
        if "postgres" in self.owned:
            self.postgres.stop()


def airflow_settings(deployment: Deployment) -> dict[str, str]:
    """The Airflow of the soak: the factory's DAG folder, the connections, and the timeouts
    after which a killed scheduler's, triggerer's or task's work is taken up again
    (Airflow's defaults wait five minutes; a supervisor here restarts a part in seconds)."""
    connect = {"conn_type": "spark_connect", "host": "127.0.0.1", "port": deployment.connect.port}
    return {
        "AIRFLOW__CORE__DAGS_FOLDER": str(deployment.base / "dags"),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(connect),
        "AIRFLOW_CONN_METASTORE_DEFAULT": f"hive-metastore://127.0.0.1:{deployment.metastore.port}",
        "AIRFLOW__CORE__PARALLELISM": "6",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(TASK_HEARTBEAT_TIMEOUT_S),
        "AIRFLOW__SCHEDULER__ORPHANED_TASKS_CHECK_INTERVAL": "15",
        "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_THRESHOLD": "15",
        "AIRFLOW__TRIGGERER__TRIGGERER_HEALTH_CHECK_THRESHOLD": "15",
        "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "60",
    } | deployment.airflow_env


def dag_settings(settings: SoakSettings) -> dict[str, str]:
    """What a platform team adds to the ``dag:`` section init wrote: a minute's span, a
    short poll and sweep, quick retries (a part restarted comes back in seconds)."""
    return {
        "interval": "1 min",
        "poke_interval": f"{settings.poke_seconds} s",
        "sweep": f"{settings.sweep_minutes} min",
        "retries": str(settings.retries),
        "retry_delay": f"{settings.retry_delay_seconds} s",
        "max_active_runs": str(settings.max_active_runs),
        "stall_timeout": "10 min",
    }


def write_spec(table: SoakTable, settings: SoakSettings, specs_dir: Path) -> Path:
    """``fscommit init`` on the table's stream, as a user runs it, with the policies and
    the one-minute delay given; then the dag settings appended to the ``dag:`` section it
    ends with."""
    spec = specs_dir / table.spec_name
    result = subprocess.run(
        [
            FSCOMMIT,
            "init",
            "--staging-path",
            str(table.staging),
            "--checkpoint-path",
            str(table.checkpoint),
            "--table-path",
            str(table.table_path),
            "--policy",
            "metastore,success-file",
            "--metastore-database",
            METASTORE_DATABASE,
            "--metastore-table",
            table.name,
            # Given, not inferred: from the first batches' lone minute (e.g. 25) init reads
            # a grain of the minutes' greatest common divisor with 60 (5 minutes).
            "--option",
            "sink.partition-commit.delay=1 min",
            "-o",
            str(spec),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        raise RuntimeError(f"fscommit init {table.name}: {result.stdout}\n{result.stderr}")
    text = spec.read_text()
    if not text.rstrip().splitlines()[-1].startswith("  ") or "\ndag:\n" not in text:
        raise RuntimeError(f"{spec}: init wrote no dag: section at its end:\n{text}")
    added = "".join(f"  {key}: {value}\n" for key, value in dag_settings(settings).items())
    spec.write_text(text + "  # Added by the soak, as a platform team would:\n" + added)
    return spec


def wait_for_first_batches(deployment: Deployment, timeout: float = 300) -> None:
    """Until every table's sink log has committed rows (init reads what the stream wrote)."""
    deadline = time.monotonic() + timeout
    pending = list(deployment.tables)
    while pending:
        if not deployment.streams.alive():
            raise RuntimeError(f"the stream application exited; see {deployment.streams.log}")
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"no committed batch with rows in {timeout:.0f} s for "
                f"{[t.name for t in pending]}; see {deployment.streams.log}"
            )
        pending = [t for t in pending if not _has_rows(t)]
        time.sleep(1)


def _has_rows(table: SoakTable) -> bool:
    """A committed batch wrote a partition (a sink-log file names one) and the checkpoint
    shows the watermark, which init reads to choose the partition-time trigger."""
    log = table.staging / "_spark_metadata"
    committed = [p for p in log.glob("*") if p.name.split(".")[0].isdigit()] if log.exists() else []
    if not any("dt=" in p.read_text(errors="replace") for p in committed):
        return False
    try:
        return read_checkpoint(str(table.checkpoint)).has_watermark
    except FsCommitError:  # no committed batch yet
        return False


@contextmanager
def deployed(
    base: Path,
    settings: SoakSettings,
    postgres: PostgresServer | None = None,
    connect: ConnectServer | None = None,
    metastore: MetastoreServer | None = None,
    airflow_env: dict[str, str] | None = None,
) -> Iterator[Deployment]:
    """Start the whole deployment under ``base``; stop it by PID at the end, whatever
    happened. The given servers are used and left running; ``airflow_env``: more Airflow
    settings."""
    base.mkdir(parents=True, exist_ok=True)
    owned: set[str] = set()
    with ExitStack() as stack:
        if postgres is None:
            postgres = PostgresServer.start()
            owned.add("postgres")
            stack.callback(postgres.stop)
        jvm_options: list[str] = []
        if metastore is None:
            jvm_options = audit_jvm_options(base / "metastore")
            stack.callback(lambda: metastore_server.stop(base / "metastore"))
            metastore = metastore_server.start(base / "metastore", jvm_options=jvm_options)
            owned.add("metastore")
        if connect is None:
            connect = ConnectServer(base / "connect")
            (base / "connect").mkdir(exist_ok=True)
            stack.callback(connect.stop)
            connect.start()
            owned.add("connect")
        tables = plan_tables(settings, base / "tables")
        streams = StreamApp(
            base / "streams", tables, settings.trigger_seconds, settings.watermark_seconds
        )
        generator = RowGenerator(tables, settings.file_seconds, settings.seed, base / "rows.jsonl")
        deployment = Deployment(
            base,
            settings,
            tables,
            postgres,
            metastore,
            connect,
            streams,
            generator,
            owned=owned,
            metastore_jvm_options=jvm_options,
            airflow_env=airflow_env or {},
        )
        stack.pop_all()  # from here on, the deployment stops what it owns
        try:
            _start(deployment)
            yield deployment
        finally:
            deployment.stop()


def _start(deployment: Deployment) -> None:
    for table in deployment.tables:
        create_table(
            deployment.metastore,
            table.name,
            table.table_path,
            keys=PARTITION_KEYS,
            database=METASTORE_DATABASE,
        )
    deployment.streams.start()
    deployment.generator.late_rows_on = False  # none before the DAGs' first partition
    deployment.generator.start()
    wait_for_first_batches(deployment)
    deployment.specs_dir.mkdir(parents=True, exist_ok=True)
    (deployment.base / "dags" / "soak_tables.py").write_text(DAG_FILE)
    for table in deployment.tables:
        write_spec(table, deployment.settings, deployment.specs_dir)
    deployment.airflow = services_airflow_env(
        deployment.base / "airflow", airflow_settings(deployment), deployment.postgres
    )
    deployment.services = Services(deployment.airflow, _api_port(deployment.airflow))
    deployment.services.start()
    deployment.generator.late_rows_on = True


def _api_port(airflow: AirflowEnv) -> int:
    return int(airflow.extra_env["AIRFLOW__API__BASE_URL"].rsplit(":", 1)[1])


def _wait_gone(pid: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
