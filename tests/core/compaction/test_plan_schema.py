"""A plan's schema, read from its inputs' footers on the driver: columns added mid-stream
merged as nullable, rows counted per file, incompatible schemas refused with files named."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.core.compaction.plan_schema import read_plan_schema
from airflow_provider_fscommit.core.errors import SchemaMismatchError
from tests.core.compaction.test_compactor import spark_file


def test_incompatible_schemas_fail_with_the_files_named(spark, tmp_path):
    one = spark_file(spark, tmp_path / "a", "SELECT 1L AS id, 1.5D AS v")
    two = spark_file(spark, tmp_path / "b", "SELECT 2L AS id, 'text' AS v")
    with pytest.raises(SchemaMismatchError, match=r"incompatible schemas.*Nothing was published"):
        read_plan_schema([one, two])


def test_a_column_some_files_lack_is_nullable_whatever_one_file_declared(tmp_path):
    required = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    grown = required.append(pa.field("extra", pa.string(), nullable=False))
    old, new = tmp_path / "old.parquet", tmp_path / "new.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3]}, required), old)
    pq.write_table(pa.table({"id": [4], "extra": ["x"]}, grown), new)
    plan = read_plan_schema([old.as_uri(), new.as_uri()])
    assert plan.schema.names == ["id", "extra"]
    assert [f.nullable for f in plan.schema] == [False, True]
    assert plan.rows == {old.as_uri(): 3, new.as_uri(): 1}
    assert plan.int96 is False
