"""A year-old table costs what a day-old table costs (issue 45): routine runs by age.

Tables of 24, 2,400 and 8,760 committed hourly partitions (a day, a hundred days, a year of
an hourly stream; :mod:`fscommit_dev.aged_table`), each on the local disk and on a local S3
API server (moto, as in the tests; the S3 copy is written with the sink log's and the
plans' URIs as S3A writes them, then uploaded). Each table is upgraded by one first run
(measured apart: it reads every partition's records once, which on the S3 server takes
~10 requests per partition, half an hour for the year: the larger S3 tables are upgraded
on the local disk before their upload instead, by the same code), then, per repetition,
interleaved (stores alternated; each operation run on every size in turn, the sizes
rotated), each in a fresh process:

- a no-op commit: what ``fscommit commit`` does when nothing is new (the dry run, the
  run, the committer and the completeness step);
- ``status``: what ``fscommit status`` prints (the table report with the orphan listing,
  the settled partitions counted, not listed; the completeness; the text);
- ``plan``: the dry run ``fscommit plan`` shows;
- a sensor poke: one partition's wait (``check_partition``), as a poke or a trigger's poll.

Then once per table, one new hour (two staged files) committed: the same commit, its two
units compacted in the process (the units' seconds are shown apart; spark-submit would add
its ~9 s of JVM start, whatever the table's age).

Reported: the process's wall time (interpreter and imports included), the requests the S3
server answered (counted in its log), and on the local disk the file-system calls on the
table's directories (``strace -e trace=%file``, one extra run per table and operation,
not timed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.measure import check, print_result, run_measured, summarize
from bench.settings import REPO, BenchSettings, python

SIZES = (24, 2_400, 8_760)
STORES = ("local", "s3")
ROUTINE = ("no-op commit", "status", "plan", "sensor poke")
OPERATIONS = (*ROUTINE, "one-hour commit")
BUCKET = "aged"
_REQUEST = re.compile(rb'"(GET|HEAD|PUT|POST|DELETE) ')


def run_ledger_scale(settings: BenchSettings) -> dict[str, Any]:
    from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
    from fscommit_dev.aged_table import AgedTable
    from fscommit_dev.s3_server import S3Server

    sizes = sorted({settings.scaled(n, 24) for n in SIZES})
    server = S3Server(settings.directory("ledger-scale", "s3-server"))
    server_log = server.state_dir / "server.log"
    env = os.environ | server.env() | {"PYTHONPATH": str(REPO)}
    logs = settings.directory("logs")
    samples: dict[str, dict[str, dict[str, dict[str, list[float]]]]] = {}
    first_runs: dict[str, dict[str, dict[str, Any]]] = {}
    try:
        server.create_bucket(BUCKET)
        tables: dict[tuple[int, str], AgedTable] = {}
        for hours in sizes:
            started = time.monotonic()
            tables[hours, "local"] = AgedTable(
                settings.scratch / "ledger-scale" / str(hours), hours
            )
            tables[hours, "s3"] = AgedTable(
                settings.scratch / "ledger-scale" / f"s3-{hours}",
                hours,
                logged_root=f"s3a://{BUCKET}/{hours}/staging",
            )
            for table in (tables[hours, "local"], tables[hours, "s3"]):
                table.write()
            if hours != sizes[0]:  # upgraded before the upload: see the module's docstring
                CommitLedger(str(tables[hours, "s3"].table)).upgrade()
            _upload(server, tables[hours, "s3"].root, str(hours))
            print(f"ledger scale: {hours} hours written and uploaded in "
                  f"{time.monotonic() - started:.0f} s", flush=True)  # fmt: skip

        def measure(hours: int, store: str, operation: str, tag: str) -> dict[str, Any]:
            location = _location(tables[hours, store], store, hours)
            command = [python(), "-m", "bench.ledger_scale", operation, location]
            if operation == "sensor poke":
                command.append(tables[hours, store].partition(hours - 1))
            log = logs / f"ledger-scale-{hours}-{store}-{operation.replace(' ', '-')}-{tag}.log"
            before = server_log.stat().st_size
            run = check(run_measured(command, log, env=env), f"{operation} of {hours}", log)
            requests = _requests(server_log, before) if store == "s3" else None
            return {"wall_s": run.wall_s, "requests": requests, **run.report()}

        for hours in sizes:
            first_runs[str(hours)] = {}
            for store in STORES if hours == sizes[0] else ("local",):
                first = measure(hours, store, "no-op commit", "upgrade")
                first_runs[str(hours)][store] = first
                print(f"  {hours:>5} {store:<5} upgrade run {first['wall_s']:.1f} s"
                      f"{_requests_text(first)}", flush=True)  # fmt: skip
        for rep in range(settings.reps):
            # The ages side by side, operation by operation: the ratio compares runs seconds
            # apart, whatever the host does over the minutes of a repetition.
            order = sizes[rep % len(sizes) :] + sizes[: rep % len(sizes)]
            for store in STORES if rep % 2 == 0 else STORES[::-1]:
                for operation in ROUTINE:
                    for hours in order:
                        result = measure(hours, store, operation, str(rep))
                        _add(samples, hours, store, operation, result)
            print(f"  rep {rep + 1}/{settings.reps} done", flush=True)
        for hours in sizes:
            for store in STORES:
                new = tables[hours, store].add_hour()
                if store == "s3":
                    _upload(server, tables[hours, store].root, str(hours), new)
                result = measure(hours, store, "one-hour commit", "0")
                _add(samples, hours, store, "one-hour commit", result)
        calls = {
            str(hours): {
                operation: _traced_calls(tables[hours, "local"], operation, env, logs)
                for operation in ROUTINE
            }
            for hours in sizes
        }
    finally:
        server.stop()
    results = {
        "sizes": sizes,
        "upgrade": first_runs,
        "operations": {
            str(hours): {
                store: {
                    operation: {
                        "wall_s": summarize(values["wall_s"]),
                        **({"requests": max(values["requests"])} if values["requests"] else {}),
                        **({"units_s": summarize(values["units_s"])} if values["units_s"] else {}),
                    }
                    for operation, values in by_operation.items()
                }
                for store, by_operation in by_store.items()
            }
            for hours, by_store in samples.items()
        },
        "local_calls": calls,
    }
    for hours in sizes:
        for store in STORES:
            row = results["operations"][str(hours)][store]
            print(f"  {hours:>5} {store:<5} " + "  ".join(
                f"{op}: {r['wall_s']['min']:.2f} s{_requests_text(r)}" for op, r in row.items()
            ), flush=True)  # fmt: skip
    return results


def _add(
    samples: dict[str, Any], hours: int, store: str, operation: str, result: dict[str, Any]
) -> None:
    values = samples.setdefault(str(hours), {}).setdefault(store, {})
    values = values.setdefault(operation, {"wall_s": [], "requests": [], "units_s": []})
    values["wall_s"].append(result["wall_s"])
    if result["requests"] is not None:
        values["requests"].append(result["requests"])
    if result.get("units_s"):
        values["units_s"].append(result["units_s"])


def _requests_text(result: dict[str, Any]) -> str:
    requests = result.get("requests")
    return f", {requests} requests" if requests is not None else ""


def _location(table: Any, store: str, hours: int) -> str:
    return str(table.root) if store == "local" else f"s3://{BUCKET}/{hours}"


def _upload(server: Any, root: Path, prefix: str, partition: str | None = None) -> None:
    """Every file of the table's staging, checkpoint and table folders (or, with
    ``partition``, what a new hour added: its staged files, the sink log's and the
    checkpoint's new batch) as objects under ``prefix``."""
    client = server.client()
    if partition is None:
        paths = [p for p in root.rglob("*") if p.is_file() and p.name != "sample.parquet"]
    else:
        paths = [
            *(root / "staging" / partition).iterdir(),
            root / "staging" / "_spark_metadata" / "1",
            root / "checkpoint" / "offsets" / "1",
            root / "checkpoint" / "commits" / "1",
        ]

    def put(path: Path) -> None:
        key = f"{prefix}/{path.relative_to(root).as_posix()}"
        client.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, paths))


