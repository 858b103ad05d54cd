"""Streams written by each supported Spark line, compacted by that Spark, read back by it.

For each Spark line a fresh virtualenv plays a cluster: that PySpark (its jars and its
``spark-submit``) on one of the Pythons the line supports, with the pyarrow and numpy such
a cluster has (Spark 3.5 keeps ``numpy<2``, so pyarrow 15, the floor). In it, real
Structured Streaming queries write a Parquet table (stateless, so late rows are written
into hours already committed; one batch SIGKILLed mid-way leaves orphans; offsets log
``v2`` where the line writes it) and an ORC table (``dropDuplicates``, RocksDB with state
checkpoint format 2: commits log ``v2`` from Spark 4.0). The Airflow side (this
environment) reads their checkpoints (``fscommit status``) and compacts them twice through
``fscommit compact --spark-home <the line's Spark>`` with ``spark.pyspark.python`` naming
the line's Python: the driver and the tasks run there. That Spark then reads the
published table back with the schema and the rows it reads from staging.

Spark Connect: the Spark provider's client (4.x) compacts on a Spark 4.0 Connect server,
the oldest line that has one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.spark_connect import ConnectServer
from fscommit_dev.streams import (
    ROOT,
    StreamingTable,
    hourly_batches,
    killed_mid_batch,
    row,
    spark_env,
)
from fscommit_dev.tables import hourly_table, table_flags
from tests.support.compaction import FSCOMMIT, check_exactly_once, committable, compact
from tests.support.pythons import cached_venv, fresh_venv, require_python
from tests.support.spark_read import PREFIX

pytestmark = pytest.mark.slow

T = TypeVar("T")
DAY = "dt=2026-11-20"


@dataclass(frozen=True)
class SparkLine:
    """A cluster: a Spark release on a Python, with that cluster's pyarrow and numpy."""

    pyspark: str
    python: str
    packages: tuple[str, ...]
    offsets_version: int  # what its offsets log is, asked for v2 (Spark 4.3 writes it)
    commits_version: int  # what its commits log is under state checkpoint format 2

    def __str__(self) -> str:
        return f"spark{self.pyspark}-py{self.python}"


# The lines besides the main environment's (Spark 4.3.0, whose offsets log v2 and commits
# log v2 the session's streams write and read): a line of the same Spark would prove
# nothing more, and CPython 3.13 as a cluster's Python is tests/compat/test_cluster_pythons.py's.
LINES = [
    SparkLine("3.5.9", "3.9", ("pyarrow==15.0.0", "numpy<2"), 1, 1),
    SparkLine("4.0.5", "3.12", ("pyarrow==17.0.0", "numpy"), 1, 2),
]


@dataclass(frozen=True)
class Cluster:
    line: SparkLine
    python: str
    spark_home: str


