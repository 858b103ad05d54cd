"""The compaction suite: every engine on the same input, interleaved, several repetitions.

Repetition r runs the engines in an order rotated by r, so no engine always follows the
same neighbour (page cache, CPU frequency, a neighbour's load on this shared machine).
The input stays in the page cache for everyone, which the floor makes visible. Only the
last output of each engine is kept, and checked by ``fidelity.py``. An engine that cannot
write the workload's format, or is compared on other workloads only, is not run, and the
reason is recorded under ``skipped``.

Per engine: whole-process and in-job seconds (min and median), MB/s of input compacted
per in-job second (min), time relative to fscommit's in-job time, peak RSS of the process
tree and of its largest Python process, the number of output files.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from airflow_provider_fscommit.jobs.class_archive import DIR_ENV as CLASS_ARCHIVE_DIR
from bench.engines import ENGINES, REMOTE_ENV, Engine
from bench.fidelity import verify_outputs
from bench.measure import check, run_measured, summarize
from bench.settings import REPO, BenchSettings
from bench.spark import spark_env
from bench.workloads import WORKLOADS, WorkloadInput, prepare


def run_compaction(
    settings: BenchSettings, workloads: list[str], engines: list[str]
) -> dict[str, Any]:
    """``{workload: results}`` for the named workloads and engines."""
    chosen = [ENGINES[name] for name in engines]
    results = {}
    with _connect_server(settings, any(e.needs_connect_server for e in chosen)):
        for name in workloads:
            staged = prepare(WORKLOADS[name], settings)
            print(f"workload {name}: {staged.files} files, {staged.bytes / 1e6:.1f} MB", flush=True)
            if ENGINES["fscommit"] in chosen:
                _class_archive(staged, settings)
            results[name] = run_workload(staged, chosen, settings)
    return results


def _class_archive(staged: WorkloadInput, settings: BenchSettings) -> None:
    """A worker host's state after its second run: fscommit's spark-submit drivers start
    from the host's class archive. Runs fscommit unmeasured until the bench's folder holds
    one (two runs on a new folder: the first marks it, the second writes it)."""
    env = spark_env() | {"PYTHONPATH": str(REPO)}
    archives = Path(env[CLASS_ARCHIVE_DIR])
    runs = settings.scratch / "runs" / "class-archive"
    for attempt in range(2):
        if any(archives.glob("*.jsa")):
            return
        out, log = runs / f"out-{attempt}", runs / f"warm-up-{attempt}.log"
        check(
            run_measured(ENGINES["fscommit"].command(staged, out), log, env=env),
            "fscommit's warm-up run",
            log,
        )
        shutil.rmtree(out, ignore_errors=True)


@contextlib.contextmanager
def _connect_server(settings: BenchSettings, wanted: bool) -> Iterator[None]:
    """The Spark Connect server of ``fscommit-connect`` (the tests' one, on 127.0.0.1, its
    workers without the provider installed), running for the whole suite."""
    if not wanted:
        yield
        return
    from fscommit_dev.spark_connect import ConnectServer

    server = ConnectServer(settings.directory("connect-server")).start()
    os.environ[REMOTE_ENV] = server.url
    try:
        yield
    finally:
        os.environ.pop(REMOTE_ENV, None)
        server.stop()


def run_workload(
    staged: WorkloadInput, engines: list[Engine], settings: BenchSettings
) -> dict[str, Any]:
    runs = settings.scratch / "runs" / staged.workload
    shutil.rmtree(runs, ignore_errors=True)
    env = spark_env() | {"PYTHONPATH": str(REPO)}
    skipped = {
        e.name: {"label": e.label, "reason": reason}
        for e in engines
        if (reason := e.left_out(staged)) is not None
    }
    engines = [e for e in engines if e.name not in skipped]
    samples: dict[str, list[dict[str, float]]] = {e.name: [] for e in engines}
    latest: dict[str, Path] = {}
    for rep in range(settings.reps):
        for engine in engines[rep % len(engines) :] + engines[: rep % len(engines)]:
            out = runs / f"{engine.name}-{rep}"
            log = runs / "logs" / f"{engine.name}-{rep}.log"
            measurement = check(
                run_measured(engine.command(staged, out), log, env=env),
                f"{engine.name} on workload {staged.workload}",
                log,
            )
            sample = {
                "whole_s": measurement.wall_s,
                "in_job_s": engine.in_job_seconds(measurement),
                "peak_tree_rss": measurement.peak_tree_rss,
                "peak_python_rss": measurement.peak_python_rss,
            }
            samples[engine.name].append(sample)
            if engine.name in latest:
                shutil.rmtree(latest[engine.name], ignore_errors=True)
            latest[engine.name] = out
            print(
                f"  {staged.workload} rep {rep + 1}/{settings.reps} {engine.name:<12} "
                f"in-job {sample['in_job_s']:7.2f} s  whole {sample['whole_s']:7.2f} s  "
                f"peak {sample['peak_tree_rss'] / 2**20:7.0f} MiB",
                flush=True,
            )
    verified = {e.name: latest[e.name] for e in engines if e.writes_table}
    verdicts = verify_outputs(staged, verified, runs / "logs" / "verify.log") if verified else {}
    return {
        "input": staged.describe(),
        "engines": {
            e.name: _engine_summary(e, samples[e.name], staged, latest[e.name], verdicts)
            for e in engines
        },
        "skipped": skipped,
    }


def _engine_summary(
    engine: Engine,
    samples: list[dict[str, float]],
    staged: WorkloadInput,
    out: Path,
    verdicts: dict[str, Any],
) -> dict[str, Any]:
    in_job = summarize([s["in_job_s"] for s in samples])
    outputs = [p for p in out.rglob("*") if p.is_file() and _visible(p.relative_to(out))]
    return {
        "label": engine.label,
        "whole_s": summarize([s["whole_s"] for s in samples]),
        "in_job_s": in_job,
        "mb_per_s": round(staged.bytes / 1e6 / in_job["min"], 1) if in_job["min"] else None,
        "peak_tree_rss": max(s["peak_tree_rss"] for s in samples),
        "peak_python_rss": max(s["peak_python_rss"] for s in samples),
        "output_files": len(outputs),
        "output_bytes": sum(os.path.getsize(p) for p in outputs),
        "fidelity": verdicts.get(engine.name),
    }


def _visible(relative: Path) -> bool:
    """A data file a reader of the table sees (no ``_SUCCESS``, ledger or ``.crc``)."""
    return not any(part.startswith(("_", ".")) for part in relative.parts)