def _requests(server_log: Path, offset: int) -> int:
    """Requests the server logged after ``offset`` bytes of its log."""
    with open(server_log, "rb") as log:
        log.seek(offset)
        return len(_REQUEST.findall(log.read()))


def _traced_calls(table: Any, operation: str, env: dict[str, str], logs: Path) -> int:
    """File-system calls a fresh process makes on the table's folders for ``operation``."""
    with tempfile.NamedTemporaryFile(suffix=".strace") as trace:
        command = [python(), "-m", "bench.ledger_scale", operation, str(table.root)]
        if operation == "sensor poke":
            command.append(table.partition(table.hours - 1))
        log = logs / f"ledger-scale-strace-{table.hours}-{operation.replace(' ', '-')}.log"
        with open(log, "w") as stderr:
            subprocess.run(
                ["strace", "-f", "-qq", "-e", "trace=%file", "-o", trace.name, *command],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                check=True,
            )
        root = str(table.root).encode()
        return sum(root in line for line in Path(trace.name).read_bytes().splitlines())


# The child: one operation on one table, in a fresh process.


def _spec(location: str) -> Any:
    from airflow_provider_fscommit.core.config.table_spec import TableSpec
    from fscommit_dev.tables import hourly_table

    return TableSpec.from_options(
        hourly_table(
            f"{location}/staging",
            f"{location}/checkpoint",
            table_path=f"{location}/table",
            **{"sink.partition-commit.policy.kind": "success-file"},
        )
    )


