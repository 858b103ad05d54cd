"""Every format Spark's file sink writes, from a real stream to a published table.

Each stream is a real query writing ORC, JSON, CSV (with a header) or text, several
batches per hour, late rows, and a run SIGKILLed mid-batch that leaves orphans. What
Spark reads of the published partitions must be what Spark reads of staging through the
sink log (``spark.read`` of a file sink's directory lists exactly the logged files).
"""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow.orc as po
import pytest
from pyspark.sql import functions as F

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from fscommit_dev.metastore.client import hive_sql, thrift_client
from fscommit_dev.s3_tables import place_on_s3
from fscommit_dev.streams import StreamingTable, TypedTable, killed_mid_batch, row, spark_env
from fscommit_dev.tables import status_args
from tests.support.compaction import FSCOMMIT, commit, compact
from tests.support.orc_streams import BLOOM_FILTER_KINDS, ROW_INDEX, stripe_streams

pytestmark = pytest.mark.slow

DAY = "2026-11-20"


@dataclass(frozen=True)
class Sink:
    """A sink format with its writer options and how Spark reads it back."""

    file_format: str
    options: dict[str, str]
    extension: str  # of the published files
    flags: tuple[str, ...] = ()  # what the table spec says of it

    def read(self, spark, *paths: str):
        reader = spark.read.format(self.file_format).options(**self.options)
        if self.file_format in ("json", "csv"):
            reader = reader.schema(
                "id LONG, ts TIMESTAMP, k STRING, v DOUBLE, dt STRING, hour STRING"
            )
        df = reader.load(*paths)
        if self.file_format == "text":  # the row as JSON in one column, partitions beside
            fields = F.from_json("value", "id LONG, ts TIMESTAMP, k STRING, v DOUBLE")
            df = df.select(fields.alias("r"), "dt", "hour").select("r.*", "dt", "hour")
        return df


SINKS = {
    "orc": Sink("orc", {}, ".zstd.orc"),  # Spark 4 writes zstd ORC by default
    "json-gzip": Sink("json", {"compression": "gzip"}, ".json.gz"),
    "csv-header-bzip2": Sink(
        "csv", {"header": "true", "compression": "bzip2"}, ".csv.bz2", ("--csv-header", "true")
    ),
    "text": Sink("text", {}, ".txt"),
}


@pytest.fixture(scope="module", params=list(SINKS))
def sink_stream(request, tmp_path_factory) -> tuple[Sink, StreamingTable]:
    """Hours 00 and 01 in several batches, late rows for hour 00, a killed hour-02 batch.

    The watermark ends at 02:29: hours 00 and 01 are committable, 02 and 03 are not.
    """
    sink = SINKS[request.param]
    table = StreamingTable(
        tmp_path_factory.mktemp(request.param),
        blockable=True,
        file_format=sink.file_format,
        sink_options=sink.options,
    )
    table.add_batches(
        [row(i, f"{DAY}T00:{5 * i:02d}:00Z", k=f'k,{i} "q" ✓') for i in range(4)],
        [row(10 + i, f"{DAY}T00:{30 + 5 * i:02d}:00Z") for i in range(3)],
        [row(20 + i, f"{DAY}T01:{10 * i:02d}:00Z") for i in range(3)],
        [row(30, f"{DAY}T01:40:00Z"), row(31, f"{DAY}T00:15:00Z")],  # 31 is late
        [row(40, f"{DAY}T00:50:00Z"), row(41, f"{DAY}T01:55:00Z")],  # 40 is late
    )
    return sink, killed_mid_batch(table, [row(50, f"{DAY}T03:10:00Z")])  # runs with 02:29


def _ids(df) -> dict[tuple, Counter]:
    out: dict[tuple, Counter] = {}
    for r in df.select("dt", "hour", "id").collect():
        out.setdefault((r["dt"], r["hour"]), Counter())[r["id"]] += 1
    return out


