"""Compaction on a running Spark Connect server (``--spark-remote``): the same guarantees.

The servers are real (pyspark's ``start-connect-server.sh`` on 127.0.0.1); their Python
workers cannot import the provider, so every unit runs the code the client shipped.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.faults import FAULT_ENV, STALL_ENV
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.jobs.connect import (
    ConnectCompaction,
    _with_session,
    code_session_id,
    warm_note,
)
from airflow_provider_fscommit.jobs.launch import (
    PACKAGE_DIR,
    CompactionSubmission,
    SparkInstallation,
    package_digest,
)
from airflow_provider_fscommit.jobs.runner import CompactionRunner, Launch
from fscommit_dev.listeners import free_port
from fscommit_dev.spark_connect import ConnectServer, worker_python
from fscommit_dev.streams import StreamingTable
from tests.support.compaction import (
    check_exactly_once,
    committable,
    compact,
    compact_command,
    table_options,
    visible_data_files,
)
from tests.support.processes import communicate_all

STALL_S = 8  # how long each unit stalls on the stalling server


def partitions_of(ready: set[tuple]) -> set[str]:
    return {f"dt={dt}/hour={hour}" for dt, hour in ready}


def ledger_commits(table: Path, ready: set[tuple]) -> dict[str, int]:
    ledger = CommitLedger(str(table))
    return {p: len(ledger.read(p).commits) for p in partitions_of(ready)}


@pytest.mark.slow
@pytest.mark.parametrize("stream_name", ["killed_stream", "late_stateless_stream"])
def test_a_run_on_connect_publishes_exactly_once_with_the_shipped_code(
    spark, connect_server, stream_name, request, tmp_path
):
    """A SIGKILLed query's orphans and a query's late rows: published as from spark-submit."""
    stream: StreamingTable = request.getfixturevalue(stream_name)
    outside = subprocess.run(
        [worker_python(connect_server.base), "-c", "import airflow_provider_fscommit"],
        cwd=connect_server.base,
        capture_output=True,
    )
    assert outside.returncode != 0, "the server's workers must not have the provider"
    table = tmp_path / "table"
    result = compact(
        stream.staging, stream.checkpoint, str(table), "--spark-remote", connect_server.url
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    ready = committable(stream.staging, stream.checkpoint)
    assert {p["partition"] for p in summary["partitions"]} == partitions_of(ready)
    assert {p["state"] for p in summary["partitions"]} == {"published"}
    assert summary["rows"] == check_exactly_once(spark, stream.staging, str(table), ready)
    assert summary["files_out"] == len(visible_data_files(str(table)))
    files = visible_data_files(str(table))
    # The later runs of this code (the other stream's, the tests') find its workers
    # started: they neither upload the code nor run a warm-up job, yet run the code above.
    assert warm_workers(connect_server.url) == "2"

    again = compact(
        stream.staging, stream.checkpoint, str(table), "--spark-remote", connect_server.url
    )
    assert again.returncode == 0, again.stderr
    assert {p["state"] for p in json.loads(again.stdout)["partitions"]} == {"up-to-date"}
    assert visible_data_files(str(table)) == files


def warm_workers(remote: str) -> str | None:
    """What this code's server-side session says of its workers' parallelism, if anything."""
    from pyspark.sql.connect.session import SparkSession

    digest = package_digest()
    session = SparkSession.builder.remote(_with_session(remote, code_session_id(digest))).create()
    session.release_session_on_close = False
    try:
        return session.conf.get(warm_note(digest), None)
    finally:
        session.stop()


@pytest.mark.slow
def test_spark_remote_is_read_from_the_environment(
    spark, connect_server, hourly_stream, tmp_path, monkeypatch
):
    monkeypatch.setenv("SPARK_REMOTE", connect_server.url)
    table = tmp_path / "table"
    # An unreachable master proves that spark-submit is not what runs.
    result = compact(
        hourly_stream.staging,
        hourly_stream.checkpoint,
        str(table),
        "--spark-master",
        "spark://127.0.0.1:9",
    )
    assert result.returncode == 0, result.stderr
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert check_exactly_once(spark, hourly_stream.staging, str(table), ready) > 0


class ConnectOnly:
    """A launcher for runs that go to a Connect server: it records how, and submits nothing."""

    def __init__(self) -> None:
        self.told: list[Launch] = []

    def launching(self, how: Launch) -> None:
        self.told.append(how)

    def installation(self) -> SparkInstallation:
        raise AssertionError("a run on Spark Connect looks for no Spark installation")

    def environment(self) -> dict[str, str]:
        raise AssertionError("a run on Spark Connect starts no process")

    def driver_here(self) -> bool:
        raise AssertionError("a run on Spark Connect has no driver of its own")

    def submit(self, submission: CompactionSubmission) -> None:
        raise AssertionError("a run on Spark Connect submits nothing")


@pytest.mark.slow
def test_the_look_for_work_is_the_runs_read_ahead(
    spark, connect_server, hourly_stream, tmp_path, monkeypatch
):
    """What a run plans from is read once before it plans: a second dry run, while the
    client connected, repeated the launcher's (0.13-0.18 s a run of workload (b))."""
    looks: list[bool] = []
    preview = CompactionPublisher.preview

    def counted(publisher: CompactionPublisher, *args, **kwargs):
        looks.append(True)
        return preview(publisher, *args, **kwargs)

    monkeypatch.setattr(CompactionPublisher, "preview", counted)
    table = str(tmp_path / "table")
    spec = TableSpec.from_options(table_options(hourly_stream, table))
    launcher = ConnectOnly()
    summary = CompactionRunner(spec, None, remote=connect_server.url).run(launcher)
    assert launcher.told == [Launch.CONNECT] and not summary.failed
    assert looks == [True] and summary.read_ahead_seconds > 0
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    assert summary.total("rows") == check_exactly_once(spark, hourly_stream.staging, table, ready)


