"""The compaction units run on the cluster's Python and pyarrow, not the Airflow side's.

Executors import the package from the ``--py-files`` zip with whatever Python and pyarrow
the cluster's nodes have; the oldest supported is CPython 3.9 with pyarrow 15 and
``numpy<2`` (PySpark 3.5's clusters). Here such a Python, with nothing but that pyarrow,
runs the units the driver planned (pickled, as Spark ships them) on files Spark wrote
with every type family, Parquet and ORC, and Spark reads the published files back with
the schema and rows it reads from the inputs.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.compaction.compactor import UnitTask
from airflow_provider_fscommit.core.compaction.layout import OutputLayout
from airflow_provider_fscommit.core.compaction.plan_schema import read_plan_schema
from airflow_provider_fscommit.core.compaction.sort_order import SortOrder
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.jobs.launch import package_zip
from fscommit_dev.streams import typed_row, typed_schema
from tests.support.pythons import cached_venv, require_python

pytestmark = pytest.mark.slow

# (Python, its pyarrow and numpy): the floors, and the newest Python with today's pyarrow.
CLUSTERS = [("3.9", "pyarrow==15.0.0", "numpy<2"), ("3.13", "pyarrow", "numpy")]

RUNNER = """
import pickle, sys
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.jobs.floors import refusal, runtime
assert refusal("executors", runtime()) is None, runtime()
tasks = pickle.load(open(sys.argv[1], "rb"))
results = compact_units(tasks)
pickle.dump(results, open(sys.argv[2], "wb"))
"""


@pytest.fixture(scope="module", params=CLUSTERS, ids=lambda c: f"py{c[0]}-{c[1]}")
def cluster_python(request, tmp_path_factory) -> Path:
    minor, *packages = request.param
    interpreter = require_python(minor)
    return cached_venv(
        interpreter, *packages, scratch=tmp_path_factory.mktemp(f"cluster-py{minor}") / "venv"
    )


def _typed_files(spark, directory: Path, file_format: str) -> list[Path]:
    """Two files of every type family (nulls included), as a stream writes them."""
    inputs = []
    for batch, with_extra in enumerate((False, True)):
        rows = [typed_row(10 * batch + i, f"2026-11-20T0{i}:30:00Z", with_extra) for i in range(4)]
        frame = spark.createDataFrame(rows, typed_schema(with_extra)).coalesce(1)
        frame.write.format(file_format).save(str(directory / f"in{batch}"))
        inputs += sorted((directory / f"in{batch}").glob(f"part-*.{file_format}"))
    return inputs


@pytest.mark.parametrize("file_format", [FileFormat.PARQUET, FileFormat.ORC])
def test_units_run_on_the_cluster_python_and_spark_reads_them_back(
    cluster_python, spark, file_format, tmp_path
):
    """A sorted partition of two outputs, sorted on disk (its memory far too small to hold
    it), and, for Parquet, a unit with a bloom filter: pyarrow before 24 cannot write one
    and says so."""
    inputs = _typed_files(spark, tmp_path, str(file_format))
    uris = [p.as_uri() for p in inputs]
    plan = read_plan_schema(uris, file_format)
    table = tmp_path / "table"
    outputs = [f"part-{i}.c000.snappy.{file_format}" for i in range(3)]
    bloom = OutputLayout(parquet_bloom_filters=(("s", None),), orc_bloom_filter_columns=("s",))
    common = {
        "table_path": str(table),
        "partition": "dt=1",
        "plan_id": "p",
        "inputs": tuple(uris),
        "codec": "snappy",
        "schema": plan.schema.serialize().to_pybytes(),
        "int96": plan.int96,
        "format": file_format,
        "dictionary_columns": plan.dictionary_columns,
        "rows": 8,
        "bytes": sum(p.stat().st_size for p in inputs),
    }
    tasks = [
        UnitTask(
            unit=0,
            output=outputs[0],
            more_outputs=((1, outputs[1]),),
            layout=replace(bloom, sort=SortOrder(("s", "id")), sort_memory=1024),
            **common,
        ),
        UnitTask(unit=2, output=outputs[2], layout=bloom, **common),
    ]
    (tmp_path / "tasks.pickle").write_bytes(pickle.dumps(tasks))
    ran = subprocess.run(
        [str(cluster_python), "-c", RUNNER, "tasks.pickle", "results.pickle"],
        cwd=tmp_path,
        env={**_clean_env(), "PYTHONPATH": package_zip(str(tmp_path))},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    first, second, third = pickle.loads((tmp_path / "results.pickle").read_bytes())
    if file_format is FileFormat.PARQUET and _pyarrow_of(cluster_python) < (24, 0):
        assert (
            first.error == third.error and "writes Parquet bloom filters from 24.0" in first.error
        )
        return
    assert [r.error for r in (first, second, third)] == [None, None, None]
    assert (first.unit, second.unit, first.rows + second.rows, third.rows) == (0, 1, 8, 8)

    # The outputs stay hidden until the publisher renames them: read visible copies.
    visible = tmp_path / "out"
    visible.mkdir()
    for index, output in enumerate(outputs):
        (written,) = [p for p in (table / "dt=1").iterdir() if p.name.endswith(output)]
        shutil.copy(written, visible / f"{index}-{output}")
    reader = spark.read.format(str(file_format)).option("mergeSchema", "true")
    expected = reader.load([str(p) for p in inputs])
    for copies in (sorted(visible.glob("[01]-*")), sorted(visible.glob("2-*"))):
        got = reader.load([str(p) for p in copies])
        assert got.schema == expected.schema
        assert _rows(got) == _rows(expected)
    in_order = [
        (r.s, r.id)
        for copy in sorted(visible.glob("[01]-*"))
        for r in spark.read.format(str(file_format)).load(str(copy)).select("s", "id").collect()
    ]
    assert in_order == [
        (r.s, r.id) for r in expected.orderBy("s", "id").select("s", "id").collect()
    ]


def _pyarrow_of(python: Path) -> tuple[int, int]:
    version = subprocess.run(
        [str(python), "-c", "import pyarrow; print(pyarrow.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return tuple(int(part) for part in version.split(".")[:2])  # type: ignore[return-value]


def _rows(frame) -> list[str]:
    """The frame's rows as sorted JSON texts: a multiset that nulls and maps compare in."""
    return sorted(r[0] for r in frame.selectExpr("to_json(struct(*))").collect())


def _clean_env() -> dict[str, str]:
    """No trace of this environment: the cluster's Python sees only the shipped zip."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("PYSPARK")
    } | {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
