"""The example DAGs on a table that lives on S3, reached only through an Airflow connection.

The connection holds a recognizable secret key (the S3 server accepts any key); after the
runs it is searched for everywhere it must never be: every command line of every process
while the DAGs run (spark-submit's included), the runs' output, every file of the Airflow
installation (task logs, and the metadata database with XCom, asset events and trigger
kwargs), the OpenLineage events, and every object written to the store.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path

import pytest

from fscommit_dev.airflow_env import AirflowEnv
from fscommit_dev.s3_server import aws_connection_env
from fscommit_dev.s3_tables import assert_exactly_once, place_on_s3, staged_ids, success_files
from fscommit_dev.streams import StreamingTable, hourly_batches
from tests.support.example_dags import DAGS_DIR

CANARY = "fscommit-canary-secret-7Qx2Lm9"
DAY = "dt=2026-11-20"


class CommandLineWatch:
    """Reads every process's command line every 50 ms while a block runs."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> CommandLineWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
                with contextlib.suppress(OSError):  # the process ended
                    self.seen.add(
                        cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    )


@pytest.fixture
def s3_gap_stream(spark, s3_server, tmp_path):
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", [0, 1, 3, 4, 5]))
    stream.run(spark)
    return place_on_s3(stream, s3_server, s3_server.create_bucket("dag-tables"), "events")


@pytest.mark.slow
def test_sweep_and_hourly_dags_on_s3_never_show_the_connection_secret(
    s3_gap_stream, s3_server, tmp_path
):
    s3 = s3_gap_stream
    spec_file = tmp_path / "table.json"
    spec_file.write_text(json.dumps(s3.spec()))
    lineage = tmp_path / "lineage.jsonl"
    airflow = AirflowEnv(
        tmp_path / "airflow",
        {
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_DIR),
            "FSCOMMIT_TABLE_SPEC": str(spec_file),
            "FSCOMMIT_AWS_CONN_ID": "aws_tables",
            "AIRFLOW_CONN_SPARK_DEFAULT": "spark://local%5B2%5D",
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "file", "log_file_path": str(lineage), "append": True}
            ),
            **aws_connection_env(s3_server, "aws_tables", secret_key=CANARY),
        },
    ).setup()

    with CommandLineWatch() as commands:
        sweep = airflow.run("dags", "test", "fscommit_sweep")
        assert sweep.returncode == 0, sweep.stdout[-3000:] + sweep.stderr[-2000:]
        # The hour the stream wrote nothing to: the deferred sensor, then an empty commit.
        hourly = airflow.run("dags", "test", "fscommit_hourly", "2026-11-20T03:00:00+00:00")
        assert hourly.returncode == 0, hourly.stdout[-3000:] + hourly.stderr[-2000:]

    with_data = {f"{DAY}/hour={h}" for h in ("00", "01", "03")}
    assert assert_exactly_once(s3, staged_ids(s3), with_data) == 9
    assert sorted(success_files(s3)) == sorted(with_data | {f"{DAY}/hour=02"})
    assert any("SparkSubmit" in c and "fscommit-compact" in c for c in commands.seen)

    leaks = [c for c in commands.seen if CANARY in c]
    leaks += [
        name
        for name, run in (("sweep", sweep), ("hourly", hourly))
        if CANARY in run.stdout + run.stderr
    ]
    leaks += [
        str(p) for p in airflow.home.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()
    ]
    leaks += ["lineage"] if CANARY in lineage.read_text() else []
    client = s3_server.client()
    leaks += [
        key
        for key in s3.object_keys()
        if CANARY.encode() in client.get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    ]
    assert leaks == []
    assert airflow.query("SELECT count(*) FROM asset_event") == [(4,)]
