"""Which format a table's staged files are in, and when the answer is refused."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.core.errors import ConfigError, FormatMismatchError
from airflow_provider_fscommit.core.formats.file_format import (
    FileFormat,
    format_of_name,
    formats_of_names,
    orc_codec_of,
    parse_format,
    partition_format,
    table_format,
)

TABLE = pa.table({"id": [1, 2]})


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("part-00000-5f0e.c000.snappy.parquet", FileFormat.PARQUET),
        ("part-00000-5f0e.c000.parquet", FileFormat.PARQUET),
        ("part-00000-5f0e.c000.zlib.orc", FileFormat.ORC),
        ("part-00000-5f0e.c000.json", FileFormat.JSON),
        ("part-00000-5f0e.c000.json.gz", FileFormat.JSON),
        ("part-00000-5f0e.c000.csv.bz2", FileFormat.CSV),
        ("part-00000-5f0e.c000.txt.snappy", FileFormat.TEXT),
        ("part-00000-5f0e.c000.txt.deflate", FileFormat.TEXT),
        ("part-00000-5f0e", None),
        (".snappy", None),
    ],
)
def test_spark_names_every_file_by_its_format_and_codec(name, expected):
    assert format_of_name(f"s3://b/staging/dt=1/{name}") == expected


def test_a_whole_sink_logs_names_are_read_at_once_and_orc_compression_from_the_name():
    paths = pa.array(["a.c000.snappy.parquet", "b.c000.csv.gz", "c.c000.txt", "d.c000.zstd.orc"])
    assert formats_of_names(paths) == set(FileFormat) - {FileFormat.JSON}
    assert orc_codec_of("x/part-0-c000.zlib.orc") == "zlib"
    assert orc_codec_of("x/part-0-c000.orc") == "uncompressed"


def test_a_status_names_the_format_or_what_is_wrong_with_it():
    orc = pa.array(["x/a.c000.snappy.orc"])
    assert table_format(orc, None) == (FileFormat.ORC, None)
    assert table_format(pa.array([], pa.string()), FileFormat.CSV) == (FileFormat.CSV, None)
    assert table_format(orc, FileFormat.PARQUET) == (
        None,
        "the table spec says parquet but the staged files are orc; nothing is published "
        "until they agree",
    )
    mixed = pa.array(["x/a.c000.snappy.orc", "x/b.c000.snappy.parquet"])
    assert table_format(mixed, None) == (None, "staged files of several formats (orc, parquet)")


def test_the_first_files_magic_bytes_decide_and_a_disagreeing_spec_is_refused(tmp_path):
    parquet = tmp_path / "part-0.c000.snappy.parquet"
    pq.write_table(TABLE, parquet)
    orc = tmp_path / "part-1.c000.orc"
    po.write_table(TABLE, orc)
    assert partition_format("dt=1", [str(parquet)], None) is FileFormat.PARQUET
    assert partition_format("dt=1", [str(orc)], FileFormat.ORC) is FileFormat.ORC
    with pytest.raises(
        FormatMismatchError,
        match=r"the table spec says format 'orc', but the staged files of partition dt=1 are "
        r"parquet \(e\.g\. .*part-0.c000.snappy.parquet\)\. Nothing was written: set format "
        r"to 'parquet'",
    ):
        partition_format("dt=1", [str(parquet)], FileFormat.ORC)
    # A file named .orc that holds Parquet is Parquet: the bytes are what readers see.
    liar = tmp_path / "part-2.c000.orc"
    liar.write_bytes(parquet.read_bytes())
    assert partition_format("dt=1", [str(liar)], None) is FileFormat.PARQUET
    # Text-like content has no magic: the name (or the spec) tells.
    lines = tmp_path / "part-3.c000.json"
    lines.write_text('{"id": 1}\n')
    assert partition_format("dt=1", [str(lines)], None) is FileFormat.JSON


def test_a_partition_of_two_formats_is_refused_with_one_file_of_each_named(tmp_path):
    with pytest.raises(
        FormatMismatchError,
        match=r"partition dt=1 holds staged files of several formats \(parquet: .*a.c000."
        r"snappy.parquet; orc: .*b.c000.orc\); a table has one format",
    ):
        partition_format("dt=1", ["/s/a.c000.snappy.parquet", "/s/b.c000.orc"], None)


def test_a_format_is_spelled_as_spark_spells_it_in_any_case():
    assert parse_format(" ORC ") is FileFormat.ORC
    with pytest.raises(ConfigError, match=r"'delta' is not a format Spark's file sink writes"):
        parse_format("delta")
