"""The Iceberg table a stream's files go into: its schema and partition spec.

Spark's file sink writes its schema into every Parquet footer
(``org.apache.spark.sql.parquet.row.metadata``): that schema, not the Parquet one, says
what a column *is* (an INT96 column is Spark's ``timestamp``, an INT64 micros column may
be ``timestamp_ntz``), so it is what maps to Iceberg types, one for one: ``timestamp`` is
``timestamptz`` and ``timestamp_ntz`` is ``timestamp``, decimals keep precision and
scale, structs, arrays and maps nest. The partition keys live in the directory names (the
files do not hold them), so the table has them as string columns after the data columns,
with identity partitioning, and every file's partition values come from its path.

An existing table must take the files as they are: every column of the files by name,
with the type this mapping gives (or an Iceberg promotion of it: int to long, float to
double, a wider decimal), every required table column present in the files, and an
identity partition field on each key, in order, and nothing else. Anything else is refused
naming the column or field, before anything is committed.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from datetime import date
from functools import cache
from typing import TYPE_CHECKING, Any

from airflow_provider_fscommit.core.errors import IcebergError
from airflow_provider_fscommit.core.formats.spark_metadata import SPARK_SCHEMA_KEY

if TYPE_CHECKING:  # pyiceberg is the iceberg extra's: imported where it is used
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.types import IcebergType


@cache
def _simple() -> dict[str, IcebergType]:
    """Spark's primitive type names as Iceberg types."""
    from pyiceberg import types as t

    return {
        "boolean": t.BooleanType(),
        "byte": t.IntegerType(),
        "short": t.IntegerType(),
        "integer": t.IntegerType(),
        "long": t.LongType(),
        "float": t.FloatType(),
        "double": t.DoubleType(),
        "string": t.StringType(),
        "binary": t.BinaryType(),
        "date": t.DateType(),
        "timestamp": t.TimestamptzType(),
        "timestamp_ntz": t.TimestampType(),
    }


# The first partition field id Iceberg assigns (PARTITION_DATA_ID_START).
_FIRST_PARTITION_FIELD_ID = 1000


def spark_schema(metadata: dict[bytes, bytes] | None, where: str) -> dict[str, Any]:
    """Spark's schema of a Parquet file from its footer's key-value metadata."""
    raw = (metadata or {}).get(SPARK_SCHEMA_KEY)
    if raw is None:
        raise IcebergError(
            f"{where} has no Spark schema in its footer ({SPARK_SCHEMA_KEY.decode()}); the iceberg "
            "policy maps Spark's types and commits files Spark's file sink wrote"
        )
    return json.loads(raw)


def table_schema(spark: dict[str, Any], keys: Sequence[str]) -> tuple[Schema, PartitionSpec]:
    """A new table's schema (fresh field ids) and identity partition spec on ``keys``."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import NestedField, StringType

    ids = itertools.count(1)
    top = [(f["name"], f["type"], f.get("nullable", True)) for f in spark["fields"]]
    clash = [name for name, _, _ in top if name in keys]
    if clash:
        raise IcebergError(
            f"the files hold a column {clash[0]!r} named as a partition key; a partitioned "
            "file sink keeps the keys in the directory names only"
        )
    first = [next(ids) for _ in top]  # top-level ids first, as Iceberg numbers them
    key_ids = [next(ids) for _ in keys]
    fields = [
        NestedField(i, name, _iceberg_type(kind, ids, name), required=not nullable)
        for i, (name, kind, nullable) in zip(first, top, strict=True)
    ]
    fields += [
        NestedField(i, key, StringType(), required=False)
        for i, key in zip(key_ids, keys, strict=True)
    ]
    partition_fields = [
        PartitionField(i, _FIRST_PARTITION_FIELD_ID + n, IdentityTransform(), key)
        for n, (i, key) in enumerate(zip(key_ids, keys, strict=True))
    ]
    return Schema(*fields), PartitionSpec(*partition_fields)


def added_columns(schema: Schema, spark: dict[str, Any]) -> list[tuple[str, IcebergType]]:
    """The top-level columns of the files that the table lacks (a column the stream added),
    with their Iceberg types, in the files' order."""
    ids = itertools.count(1)  # placeholders: the schema update assigns the table's ids
    held = {f.name for f in schema.fields}
    return [
        (c["name"], _iceberg_type(c["type"], ids, c["name"]))
        for c in spark["fields"]
        if c["name"] not in held
    ]