def test_a_stream_of_each_format_is_published_with_exactly_its_logged_rows(
    spark, sink_stream, tmp_path
):
    sink, stream = sink_stream
    status = subprocess.run(
        [FSCOMMIT, *status_args(stream, "--json", *sink.flags)],
        capture_output=True,
        text=True,
    )
    assert status.returncode in (0, 4), status.stderr  # 4: orphans of the sink's failures
    report = json.loads(status.stdout)
    assert report["format"] == sink.file_format and report["format_error"] is None
    human = subprocess.run(
        [FSCOMMIT, *status_args(stream, *sink.flags)], capture_output=True, text=True
    )
    assert f"Format     {sink.file_format}\n" in human.stdout
    orphans = {Path(p).name for p in report["orphan_files"]}
    assert orphans and orphans == {p.name for p in stream.orphans_at_kill}

    table = str(tmp_path / "table")
    result = compact(stream.staging, stream.checkpoint, table, *sink.flags, target="128MB")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    published = {p["partition"] for p in summary["partitions"] if p["state"] == "published"}
    assert published == {f"dt={DAY}/hour=00", f"dt={DAY}/hour=01"}
    for partition in published:  # several staged files became one, named as Spark names
        (output,) = [
            p for p in Path(table, partition).iterdir() if not p.name.startswith((".", "_"))
        ]
        assert output.name.endswith(sink.extension)
    staged = _ids(sink.read(spark, stream.staging))
    mine = _ids(sink.read(spark, table))
    assert set(mine) == {(DAY, "00"), (DAY, "01")}
    for partition, ids in mine.items():
        assert ids == staged[partition] and max(ids.values()) == 1
    assert {31, 40} <= set(mine[(DAY, "00")])  # the late rows
    # Whole rows too (values with commas, quotes and unicode), not only ids.
    columns = ["id", "ts", "k", "v", "dt", "hour"]
    both = sink.read(spark, table).select(columns)
    logged = sink.read(spark, stream.staging).select(columns).where("hour in ('00', '01')")
    assert both.exceptAll(logged).count() == 0 and logged.exceptAll(both).count() == 0
    rows = sum(p["rows"] for p in summary["partitions"])
    assert rows == both.count()


def test_a_spec_that_names_another_format_is_refused_and_nothing_is_written(sink_stream, tmp_path):
    sink, stream = sink_stream
    wrong = "parquet" if sink.file_format != "parquet" else "orc"
    table = tmp_path / "table"
    result = compact(stream.staging, stream.checkpoint, str(table), "--format", wrong)
    assert result.returncode == 1
    assert f"the table spec says format '{wrong}'" in result.stderr + result.stdout
    assert f"are {sink.file_format}" in result.stderr + result.stdout
    assert not any(p.is_file() for p in table.rglob("*")) if table.exists() else True


@pytest.mark.parametrize("sink_stream", ["csv-header-bzip2"], indirect=True)
def test_csv_with_a_header_and_no_csv_header_is_refused_by_the_run_with_one_message(
    sink_stream, tmp_path
):
    _sink, stream = sink_stream
    table = tmp_path / "table"
    result = compact(stream.staging, stream.checkpoint, str(table))  # no --csv-header
    assert result.returncode == 1
    said = [line for line in (result.stderr + result.stdout).splitlines() if "csv.header" in line]
    assert len(said) == 1, said
    assert f"CSV files of partition dt={DAY}/hour=00 all begin with the same line" in said[0]
    assert "('id,ts,k,v')" in said[0] and "Nothing was published" in said[0]
    assert not any(p.is_file() for p in table.rglob("*")) if table.exists() else True


