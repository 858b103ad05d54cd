"""The layout suite (issue #47): what sorting costs and what it buys, side by side in one run.

For each Parquet workload, the committable hours are compacted five ways, repetitions
interleaved as in the compaction suite (the order rotates each repetition):

* ``fscommit``: unsorted; ``fscommit-sorted``: ``--sort-by s,ts``; ``fscommit-z``:
  ``--z-order-by s,i``. All three with ``parquet.block.size`` 1 MB, so that a partition
  of these workloads (20 to 30 MB) has about 20 row groups to skip (a table laid out for
  lookups; Spark's default 128 MB suits partitions of gigabytes) and the three differ only in
  the order of their rows;
* ``duckdb``: ``COPY (SELECT * …)``; ``duckdb-sorted``: ``COPY (SELECT * … ORDER BY s, ts)``
  (DuckDB's own row groups), the in-job yardstick.

``s`` is a string of hashed entropy, like a user id; ``i`` an integer spread over the
hour, ``ts`` the event time. Then two selective queries on each of fscommit's published
tables, by DuckDB (its profiler's bytes read and row groups scanned of all) and by Spark
(``local[1]``; the bytes its JVM read, ``/proc/<pid>/io``):

* ``point``: ``s = <a value> AND ts`` within 15 minutes of its row's, a user-id lookup;
* ``range``: ``i`` in a range of 1 % of its values: the second Z-order column.
"""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.engines import ENGINES, fscommit_command, fscommit_seconds
from bench.measure import check, run_measured, summarize
from bench.settings import REPO, BenchSettings, python
from bench.spark import spark_env, submit_command
from bench.workloads import WORKLOADS, WorkloadInput, prepare

BLOCK_SIZE = "1MB"
LAYOUTS = {
    "fscommit": (),
    "fscommit-sorted": ("--sort-by", "s,ts"),
    "fscommit-z": ("--z-order-by", "s,i"),
}
DUCKDB = ("duckdb", "duckdb-sorted")


def run_layout(settings: BenchSettings, workloads: list[str]) -> dict[str, Any]:
    """``{workload: results}`` for the named Parquet workloads."""
    results = {}
    for name in workloads:
        if WORKLOADS[name].format != "parquet":
            continue
        staged = prepare(WORKLOADS[name], settings)
        print(f"workload {name}: {staged.files} files, {staged.bytes / 1e6:.1f} MB", flush=True)
        results[name] = _workload(staged, settings)
    return results


def _workload(staged: WorkloadInput, settings: BenchSettings) -> dict[str, Any]:
    runs = settings.scratch / "runs" / f"layout-{staged.workload}"
    shutil.rmtree(runs, ignore_errors=True)
    env = spark_env() | {"PYTHONPATH": str(REPO)}
    names = [*LAYOUTS, *DUCKDB]
    seconds: dict[str, list[float]] = {name: [] for name in names}
    python_rss: dict[str, int] = dict.fromkeys(names, 0)
    for rep in range(settings.reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            out = runs / name
            shutil.rmtree(out, ignore_errors=True)
            log = runs / "logs" / f"{name}-{rep}.log"
            measured = check(
                run_measured(_command(name, staged, out), log, env=env), f"{name} layout", log
            )
            engine = ENGINES["duckdb"] if name in DUCKDB else None
            took = engine.in_job_seconds(measured) if engine else fscommit_seconds(measured)
            seconds[name].append(took)
            python_rss[name] = max(python_rss[name], measured.peak_python_rss)
            print(f"  {staged.workload} rep {rep + 1} {name:<16} in-job {took:6.2f} s", flush=True)
    tables = {name: runs / name for name in LAYOUTS}
    return {
        "input": staged.describe(),
        "block_size": BLOCK_SIZE,
        "compaction": {
            name: {"in_job_s": summarize(seconds[name]), "peak_python_rss": python_rss[name]}
            for name in names
        },
        "queries": _queries(tables, runs / "logs", settings.reps, env),
    }


def _command(name: str, staged: WorkloadInput, out: Path) -> list[str]:
    if name in DUCKDB:
        return [python(), "-m", "bench.engines", name, str(staged.manifest), str(out)]
    command = fscommit_command(staged.staging, staged.checkpoint, str(out))
    return [*command, *LAYOUTS[name], "--option", f"parquet.block.size={BLOCK_SIZE}"]


def _queries(tables: dict[str, Path], logs: Path, reps: int, env: dict[str, str]) -> dict[str, Any]:
    """Each query on each table by DuckDB and by Spark; the predicates come from the
    unsorted table's data, so every table answers the same question."""
    predicates = _predicates(tables["fscommit"])
    arguments = json.dumps({"tables": {k: str(v) for k, v in tables.items()}, "reps": reps,
                            "predicates": predicates})  # fmt: skip
    duckdb = check(
        run_measured([python(), "-m", "bench.queries", arguments], logs / "duckdb-queries.log"),
        "DuckDB queries",
        logs / "duckdb-queries.log",
    )
    spark = check(
        run_measured(submit_command("spark_queries", [arguments]), logs / "spark-queries.log",
                     env=env),
        "Spark queries",
        logs / "spark-queries.log",
    )  # fmt: skip
    queries = {"predicates": predicates, "duckdb": duckdb.report(), "spark": spark.report()}
    _same_answers(queries)
    return queries


def _predicates(table: Path) -> dict[str, str]:
    """A value of ``s`` and 30 minutes around its row's time; a 1 % range of ``i``."""
    import duckdb

    files = f"'{table}/**/*.parquet'"
    connection = duckdb.connect()
    s, ts = connection.execute(
        f"SELECT s, ts FROM read_parquet({files}, hive_partitioning = false) "
        "WHERE s IS NOT NULL ORDER BY id LIMIT 1 OFFSET 1000"
    ).fetchone()
    low, high = connection.execute(
        f"SELECT quantile_disc(i, 0.5), quantile_disc(i, 0.51) "
        f"FROM read_parquet({files}, hive_partitioning = false)"
    ).fetchone()
    window = timedelta(minutes=15)
    return {
        "point": f"s = '{s}' AND ts BETWEEN TIMESTAMP '{ts - window}' "
        f"AND TIMESTAMP '{ts + window}'",
        "range": f"i BETWEEN {low} AND {high}",
    }


def _same_answers(queries: dict[str, Any]) -> None:
    """Every table gives every reader the same answer, and the point lookup finds its row:
    a layout changes no row, and a query that finds nothing would measure nothing."""
    for query in queries["predicates"]:
        answers = {
            json.dumps(queries[reader][table][query]["answer"])
            for reader in ("duckdb", "spark")
            for table in LAYOUTS
        }
        if len(answers) != 1 or json.loads(next(iter(answers)))[0] == 0:
            raise RuntimeError(f"the {query} query's answers differ or are empty: {answers}")
