"""What one test run builds or starts once for all its workers: a folder they share, and
a lock.

pytest-xdist gives each worker its own base temp (``popen-gwN``) inside the run's; that
run's folder is the one every worker of it sees and no other run does. A thing built
there (the wheel, a stream) is built by the first worker that asks, the others wait on
its lock and take it as it is. A server started there (the Spark Connect server the
compactions run on, the PostgreSQL server of the Airflow deployments) lives until the run
ends: the controller stops it by PID (:func:`stop_run_servers`), after every worker is done.
"""

from __future__ import annotations

import fcntl
import json
import pickle
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from fscommit_dev.postgres import PostgresServer, server_programs_found
from fscommit_dev.spark_connect import ConnectServer
from fscommit_dev.streams import StreamingTable
from tests.support.debian import missing

# The environment variable naming the run's folder, set for the workers and their children
# by tests/conftest.py, so a helper without fixtures (tests/support/compaction.py) finds it.
RUN_FOLDER_ENV = "FSCOMMIT_TEST_RUN_FOLDER"


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the run's workers share (the base temp itself without workers)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


@contextmanager
def locked(folder: Path, name: str) -> Iterator[Path]:
    """``folder / name``, held under its lock (``name.lock`` beside it) while the caller
    looks for what is built or started there and makes it if it is missing."""
    with (folder / f"{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield folder / name
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> AbstractContextManager[Path]:
    """:func:`locked` in the run's folder."""
    return locked(run_folder(tmp_path_factory), name)


def shared_stream(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], StreamingTable],
    base: Path,
) -> StreamingTable:
    """A copy at ``base`` of the stream ``build`` runs once per test run.

    A test gets a copy it may change or run further (:meth:`StreamingTable.copy_to`), so
    a stream shape costs one streaming query per run, not one per test.
    """
    with built_once(tmp_path_factory, f"stream-{name}") as folder:
        made = folder / "table.pickle"
        if made.exists():
            table = pickle.loads(made.read_bytes())
        else:
            table = build(folder / "table")
            made.write_bytes(pickle.dumps(table))  # written last: the mark of a whole build
    return table.copy_to(base)


def run_connect_server(folder: Path) -> ConnectServer:
    """The run's Spark Connect server (local[2], workers without the provider), started
    by the first caller. ``folder``: :func:`run_folder`, or the value of RUN_FOLDER_ENV.

    A compaction on it costs a client's second of CPU where a spark-submit costs a JVM's
    nine; the tests whose subject is the launch (the hook's command, the cluster's Python,
    the standalone cluster, the Spark lines, a killed application) still spark-submit.
    """
    with locked(folder, "connect-server") as base:
        server = ConnectServer(base)
        port_file = base / "port"
        if port_file.exists():
            server.port = int(port_file.read_text())
            if server.is_running():
                return server
        server.base.mkdir(exist_ok=True)
        server.start()
        port_file.write_text(str(server.port))
    return server


def run_postgres(folder: Path) -> PostgresServer:
    """The run's PostgreSQL server, started by the first caller (the Airflow deployments
    of every worker each get a database on it)."""
    with locked(folder, "postgres.json") as record:
        if record.exists():
            fields = json.loads(record.read_text())
            return PostgresServer(Path(fields["directory"]), fields["port"], fields["pid"])
        if not server_programs_found():  # skip, unless in CI (a missing install)
            missing("PostgreSQL", "postgresql")
        server = PostgresServer.start()
        record.write_text(
            json.dumps({"directory": str(server.directory), "port": server.port, "pid": server.pid})
        )
    return server


def stop_run_servers(folder: Path) -> None:
    """Stop what the run's workers started in ``folder`` (the controller, at the end)."""
    ConnectServer(folder / "connect-server").stop()
    record = folder / "postgres.json"
    if record.exists():
        fields = json.loads(record.read_text())
        PostgresServer(Path(fields["directory"]), fields["port"], fields["pid"]).stop()
        record.unlink()
