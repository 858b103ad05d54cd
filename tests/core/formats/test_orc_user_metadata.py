"""OrcUserMetadataSink on real files: Spark writes ORC, pyarrow rewrites it through the sink,
and Spark and the ORC Java library (orc-core, in pyspark's jars) read the result back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pytest
from py4j.java_gateway import get_field

from airflow_provider_fscommit.core.errors import FsCommitError, OrcTailError, OrcUserMetadataError
from airflow_provider_fscommit.core.formats.orc_user_metadata import OrcUserMetadataSink

# Spark's ORC codec name -> pyarrow's, for each compression Spark writes that pyarrow reads.
CODECS = {
    "none": "uncompressed",
    "snappy": "snappy",
    "zlib": "zlib",
    "zstd": "zstd",
    "lz4": "lz4",
}
SPARK_VERSION = b"org.apache.spark.version"
METADATA = {SPARK_VERSION: b"4.3.0"}
# Every column type, including those Spark marks with a spark.sql.catalyst.type attribute.
COLUMNS = """id, CAST(id AS INT) AS i, CAST(id % 3 AS SMALLINT) AS s,
    CAST(id % 100 AS TINYINT) AS t,
    id % 2 = 0 AS b, CAST(id AS DOUBLE) / 3 AS d, CAST(id AS FLOAT) AS f,
    CAST(id AS DECIMAL(12, 2)) AS dec, IF(id % 5 = 0, NULL, concat('k', id)) AS str,
    CAST(concat('v', id) AS VARCHAR(10)) AS vc, CAST('ab' AS CHAR(4)) AS ch,
    CAST(CAST(id AS STRING) AS BINARY) AS bin, date_add(DATE'2026-11-20', CAST(id AS INT)) AS dt,
    TIMESTAMP'2026-11-20 03:10:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS ts,
    TIMESTAMP_NTZ'2026-11-20 03:10:00' AS ntz, INTERVAL '2-3' YEAR TO MONTH AS ym,
    INTERVAL '1 02:03:04' DAY TO SECOND AS dts, array(id, id + 1) AS arr, map('a', id) AS m,
    named_struct('x', id, 'y', concat('s', id)) AS st"""


def spark_orc(spark, directory: Path, rows: int, codec: str, **options: str) -> Path:
    writer = spark.sql(f"SELECT {COLUMNS} FROM range({rows})").coalesce(1).write
    writer.options(compression=codec, **options).orc(str(directory))
    return next(directory.glob("part-*.orc"))


@pytest.fixture(scope="module")
def spark_files(spark, tmp_path_factory) -> dict[str, Path]:
    """One small Spark file per codec, plus ``"large"``: enough rows for several stripes."""
    base = tmp_path_factory.mktemp("spark_orc")
    files = {codec: spark_orc(spark, base / codec, 100, codec) for codec in CODECS}
    files["large"] = spark_orc(spark, base / "large", 20_000, "zstd")
    return files


def rewrite(source: Path, out: Path, compression: str, **writer_options: Any) -> None:
    table = orc.ORCFile(str(source)).read()
    with (
        OrcUserMetadataSink(pa.OSFile(str(out), "wb"), METADATA) as sink,
        orc.ORCWriter(sink, compression=compression, **writer_options) as writer,
    ):
        writer.write(table)


def assert_same_in_spark(spark, out: Path, source: Path) -> None:
    expected = spark.read.orc(str(source))
    actual = spark.read.orc(str(out))
    assert actual.schema == expected.schema
    assert spark_rows(actual) == spark_rows(expected)


def spark_rows(frame) -> list[tuple[str | None, ...]]:
    """Rows in Spark's own string rendering: Python cannot collect year-month intervals."""
    columns = [f"CAST({name} AS STRING)" for name in frame.columns]
    return [tuple(row) for row in frame.orderBy("id").selectExpr(*columns).collect()]


def java_reader(spark, path: Path) -> Any:
    """The ORC Java library's reader of ``path``: what ``orc-tools meta`` prints from."""
    jvm = spark._jvm
    options = jvm.org.apache.orc.OrcFile.readerOptions(spark._jsc.hadoopConfiguration())
    return jvm.org.apache.orc.OrcFile.createReader(
        jvm.org.apache.hadoop.fs.Path(path.as_uri()), options
    )


def java_metadata(spark, reader: Any) -> list[tuple[str, str]]:
    """The Footer's user metadata items as the Java reader lists them, duplicates included."""
    utf8 = spark._jvm.java.nio.charset.StandardCharsets.UTF_8
    return [
        (key, utf8.decode(reader.getMetadataValue(key)).toString())
        for key in reader.getMetadataKeys()
    ]


def java_row_count(reader: Any) -> int:
    """Rows the Java reader decodes, reading every stripe."""
    batch = reader.getSchema().createRowBatch()
    rows = reader.rows()
    count = 0
    while rows.nextBatch(batch):
        count += get_field(batch, "size")
    rows.close()
    return count


