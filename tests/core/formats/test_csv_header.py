"""CSV written with and without ``header=true`` by real streams, every Hadoop codec: what
Spark reads of the published table is exactly what it reads of staging, or the run refuses
with one message and writes nothing.

Without ``csv.header`` the files are looked at (``core/formats/csv_header``): a header
stream is refused naming the option, a headerless one is published as plain lines.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import CsvHeaderError
from airflow_provider_fscommit.core.formats.line_files import LINE_CODECS
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from fscommit_dev.streams import StreamingTable, row
from fscommit_dev.tables import hourly_table

DAY = "2026-11-20"
HOURS = (f"dt={DAY}/hour=00", f"dt={DAY}/hour=01")
SCHEMA = "id LONG, ts TIMESTAMP, k STRING, v DOUBLE, dt STRING, hour STRING"


@pytest.fixture(scope="module")
def csv_stream(spark, tmp_path_factory) -> Callable[[str, bool], StreamingTable]:
    """``csv_stream(codec, header)``: a real query's CSV sink, hours 00 and 01 in three
    batches each (three files per hour), then two of hour 03 moving the watermark past both."""
    streams: dict[tuple[str, bool], StreamingTable] = {}

    def stream(codec: str, header: bool) -> StreamingTable:
        if (codec, header) not in streams:
            table = StreamingTable(
                tmp_path_factory.mktemp(f"csv-{codec}-{header}"),
                file_format="csv",
                sink_options={"header": str(header).lower(), "compression": codec},
            )
            table.add_batches(
                *(
                    [
                        row(10 * b + h, f"{DAY}T0{h}:{10 * b:02d}:00Z", k=f'k,{b} "q" ✓')
                        for h in (0, 1)
                    ]
                    for b in range(3)
                ),
                [row(98, f"{DAY}T03:10:00Z")],
                [row(99, f"{DAY}T03:20:00Z")],  # runs with the watermark at 02:40
            )
            table.run(spark)
            streams[codec, header] = table
        return streams[codec, header]

    return stream


def spec_of(stream: StreamingTable, table: Path, **extra) -> TableSpec:
    return TableSpec.from_options(
        hourly_table(stream.staging, stream.checkpoint, table_path=str(table), **extra)
    )


def run(spec: TableSpec) -> dict[str, str]:
    summary = CompactionPublisher(spec).run(compact_units)
    return {o.partition: o.state for o in summary.outcomes}


def read(spark, path: str, header: bool):
    return spark.read.schema(SCHEMA).options(header=str(header).lower()).csv(path)


def assert_published_exactly(spark, stream: StreamingTable, table: Path, header: bool) -> None:
    staged = read(spark, stream.staging, header).where("hour in ('00', '01')")
    published = read(spark, str(table), header)
    assert published.count() == staged.count() == 6
    assert published.exceptAll(staged).count() == 0 and staged.exceptAll(published).count() == 0
    for hour in HOURS:  # one merged file per hour, from three
        assert (
            len(data_files(table / hour)) == 1 and len(data_files(Path(stream.staging, hour))) == 3
        )


def data_files(directory: Path) -> list[Path]:
    if not directory.exists():
        return []
    return [p for p in directory.iterdir() if p.is_file() and not p.name.startswith((".", "_"))]


@pytest.mark.parametrize("codec", list(LINE_CODECS))
def test_files_with_a_header_and_no_csv_header_are_refused_then_published_once_it_is_set(
    spark, csv_stream, tmp_path, codec
):
    stream = csv_stream(codec, True)
    table = tmp_path / "table"
    with pytest.raises(CsvHeaderError) as error:
        run(spec_of(stream, table))
    message = str(error.value)
    assert (
        "the 3 CSV files of partition dt=2026-11-20/hour=00 all begin with the same line" in message
    )
    assert "('id,ts,k,v')" in message and "csv.header is not set" in message
    assert "Set csv.header: true" in message and "csv.header: false if that line is data" in message
    for hour in HOURS:  # nothing written: no plan, no file
        assert data_files(table / hour) == [] and CommitLedger(str(table)).read(hour).plans == {}

    assert run(spec_of(stream, table, **{"csv.header": "true"})) == dict.fromkeys(
        HOURS, "published"
    )
    assert_published_exactly(spark, stream, table, header=True)


@pytest.mark.parametrize("codec", list(LINE_CODECS))
def test_files_without_a_header_are_published_as_lines_with_csv_header_unset(
    spark, csv_stream, tmp_path, codec
):
    stream = csv_stream(codec, False)
    table = tmp_path / "table"
    assert run(spec_of(stream, table)) == dict.fromkeys(HOURS, "published")
    assert_published_exactly(spark, stream, table, header=False)


def test_csv_header_false_is_followed_and_a_contradiction_is_named_in_the_log(
    spark, csv_stream, tmp_path, caplog
):
    """false is the answer for a line that is data yet begins every file: followed, and
    where the files look like a header stream the log names the option."""
    stream = csv_stream("gzip", True)
    table = tmp_path / "table"
    with caplog.at_level(logging.WARNING, logger="airflow_provider_fscommit"):
        assert run(spec_of(stream, table, **{"csv.header": "false"})) == dict.fromkeys(
            HOURS, "published"
        )
    (warning,) = {
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "hour=00" in r.getMessage()
    }
    assert "csv.header is false, but the 3 CSV files of partition dt=2026-11-20/hour=00" in warning
    assert "'id,ts,k,v'" in warning and "set csv.header: true" in warning
    # As told: the header lines are rows, three per hour (and Spark reading without a
    # header sees exactly what it sees in staging).
    published = read(spark, str(table), header=False)
    assert published.where("id is null").count() == 6
    staged = read(spark, stream.staging, header=False).where("hour in ('00', '01')")
    assert published.exceptAll(staged).count() == 0 and staged.exceptAll(published).count() == 0
