"""Did an engine keep the data? Same rows, same schema for Spark, same file-level types.

Speed means nothing if the output differs, so every engine's last output is checked:

* rows: per partition, the row count and value checksum Spark computes on the output
  equal those it computes on staging (``jobs/verify.py``);
* schema: the data schema Spark infers from the output equals staging's (a timestamp
  that comes back as ``timestamp_ntz``, or a decimal that changes precision, is named);
* Parquet: the physical and logical type of every leaf column of an output file, and
  whether Spark's own schema (footer metadata) is still there, against an input file;
  INT96 rewritten as INT64 is reported here even when Spark reads the value the same;
* ORC, the same check for ORC's footer: every column's ORC type as pyarrow maps it to
  Arrow (``timestamp`` and ``timestamp with local time zone`` differ there, as do
  decimal precisions and integer widths), with its type attributes (Spark's
  ``spark.sql.catalyst.type``, which Spark reads the column's type from), the file's
  compression, and its user metadata (``org.apache.spark.version``).

The file check's findings go under ``<format>_changes`` (``parquet_changes``,
``orc_changes``), so the results say which format's types they name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq

from airflow_provider_fscommit.core.formats.spark_metadata import SPARK_SCHEMA_KEY
from bench.measure import check, run_measured
from bench.spark import spark_env, submit_command
from bench.workloads import WorkloadInput


def verify_outputs(staged: WorkloadInput, outputs: dict[str, Path], log: Path) -> dict[str, Any]:
    """``{engine: verdict}`` for each output directory (one Spark application for all)."""
    config = {
        "staging": staged.staging,
        "format": staged.format,
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
    check_file = _FILE_CHECKS[staged.format]
    reference = Path(staged.partitions[0].files[0])
    return {
        engine: _verdict(
            expected,
            report["outputs"][engine],
            {f"{staged.format}_changes": check_file(reference, directory)},
        )
        for engine, directory in outputs.items()
    }


def _verdict(
    expected: dict[str, Any], seen: dict[str, Any], file_changes: dict[str, list[str]]
) -> dict[str, Any]:
    if "error" in seen:
        error = " ".join(seen["error"].split("\n\tat ")[0].split())
        error = error.split("org.apache.spark.SparkException: ")[-1]
        return {"ok": False, "spark_error": error, **file_changes}
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
        **file_changes,
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


def _first_output(out: Path, extension: str) -> Path | None:
    """An engine's first visible output file of the format (None: it wrote none)."""
    files = sorted(p for p in out.rglob(f"*{extension}") if not p.name.startswith((".", "_")))
    return files[0] if files else None


def _column_changes(reference: dict[str, str], seen: dict[str, str]) -> list[str]:
    """Columns whose type changed or went missing, then columns the output added."""
    changes = [
        f"{name}: {kind} -> {seen.get(name, 'missing')}"
        for name, kind in reference.items()
        if seen.get(name) != kind
    ]
    return changes + [f"{name}: added" for name in seen.keys() - reference.keys()]


def _parquet_changes(reference_file: Path, out: Path) -> list[str]:
    output = _first_output(out, ".parquet")
    if output is None:
        return ["no Parquet file written"]
    reference, seen = parquet_columns(reference_file), parquet_columns(output)
    changes = _column_changes(reference["columns"], seen["columns"])
    if reference["spark_schema"] and not seen["spark_schema"]:
        changes.append("Spark's footer schema (org.apache.spark.sql.parquet.row.metadata) dropped")
    return changes


def orc_columns(path: Path) -> dict[str, Any]:
    """Columns (Arrow type of their ORC type, type attributes), compression, user metadata."""
    orc = po.ORCFile(str(path))
    columns: dict[str, str] = {}
    for column in orc.schema:
        columns |= _orc_fields(column, "")
    metadata = {k.decode(): v.decode() for k, v in (orc.metadata or {}).items()}
    return {"columns": columns, "compression": orc.compression, "user_metadata": metadata}


def _orc_fields(field: pa.Field, prefix: str) -> dict[str, str]:
    """``{path: type}`` of the leaves below ``field``, and of any field with attributes.

    Lists and maps are walked through their Arrow child (``arr.item``, ``m.entries.key``);
    an ORC type attribute shows as ``[name=value]`` after the type, so one lost or
    changed is a changed column.
    """
    path = prefix + field.name
    attributes = "".join(
        f" [{k.decode()}={v.decode()}]" for k, v in sorted((field.metadata or {}).items())
    )
    kind = field.type
    found = {path: f"{kind}{attributes}"} if kind.num_fields == 0 or attributes else {}
    for i in range(kind.num_fields):
        found |= _orc_fields(kind.field(i), path + ".")
    return found


def _orc_changes(reference_file: Path, out: Path) -> list[str]:
    output = _first_output(out, ".orc")
    if output is None:
        return ["no ORC file written"]
    reference, seen = orc_columns(reference_file), orc_columns(output)
    changes = _column_changes(reference["columns"], seen["columns"])
    if seen["compression"] != reference["compression"]:
        changes.append(f"compression: {reference['compression']} -> {seen['compression']}")
    for key, value in reference["user_metadata"].items():
        if seen["user_metadata"].get(key) != value:
            changes.append(
                f"user metadata {key}: {value} -> {seen['user_metadata'].get(key, 'dropped')}"
            )
    return changes


_FILE_CHECKS = {"parquet": _parquet_changes, "orc": _orc_changes}
