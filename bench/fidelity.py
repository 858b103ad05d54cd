"""Did an engine keep the data? Same rows, same schema for Spark, same Parquet types.

Speed means nothing if the output differs, so every engine's last output is checked:

* rows: per partition, the row count and value checksum Spark computes on the output
  equal those it computes on staging (``jobs/verify.py``);
* schema: the data schema Spark infers from the output equals staging's (a timestamp
  that comes back as ``timestamp_ntz``, or a decimal that changes precision, is named);
* Parquet: the physical and logical type of every leaf column of an output file, and
  whether Spark's own schema (footer metadata) is still there, against an input file;
  INT96 rewritten as INT64 is reported here even when Spark reads the value the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from airflow_provider_fscommit.core.compactor import SPARK_SCHEMA_KEY
from bench.measure import check, run_measured
from bench.spark import spark_env, submit_command
from bench.workloads import WorkloadInput


def verify_outputs(staged: WorkloadInput, outputs: dict[str, Path], log: Path) -> dict[str, Any]:
    """``{engine: verdict}`` for each output directory (one Spark application for all)."""
    config = {
        "staging": staged.staging,
        "partitions": [p.path for p in staged.partitions],
        "outputs": {engine: str(directory) for engine, directory in outputs.items()},
    }
    measurement = check(
        run_measured(submit_command("verify", [json.dumps(config)]), log, env=spark_env()),
        "the verification application",
        log,
    )
    report = measurement.report()
    expected = report["staging"]
    reference = parquet_columns(Path(staged.partitions[0].files[0]))
    return {
        engine: _verdict(expected, report["outputs"][engine], reference, directory)
        for engine, directory in outputs.items()
    }


def _verdict(
    expected: dict[str, Any], seen: dict[str, Any], reference: dict[str, Any], out: Path
) -> dict[str, Any]:
    physical = _physical_changes(reference, out)
    if "error" in seen:
        error = " ".join(seen["error"].split("\n\tat ")[0].split())
        error = error.split("org.apache.spark.SparkException: ")[-1]
        return {"ok": False, "spark_error": error, "parquet_changes": physical}
    staged_rows = {p: v[0] for p, v in expected["partitions"].items()}
    seen_rows = {p: v[0] for p, v in seen["partitions"].items()}
    schema_changes = _schema_changes(expected["schema"], seen["schema"])
    rows_equal = seen_rows == staged_rows
    checksums_equal = seen["partitions"] == expected["partitions"]
    return {
        "ok": rows_equal and checksums_equal and not schema_changes,
        "rows": sum(seen_rows.values()),
        "rows_equal": rows_equal,
        "checksums_equal": checksums_equal,
        "missing_columns": seen["missing_columns"],
        "schema_changes": schema_changes,
        "parquet_changes": physical,
    }


def _schema_changes(expected: list[dict], seen: list[dict]) -> list[str]:
    """Columns whose Spark type differs, nullability aside.

    Spark reads a directory of files with every field nullable (nested ones too) but keeps
    the footer's nullability when it reads staging through the sink log, so nullability
    is not something a reader of the published table can see change.
    """
    by_name = {f["name"]: _type(f["type"]) for f in seen}
    changes = []
    for field in expected:
        before, after = _type(field["type"]), by_name.get(field["name"])
        if after is None:
            changes.append(f"{field['name']}: missing")
        elif after != before:
            changes.append(f"{field['name']}: {before} -> {after}")
    changes += [f"{name}: added" for name in by_name.keys() - {f["name"] for f in expected}]
    return changes


def _type(spark_type: Any) -> str:
    """A Spark type (as ``jsonValue``) in Spark's DDL-like short form, without nullability."""
    if isinstance(spark_type, str):
        return spark_type
    kind = spark_type["type"]
    if kind == "struct":
        inner = ",".join(f"{f['name']}:{_type(f['type'])}" for f in spark_type["fields"])
        return f"struct<{inner}>"
    if kind == "array":
        return f"array<{_type(spark_type['elementType'])}>"
    if kind == "map":
        return f"map<{_type(spark_type['keyType'])},{_type(spark_type['valueType'])}>"
    return json.dumps(spark_type)


def parquet_columns(path: Path) -> dict[str, Any]:
    """Leaf columns (``physical/logical`` type) and whether Spark's footer schema is kept."""
    metadata = pq.ParquetFile(path).metadata
    columns = {}
    for i in range(metadata.num_columns):
        column = metadata.schema.column(i)
        columns[column.path] = f"{column.physical_type}/{_logical(column)}"
    return {"columns": columns, "spark_schema": SPARK_SCHEMA_KEY in (metadata.metadata or {})}


def _logical(column: pq.ColumnSchema) -> str:
    """The logical type, shortened; a plain integer annotation counts as none (as Spark)."""
    logical = str(column.logical_type).replace(
        ", is_from_converted_type=false, force_set_converted_type=false", ""
    )
    plain = {"INT32": "Int(bitWidth=32, isSigned=true)", "INT64": "Int(bitWidth=64, isSigned=true)"}
    return "None" if plain.get(column.physical_type) == logical else logical


def _physical_changes(reference: dict[str, Any], out: Path) -> list[str]:
    files = sorted(p for p in out.rglob("*.parquet") if not p.name.startswith((".", "_")))
    if not files:
        return ["no Parquet file written"]
    seen = parquet_columns(files[0])
    changes = [
        f"{name}: {kind} -> {seen['columns'].get(name, 'missing')}"
        for name, kind in reference["columns"].items()
        if seen["columns"].get(name) != kind
    ]
    changes += [f"{name}: added" for name in seen["columns"].keys() - reference["columns"].keys()]
    if reference["spark_schema"] and not seen["spark_schema"]:
        changes.append("Spark's footer schema (org.apache.spark.sql.parquet.row.metadata) dropped")
    return changes