@pytest.mark.slow
def test_a_server_that_is_down_is_named_and_nothing_is_published(hourly_stream, tmp_path):
    table = tmp_path / "table"
    remote = f"sc://127.0.0.1:{free_port()}"
    result = compact(
        hourly_stream.staging, hourly_stream.checkpoint, str(table), "--spark-remote", remote
    )
    assert result.returncode == 1
    assert f"the Spark Connect server at {remote} did not answer" in result.stderr
    assert "start-connect-server.sh" in result.stderr
    assert "Traceback" not in result.stderr
    assert not visible_data_files(str(table))
    assert not list(table.rglob("commit-*.json")) and not list(table.rglob("plan-*.json"))


@pytest.mark.slow
def test_three_concurrent_clients_publish_each_partition_once(
    spark, connect_server, hourly_stream, tmp_path
):
    table = tmp_path / "table"
    clients = [
        subprocess.Popen(
            compact_command(
                hourly_stream.staging,
                hourly_stream.checkpoint,
                str(table),
                "--spark-remote",
                connect_server.url,
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for _ in range(3)
    ]
    outputs = list(communicate_all(dict(enumerate(clients)), 600).values())
    assert [client.returncode for client in clients] == [0, 0, 0], [err for _, err in outputs]
    ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
    states = [
        {p["partition"]: p["state"] for p in json.loads(out)["partitions"]} for out, _ in outputs
    ]
    for partition in partitions_of(ready):
        assert sorted(s.get(partition) for s in states) == ["published", "up-to-date", "up-to-date"]
    check_exactly_once(spark, hourly_stream.staging, str(table), ready)
    assert set(ledger_commits(table, ready).values()) == {1}


@pytest.fixture(scope="module")
def stalling_server(tmp_path_factory):
    """A Connect server whose units stall after writing (fault injection: a slow machine)."""
    server = ConnectServer(
        tmp_path_factory.mktemp("stalling-connect"),
        env={FAULT_ENV: "after-unit", STALL_ENV: str(STALL_S)},
    ).start()
    yield server
    server.stop()


def start_client(stream: StreamingTable, table: Path, server: ConnectServer) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    return subprocess.Popen(
        compact_command(
            stream.staging, stream.checkpoint, str(table), "--spark-remote", server.url
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )


def rerun_publishes_once(spark, stream: StreamingTable, table: Path, server: ConnectServer) -> None:
    """The next run succeeds, publishes every committable row once, one commit each."""
    rerun = start_client(stream, table, server)
    out, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err
    ready = committable(stream.staging, stream.checkpoint)
    assert check_exactly_once(spark, stream.staging, str(table), ready) == json.loads(out)["rows"]
    assert set(ledger_commits(table, ready).values()) == {1}


def units_running(table: Path) -> bool:
    """A unit has written its hidden output and stalls: the units run on the server."""
    return bool(list(table.rglob(".fscommit-inprogress-*")))


def wait_for_units(table: Path, client: subprocess.Popen) -> None:
    """Until the run's units are under way on the server (its first output is written)."""
    deadline = time.monotonic() + 120
    while not units_running(table):
        assert client.poll() is None, client.communicate()
        assert time.monotonic() < deadline, "no unit ran"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_client_killed_mid_run_is_recovered_by_the_next(
    spark, stalling_server, hourly_stream, tmp_path
):
    table = tmp_path / "table"
    client = start_client(hourly_stream, table, stalling_server)
    wait_for_units(table, client)
    os.killpg(client.pid, signal.SIGKILL)
    client.wait()
    assert not visible_data_files(str(table))

    rerun_publishes_once(spark, hourly_stream, table, stalling_server)


@pytest.mark.slow
def test_a_server_killed_mid_run_fails_the_run_and_the_next_publishes_once(
    spark, stalling_server, hourly_stream, tmp_path
):
    table = tmp_path / "table"
    client = start_client(hourly_stream, table, stalling_server)
    wait_for_units(table, client)
    stalling_server.kill()
    stalling_server.start()  # a restarted server on the same port
    _, err = client.communicate(timeout=300)
    assert client.returncode == 1
    assert f"the Spark Connect server at {stalling_server.url} failed the compaction units" in err
    assert "nothing of this run was published" in err
    assert not visible_data_files(str(table))

    rerun_publishes_once(spark, hourly_stream, table, stalling_server)


def test_runs_of_the_same_code_share_a_session_and_other_code_gets_its_own(tmp_path):
    """The server's warm workers serve the same code only: a session keeps its artifacts.

    The same code installed again (other modification times) names the same session."""
    first = code_session_id(package_digest())
    again = tmp_path / "again"
    shutil.copytree(PACKAGE_DIR, again, copy_function=shutil.copy)  # new times, same bytes
    os.utime(again / "jobs" / "connect.py", (1, 1))
    assert code_session_id(package_digest(again)) == first
    changed = again / "jobs" / "connect.py"
    changed.write_bytes(changed.read_bytes() + b"\n")
    assert code_session_id(package_digest(again)) != first
    changed.write_bytes((PACKAGE_DIR / "jobs" / "connect.py").read_bytes())
    changed.rename(again / "jobs" / "connected.py")  # the same bytes under another name
    assert code_session_id(package_digest(again)) != first


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("sc://h:15002", "sc://h:15002/;session_id=S"),
        ("sc://h:15002/", "sc://h:15002/;session_id=S"),
        ("sc://h:15002/;token=t;use_ssl=true", "sc://h:15002/;token=t;use_ssl=true;session_id=S"),
        ("sc://h:15002/;session_id=mine", "sc://h:15002/;session_id=mine"),
    ],
)
def test_the_session_joins_the_url_and_a_users_own_session_id_wins(remote, expected):
    assert _with_session(remote, "S") == expected


@pytest.mark.slow
def test_interrupting_a_run_cancels_its_units_and_publishes_nothing(
    spark, stalling_server, hourly_stream, tmp_path
):
    """What Airflow's on_kill does: only this run's operations are cancelled."""
    table = tmp_path / "table"
    spec = TableSpec.from_options(table_options(hourly_stream, str(table)))
    runner = ConnectCompaction(stalling_server.url)

    def interrupt_once_units_run() -> None:
        while not units_running(table):
            time.sleep(0.1)
        runner.interrupt()

    interrupter = threading.Thread(target=interrupt_once_units_run)
    interrupter.start()
    result = runner.run(CompactionPublisher(spec), None, "interrupted")
    interrupter.join()
    assert "OPERATION_CANCELED" in result.error
    assert "nothing of this run was published" in result.error
    assert not visible_data_files(str(table))

    rerun_publishes_once(spark, hourly_stream, table, stalling_server)
