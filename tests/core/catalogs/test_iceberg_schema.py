"""Spark's schema as Iceberg types, and the tables that can or cannot take the files."""

from __future__ import annotations

import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DateType, IntegerType, LongType, NestedField, StringType

from airflow_provider_fscommit.core.catalogs.iceberg_schema import (
    check_table,
    partition_record_values,
    table_schema,
)
from airflow_provider_fscommit.core.errors import IcebergError

# Spark's footer schema of a file with every type family (as the bench workloads write).
SPARK = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": False, "metadata": {}},
        {"name": "ts", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "local", "type": "timestamp_ntz", "nullable": True, "metadata": {}},
        {"name": "d", "type": "date", "nullable": True, "metadata": {}},
        {"name": "small", "type": "short", "nullable": True, "metadata": {}},
        {"name": "dec", "type": "decimal(12,3)", "nullable": True, "metadata": {}},
        {"name": "big_dec", "type": "decimal(30,6)", "nullable": True, "metadata": {}},
        {"name": "f", "type": "float", "nullable": True, "metadata": {}},
        {"name": "bin", "type": "binary", "nullable": True, "metadata": {}},
        {
            "name": "st",
            "type": {
                "type": "struct",
                "fields": [
                    {"name": "a", "type": "integer", "nullable": False, "metadata": {}},
                    {
                        "name": "tags",
                        "type": {"type": "array", "elementType": "string", "containsNull": True},
                        "nullable": False,
                        "metadata": {},
                    },
                ],
            },
            "nullable": True,
            "metadata": {},
        },
        {
            "name": "m",
            "type": {
                "type": "map",
                "keyType": "string",
                "valueType": "integer",
                "valueContainsNull": True,
            },
            "nullable": True,
            "metadata": {},
        },
    ],
}


def test_sparks_types_map_to_iceberg_exactly_with_the_keys_as_identity_partitions():
    schema, spec = table_schema(SPARK, ("dt", "hour"))
    assert [(f.name, str(f.field_type), f.required) for f in schema.fields] == [
        ("id", "long", True),
        ("ts", "timestamptz", False),  # Spark's timestamp is an instant
        ("local", "timestamp", False),  # timestamp_ntz is a wall clock
        ("d", "date", False),
        ("small", "int", False),
        ("dec", "decimal(12, 3)", False),
        ("big_dec", "decimal(30, 6)", False),
        ("f", "float", False),
        ("bin", "binary", False),
        ("st", "struct<14: a: required int, 15: tags: required list<string>>", False),
        ("m", "map<string, int>", False),
        ("dt", "string", False),
        ("hour", "string", False),
    ]
    assert [
        (f.name, str(f.transform), schema.find_column_name(f.source_id)) for f in spec.fields
    ] == [
        ("dt", "identity", "dt"),
        ("hour", "identity", "hour"),
    ]
    check_table("lake.events", schema, spec, SPARK, ("dt", "hour"))  # it takes its own files


def test_a_column_without_an_iceberg_type_or_named_as_a_key_is_refused_naming_it():
    interval = {"type": "struct", "fields": [{"name": "gap", "type": "interval day to second",
                                              "nullable": True, "metadata": {}}]}  # fmt: skip
    with pytest.raises(IcebergError, match="column 'gap' holds Spark's interval day to second"):
        table_schema(interval, ("dt",))
    with pytest.raises(IcebergError, match="a column 'd' named as a partition key"):
        table_schema(SPARK, ("d",))


def _table(*fields: NestedField, spec: PartitionSpec | None = None) -> tuple[Schema, PartitionSpec]:
    schema = Schema(*fields)
    keys = [f for f in fields if f.name in ("dt", "hour")]
    return schema, spec or PartitionSpec(
        *[
            PartitionField(f.field_id, 1000 + i, IdentityTransform(), f.name)
            for i, f in enumerate(keys)
        ]
    )


ID = NestedField(1, "id", LongType(), required=False)
DT = NestedField(2, "dt", StringType(), required=False)
HOUR = NestedField(3, "hour", IntegerType(), required=False)
ONE_COLUMN = {"type": "struct", "fields": [SPARK["fields"][1] | {"name": "id", "type": "integer"}]}


def test_an_existing_table_takes_promotions_and_refuses_what_it_cannot_read():
    schema, spec = _table(ID, DT, HOUR)
    check_table("lake.t", schema, spec, ONE_COLUMN, ("dt", "hour"))  # int files, long column
    narrow = _table(NestedField(1, "id", StringType(), required=False), DT, HOUR)
    with pytest.raises(IcebergError) as refused:
        check_table("lake.t", *narrow, ONE_COLUMN, ("dt", "hour"))
    assert str(refused.value).startswith(
        "column 'id' of Iceberg table lake.t is string, but the files hold int (Spark's integer)"
    )
    with pytest.raises(IcebergError, match=r"the files' column 'id' .* is not in Iceberg table"):
        check_table("lake.t", *_table(DT, HOUR), ONE_COLUMN, ("dt", "hour"))
    required = _table(ID, DT, HOUR, NestedField(9, "owner", StringType(), required=True))
    with pytest.raises(IcebergError, match="requires column 'owner', which the files do not"):
        check_table("lake.t", *required, ONE_COLUMN, ("dt", "hour"))
    by_day = PartitionSpec(PartitionField(2, 1000, DayTransform(), "dt_day"))
    with pytest.raises(IcebergError, match=r"partitioned by day\(dt\), but the files are"):
        check_table("lake.t", *_table(ID, DT, HOUR, spec=by_day), ONE_COLUMN, ("dt", "hour"))


def test_partition_values_from_the_path_take_the_columns_types():
    date_dt = NestedField(2, "dt", DateType(), required=False)
    schema, spec = _table(ID, date_dt, HOUR)
    assert partition_record_values(spec, schema, ("2026-11-20", "07"), "lake.t", "p") == [20777, 7]
    assert partition_record_values(spec, schema, (None, "07"), "lake.t", "p") == [None, 7]
    with pytest.raises(IcebergError, match="has hour='x7', which is not a int"):
        partition_record_values(spec, schema, ("2026-11-20", "x7"), "lake.t", "dt=…/hour=x7")
