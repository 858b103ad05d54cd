"""Local disk against an S3 API server, side by side (issue #13).

Workload (a)'s staging and checkpoint, as the streaming query wrote them, are also placed
on a local S3 API server (moto, started for the suite, as in the tests), with the sink
log's URIs rewritten as S3A writes them. Per repetition, interleaved (the store order
alternates), each in a fresh process:

1. the first read of the checkpoint and sink log to the committable partitions
   (``TableStatusReader.read``, what ``fscommit status``, the sensor and every compaction
   start with);
2. ``fscommit compact`` of every committable partition into a fresh table on the same
   store, through spark-submit on ``local[2]``: the job's own seconds and the whole run.

The S3 server is a Python process on the same two cores, answering one request at a time
for writes: the ratio shows what the protocol costs in requests (per-file reads, the
ledger's conditional writes, publishing as copy and delete), not what AWS S3 would take.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any

from bench.engines import fscommit_command, fscommit_seconds
from bench.measure import check, print_result, run_measured, summarize
from bench.settings import REPO, BenchSettings, python
from bench.spark import spark_env
from bench.workloads import WORKLOADS, hourly_spec, prepare

STORES = ("local", "s3")
BUCKET = "bench"


def run_object_store(settings: BenchSettings) -> dict[str, Any]:
    from fscommit_dev.s3_server import S3Server
    from fscommit_dev.s3_tables import place_on_s3

    staged = prepare(WORKLOADS["a"], settings)
    server = S3Server(settings.directory("s3-server"))
    try:
        server.create_bucket(BUCKET)
        started = time.monotonic()
        placed = place_on_s3(staged, server, BUCKET, f"a-{staged.files}")
        upload_s = time.monotonic() - started
        print(f"object store: workload a ({staged.files} files) uploaded in {upload_s:.1f} s")
        paths = {
            "local": (staged.staging, staged.checkpoint),
            "s3": (placed.staging, placed.checkpoint),
        }
        runs = settings.scratch / "runs" / "object-store"
        shutil.rmtree(runs, ignore_errors=True)  # every table is written afresh
        env = spark_env() | server.env() | {"PYTHONPATH": str(REPO)}
        logs = settings.directory("logs")
        samples: dict[str, dict[str, list[float]]] = {
            s: {"first_s": [], "in_job_s": [], "whole_s": []} for s in STORES
        }
        for rep in range(settings.reps):
            for store in STORES if rep % 2 == 0 else STORES[::-1]:
                staging, checkpoint = paths[store]
                log = logs / f"object-store-read-{store}-{rep}.log"
                command = [python(), "-m", "bench.object_store", staging, checkpoint]
                read = check(run_measured(command, log, env=env), f"first read on {store}", log)
                samples[store]["first_s"].append(read.report()["first_s"])
                table = (
                    str(runs / f"local-{rep}")
                    if store == "local"
                    else f"s3://{BUCKET}/{placed.prefix}/table-{rep}"
                )
                log = logs / f"object-store-compact-{store}-{rep}.log"
                command = fscommit_command(staging, checkpoint, table)
                run = check(run_measured(command, log, env=env), f"compaction on {store}", log)
                samples[store]["in_job_s"].append(fscommit_seconds(run))
                samples[store]["whole_s"].append(run.wall_s)
                print(
                    f"  rep {rep + 1}/{settings.reps} {store:<5} first read "
                    f"{samples[store]['first_s'][-1]:.3f} s  compaction in-job "
                    f"{samples[store]['in_job_s'][-1]:.2f} s  whole {run.wall_s:.2f} s",
                    flush=True,
                )
    finally:
        server.stop()
    return {
        "input": staged.describe(),
        "upload_s": round(upload_s, 2),
        "stores": {
            store: {key: summarize(values) for key, values in samples[store].items()}
            for store in STORES
        },
    }


def first_read(staging: str, checkpoint: str) -> None:
    """One fresh process: the committable partitions of the table, timed."""
    from airflow_provider_fscommit.core.status.committable import PartitionState, TableStatusReader

    spec = hourly_spec(staging, checkpoint)
    started = time.perf_counter()
    status = TableStatusReader(spec).read(find_orphans=False)
    elapsed = time.perf_counter() - started
    committable = len(status.in_state(PartitionState.COMMITTABLE))
    print_result({"first_s": elapsed, "committable": committable})


if __name__ == "__main__":
    first_read(sys.argv[1], sys.argv[2])