@pytest.fixture(scope="module")
def typed_orc(spark, tmp_path_factory) -> TypedTable:
    """Every type family written as zlib ORC, a column added mid-stream (hour 01 has both)."""
    table = TypedTable(tmp_path_factory.mktemp("typed-orc"), file_format="orc")
    spark.conf.set("spark.sql.orc.compression.codec", "zlib")
    try:
        table.add_batch(spark, [(i, f"{DAY}T00:{10 * i:02d}:00Z") for i in range(1, 5)], False)
        table.add_batch(spark, [(i, f"{DAY}T01:{5 * i:02d}:00Z") for i in range(5, 9)], False)
        table.run(spark, with_extra=False)
        table.add_batch(spark, [(i, f"{DAY}T01:{2 * i:02d}:00Z") for i in range(11, 15)], True)
        table.add_batch(spark, [(19, f"{DAY}T05:00:00Z")], True)
        table.add_batch(spark, [(20, f"{DAY}T06:00:00Z")], True)  # runs with 04:30
        table.run(spark, with_extra=True)
    finally:
        spark.conf.unset("spark.sql.orc.compression.codec")
    return table


def test_orc_reads_back_in_spark_with_the_identical_schema_and_rows(spark, typed_orc, tmp_path):
    table = str(tmp_path / "table")
    result = compact(typed_orc.staging, typed_orc.checkpoint, table, target="128MB")
    assert result.returncode == 0, result.stderr
    staged = spark.read.option("mergeSchema", "true").orc(typed_orc.staging)
    published = spark.read.option("mergeSchema", "true").orc(table)
    assert published.schema == staged.schema and "extra" in published.columns
    for hour in ("00", "01"):
        mine = published.where(f"hour = '{hour}'").withColumn("m", F.map_entries("m"))
        theirs = staged.where(f"hour = '{hour}'").withColumn("m", F.map_entries("m"))
        assert mine.count() == theirs.count() > 0
        assert mine.exceptAll(theirs).count() == 0 and theirs.exceptAll(mine).count() == 0
        (output,) = Path(table, f"dt={DAY}", f"hour={hour}").glob("*.orc")
        assert output.name.endswith(".zlib.orc")
        written = po.ORCFile(str(output))
        assert written.compression == "ZLIB"
        # What Spark's writer puts in the file stays: its user metadata, type attributes.
        assert written.metadata[b"org.apache.spark.version"] == spark.version.encode()
        assert written.schema.field("s").metadata == {b"spark.sql.catalyst.type": b"string"}
    ledger = CommitLedger(table).read(f"dt={DAY}/hour=01")
    assert ledger.committed_plans[0].format.value == "orc"
    # ORC timestamps carry their writer's time zone (Spark's JVM zone, pyarrow's GMT): a
    # reader in another zone must still see the same instants in both.
    seen = subprocess.run(
        [sys.executable, "-c", _READ_IN_NEW_YORK, typed_orc.staging, table],
        env=spark_env() | {"TZ": "America/New_York"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert seen.returncode == 0, seen.stderr[-3000:]
    zone, staged_instants, published_instants = json.loads(seen.stdout.splitlines()[-1])
    assert zone == "America/New_York"
    assert published_instants == staged_instants and len(staged_instants) > 4


def test_a_sorted_orc_table_orders_each_partition_with_row_indexes_and_bloom_filters(
    spark, typed_orc, tmp_path
):
    table = str(tmp_path / "table")
    result = compact(
        typed_orc.staging,
        typed_orc.checkpoint,
        table,
        "--sort-by",
        "s,id",
        "--option",
        "orc.bloom.filter.columns=s",
        target="2KB",  # several outputs per partition
    )
    assert result.returncode == 0, result.stderr
    staged = spark.read.option("mergeSchema", "true").orc(typed_orc.staging)
    published = spark.read.option("mergeSchema", "true").orc(table)
    assert published.schema == staged.schema
    for hour in ("00", "01"):
        mine = published.where(f"hour = '{hour}'").withColumn("m", F.map_entries("m"))
        theirs = staged.where(f"hour = '{hour}'").withColumn("m", F.map_entries("m"))
        assert mine.exceptAll(theirs).count() == 0 and theirs.exceptAll(mine).count() == 0
        expected = [(r.s, r.id) for r in theirs.orderBy("s", "id").select("s", "id").collect()]
        files = sorted(Path(table, f"dt={DAY}", f"hour={hour}").glob("*.orc"))
        read = [po.ORCFile(str(f)).read(columns=["s", "id"]).to_pylist() for f in files]
        assert [(r["s"], r["id"]) for rows in read for r in rows] == expected
        names = po.ORCFile(str(files[0])).schema.names
        s_column = 1 + names.index("s")  # ORC numbers columns in pre-order; all before are flat
        for output in files:
            for streams in stripe_streams(output):
                assert (ROW_INDEX, s_column) in streams
                assert {(kind, s_column) for kind in BLOOM_FILTER_KINDS} & streams
                assert not {(kind, 1) for kind in BLOOM_FILTER_KINDS} & streams  # id: none
    assert len(list(Path(table, f"dt={DAY}", "hour=01").glob("*.orc"))) > 1


_READ_IN_NEW_YORK = """
import json, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "America/New_York").getOrCreate())
def instants(path):
    rows = (spark.read.option("mergeSchema", "true").orc(path).where("hour in ('00', '01')")
            .selectExpr("id", "cast(ts as double)", "cast(st.t as double)", "cast(ts as string)")
            .orderBy("id").collect())
    return [list(r) for r in rows]
zone = spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID()
print(json.dumps([zone, instants(sys.argv[1]), instants(sys.argv[2])]))
"""


@pytest.mark.parametrize("sink_stream", ["orc"], indirect=True)
def test_orc_partitions_are_read_through_the_metastore_and_a_parquet_table_refuses_them(
    spark, sink_stream, metastore, tmp_path
):
    sink, stream = sink_stream
    columns = (
        "(id BIGINT, ts TIMESTAMP, k STRING, v DOUBLE) PARTITIONED BY (dt STRING, hour STRING)"
    )
    hive_sql(
        metastore,
        "CREATE DATABASE IF NOT EXISTS fscommit",
        f"CREATE TABLE fscommit.orc_events {columns} STORED AS ORC LOCATION '{tmp_path / 'orc'}'",
        f"CREATE TABLE fscommit.parquet_events {columns} STORED AS PARQUET "
        f"LOCATION '{tmp_path / 'parquet'}'",
    )
    refused = commit(stream, tmp_path / "parquet", metastore.uri, name="parquet_events")
    assert refused.returncode == 1
    assert (
        "table fscommit.parquet_events is declared as "
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat (parquet), but the "
        f"staged files of dt={DAY}/hour=00 are orc; nothing was committed"
    ) in refused.stdout + refused.stderr
    with thrift_client(metastore) as client:
        assert client.get_partition_names("fscommit", "parquet_events", -1) == []

    committed = commit(stream, tmp_path / "orc", metastore.uri, name="orc_events")
    assert committed.returncode == 0, committed.stderr
    seen: dict[tuple, Counter] = {}
    for r in hive_sql(metastore, "SELECT dt, hour, id FROM fscommit.orc_events"):
        seen.setdefault((r["dt"], r["hour"]), Counter())[r["id"]] += 1
    staged = _ids(sink.read(spark, stream.staging))
    assert seen == {p: staged[p] for p in [(DAY, "00"), (DAY, "01")]}


@pytest.fixture
def damaged(sink_stream):
    """Damage staged files of the shared stream for one test; restored afterwards."""
    saved: dict[Path, bytes] = {}

    def damage(path: Path, content: bytes) -> None:
        saved.setdefault(path, path.read_bytes())
        path.write_bytes(content)

    yield damage
    for path, content in saved.items():
        path.write_bytes(content)


@pytest.mark.parametrize("sink_stream", ["orc"], indirect=True)
def test_a_corrupt_orc_file_fails_its_partition_until_the_user_quarantines_it(
    spark, sink_stream, damaged, tmp_path, capsys
):
    sink, stream = sink_stream
    victim = sorted(Path(stream.staging, f"dt={DAY}", "hour=01").glob("*.orc"))[0]
    staged = _ids(sink.read(spark, stream.staging).where("hour = '01'"))[(DAY, "01")]
    lost = _ids(
        sink.read(spark, str(victim)).withColumn("dt", F.lit(DAY)).withColumn("hour", F.lit("01"))
    )
    damaged(victim, victim.read_bytes()[: victim.stat().st_size // 2])
    table = tmp_path / "table"
    failed = compact(stream.staging, stream.checkpoint, str(table), target="128MB")
    assert failed.returncode == 1
    states = {p["partition"]: p for p in json.loads(failed.stdout)["partitions"]}
    assert states[f"dt={DAY}/hour=00"]["state"] == "published"
    error = states[f"dt={DAY}/hour=01"]["error"]
    assert f"{victim.name} is not a readable ORC file" in error and "fscommit quarantine" in error
    assert not list((table / f"dt={DAY}" / "hour=01").glob("*"))

    flags = status_args(stream, "--table-path", str(table))[1:]  # the table, without the verb
    assert main(["quarantine", *flags, str(victim), "--reason", "lost disk"]) == 0
    capsys.readouterr()
    again = compact(stream.staging, stream.checkpoint, str(table), target="128MB")
    assert again.returncode == 0, again.stderr[-3000:]
    published = _ids(sink.read(spark, str(table)))[(DAY, "01")]
    assert published == staged - lost[(DAY, "01")] and lost


@pytest.mark.parametrize("sink_stream", ["csv-header-bzip2"], indirect=True)
def test_csv_files_whose_headers_differ_fail_their_partition_naming_both(
    sink_stream, damaged, tmp_path
):
    sink, stream = sink_stream
    first, second = sorted(Path(stream.staging, f"dt={DAY}", "hour=01").glob("*.csv.bz2"))[:2]
    lines = bz2.decompress(second.read_bytes()).split(b"\n", 1)
    damaged(second, bz2.compress(b"id,ts,key,value\n" + lines[1]))
    result = compact(stream.staging, stream.checkpoint, str(tmp_path / "t"), *sink.flags)
    assert result.returncode == 1
    (error,) = [p["error"] for p in json.loads(result.stdout)["partitions"] if p["error"]]
    assert f"CSV header of file://{second}" in error
    assert first.name in error and "'id,ts,key,value'" in error


@pytest.mark.parametrize("sink_stream", ["json-gzip", "orc"], indirect=True)
def test_on_s3_each_format_is_published_with_exactly_its_logged_rows(
    spark, sink_stream, s3_env, tmp_path
):
    """Inputs fetched ahead from the store, outputs written as multipart uploads."""
    sink, stream = sink_stream
    bucket = s3_env.create_bucket(f"formats-{sink.file_format}")
    s3 = place_on_s3(stream, s3_env, bucket, "events")
    publisher = CompactionPublisher(TableSpec.from_options(s3.spec()))
    summary = publisher.run(compact_units)
    assert {o.partition: o.state for o in summary.outcomes} == {
        f"dt={DAY}/hour=00": "published",
        f"dt={DAY}/hour=01": "published",
    }
    client = s3_env.client()
    downloaded = tmp_path / "published"
    for key in s3.object_keys("table/"):
        relative = key.split("/table/", 1)[1]
        name = relative.rsplit("/", 1)[-1]
        if relative.startswith("_fscommit/") or not name or name.startswith("."):
            continue  # the ledger, directory markers, hidden files
        (downloaded / relative).parent.mkdir(parents=True, exist_ok=True)
        (downloaded / relative).write_bytes(
            client.get_object(Bucket=bucket, Key=key)["Body"].read()
        )
    staged = _ids(sink.read(spark, stream.staging).where("hour in ('00', '01')"))
    assert _ids(sink.read(spark, str(downloaded))) == staged
