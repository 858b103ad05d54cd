"""One soak run end to end: deploy, feed, break, drain, check, measure.

The run's clock starts when Airflow's services answer. For ``minutes`` the streams get
rows and the faults strike on their seeded schedule (in the middle 60 % of the run, so
the first partitions commit before anything breaks and the last faults have time to be
recovered from); then the rows stop, and the drain waits until every partition that
was committable by then is committed with every sink-log file published (late rows
included, by the sweep), or until ``drain_seconds`` passed, which the checks then report.
The checks run against the deployment still standing (the REST API for the tasks); the
deployment is stopped by PID afterwards, whatever happened.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from airflow_provider_fscommit.core.config.spec_file import read_spec_file
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.spark.checkpoint import read_checkpoint
from fscommit_dev.metastore.server import MetastoreServer
from fscommit_dev.postgres import PostgresServer
from fscommit_dev.soak import freshness, metastore_audit, metrics_check, resources
from fscommit_dev.soak.checks import (
    Violation,
    check_table,
    failed_tasks,
    non_loopback_listeners,
    staged_files,
)
from fscommit_dev.soak.deployment import Deployment, deployed
from fscommit_dev.soak.faults import FaultInjector, schedule
from fscommit_dev.soak.generator import partition_start_ms
from fscommit_dev.soak.observer import Observer
from fscommit_dev.soak.tables import SoakSettings, SoakTable
from fscommit_dev.spark_connect import ConnectServer
from fscommit_dev.statsd import StatsdListener

# The share of the run, from its start, between which the faults strike.
FAULT_WINDOW = (0.2, 0.8)
# How long a fault waits for the task it must hit (a compaction, a commit) to be running.
FAULT_WAIT_S = 180.0


def run_soak(
    base: Path,
    settings: SoakSettings,
    postgres: PostgresServer | None = None,
    connect: ConnectServer | None = None,
    metastore: MetastoreServer | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run a soak under ``base``; the document of what happened, was checked and measured.

    ``document["violations"]`` is empty when every check held.
    """
    statsd = StatsdListener()
    try:
        with deployed(base, settings, postgres, connect, metastore, statsd.env()) as deployment:
            say(f"soak: {len(deployment.tables)} tables up; running {settings.minutes} min")
            return _run(deployment, settings, statsd, say)
    finally:
        statsd.close()


def _run(
    deployment: Deployment,
    settings: SoakSettings,
    statsd: StatsdListener,
    say: Callable[[str], None],
) -> dict:
    assert deployment.airflow is not None and deployment.services is not None
    started = time.monotonic()
    started_ms = int(time.time() * 1000)
    duration_s = settings.minutes * 60
    faults = schedule(
        settings.faults,
        settings.seed,
        FAULT_WINDOW[0] * duration_s,
        FAULT_WINDOW[1] * duration_s,
    )
    observer = Observer(deployment).start()
    injector = FaultInjector(deployment, faults, started, FAULT_WAIT_S).start()
    try:
        while time.monotonic() - started < duration_s:
            if not deployment.streams.alive():
                raise RuntimeError(f"the streams exited; see {deployment.streams.log}")
            time.sleep(5)
        deployment.generator.stop()
        rows_end_ms = int(time.time() * 1000)
        time.sleep(3 * settings.trigger_seconds)  # the streams take the last files
        injector.stop()
        say(f"soak: rows stopped; faults {[(f.kind, f.killed_ms, f.missed) for f in faults]}")
        delays = {t.name: _delay_ms(deployment, t) for t in deployment.tables}
        drained_s = _drain(deployment, delays, settings.drain_seconds)
        drain_end_ms = int(time.time() * 1000)
        say(
            f"soak: drained in {drained_s:.0f} s"
            if drained_s is not None
            else "soak: drain timed out"
        )
    finally:
        injector.stop()
        seen = observer.stop()
    rows = deployment.generator.rows
    violations: list[Violation] = []
    counted: dict[str, Any] = {}
    for table in deployment.tables:
        found, counted[table.name] = check_table(
            table, delays[table.name], rows, deployment.metastore
        )
        violations += found
    violations += failed_tasks(deployment.services)
    violations += non_loopback_listeners(_process_groups(deployment))
    times = [
        t
        for table in deployment.tables
        for t in freshness.partition_times(
            table,
            delays[table.name],
            rows,
            seen.visible_ms.get(table.name, {}),
            faults,
            deployment.airflow,
        )
    ]
    disagreements, metrics = metrics_check.compare(
        statsd.metrics(),
        {name: c["compacted_rows"] for name, c in counted.items()},
        times,
        faults,
    )
    violations += disagreements
    for name, figures in metrics["tables"].items():
        figures["published_rows"] = counted[name]["published_rows"]
    committed = sum(c["committed"] for c in counted.values())
    calls = metastore_audit.calls(deployment.metastore.state_dir, started_ms, drain_end_ms)
    reader_calls = seen.listings
    commit_calls = sum(calls.values()) - reader_calls if calls else None
    return {
        "settings": settings.to_dict(),
        "tables": [t.to_dict() for t in deployment.tables],
        "started_ms": started_ms,
        "rows_end_ms": rows_end_ms,
        "drain_s": drained_s,
        "faults": [f.to_dict() for f in faults],
        "fault_errors": injector.errors,
        "violations": [v.to_dict() for v in violations],
        "counted": counted,
        "rows": len(rows),
        "late_rows": sum(1 for r in rows if r.late),
        "freshness": freshness.summarize(times),
        "partitions": [t.to_dict() for t in times],
        "resources": resources.summarize(seen.samples),
        "metrics": metrics,
        "metastore": {
            "calls": dict(calls),
            "reader_listings": reader_calls,
            "listing_errors": seen.listing_errors,
            "calls_per_committed_partition": (
                round(commit_calls / committed, 1)
                if commit_calls is not None and committed
                else None
            ),
        },
    }


def _delay_ms(deployment: Deployment, table: SoakTable) -> int:
    """The commit delay the table's spec (init's inference) says."""
    spec, problems = read_spec_file(deployment.specs_dir / table.spec_name)
    if spec is None:
        raise RuntimeError(f"{table.name}'s spec: {[str(p) for p in problems]}")
    return int(spec.table.delay.total_seconds() * 1000)


def _drain(deployment: Deployment, delays: dict[str, int], limit_s: float) -> float | None:
    """Wait until every committable partition is committed with all its sink-log files
    published; the seconds it took (None: not within ``limit_s``)."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        if all(_drained(table, delays[table.name]) for table in deployment.tables):
            return time.monotonic() - started
        time.sleep(5)
    return None


def _drained(table: SoakTable, delay_ms: int) -> bool:
    watermark = read_checkpoint(str(table.checkpoint)).watermark_ms or 0
    ledger = CommitLedger(str(table.table_path))
    for partition, uris in staged_files(table).items():
        if watermark <= partition_start_ms(partition) + delay_ms:
            continue
        records = ledger.read(partition)
        if not records.policies_current or records.open_plans:
            return False
        if not set(uris) <= records.settled_inputs:
            return False
    return True


def _process_groups(deployment: Deployment) -> dict[str, int]:
    """Each running part's process group (each was started in a session of its own)."""
    groups = {"postgres": deployment.postgres.pid, "metastore": deployment.metastore.pid}
    assert deployment.services is not None
    groups |= {name: p.pid for name, p in deployment.services.processes.items()}
    if deployment.streams.process is not None:
        groups["streams"] = deployment.streams.process.pid
    with suppress(OSError, ValueError):
        groups["connect"] = os.getpgid(deployment.connect.pid())
    return groups