@pytest.fixture(scope="module", params=LINES, ids=str)
def cluster(request, tmp_path_factory) -> Cluster:
    line: SparkLine = request.param
    python = cached_venv(
        require_python(line.python),
        f"pyspark=={line.pyspark}",
        *line.packages,
        scratch=tmp_path_factory.mktemp(str(line)) / "venv",
    )
    found = subprocess.run(
        [str(python), "-c", "import os, pyspark; print(pyspark.__version__, "
         "os.path.dirname(pyspark.__file__))"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout.split()  # fmt: skip
    assert found[0] == line.pyspark
    return Cluster(line, str(python), found[1])


def hours(**states: tuple[str, ...]) -> dict[str, str]:
    """``{"dt=2026-11-20/hour=HH": state}`` of the hours given for each state."""
    return {f"{DAY}/hour={h}": state for state, hs in states.items() for h in hs}


def both(work: Callable[[StreamingTable], T], tables: list[StreamingTable]) -> list[T]:
    """``work`` on each table at once: each step starts a JVM, two cores run two."""
    with ThreadPoolExecutor(len(tables)) as pool:
        return list(pool.map(work, tables))


def test_a_streams_checkpoint_and_log_are_read_and_its_spark_compacts_it(cluster, tmp_path):
    line = cluster.line
    parquet = StreamingTable(
        tmp_path / "parquet",
        python=cluster.python,
        blockable=True,
        offset_log_version=2,
    )
    # No no-data batches: both queries' watermarks move with their data batches alike.
    orc = StreamingTable(
        tmp_path / "orc",
        python=cluster.python,
        file_format="orc",
        stateful=True,
        spark_conf={"spark.sql.streaming.noDataMicroBatches.enabled": "false"},
    )
    tables = [parquet, orc]
    for table in tables:
        table.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4]))
    both(StreamingTable.run_child, tables)

    def status(table: StreamingTable) -> dict[str, dict[str, Any]]:
        shown = subprocess.run(
            [FSCOMMIT, "status", *table_flags(hourly_table(
                table.staging, table.checkpoint, table_path=str(table.base / "table")
            )), "--json"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        report = json.loads(shown.stdout)
        # Published by `compact` alone (no policy), or orphans a killed batch left: "attention
        # needed" (4), as the report says; otherwise nothing to look at (0).
        assert shown.returncode == (4 if report["attention"] else 0), shown.stderr[-3000:]
        assert report["watermark_ms"] == table.last_watermark_ms  # what that Spark reported
        assert report["format"] == table.file_format
        return {p["partition"]: p for p in report["partitions"]}

    def states(partitions: dict[str, dict[str, Any]]) -> dict[str, str]:
        return {name: partition["state"] for name, partition in partitions.items()}

    def compacted(table: StreamingTable) -> dict[str, str]:
        ran = compact(
            table.staging,
            table.checkpoint,
            str(table.base / "table"),
            "--spark-home",
            cluster.spark_home,
            "--conf",
            f"spark.pyspark.python={cluster.python}",
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        return {p["partition"]: p["state"] for p in json.loads(ran.stdout)["partitions"]}

    # Watermark 03:10: hours 00 and 01 are committable (their commit time is 1 h after).
    for table in tables:
        assert states(status(table)) == hours(committable=("00", "01"), pending=("03", "04"))
    for published in both(compacted, tables):
        assert published == hours(published=("00", "01"))

    # Hour 02 in a batch SIGKILLed half-written, then redone; late rows for hours 00 and
    # 01; hours 05 and 06. The stateless query writes the rows behind its watermark (late
    # rows, and hour 02 too); dropDuplicates drops them.
    late = [row(900, "2026-11-20T00:50:00Z"), row(901, "2026-11-20T01:05:00Z")]
    later = hourly_batches("2026-11-20", [5, 6], start_id=500)
    orc.add_batches(hourly_batches("2026-11-20", [2])[0], late, *later)
    both(lambda t: killed_mid_batch(t, late, *later) if t is parquet else t.run_child(), tables)
    assert parquet.orphans_at_kill  # type: ignore[attr-defined]

    # Watermark 05:10: hours 02 to 04 too; the late rows are new files for hours 00 and 01
    # (published, not committed: `compact` runs no policy).
    parquet_status, orc_status = status(parquet), status(orc)
    assert states(parquet_status) == hours(
        committable=("00", "01", "02", "03", "04"), pending=("05", "06")
    )
    assert states(orc_status) == hours(committable=("00", "01", "03", "04"), pending=("05", "06"))
    assert parquet_status[f"{DAY}/hour=00"]["unpublished_files"] == 1
    assert orc_status[f"{DAY}/hour=00"]["unpublished_files"] == 0
    second = both(compacted, tables)
    assert second == [
        hours(published=("00", "01", "02", "03", "04")),
        hours(published=("03", "04"), **{"up-to-date": ("00", "01")}),
    ]
    assert len(CommitLedger(str(parquet.base / "table")).read(f"{DAY}/hour=00").commits) == 2

    # The logs are the versions that Spark line writes.
    for table, log, version in (
        (parquet, "offsets", line.offsets_version),
        (orc, "commits", line.commits_version),
    ):
        batches = [p for p in Path(table.checkpoint, log).iterdir() if p.name.isdigit()]
        latest = max(batches, key=lambda p: int(p.name))
        assert latest.read_text().startswith(f"v{version}\n"), latest

    # That Spark reads the published hours back as it reads them from staging.
    read = subprocess.run(
        [cluster.python, str(ROOT / "tests" / "support" / "spark_read.py"), json.dumps([
            {"name": t.file_format, "format": t.file_format, "staging": t.staging,
             "table": str(t.base / "table")} for t in tables
        ])],
        capture_output=True, text=True, timeout=600, env=spark_env(cluster.python),
    )  # fmt: skip
    lines = [x for x in read.stdout.splitlines() if x.startswith(PREFIX)]
    assert lines, read.stderr[-3000:]
    views = json.loads(lines[-1][len(PREFIX) :])
    for table in tables:
        view = views[table.file_format]
        assert view["spark"] == line.pyspark
        published = view["published"]["rows"]
        assert set(published) == set(view["staging"]["rows"]) - set(hours(pending=("05", "06")))
        assert view["published"]["schema"] == view["staging"]["schema"]
        for partition, rows in published.items():
            assert rows == view["staging"]["rows"][partition], (table.file_format, partition)
    late_ids = {
        json.loads(r)["id"] for r in views["parquet"]["published"]["rows"][f"{DAY}/hour=00"]
    }
    assert 900 in late_ids


@pytest.fixture(scope="module")
def connect_server_4_0(tmp_path_factory):
    """A Spark 4.0 Connect server, the oldest line with one (Spark 3.5's pyspark ships
    none). Its workers run the client's Python minor, as Spark Connect requires, with that
    pyspark, pyarrow and numpy: not the provider."""
    base = tmp_path_factory.mktemp("connect-4.0")
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    worker = fresh_venv(require_python(minor), base / "venv", "pyspark==4.0.5", "pyarrow", "numpy")
    home = next((base / "venv" / "lib").glob("python*/site-packages/pyspark"))
    server = ConnectServer(base, spark_home=home, worker=str(worker)).start()
    yield server
    server.stop()


def test_the_4x_client_compacts_on_a_spark_4_0_connect_server(
    spark, connect_server_4_0, killed_stream, tmp_path
):
    """The Spark provider's pyspark-client (4.x) against the oldest Connect server: a
    SIGKILLed query's table published exactly once, and a rerun changes nothing."""
    table = tmp_path / "table"
    remote = ("--spark-remote", connect_server_4_0.url)
    ran = compact(killed_stream.staging, killed_stream.checkpoint, str(table), *remote)
    assert ran.returncode == 0, ran.stderr[-3000:]
    ready = committable(killed_stream.staging, killed_stream.checkpoint)
    assert {p["state"] for p in json.loads(ran.stdout)["partitions"]} == {"published"}
    assert check_exactly_once(spark, killed_stream.staging, str(table), ready) > 0
    again = compact(killed_stream.staging, killed_stream.checkpoint, str(table), *remote)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {p["state"] for p in json.loads(again.stdout)["partitions"]} == {"up-to-date"}
    logs = "".join(p.read_text() for p in (connect_server_4_0.base / "logs").iterdir())
    assert "Running Spark version 4.0.5" in logs