@pytest.mark.parametrize("codec", CODECS)
def test_rewritten_file_has_sparks_user_metadata_schema_and_rows(
    spark, spark_files, tmp_path, codec
):
    source = spark_files[codec]
    out = tmp_path / "out.orc"

    rewrite(source, out, CODECS[codec])

    written = orc.ORCFile(str(out))
    assert written.metadata == METADATA
    assert written.compression == orc.ORCFile(str(source)).compression
    assert written.schema.equals(orc.ORCFile(str(source)).schema, check_metadata=True)
    assert_same_in_spark(spark, out, source)
    reader = java_reader(spark, out)
    assert java_metadata(spark, reader) == [("org.apache.spark.version", "4.3.0")]
    assert java_row_count(reader) == 100


def test_a_file_of_several_stripes_keeps_every_stripe(spark, spark_files, tmp_path):
    out = tmp_path / "out.orc"

    rewrite(spark_files["large"], out, "zstd", stripe_size=1024)

    written = orc.ORCFile(str(out))
    assert written.nstripes > 1
    assert written.metadata == METADATA
    assert_same_in_spark(spark, out, spark_files["large"])
    reader = java_reader(spark, out)
    assert reader.getStripes().size() == written.nstripes
    assert java_row_count(reader) == 20_000


@pytest.mark.parametrize("codec", CODECS)
def test_an_existing_item_is_replaced_not_duplicated(spark, spark_files, tmp_path, codec):
    # Spark's own file already has the item: pass its bytes through the sink.
    out = tmp_path / "out.orc"

    with OrcUserMetadataSink(
        pa.OSFile(str(out), "wb"), {SPARK_VERSION: b"9.9.9", b"added": b"yes"}
    ) as sink:
        sink.write(spark_files[codec].read_bytes())

    assert orc.ORCFile(str(out)).metadata == {SPARK_VERSION: b"9.9.9", b"added": b"yes"}
    assert java_metadata(spark, java_reader(spark, out)) == [
        ("org.apache.spark.version", "9.9.9"),
        ("added", "yes"),
    ]
    assert_same_in_spark(spark, out, spark_files[codec])


def test_a_footer_larger_than_the_compression_block_is_written_in_several_chunks(spark, tmp_path):
    # A 256-byte block splits Spark's footer into several compressed chunks, and the Java
    # reader rejects any chunk over the block size, so the new footer must be split too.
    source = spark_orc(
        spark,
        tmp_path / "spark",
        100,
        "zlib",
        **{"orc.compress.size": "256", "orc.buffer.size.enforce": "true"},
    )
    out = tmp_path / "out.orc"

    with OrcUserMetadataSink(pa.OSFile(str(out), "wb"), {b"added": b"x" * 1000}) as sink:
        sink.write(source.read_bytes())

    reader = java_reader(spark, out)
    postscript = reader.getFileTail().getPostscript()
    assert postscript.getCompressionBlockSize() == 256
    assert postscript.getFooterLength() > 4 * 256
    assert java_metadata(spark, reader) == [
        ("org.apache.spark.version", "4.3.0"),
        ("added", "x" * 1000),
    ]
    assert_same_in_spark(spark, out, source)


def write_in_pieces(sink: OrcUserMetadataSink, data: bytes, size: int = 16) -> None:
    for start in range(0, len(data), size):
        sink.write(data[start : start + size])


def test_a_tail_larger_than_the_window_is_an_error(spark_files, tmp_path):
    sink = OrcUserMetadataSink(pa.OSFile(str(tmp_path / "out.orc"), "wb"), METADATA, window=64)
    write_in_pieces(sink, spark_files["zlib"].read_bytes())

    with pytest.raises(OrcUserMetadataError, match="more than the 64 bytes held back") as raised:
        sink.close()

    assert isinstance(raised.value, FsCommitError)
    assert sink.closed


def test_bytes_that_are_not_orc_are_an_error(tmp_path):
    with (
        pytest.raises(OrcTailError, match="not an ORC file"),
        OrcUserMetadataSink(pa.OSFile(str(tmp_path / "out.orc"), "wb"), METADATA) as sink,
    ):
        sink.write(b"PAR1 these bytes are not an ORC file \x05")


def test_a_failed_write_leaves_the_file_without_a_tail(spark_files, tmp_path):
    out = tmp_path / "out.orc"
    data = spark_files["zlib"].read_bytes()

    with (
        pytest.raises(RuntimeError),
        OrcUserMetadataSink(pa.OSFile(str(out), "wb"), METADATA, window=1024) as sink,
    ):
        write_in_pieces(sink, data)
        raise RuntimeError("the writer failed")

    written = out.read_bytes()
    assert data.startswith(written)
    assert len(data) - 1024 - 16 < len(written) <= len(data) - 1024
    assert sink.tell() == len(data)
