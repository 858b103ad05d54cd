"""Merging Spark-written json, csv and text part files with every Hadoop codec Spark writes,
checked by Spark itself reading the merged file back.

Rows are lines (see ``line_files``): a CSV value quoted across a line break counts once per
line, so for CSV the expected count is Spark's row count plus the embedded line breaks.
"""

from __future__ import annotations

import bz2
import gzip
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from airflow_provider_fscommit.core.errors import (
    FsCommitError,
    HeaderMismatchError,
    LineFileError,
    UnreadableLineFileError,
)
from airflow_provider_fscommit.core.formats.line_files import LINE_CODECS, codec_of, merge_lines

CODECS = list(LINE_CODECS)
EMBEDDED_NEWLINE = "two\nlines"
RECORDS = [
    (1, "naïve ☃ 日本", "plain"),
    (2, "comma, inside", 'a "quoted" word'),
    (3, "ünïcödé", EMBEDDED_NEWLINE),
    (4, "x", '"starts with a quote'),
    (5, "back\\slash", "tab\there"),
    (6, "emoji 🎉", "semi;colon"),
    (7, "y", "z"),
    (8, "last, one", "end"),
]
TABLE_SCHEMA = "id INT, s STRING, t STRING"
# Each case: how Spark writes and reads it, and the line breaks inside its values.
FORMATS: dict[str, dict[str, Any]] = {
    "json": {"format": "json", "options": {}, "schema": TABLE_SCHEMA, "breaks": 0},
    "csv": {
        "format": "csv",
        "options": {"multiLine": "true"},
        "schema": TABLE_SCHEMA,
        "breaks": 1,
    },
    "csv_header": {
        "format": "csv",
        "options": {"multiLine": "true", "header": "true"},
        "schema": TABLE_SCHEMA,
        "breaks": 1,
    },
    "text": {"format": "text", "options": {}, "schema": "value STRING", "breaks": 0},
}
EXTENSIONS = {"json": ".json", "csv": ".csv", "text": ".txt"}


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory) -> Callable[[str, str], tuple[list[Path], Any]]:
    """``written(case, codec)``: the part files of the case's DataFrame written by Spark
    with that codec (three partitions), and the DataFrame; each written once per module."""
    base = tmp_path_factory.mktemp("spark")
    cache: dict[tuple[str, str], tuple[list[Path], Any]] = {}

    def write(case: str, codec: str) -> tuple[list[Path], Any]:
        if (case, codec) not in cache:
            spec = FORMATS[case]
            if spec["format"] == "text":
                rows = [(f"{s} | {t}".replace("\n", " "),) for _, s, t in RECORDS]
            else:
                rows = RECORDS
            df = spark.createDataFrame(rows, spec["schema"]).repartition(3)
            out = base / f"{case}-{codec}"
            df.write.format(spec["format"]).options(**spec["options"]).option(
                "compression", codec
            ).save(str(out))
            cache[case, codec] = (sorted(out.glob("part-*")), df)
        return cache[case, codec]

    return write


def _read(spark, case: str, path: Path) -> list[tuple]:
    spec = FORMATS[case]
    reader = spark.read.format(spec["format"]).options(**spec["options"]).schema(spec["schema"])
    return sorted(tuple(row) for row in reader.load(str(path)).collect())


def _merge(files: list[Path], target_dir: Path, codec: str, header: bool) -> tuple[Path, int]:
    """Merge ``files`` into ``target_dir`` under the first file's name; the row count."""
    target_dir.mkdir()
    target = target_dir / files[0].name
    sources = [pa.OSFile(str(path)) for path in files]
    try:
        with pa.OSFile(str(target), "wb") as sink:
            rows = merge_lines(
                ((str(path), source) for path, source in zip(files, sources, strict=True)),
                sink,
                codec,
                header,
            )
    finally:
        for source in sources:
            source.close()
    return target, rows


def _encode(codec: str, data: bytes) -> bytes:
    """``data`` as one Hadoop ``codec`` file, written independently of the module under test
    (one lz4/snappy block of one chunk, as Hadoop writes a short file)."""
    if codec == "gzip":
        return gzip.compress(data)
    if codec == "bzip2":
        return bz2.compress(data)
    if codec == "deflate":
        return zlib.compress(data)
    if codec in ("lz4", "snappy"):
        chunk = pa.Codec("lz4_raw" if codec == "lz4" else "snappy").compress(data, asbytes=True)
        return struct.pack(">ii", len(data), len(chunk)) + chunk
    return data


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("case", list(FORMATS))
def test_merged_file_reads_back_as_the_same_rows(spark, written, tmp_path, case, codec):
    files, df = written(case, codec)
    assert len(files) == 3
    header = FORMATS[case]["options"].get("header") == "true"

    merged, rows = _merge(files, tmp_path / "merged", codec, header)

    assert merged.name.endswith(EXTENSIONS[FORMATS[case]["format"]] + LINE_CODECS[codec])
    assert _read(spark, case, merged.parent) == sorted(tuple(row) for row in df.collect())
    assert _read(spark, case, files[0].parent) == _read(spark, case, merged.parent)
    # Rows are lines: a CSV value quoted across a line break counts once per line.
    assert rows == df.count() + FORMATS[case]["breaks"]
    # Spark ends every file with a newline: without headers the merge is a plain copy.
    inputs = [path.read_bytes() for path in files]
    if header:
        assert merged.read_bytes().startswith(inputs[0])
    else:
        assert merged.read_bytes() == b"".join(inputs)


