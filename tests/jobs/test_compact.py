"""The compaction application, run through spark-submit as users run it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from airflow_provider_fscommit.core.compaction.sort_order import SortOrder
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.streams import StreamingTable, TypedTable, row
from tests.support.compaction import check_exactly_once, committable, compact, visible_data_files


def staging_state(staging: str) -> dict[str, tuple[int, int]]:
    """Every file under staging (sink log included) with its size and mtime."""
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in Path(staging).rglob("*")
        if p.is_file()
    }


def comparable(df):
    """Maps cannot take part in set operations; compare their sorted entries instead."""
    return df.withColumn("m", F.array_sort(F.map_entries("m")))


@pytest.fixture(scope="module")
def typed_table(spark, tmp_path_factory) -> TypedTable:
    """Every type family, INT96 timestamps, a column added mid-stream (hour 01 has both)."""
    table = TypedTable(tmp_path_factory.mktemp("typed"))
    table.add_batch(spark, [(i, f"2026-11-20T00:{10 * i:02d}:00Z") for i in range(1, 5)], False)
    table.add_batch(spark, [(i, f"2026-11-20T01:{5 * i:02d}:00Z") for i in range(5, 9)], False)
    table.add_batch(spark, [(9, "2026-11-20T00:59:00Z"), (10, "2026-11-20T01:59:00Z")], False)
    table.run(spark, with_extra=False)
    table.add_batch(spark, [(i, f"2026-11-20T01:{2 * i:02d}:00Z") for i in range(11, 15)], True)
    table.add_batch(spark, [(i, f"2026-11-20T02:{2 * i:02d}:00Z") for i in range(15, 19)], True)
    table.add_batch(spark, [(19, "2026-11-20T05:00:00Z")], True)
    table.add_batch(spark, [(20, "2026-11-20T06:00:00Z")], True)
    table.run(spark, with_extra=True)
    return table


def test_published_partitions_read_back_identical_with_every_type(spark, typed_table, tmp_path):
    table = str(tmp_path / "table")
    result = compact(typed_table.staging, typed_table.checkpoint, table, target="128MB")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    ready = committable(typed_table.staging, typed_table.checkpoint)
    assert {("2026-11-20", "00"), ("2026-11-20", "01"), ("2026-11-20", "02")} <= ready
    assert {
        tuple(p["partition"].replace("dt=", "").replace("hour=", "").split("/"))
        for p in summary["partitions"]
    } == ready
    staged = spark.read.option("mergeSchema", "true").parquet(typed_table.staging)
    published = spark.read.option("mergeSchema", "true").parquet(table)
    assert published.schema == staged.schema
    assert "extra" in published.columns
    for dt, hour in ready:
        mine = comparable(published.where(f"dt = '{dt}' AND hour = '{hour}'"))
        theirs = comparable(staged.where(f"dt = '{dt}' AND hour = '{hour}'"))
        assert mine.count() == theirs.count() > 0
        assert mine.exceptAll(theirs).count() == 0 and theirs.exceptAll(mine).count() == 0
    # One output per partition (128 MB target); INT96 stayed INT96; footer schema kept.
    for dt, hour in ready:
        files = list(Path(table, f"dt={dt}", f"hour={hour}").glob("*.parquet"))
        assert len(files) == 1
        metadata = pq.read_metadata(files[0])
        physical = {
            metadata.schema.column(i).path: metadata.schema.column(i).physical_type
            for i in range(metadata.num_columns)
        }
        assert physical["ts"] == "INT96" and physical["st.t"] == "INT96"
        assert physical["small_dec"] == "INT32" and physical["dec"] == "INT64"
        assert b"org.apache.spark.sql.parquet.row.metadata" in metadata.metadata
    hour1 = next(Path(table, "dt=2026-11-20", "hour=01").glob("*.parquet"))
    assert (
        pq.read_metadata(hour1)
        .metadata[b"org.apache.spark.sql.parquet.row.metadata"]
        .count(b'"extra"')
        == 1
    )
    # Nothing was published for partitions the watermark has not passed.
    assert not Path(table, "dt=2026-11-20", "hour=06").exists()


def test_int64_timestamps_stay_int64(spark, tmp_path):
    typed = TypedTable(tmp_path / "micros", timestamp_type="TIMESTAMP_MICROS")
    typed.add_batch(spark, [(i, f"2026-11-20T00:{10 * i:02d}:00Z") for i in range(1, 4)], False)
    typed.add_batch(spark, [(i, f"2026-11-20T00:{10 * i:02d}:00Z") for i in range(4, 6)], False)
    typed.add_batch(spark, [(9, "2026-11-20T03:00:00Z")], False)
    typed.add_batch(spark, [(10, "2026-11-20T04:00:00Z")], False)
    typed.run(spark, with_extra=False)
    table = str(tmp_path / "table")
    result = compact(
        typed.staging,
        typed.checkpoint,
        table,
        "dt=2026-11-20/hour=00",
        "--codec",
        "zstd",
        target="128MB",
    )
    assert result.returncode == 0, result.stderr
    (output,) = Path(table, "dt=2026-11-20", "hour=00").glob("*.zstd.parquet")
    metadata = pq.read_metadata(output)
    assert metadata.schema.column(1).physical_type == "INT64"
    assert metadata.row_group(0).column(0).compression == "ZSTD"
    staged = spark.read.parquet(typed.staging).where("hour = '00'")
    published = spark.read.parquet(table)
    assert published.schema == staged.schema
    assert comparable(published).exceptAll(comparable(staged)).count() == 0
    assert published.count() == staged.count() == 5


@pytest.mark.slow
def test_sigkill_at_every_step_then_rerun_publishes_every_row_exactly_once(spark, tmp_path):
    stream = StreamingTable(tmp_path / "stream")
    for hour in range(5):
        for half in (0, 30):
            stream.add_batches(
                [
                    row(100 * hour + half + i, f"2026-11-20T{hour:02d}:{half + i:02d}:00Z")
                    for i in range(3)
                ]
            )
    stream.run(spark)
    table = str(tmp_path / "table")
    ledger = CommitLedger(table)
    ready = committable(stream.staging, stream.checkpoint)
    assert len(ready) >= 3
    kills = []

    def kill_at(point: str) -> None:
        result = compact(stream.staging, stream.checkpoint, table, fault=point)
        assert result.returncode == -9, f"{point}: not killed: {result.stderr[-2000:]}"
        kills.append(point)
        check_exactly_once(spark, stream.staging, table)

    kill_at("after-plan")
    assert visible_data_files(table) == []
    assert all(ledger.read(f"dt={d}/hour={h}").open_plans for d, h in ready)
    kill_at("during-unit")
    assert visible_data_files(table) == []
    # Late rows arrive for partitions already planned twice: the next plans differ.
    stream.add_batches([row(9000, "2026-11-20T00:45:00Z"), row(9001, "2026-11-20T01:15:00Z")])
    stream.run(spark)
    kill_at("after-unit")
    kill_at("after-units")
    assert visible_data_files(table) == []
    kill_at("after-commit-record")
    assert visible_data_files(table) == []
    committed = {p for p in (f"dt={d}/hour={h}" for d, h in ready) if ledger.read(p).commits}
    assert committed, "the commit point was passed before the kill"
    kill_at("during-publish")
    result = compact(stream.staging, stream.checkpoint, table)
    assert result.returncode == 0, result.stderr
    rows = check_exactly_once(spark, stream.staging, table, complete=ready)
    assert ("2026-11-20", "00") in ready and rows >= 3 * 6
    for partition in (f"dt={d}/hour={h}" for d, h in ready):
        records = ledger.read(partition)
        assert not records.open_plans
        assert len(records.commits) == 1, partition  # one committed plan, all earlier discarded
    leftovers = [p for p in Path(table).rglob(".fscommit-inprogress-*")]
    assert leftovers == []
    print(f"kill points exercised: {kills}; rows checked: {rows}; violations: 0")


@pytest.mark.slow
def test_rerun_is_idempotent_and_late_data_is_published_as_new_files(
    spark, hourly_stream, tmp_path
):
    stream = hourly_stream
    table = str(tmp_path / "table")
    staging_before = staging_state(stream.staging)
    first = compact(stream.staging, stream.checkpoint, table)
    assert first.returncode == 0, first.stderr
    first_published = {p["partition"] for p in json.loads(first.stdout)["partitions"]}
    files = {p: p.stat().st_mtime_ns for p in visible_data_files(table)}
    # Nothing to compute: no Spark application (a spark-submit that fails is never run).
    idle_hour = "dt=2026-11-19/hour=23"  # the stream wrote nothing for it
    again = compact(
        stream.staging,
        stream.checkpoint,
        table,
        "--spark-submit",
        "/bin/false",
        *sorted(first_published),
        idle_hour,
    )
    assert again.returncode == 0, again.stderr
    states = {p["partition"]: p["state"] for p in json.loads(again.stdout)["partitions"]}
    assert states == {p: "up-to-date" for p in first_published} | {idle_hour: "empty"}
    assert {p: p.stat().st_mtime_ns for p in visible_data_files(table)} == files
    assert staging_state(stream.staging) == staging_before  # staging is read-only for us
    stream.add_batches([row(777, "2026-11-20T00:50:00Z")])  # late for a published partition
    stream.run(spark)
    late = json.loads(compact(stream.staging, stream.checkpoint, table).stdout)
    published = {p["partition"]: p for p in late["partitions"] if p["state"] == "published"}
    # The late row's partition again, plus what the advancing watermark made committable.
    assert "dt=2026-11-20/hour=00" in published
    assert set(published) - {"dt=2026-11-20/hour=00"} == (
        {f"dt={d}/hour={h}" for d, h in committable(stream.staging, stream.checkpoint)}
        - first_published
    )
    assert published["dt=2026-11-20/hour=00"]["rows"] == 1
    assert len(CommitLedger(table).read("dt=2026-11-20/hour=00").commits) == 2
    assert set(files) < set(visible_data_files(table))
    ready = committable(stream.staging, stream.checkpoint)
    check_exactly_once(spark, stream.staging, table, complete=ready)


def test_a_corrupt_staged_file_fails_its_partition_only_and_publishes_nothing_of_it(
    spark, hourly_stream, tmp_path
):
    staged = sorted(Path(hourly_stream.staging, "dt=2026-11-20", "hour=01").glob("*.parquet"))
    staged[0].write_bytes(staged[0].read_bytes()[:50])  # a truncated file
    table = str(tmp_path / "table")
    result = compact(hourly_stream.staging, hourly_stream.checkpoint, table)
    assert result.returncode == 1
    outcomes = {p["partition"]: p for p in json.loads(result.stdout)["partitions"]}
    failed = outcomes["dt=2026-11-20/hour=01"]
    assert failed["state"] == "failed" and staged[0].name in failed["error"]
    assert outcomes["dt=2026-11-20/hour=00"]["state"] == "published"
    assert not list(Path(table, "dt=2026-11-20", "hour=01").glob("*"))
    records = CommitLedger(table).read("dt=2026-11-20/hour=01")
    assert not records.open_plans and not records.commits  # the failed plan is abandoned
    assert records.abandoned[0]["reason"].startswith("failed: staged file")


def test_a_partition_that_is_not_committable_is_refused(hourly_stream, tmp_path):
    result = compact(
        hourly_stream.staging,
        hourly_stream.checkpoint,
        str(tmp_path / "t"),
        "dt=2026-11-20/hour=03",
    )
    assert result.returncode == 1
    assert "dt=2026-11-20/hour=03 is pending, not committable" in result.stderr
    assert not Path(tmp_path / "t").exists()


@pytest.mark.slow
def test_the_same_job_runs_on_a_standalone_cluster(spark, hourly_stream, tmp_path):
    from tests.support.spark_cluster import StandaloneCluster

    cluster = StandaloneCluster(tmp_path / "cluster")
    try:
        cluster.start()
        table = str(tmp_path / "table")
        result = compact(
            hourly_stream.staging,
            hourly_stream.checkpoint,
            table,
            "--spark-master",
            cluster.master_url,
        )
        assert result.returncode == 0, result.stderr
        ready = committable(hourly_stream.staging, hourly_stream.checkpoint)
        check_exactly_once(spark, hourly_stream.staging, table, complete=ready)
        app_logs = list((tmp_path / "cluster" / "work").rglob("stderr"))
        assert app_logs, "executors ran on the standalone worker"
    finally:
        cluster.stop()


@pytest.mark.slow
def test_three_runs_of_one_partition_at_once_publish_and_commit_it_once(
    spark, hourly_stream, tmp_path
):
    """A scheduled run, a UI-triggered run and a backfill reaching the same hour together."""
    from concurrent.futures import ThreadPoolExecutor

    table = str(tmp_path / "table")
    partition = "dt=2026-11-20/hour=01"
    args = (hourly_stream.staging, hourly_stream.checkpoint, table, "--policy", "success-file")
    with ThreadPoolExecutor(3) as pool:
        runs = list(pool.map(lambda _: compact(*args, partition, command="commit"), range(3)))
    assert [r.returncode for r in runs] == [0, 0, 0], [r.stderr[-2000:] for r in runs]
    records = CommitLedger(table).read(partition)
    assert len(records.commits) == 1 and len(records.policy_commits) == 1
    assert not records.open_plans
    check_exactly_once(spark, hourly_stream.staging, table, complete={("2026-11-20", "01")})


def _partition_rows(table: str, hour: str, columns: list[str]) -> tuple[list[Path], pa.Table]:
    """A published partition's files in their order (unit by unit), and their rows' columns
    read one file after the other."""
    files = sorted(Path(table, "dt=2026-11-20", f"hour={hour}").glob("*.parquet"))
    return files, pa.concat_tables(pq.read_table(f, columns=columns) for f in files)


def test_a_sorted_table_orders_each_partition_across_its_files_for_readers(
    spark, typed_table, tmp_path
):
    table = str(tmp_path / "sorted")
    result = compact(
        typed_table.staging,
        typed_table.checkpoint,
        table,
        "--sort-by",
        "s,id",
        "--option",
        "parquet.bloom.filter.enabled#s=true",
        "--option",
        "parquet.block.size=1KB",
        target="2KB",  # several outputs per partition
    )
    assert result.returncode == 0, result.stderr
    staged = spark.read.option("mergeSchema", "true").parquet(typed_table.staging)
    published = spark.read.option("mergeSchema", "true").parquet(table)
    assert published.schema == staged.schema
    for hour in ("00", "01", "02"):
        theirs = staged.where(f"hour = '{hour}'")
        mine = published.where(f"hour = '{hour}'")
        assert comparable(mine).exceptAll(comparable(theirs)).count() == 0
        assert comparable(theirs).exceptAll(comparable(mine)).count() == 0
        # In Spark's ORDER BY s, id (nulls first) across the files, read one after the other.
        expected = [(r.s, r.id) for r in theirs.orderBy("s", "id").select("s", "id").collect()]
        files, rows = _partition_rows(table, hour, ["s", "id"])
        assert [(r["s"], r["id"]) for r in rows.to_pylist()] == expected
        if hour == "01":
            assert len(files) > 1
        for output in files:
            metadata = pq.read_metadata(output)
            assert metadata.num_row_groups > 1  # 1 KB row groups, not one per input batch
            group = metadata.row_group(0)
            assert [c.column_index for c in group.sorting_columns] == [10, 0]  # s, id
            chunks = {
                group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)
            }
            # The page index: offsets for every column, min/max for every column with an
            # order (Parquet gives INT96 none, so neither Spark nor pyarrow keeps its stats).
            assert all(c.has_offset_index for c in chunks.values())
            assert all(c.has_column_index == (c.physical_type != "INT96") for c in chunks.values())
            assert chunks["s"].bloom_filter_offset and not chunks["id"].bloom_filter_offset
            assert pq.read_metadata(output).schema.column(1).physical_type == "INT96"

    z_table = str(tmp_path / "z")
    result = compact(
        typed_table.staging,
        typed_table.checkpoint,
        z_table,
        "--option",
        "compaction.z-order-by=ts,id",
        target="128MB",
    )
    assert result.returncode == 0, result.stderr
    z_published = spark.read.option("mergeSchema", "true").parquet(z_table)
    assert comparable(z_published).exceptAll(comparable(published)).count() == 0
    assert z_published.count() == published.count()
    _, frame = _partition_rows(z_table, "01", ["ts", "id"])
    key = SortOrder(("ts", "id"), z_order=True).keyed(frame)  # the partition fits in memory
    z = key.route(frame, 0).to_pylist()
    assert z == sorted(z) and len(set(z)) > 1
