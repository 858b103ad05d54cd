"""The DAG factory's parse time: one DAG file making a DAG per spec file (issue 40).

Airflow parses every DAG file again every 30 seconds and kills a parse that takes longer
than ``dag_file_processor_timeout`` (50 s by default); the goal is 200 tables under 2 s.
Measured as the DAG processor does it, in a fresh process per repetition: Airflow's
``DagBag`` on the example DAG file (``dags/fscommit_tables.py``) beside a folder of 0, 20
and 200 spec files (the example's hourly table, each its own DAG id and table path),
the counts interleaved. The
file's parse time is the ``FileLoadStat`` duration the DagBag records (what the DAG
processor reports as the file's parse duration); the process's wall time adds the
interpreter and Airflow's own import, paid once per processor, not per file. The 0-spec
row is the fixed cost of the file (the provider's modules imported); the rows above it
the cost per table.

``python -m bench.factory DAG_FILE`` is the child: it prints one ``BENCH_RESULT`` line.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from bench.measure import check, print_result, run_measured, summarize
from bench.settings import REPO, BenchSettings, python

TABLE_COUNTS = (0, 20, 200)
_EXAMPLE = REPO / "dags" / "fscommit_tables.py"
_SPEC = REPO / "dags" / "specs" / "clicks.yaml"


def run_factory(settings: BenchSettings) -> dict[str, Any]:
    """Each count parsed ``reps`` times (at least 5: a run is seconds), the counts
    interleaved, repetition r rotating their order by r, so load on the shared machine
    falls on every row alike."""
    folders = {count: _folder(settings, count) for count in TABLE_COUNTS}
    env = os.environ | {
        "PYTHONPATH": str(REPO),
        "AIRFLOW_HOME": str(settings.directory("factory", "airflow-home")),
    }
    runs: dict[int, list[dict[str, Any]]] = {count: [] for count in TABLE_COUNTS}
    for rep in range(max(5, settings.reps)):
        for count in TABLE_COUNTS[rep % 3 :] + TABLE_COUNTS[: rep % 3]:
            log = settings.directory("logs") / f"factory-{count}-{rep}.log"
            command = [python(), "-m", "bench.factory", str(folders[count] / _EXAMPLE.name)]
            measurement = check(run_measured(command, log, env=env), f"parse of {count}", log)
            report = measurement.report()
            # Each table: its commit DAG and its maintenance DAG (the hourly sweep).
            if report["dags"] != 2 * count or report["import_errors"]:
                raise RuntimeError(f"{count} specs gave {report}; see {log}")
            runs[count].append(
                report | {"wall_s": measurement.wall_s, "peak_rss": measurement.peak_tree_rss}
            )
    results: dict[str, Any] = {"tables": {}}
    for count, made in runs.items():
        results["tables"][str(count)] = {
            "file_s": summarize([r["file_s"] for r in made]),
            "dagbag_s": summarize([r["dagbag_s"] for r in made]),
            "wall_s": summarize([r["wall_s"] for r in made]),
            "peak_rss": max(r["peak_rss"] for r in made),
            "tasks": made[0]["tasks"],
        }
        print(
            f"  {count} tables: {results['tables'][str(count)]['file_s']['min']:.2f} s", flush=True
        )
    return results


def _folder(settings: BenchSettings, count: int) -> Path:
    """The example DAG file beside ``count`` copies of its hourly spec, each its own table."""
    spec = yaml.safe_load(_SPEC.read_text())
    folder = settings.directory("factory", f"tables-{count}")
    shutil.rmtree(folder)
    (folder / "specs").mkdir(parents=True)
    shutil.copy(_EXAMPLE, folder)
    for i in range(count):
        table = spec | {"table_path": f"/data/warehouse/t{i:03d}", "metastore_table": f"t{i:03d}"}
        table["dag"] = spec["dag"] | {"dag_id": f"table_{i:03d}"}
        (folder / "specs" / f"table_{i:03d}.yaml").write_text(yaml.safe_dump(table))
    return folder


def _child(dag_file: str) -> None:
    started = time.perf_counter()
    from airflow.dag_processing.dagbag import DagBag

    imported = time.perf_counter()
    bag = DagBag(dag_file)
    parsed = time.perf_counter()
    (stat,) = bag.dagbag_stats
    print_result(
        {
            "import_airflow_s": imported - started,
            "dagbag_s": parsed - imported,
            "file_s": stat.duration.total_seconds(),
            "dags": len(bag.dags),
            "tasks": stat.task_num,
            "import_errors": len(bag.import_errors),
        }
    )


if __name__ == "__main__":
    _child(sys.argv[1])