def check_table(
    name: str, schema: Schema, spec: PartitionSpec, spark: dict[str, Any], keys: Sequence[str]
) -> None:
    """Refuse a table that cannot take files of Spark schema ``spark`` partitioned by
    ``keys`` (see the module's doc), naming the column or field."""
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DateType, IntegerType, LongType, StringType

    fields = [schema.find_field(f.source_id) for f in spec.fields]
    identity = all(isinstance(f.transform, IdentityTransform) for f in spec.fields)
    if [f.name for f in fields] != list(keys) or not identity:
        shown = ", ".join(f"{f.transform}({schema.find_column_name(f.source_id)})"
                          for f in spec.fields) or "unpartitioned"  # fmt: skip
        raise IcebergError(
            f"Iceberg table {name} is partitioned by {shown}, but the files are partitioned "
            f"by {', '.join(keys)} in their paths; the iceberg policy needs identity "
            "partitioning on exactly those columns, in that order"
        )
    for field in fields:
        if not isinstance(field.field_type, (StringType, IntegerType, LongType, DateType)):
            raise IcebergError(
                f"partition column {field.name!r} of Iceberg table {name} is "
                f"{field.field_type}; a value from a directory name goes into string, int, "
                "long or date columns"
            )
    ids = itertools.count(1)
    present = set(keys)
    for column in spark["fields"]:
        column_name = column["name"]
        present.add(column_name)
        wanted = _iceberg_type(column["type"], ids, column_name)
        try:
            held = schema.find_field(column_name)
        except ValueError:
            raise IcebergError(
                f"the files' column {column_name!r} ({wanted}) is not in Iceberg table "
                f"{name}; add it to the table (ALTER TABLE … ADD COLUMN) before committing"
            ) from None
        if not _takes(held.field_type, wanted):
            raise IcebergError(
                f"column {column_name!r} of Iceberg table {name} is {held.field_type}, but "
                f"the files hold {wanted} (Spark's {_shown(column['type'])}); the files "
                "are registered as they are, so the table's type must be that one"
            )
        if held.required and column.get("nullable", True):
            raise IcebergError(
                f"column {column_name!r} of Iceberg table {name} is required, but the "
                "files' column is nullable; make the table's column optional"
            )
    missing = [f.name for f in schema.fields if f.required and f.name not in present]
    if missing:
        raise IcebergError(
            f"Iceberg table {name} requires column {missing[0]!r}, which the files do not "
            "have; make it optional"
        )


def partition_record_values(
    spec: PartitionSpec, schema: Schema, values: Sequence[str | None], name: str, path: str
) -> list[Any]:
    """A partition's values from its path, in the types of the table's partition columns."""
    converted = []
    for field, value in zip(spec.fields, values, strict=True):
        kind = schema.find_field(field.source_id).field_type
        try:
            converted.append(_from_path(kind, value))
        except ValueError:
            raise IcebergError(
                f"partition {path} has {field.name}={value!r}, which is not a {kind} as "
                f"column {field.name!r} of Iceberg table {name} is; make the column a string"
            ) from None
    return converted


def _from_path(kind: IcebergType, value: str | None) -> Any:
    from pyiceberg.types import DateType, StringType

    if value is None or isinstance(kind, StringType):
        return value
    if isinstance(kind, DateType):
        return (date.fromisoformat(value) - date(1970, 1, 1)).days
    return int(value)


def _iceberg_type(kind: Any, ids: Iterator[int], column: str) -> IcebergType:
    """Spark's JSON type as an Iceberg type; nested field ids drawn from ``ids``."""
    from pyiceberg.types import DecimalType, ListType, MapType, NestedField, StructType

    if isinstance(kind, str):
        if kind in _simple():
            return _simple()[kind]
        if kind.startswith("decimal(") and kind.endswith(")"):
            precision, scale = kind[len("decimal(") : -1].split(",")
            return DecimalType(int(precision), int(scale))
    elif kind.get("type") == "struct":
        nested = [(f, next(ids)) for f in kind["fields"]]
        return StructType(
            *[
                NestedField(
                    i, f["name"], _iceberg_type(f["type"], ids, column), required=not f["nullable"]
                )
                for f, i in nested
            ]
        )
    elif kind.get("type") == "array":
        element_id = next(ids)
        return ListType(
            element_id,
            _iceberg_type(kind["elementType"], ids, column),
            element_required=not kind["containsNull"],
        )
    elif kind.get("type") == "map":
        key_id, value_id = next(ids), next(ids)
        return MapType(
            key_id,
            _iceberg_type(kind["keyType"], ids, column),
            value_id,
            _iceberg_type(kind["valueType"], ids, column),
            value_required=not kind["valueContainsNull"],
        )
    raise IcebergError(
        f"column {column!r} holds Spark's {_shown(kind)}, which has no Iceberg type "
        "(intervals, variants and user-defined types have none); leave it out of the "
        "stream's files"
    )


def _takes(held: IcebergType, wanted: IcebergType) -> bool:
    """Whether a table column of type ``held`` reads file values of type ``wanted``
    (nested types compared by names and shape, not by field ids)."""
    from pyiceberg.types import (
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        ListType,
        LongType,
        MapType,
        StructType,
    )

    if isinstance(held, StructType) and isinstance(wanted, StructType):
        ours = {f.name: f for f in held.fields}
        return all(
            f.name in ours
            and _takes(ours[f.name].field_type, f.field_type)
            and not (ours[f.name].required and not f.required)
            for f in wanted.fields
        ) and all(
            not f.required for f in held.fields if f.name not in {w.name for w in wanted.fields}
        )
    if isinstance(held, ListType) and isinstance(wanted, ListType):
        return _takes(held.element_type, wanted.element_type) and not (
            held.element_required and not wanted.element_required
        )
    if isinstance(held, MapType) and isinstance(wanted, MapType):
        return (
            _takes(held.key_type, wanted.key_type)
            and _takes(held.value_type, wanted.value_type)
            and not (held.value_required and not wanted.value_required)
        )
    if isinstance(held, DecimalType) and isinstance(wanted, DecimalType):
        return held.scale == wanted.scale and held.precision >= wanted.precision
    promotions = {(IntegerType(), LongType()), (FloatType(), DoubleType())}  # Iceberg's
    return held == wanted or (wanted, held) in promotions


def _shown(kind: Any) -> str:
    return kind if isinstance(kind, str) else str(kind.get("type"))
