"""``python -m bench.queries ARGUMENTS``: the layout suite's selective queries, by DuckDB.

ARGUMENTS is JSON: ``tables`` (name -> directory), ``predicates`` (name -> SQL), ``reps``.
Per table and query: the answer, the fastest of ``reps`` runs, and what DuckDB's profiler
counted: bytes read (``io.total_bytes_read``) and row groups scanned of all.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from bench.measure import print_result


def run(tables: dict[str, str], predicates: dict[str, str], reps: int) -> dict[str, Any]:
    profile = Path(tempfile.mkdtemp(prefix="fscommit-bench-duckdb-")) / "profile.json"
    results: dict[str, Any] = {}
    for table, directory in tables.items():
        for query, predicate in predicates.items():
            sql = (
                "SELECT count(*), sum(i) FROM read_parquet("
                f"'{directory}/**/*.parquet', hive_partitioning = false) WHERE {predicate}"
            )
            best, answer, counted = None, None, None
            for _ in range(reps):
                connection = duckdb.connect()  # no cache between runs
                connection.execute("PRAGMA enable_profiling = 'json'")
                connection.execute(f"PRAGMA profiling_output = '{profile}'")
                started = time.monotonic()
                (row,) = connection.execute(sql).fetchall()
                answer = list(row)
                took = time.monotonic() - started
                connection.close()
                counted = json.loads(profile.read_text())
                best = took if best is None else min(best, took)
            assert counted is not None
            results.setdefault(table, {})[query] = {
                "answer": answer,
                "seconds": best,
                "bytes_read": counted["io"]["total_bytes_read"],
                "row_groups_scanned": counted["query"]["total_row_groups_scanned"],
                "row_groups": counted["query"]["total_row_groups_to_scan"],
            }
    return results


def main() -> None:
    arguments = json.loads(sys.argv[1])
    print_result(run(arguments["tables"], arguments["predicates"], arguments["reps"]))


if __name__ == "__main__":
    main()