@pytest.mark.parametrize("codec", CODECS)
def test_an_input_without_a_final_newline_gets_one(spark, tmp_path, codec):
    lines = [f'{{"id":{i},"s":"ä {i}","t":"t"}}' for i in range(6)]
    ext = ".json" + LINE_CODECS[codec]
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    # The first two files lack a final newline; the second one's last line is then merged
    # with nothing if no newline is added after it.
    contents = ["\n".join(lines[:2]), "\n".join(lines[2:4]), "\n".join(lines[4:]) + "\n"]
    files = []
    for number, content in enumerate(contents):
        path = inputs / f"part-0000{number}-u.c000{ext}"
        path.write_bytes(_encode(codec, content.encode()))
        files.append(path)
    assert len(_read(spark, "json", inputs)) == 6

    merged, rows = _merge(files, tmp_path / "merged", codec, header=False)

    assert rows == 6
    assert _read(spark, "json", merged.parent) == _read(spark, "json", inputs)


@pytest.mark.parametrize("codec", CODECS)
def test_empty_inputs_contribute_nothing(spark, written, tmp_path, codec):
    files, df = written("json", codec)
    # What Spark writes for a partition without rows: for lz4 and snappy an end-of-stream
    # marker that, copied into the middle, would hide every later row from Hadoop.
    empty_dir = tmp_path / "spark-empty"
    spark.createDataFrame([], TABLE_SCHEMA).write.option("compression", codec).json(str(empty_dir))
    (spark_empty,) = empty_dir.glob("part-*")
    zero_bytes = tmp_path / f"part-00009-u.c000.json{LINE_CODECS[codec]}"
    zero_bytes.write_bytes(b"")

    merged, rows = _merge(
        [zero_bytes, files[0], spark_empty, files[1], zero_bytes, files[2], spark_empty],
        tmp_path / "merged",
        codec,
        header=False,
    )

    assert rows == df.count()
    assert _read(spark, "json", merged.parent) == sorted(tuple(row) for row in df.collect())
    assert merged.read_bytes() == b"".join(path.read_bytes() for path in files)
    assert _merge([spark_empty], tmp_path / "alone", codec, header=False)[1] == 0


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4"])
def test_a_different_header_is_refused_naming_both_files(spark, written, tmp_path, codec):
    files, _df = written("csv_header", codec)
    other_dir = tmp_path / "other"
    other_df = spark.createDataFrame([(1, "a")], "id INT, other STRING").coalesce(1)
    other_df.write.option("header", "true").option("compression", codec).csv(str(other_dir))
    (other,) = other_dir.glob("part-*")

    with pytest.raises(HeaderMismatchError) as raised:
        _merge([files[0], files[1], other], tmp_path / "merged", codec, header=True)

    assert isinstance(raised.value, FsCommitError)
    assert str(files[0]) in str(raised.value)
    assert str(other) in str(raised.value)
    assert "id,other" in str(raised.value)


@pytest.mark.parametrize(
    ("codec", "damage"),
    [
        ("gzip", lambda data: data[:10] + bytes(b ^ 0xFF for b in data[10:30]) + data[30:]),
        ("gzip", lambda data: data[: len(data) // 2]),
        ("gzip", lambda data: data + b"trailing garbage"),
        ("bzip2", lambda data: data[:20] + b"\0" * 20 + data[40:]),
        ("deflate", lambda data: data[:-3]),
        ("lz4", lambda data: data[:-5]),
        ("snappy", lambda data: data[:8] + b"\xff" * 8 + data[16:]),
    ],
    ids=["gzip-flipped", "gzip-truncated", "gzip-trailing", "bzip2", "deflate", "lz4", "snappy"],
)
def test_an_undecodable_input_is_named(written, tmp_path, codec, damage):
    files, _df = written("json", codec)
    corrupt = tmp_path / files[1].name
    corrupt.write_bytes(damage(files[1].read_bytes()))

    with pytest.raises(UnreadableLineFileError) as raised:
        _merge([files[0], corrupt, files[2]], tmp_path / "merged", codec, header=False)

    assert raised.value.uri == str(corrupt)
    assert str(corrupt) in str(raised.value)


@pytest.mark.parametrize("codec", ["lz4", "snappy"])
def test_a_line_longer_than_a_hadoop_block(spark, tmp_path, codec):
    # Hadoop compresses a write larger than its buffer as one block of several chunks.
    values = ["y" * 600_000, "short", "é" * 300_000, "end"]
    df = spark.createDataFrame([(v,) for v in values], "value STRING").repartition(2)
    df.write.option("compression", codec).text(str(tmp_path / "in"))
    files = sorted((tmp_path / "in").glob("part-*"))

    merged, rows = _merge(files, tmp_path / "merged", codec, header=False)

    assert rows == 4
    assert _read(spark, "text", merged.parent) == sorted((v,) for v in values)


def test_codec_of_names():
    assert codec_of("part-00000-u.c000.json") == "none"
    assert codec_of("part-00000-u.c000.csv.gz") == "gzip"
    assert codec_of("part-00000-u.c000.txt.bz2") == "bzip2"
    assert codec_of("part-00000-u.c000.json.deflate") == "deflate"
    assert codec_of("part-00000-u.c000.csv.lz4") == "lz4"
    assert codec_of("part-00000-u.c000.txt.snappy") == "snappy"
    for name in ("part-00000-u.c000.json.zst", "part-00000-u.c000.parquet", "x.gz"):
        with pytest.raises(LineFileError, match="not named like"):
            codec_of(name)
