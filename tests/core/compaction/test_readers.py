"""A unit's staged inputs read in order, each failure naming its file and the way out: on
files Spark wrote, then truncated, removed or damaged."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.core.compaction import readers
from airflow_provider_fscommit.core.compaction.compactor import compact_task
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from tests.core.compaction.test_compactor import spark_file, task
from tests.core.compaction.test_compactor_orc import FAR, _task


def test_a_truncated_or_missing_input_fails_the_unit_naming_the_file(spark, tmp_path):
    good = spark_file(spark, tmp_path / "a", "SELECT 1L AS id")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(Path(good.removeprefix("file://")).read_bytes()[:40])
    unit = task(tmp_path / "t", [good, broken.as_uri()], schema_uris=[good])
    result = compact_task(unit)[0]
    assert "broken.parquet is not a readable Parquet file" in result.error
    missing = task(tmp_path / "t", [good, (tmp_path / "gone.parquet").as_uri()], [good])
    assert "gone.parquet is in the sink log but missing on disk" in compact_task(missing)[0].error


def test_a_file_whose_pages_are_damaged_is_named_though_its_footer_reads(spark, tmp_path):
    good = spark_file(spark, tmp_path / "a", "SELECT id, uuid() AS s FROM range(20000)")
    other = spark_file(spark, tmp_path / "b", "SELECT id, uuid() AS s FROM range(20000)")
    damaged = Path(other.removeprefix("file://"))
    data = bytearray(damaged.read_bytes())
    data[4 : len(data) // 2] = b"\x07" * (len(data) // 2 - 4)  # pages, not the footer
    damaged.write_bytes(bytes(data))
    unit = task(tmp_path / "t", [good, other])  # the driver reads both footers
    assert f"{damaged.name} is not a readable Parquet file" in compact_task(unit)[0].error


def test_before_pyarrow_25_the_footer_refuses_what_the_reader_would_wrap_around(
    spark, tmp_path, monkeypatch
):
    """pyarrow up to 24 reads such timestamps without an error, wrapped around; the
    compactor asks the Footer first there (here: as on such a pyarrow)."""
    monkeypatch.setattr(readers, "ORC_READER_REFUSES_FAR_TIMESTAMPS", False)
    for name in ("a", "b"):
        spark.sql(FAR).coalesce(1).write.orc(str(tmp_path / name))
    inputs = [next((tmp_path / n).glob("part-*.orc")) for n in ("a", "b")]

    merged = compact_task(_task(tmp_path / "table", inputs, 0))[0]
    assert merged.error is not None
    assert f"{inputs[0]} holds a timestamp outside 1677-09-21..2262-04-11" in merged.error
    assert "its Footer records" in merged.error
    assert not [p for p in (tmp_path / "table").rglob("*.orc") if not p.name.startswith(".")]


def _unit_inputs(tmp_path: Path) -> tuple[list[Path], readers.UnitInputs]:
    """Three Parquet inputs of 1,000 ids each, their footers read by the unit."""
    paths = [tmp_path / f"part-{n}.parquet" for n in range(3)]
    for n, path in enumerate(paths):
        pq.write_table(pa.table({"id": range(n * 1000, n * 1000 + 1000)}), path)
    sizes = [path.stat().st_size for path in paths]
    inputs = readers.UnitInputs([p.as_uri() for p in paths], sizes, FileFormat.PARQUET)
    footers: list[tuple[str, int]] = []
    inputs.read_footers(lambda uri, schema, rows, footer: footers.append((uri, rows)))
    assert footers == [(path.as_uri(), 1000) for path in paths]
    return paths, inputs


@pytest.mark.parametrize("whole_bytes", [readers._WHOLE_FILE_BYTES, 0], ids=["held", "reopened"])
def test_a_units_rows_are_read_in_order_through_the_footers_it_decoded_once(
    tmp_path, monkeypatch, whole_bytes
):
    """The footer is decoded once per input: a file whose footer is damaged after it was
    decoded still reads, whether the unit held it in memory since or opens it again with
    the footer it decoded (a file too large to read whole), and the rows come in input
    order."""
    monkeypatch.setattr(readers, "_WHOLE_FILE_BYTES", whole_bytes)
    paths, inputs = _unit_inputs(tmp_path)
    for path in paths:
        with path.open("r+b") as damaged:  # the magic bytes after the footer
            damaged.seek(-4, 2)
            damaged.write(b"XXXX")
    schema = pa.schema([("id", pa.int64())])
    rows = pa.Table.from_batches(readers.input_rows(inputs, schema), schema)
    assert rows.column("id").to_pylist() == list(range(3000))


def test_a_unit_holds_no_more_than_its_budget_whatever_the_number_of_its_inputs(
    tmp_path, monkeypatch
):
    """Past what a unit holds between footers and rows (here nothing), an input keeps
    neither its bytes nor its footer: its footer is decoded again when its rows are read,
    and the rows still come, in input order."""
    monkeypatch.setattr(readers, "_HELD_BYTES", 0)
    _, inputs = _unit_inputs(tmp_path)
    assert not inputs._held and not inputs._metadata
    schema = pa.schema([("id", pa.int64())])
    rows = pa.Table.from_batches(readers.input_rows(inputs, schema), schema)
    assert rows.column("id").to_pylist() == list(range(3000))
