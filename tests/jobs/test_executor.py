"""A Python worker that runs the compaction's Spark tasks imports the compactor and none of
the driver's modules: it starts cold on every spark-submit application and after a minute
idle on a Connect server, and compiles what it imports from the shipped zip each time.

Here a fresh interpreter, with nothing but the zip that executors get, loads the task
functions as Spark ships them (pickled by reference), runs a sorted unit through the
Connect task function on real Parquet files, and says what it imported.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compaction.compactor import UnitTask
from airflow_provider_fscommit.core.compaction.layout import OutputLayout
from airflow_provider_fscommit.core.compaction.sort_order import SortOrder
from airflow_provider_fscommit.jobs.executor import report_partition, run_group, run_payload
from airflow_provider_fscommit.jobs.launch import package_zip

PACKAGE = "airflow_provider_fscommit"

WORKER = """
import json, pickle, sys
import pyarrow as pa
run_group, job, warm_up = pickle.load(open(sys.argv[1], "rb"))
(out,) = job(iter([pa.RecordBatch.from_pydict({"id": [0]})]))
(results,) = pickle.loads(out.column(0)[0].as_py())
loaded = sorted(m for m in sys.modules if m.startswith("airflow_provider_fscommit"))
origin = sys.modules["airflow_provider_fscommit.jobs.executor"].__file__
print(json.dumps({"rows": results.rows, "error": results.error, "modules": loaded,
                  "origin": origin}))
"""

COMPACTOR_ALONE = """
import json, sys
import airflow_provider_fscommit.core.compaction.compactor
print(json.dumps(sorted(m for m in sys.modules if m.startswith("airflow_provider_fscommit"))))
"""


def test_a_cold_worker_imports_the_compactor_and_none_of_the_drivers_modules(tmp_path):
    inputs = []
    for index in range(2):
        path = tmp_path / "staging" / f"part-{index}.parquet"
        path.parent.mkdir(exist_ok=True)
        pq.write_table(pa.table({"s": ["b", "a", None], "id": [index, index + 2, 7]}), path)
        inputs.append(path.as_uri())
    task = UnitTask(
        table_path=str(tmp_path / "table"),
        partition="dt=1",
        plan_id="p",
        unit=0,
        inputs=tuple(inputs),
        output="part-0.parquet",
        codec="snappy",
        layout=OutputLayout(sort=SortOrder(("s", "id"))),
        whole=True,
    )
    job = functools.partial(run_payload, pickle.dumps([[task]]))
    (tmp_path / "functions.pickle").write_bytes(pickle.dumps((run_group, job, report_partition)))
    zipped = package_zip(str(tmp_path))

    worker = json.loads(_fresh_python(WORKER, tmp_path, zipped, "functions.pickle"))
    compactor = json.loads(_fresh_python(COMPACTOR_ALONE, tmp_path, zipped))

    assert (worker["rows"], worker["error"]) == (6, None)
    assert worker["origin"].startswith(zipped)
    beyond_the_compactor = set(worker["modules"]) - set(compactor)
    assert beyond_the_compactor == {f"{PACKAGE}.jobs", f"{PACKAGE}.jobs.executor"}


def _fresh_python(code: str, cwd: Path, zipped: str, *args: str) -> str:
    """``code``'s output in a new interpreter whose only way to the package is ``zipped``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    ran = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {zipped!r})\n{code}", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    return ran.stdout
