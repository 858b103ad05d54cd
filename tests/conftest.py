"""Session fixtures: one Spark session and real streaming tables written by real queries.

Each table fixture runs a Spark Structured Streaming query once per test run (the first
worker that needs it) and hands each worker, or for ``hourly_stream`` each test, a copy:
its directories plus what Spark itself reported (the oracle to compare with). The run's
Spark Connect and PostgreSQL servers are started by the first worker that needs them and
stopped by the controller at the end (``tests/support/run_shared.py``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from fscommit_dev.streams import (
    TEST_JVM_OPTIONS,
    StreamingTable,
    hourly_batches,
    killed_mid_batch,
    new_spark_session,
    row,
)
from tests.support.run_shared import shared_stream

# py4j logs "Closing down clientserver connection" from __del__ at interpreter exit,
# after pytest closed the streams; nothing of it is worth seeing in test output.
logging.getLogger("py4j").setLevel(logging.WARNING)

# Read by spark-submit (so every Spark JVM the tests start, directly or through Airflow and
# the CLI, inherits it); a developer's own setting wins.
os.environ.setdefault("SPARK_SUBMIT_OPTS", TEST_JVM_OPTIONS)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="rewrite tests/durations.json (the parallel schedule's order) from this run",
    )


@pytest.hookimpl(trylast=True)  # after pytest's own: its temp folders
def pytest_configure(config: pytest.Config) -> None:
    from airflow_provider_fscommit.jobs.class_archive import DIR_ENV
    from tests.support.run_shared import RUN_FOLDER_ENV, run_folder

    folder = run_folder(config._tmp_path_factory)
    os.environ[RUN_FOLDER_ENV] = str(folder)
    # The run's spark-submits share one class archive, as a worker host's do: the second
    # writes it, the later ones start their drivers from it (jobs/class_archive.py).
    os.environ.setdefault(DIR_ENV, str(folder / "jvm-class-archive"))
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        from tests.support.scheduling import UnitTimes

        record = config.getoption("record_durations")
        config.pluginmanager.register(UnitTimes(record), "fscommit-unit-times")


def pytest_unconfigure(config: pytest.Config) -> None:
    """The controller stops the run's shared servers once every worker is done."""
    if not hasattr(config, "workerinput"):
        from tests.support.run_shared import RUN_FOLDER_ENV, stop_run_servers

        stop_run_servers(Path(os.environ[RUN_FOLDER_ENV]))


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Whole modules (each compatibility line apart) to a worker, the longest first."""
    from tests.support.scheduling import LongestFirstScheduling

    return LongestFirstScheduling(config, log)


@pytest.fixture(scope="session")
def spark():
    session = new_spark_session()
    yield session
    session.stop()


def _worker_copy(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], StreamingTable]
) -> StreamingTable:
    """This worker's copy of the stream ``build`` runs once per test run (the worker's
    tests share it, as they share any session fixture)."""
    return shared_stream(tmp_path_factory, name, build, tmp_path_factory.mktemp(name) / "stream")


@pytest.fixture(scope="session")
def compacted_stream(spark, tmp_path_factory) -> StreamingTable:
    """Eight hourly batches: the sink log compacts (interval 3) and old batches are purged."""

    def build(base: Path) -> StreamingTable:
        table = StreamingTable(base)
        table.add_batches(*hourly_batches("2026-11-20", range(8)))
        table.run(spark)
        return table

    return _worker_copy(tmp_path_factory, "compacted", build)


@pytest.fixture(scope="session")
def late_stateful_stream(spark, tmp_path_factory) -> StreamingTable:
    """A stateful query (dropDuplicates, offset log v2) that receives late and repeated rows."""

    def build(base: Path) -> StreamingTable:
        table = StreamingTable(base, stateful=True, offset_log_version=2)
        batches = hourly_batches("2026-11-20", range(4))
        batches.append(
            [
                row(1000, "2026-11-20T00:05:00Z"),  # older than the watermark: Spark drops it
                row(31, "2026-11-20T03:20:00Z"),  # a duplicate of batch 3: dropped by state
                row(1001, "2026-11-20T04:10:00Z"),
            ]
        )
        table.add_batches(*batches)
        table.run(spark)
        return table

    return _worker_copy(tmp_path_factory, "stateful", build)


@pytest.fixture(scope="session")
def late_stateless_stream(spark, tmp_path_factory) -> StreamingTable:
    """A stateless query: rows older than the watermark are still written (late data)."""

    def build(base: Path) -> StreamingTable:
        table = StreamingTable(base)
        table.add_batches(*hourly_batches("2026-11-20", range(4)))
        table.run(spark)
        return table

    return _worker_copy(tmp_path_factory, "stateless-late", build)


@pytest.fixture(scope="session")
def awkward_stream(spark, tmp_path_factory) -> StreamingTable:
    """Partition values that need Hive escaping, a null, an empty string and non-ASCII."""

    def build(base: Path) -> StreamingTable:
        table = StreamingTable(base, partition_by=("dt", "k"))
        values = ["a b:c/d%e=f#g", None, "", "ü→✓", "x'y\"z", "50%", "__HIVE_x", "[1]{2}^*?\\"]
        table.add_batches(
            [row(i, f"2026-11-20T01:{i:02d}:00Z", k=v) for i, v in enumerate(values)],
            [row(100, "2026-11-20T05:00:00Z", k="later")],
        )
        table.run(spark)
        return table

    return _worker_copy(tmp_path_factory, "awkward", build)


@pytest.fixture(scope="session")
def shanghai_stream(spark, tmp_path_factory) -> StreamingTable:
    """Partition values on Asia/Shanghai wall clock (UTC+8) while the watermark is UTC."""

    def build(base: Path) -> StreamingTable:
        table = StreamingTable(base, time_zone="Asia/Shanghai")
        table.add_batches(*hourly_batches("2026-11-20", range(0, 5)))
        table.run(spark)
        return table

    return _worker_copy(tmp_path_factory, "shanghai", build)


@pytest.fixture(scope="session")
def killed_stream(tmp_path_factory) -> StreamingTable:
    """A query SIGKILLed mid-batch after one task wrote its files, then restarted."""

    def build(base: Path) -> StreamingTable:
        table = StreamingTable(base, blockable=True)
        table.add_batches(*hourly_batches("2026-11-20", range(2)))
        return killed_mid_batch(table)

    return _worker_copy(tmp_path_factory, "killed", build)


@pytest.fixture(scope="session")
def fault_stream(spark, tmp_path_factory) -> StreamingTable:
    """Six hours, then a second round of rows for hours 00-03: two files per partition
    (the fault-injection trials, on local disk and on S3, read it and never write it)."""

    def build(base: Path) -> StreamingTable:
        table = StreamingTable(base)
        table.add_batches(
            *hourly_batches("2026-11-20", range(6)),
            [row(100 + h, f"2026-11-20T{h:02d}:40:00Z") for h in range(4)],
        )
        table.run(spark)
        return table

    return _worker_copy(tmp_path_factory, "faults", build)


@pytest.fixture(scope="session")
def first_batches_stream(spark, tmp_path_factory) -> StreamingTable:
    """A query that calls withWatermark and has committed its first two batches only.

    Batch 0 read an empty file, as a stream that starts at the end of its source does,
    so it ran and committed with watermark 0 and left the next batch's at 0 too; batch 1
    wrote hour 00 with that watermark. Spark has now seen event times (the next batch
    runs with 00:10) but the safe watermark is still 0.
    """

    def build(base: Path) -> StreamingTable:
        stream = StreamingTable(base)
        stream.add_batches([], *hourly_batches("2026-11-20", range(1)))
        stream.run(spark)
        return stream

    return _worker_copy(tmp_path_factory, "first-batches", build)


@pytest.fixture
def hourly_stream(spark, tmp_path_factory, tmp_path) -> StreamingTable:
    """Four hours of three rows, then a batch of late rows for hours 00 and 01.

    The test's own copy (it may run it further) of a query run once per test run."""

    def build(base: Path) -> StreamingTable:
        stream = StreamingTable(base)
        stream.add_batches(
            *hourly_batches("2026-11-20", range(4)),
            [row(50, "2026-11-20T00:10:00Z"), row(51, "2026-11-20T01:10:00Z")],
        )
        stream.run(spark)
        return stream

    return shared_stream(tmp_path_factory, "hourly", build, tmp_path / "stream")