def _commit(location: str) -> dict[str, Any]:
    """``fscommit commit``: the dry run that decides whether Spark is needed, the run (its
    units in this process, timed apart), the policies and the completeness step."""
    from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
    from airflow_provider_fscommit.core.commit.policy_factory import create_policies
    from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
    from airflow_provider_fscommit.jobs.executor import run_group

    spec = _spec(location)
    publisher = CompactionPublisher(spec)
    publisher.preview(None)
    units_s = 0.0

    def run_units(tasks: list[Any]) -> list[Any]:
        nonlocal units_s
        started = time.monotonic()
        try:
            return run_group(tasks)
        finally:
            units_s += time.monotonic() - started

    summary = publisher.run(run_units)
    ready = [o.partition for o in summary.outcomes if not o.failed]
    outcomes = PartitionCommitter(spec, create_policies(spec)).commit(ready)
    return {
        "units_s": units_s,
        "published": sum(o.state == "published" for o in summary.outcomes),
        "committed": sum(o.state.committed for o in outcomes),
    }


def _status(location: str) -> dict[str, Any]:
    from airflow_provider_fscommit.cli.status import render_status
    from airflow_provider_fscommit.core.status.completeness import read_completeness
    from airflow_provider_fscommit.core.status.table_report import read_table_report

    report = read_table_report(_spec(location), list_settled=False)
    if report.ledger_error:
        raise RuntimeError(report.ledger_error)
    text = render_status(report, read_completeness(report))
    return {"states": report.counts(), "lines": text.count("\n") + 1}


def _plan(location: str) -> dict[str, Any]:
    from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher

    return {"plans": len(CompactionPublisher(_spec(location)).preview(None).plans)}


def _poke(location: str, partition: str) -> dict[str, Any]:
    from airflow_provider_fscommit.core.status.partition_wait import check_partition

    return {"committable": check_partition(_spec(location), partition).committable}


_CHILD: dict[str, Callable[..., dict[str, Any]]] = {
    "no-op commit": _commit,
    "one-hour commit": _commit,
    "status": _status,
    "plan": _plan,
    "sensor poke": _poke,
}


def main(argv: list[str]) -> None:
    operation, *args = argv
    started = time.monotonic()
    result = _CHILD[operation](*args)
    print_result({"seconds": time.monotonic() - started, **result})
    print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
