"""Outputs laid out for readers as the table spec says: row groups of about
``parquet.block.size``, bloom filters on the named columns only (ORC's numbered as ORC numbers
its types), page indexes; a column the layout names that a partition lacks is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.core.compaction.compactor import UnitTask, compact_task, hidden_name
from airflow_provider_fscommit.core.compaction.layout import OutputLayout
from airflow_provider_fscommit.core.compaction.plan_schema import read_plan_schema
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.formats.file_format import FileFormat

BASE = {"staging_path": "/data/staging", "checkpoint_path": "/data/ckpt", "partition_keys": "dt"}


def layout_task(
    table: Path, source: Path, layout: OutputLayout, file_format: FileFormat
) -> UnitTask:
    plan = read_plan_schema([source.as_uri()], file_format)
    return UnitTask(
        table_path=str(table),
        partition="dt=1",
        plan_id="p1",
        unit=0,
        inputs=(source.as_uri(),),
        output=f"part-0.{file_format.value}",
        codec="snappy",
        schema=plan.schema.serialize().to_pybytes(),
        int96=False,
        bytes=source.stat().st_size,
        rows=sum(plan.rows.values()),
        dictionary_columns=plan.dictionary_columns,
        format=file_format,
        layout=layout,
    )


def test_parquet_outputs_have_row_groups_of_about_the_block_size_and_the_asked_bloom_filters(
    tmp_path,
):
    rows = 200_000
    source = tmp_path / "in.parquet"
    users = [f"user-{i * 7919 % 100_003}" for i in range(rows)]
    pq.write_table(pa.table({"id": pa.array(range(rows), pa.int64()), "user": users}), source)
    spec = TableSpec.from_options(
        BASE | {"parquet.block.size": "256KB", "parquet.bloom.filter.enabled#user": "true"}
    )
    unit = layout_task(tmp_path / "t", source, OutputLayout.of(spec), FileFormat.PARQUET)
    result = compact_task(unit)[0]
    assert result.error is None and result.rows == rows and not result.copied

    metadata = pq.read_metadata(tmp_path / "t" / "dt=1" / hidden_name(unit.output))
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    sizes = [sum(g.column(c).total_compressed_size for c in range(g.num_columns)) for g in groups]
    assert len(groups) > 5  # the input is one row group of 2.4 MB
    assert all(128 * 1024 < size < 384 * 1024 for size in sizes[:-1]), sizes
    chunks = [{g.column(c).path_in_schema: g.column(c) for c in range(2)} for g in groups]
    assert all(c["user"].bloom_filter_offset and not c["id"].bloom_filter_offset for c in chunks)
    assert all(c.has_offset_index and c.has_column_index for g in chunks for c in g.values())


def orc_bloom_filter_columns(spark, path: Path) -> set[int]:
    """The ORC column ids of the first stripe's bloom filters, as the ORC Java library
    (orc-core, in pyspark's jars) reads them."""
    jvm = spark._jvm
    options = jvm.org.apache.orc.OrcFile.readerOptions(jvm.org.apache.hadoop.conf.Configuration())
    reader = jvm.org.apache.orc.OrcFile.createReader(
        jvm.org.apache.hadoop.fs.Path(str(path)), options
    )
    rows = reader.rows()
    try:
        footer = rows.readStripeFooter(reader.getStripes().get(0))
    finally:
        rows.close()
    return {
        s.getColumn() for s in footer.getStreamsList() if "BLOOM_FILTER" in s.getKind().toString()
    }


@pytest.mark.parametrize(
    ("nested", "value", "user_id"),
    [
        # ORC numbers types in pre-order from the root struct (0): id 1, s 2, x 3, y 4,
        # y's element 5, user 6.
        (pa.struct([("x", pa.int32()), ("y", pa.list_(pa.string()))]), {"x": 1, "y": ["a"]}, 6),
        # A map is itself, its key and its value (no entries struct, unlike Arrow): s 2,
        # key 3, value 4, user 5.
        (pa.map_(pa.string(), pa.int32()), [("k", 1)], 5),
    ],
    ids=["struct", "map"],
)
def test_orc_bloom_filters_are_on_the_named_columns_after_nested_ones(
    spark, tmp_path, nested, value, user_id
):
    source = tmp_path / "in.orc"
    schema = pa.schema([("id", pa.int64()), ("s", nested), ("user", pa.string())])
    table = pa.table({"id": [1, 2], "s": [value, value], "user": ["u1", "u2"]}, schema)
    po.write_table(table, source)
    spec = TableSpec.from_options(BASE | {"format": "orc", "orc.bloom.filter.columns": "user"})
    unit = layout_task(tmp_path / "t", source, OutputLayout.of(spec), FileFormat.ORC)
    result = compact_task(unit)[0]
    assert result.error is None and result.rows == 2 and not result.copied
    output = tmp_path / "t" / "dt=1" / hidden_name(unit.output)
    assert orc_bloom_filter_columns(spark, output) == {user_id}


@pytest.mark.parametrize(
    ("options", "file_format", "key"),
    [
        ({"parquet.bloom.filter.enabled#nope": "true"}, FileFormat.PARQUET, "enabled#<column>"),
        ({"format": "orc", "orc.bloom.filter.columns": "nope"}, FileFormat.ORC, "orc.bloom"),
    ],
)
def test_a_bloom_filter_on_a_column_the_partition_lacks_is_refused_naming_the_key(
    options, file_format, key
):
    layout = OutputLayout.of(TableSpec.from_options(BASE | options))
    schema = pa.schema([("id", pa.int64()), ("user", pa.string())])
    expected = (
        rf"{re.escape(key)}.* names column 'nope'.*dt=1 do not have \(their columns: id, user"
    )
    with pytest.raises(ConfigError, match=expected):
        layout.check(schema, "dt=1", file_format)