@pytest.fixture(scope="session")
def metastore(tmp_path_factory):
    """A real Hive metastore Thrift server on 127.0.0.1, stopped by PID at the end."""
    from fscommit_dev.metastore import server

    state = tmp_path_factory.mktemp("metastore")
    running = server.start(state)
    yield running
    server.stop(state)


@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """The run's real PostgreSQL server on 127.0.0.1 for Airflow's metadata: one for every
    worker, stopped by PID when the run ends (tests/support/run_shared.py)."""
    from tests.support.run_shared import run_folder, run_postgres

    return run_postgres(run_folder(tmp_path_factory))


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A real S3 API server (moto) on 127.0.0.1, stopped by PID at the end."""
    from fscommit_dev.s3_server import S3Server

    server = S3Server(tmp_path_factory.mktemp("s3-server"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    """The run's real Spark Connect server on 127.0.0.1 (local[2]): one for every worker,
    stopped by PID when the run ends (tests/support/run_shared.py)."""
    from tests.support.run_shared import run_connect_server, run_folder

    return run_connect_server(run_folder(tmp_path_factory))


@pytest.fixture
def s3_env(s3_server, monkeypatch):
    """The standard AWS variables pointing this process (and its children) at the server."""
    for key, value in s3_server.env().items():
        monkeypatch.setenv(key, value)
    return s3_server


@pytest.fixture
def metastore_connection(metastore, monkeypatch, tmp_path):
    """Airflow's ``metastore_default`` connection pointing at the test metastore."""
    monkeypatch.setenv(
        "AIRFLOW_CONN_METASTORE_DEFAULT", f"hive-metastore://127.0.0.1:{metastore.port}"
    )
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    return metastore
