"""Fragmented partitions compacted again (#47): late data's files and the partition's
published ones laid out as one compaction would, the catalog switched over to them at
once, the replaced files deleted only after that; killed at any step, the rerun finishes
or abandons it."""

from __future__ import annotations

import json
import shutil
import signal
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.metastore_policy import MetastoreCommitPolicy
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.faults import FAULT_POINTS, REWRITE_FAULT_POINTS
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.table_overview import TableEntry
from airflow_provider_fscommit.core.status.table_report import read_table_report
from airflow_provider_fscommit.plugins.render import render_page
from fscommit_dev.metastore.client import create_table, hive_sql, thrift_client
from fscommit_dev.streams import StreamingTable, hourly_batches, row
from fscommit_dev.tables import hourly_table, table_flags
from tests.plugins.test_render import parse
from tests.support.fault_worker import run_worker
from tests.support.glue import create_glue_table, glue_partitions
from tests.support.metastore_calls import context
from tests.test_fault_injection import staged_ids

HOUR00 = "dt=2026-11-20/hour=00"


def late(number: int) -> list[dict]:
    """One late row for hour 00 (the watermark is past it: a stateless query writes it)."""
    return [row(900 + number, f"2026-11-20T00:{41 + number:02d}:00Z")]


def spec_of(stream: StreamingTable, table: Path, name: str | None, **extra: str) -> TableSpec:
    """The hourly table at ``table``, committed to ``fscommit.<name>`` (None: no catalog)."""
    policies = (
        {
            "sink.partition-commit.policy.kind": "metastore,success-file",
            "metastore_database": "fscommit",
            "metastore_table": name,
        }
        if name
        else {"sink.partition-commit.policy.kind": "success-file"}
    )
    options = hourly_table(
        stream.staging, stream.checkpoint, table_path=str(table), **policies, **extra
    )
    return TableSpec.from_options({"compaction.file-size": "1MB"} | options)


def run(spec: TableSpec, metastore, glue=None) -> None:
    """A compaction and commit run in this process, as the fault worker does."""
    summary = CompactionPublisher(spec).run(compact_units)
    assert not [o for o in summary.outcomes if o.state == "failed"], summary.outcomes
    client = (lambda: thrift_client(metastore)) if metastore is not None else None
    committer = PartitionCommitter(spec, create_policies(spec, client, glue_client=glue))
    committer.commit([o.partition for o in summary.outcomes])


def location(metastore, name: str, hour: str = "00") -> Path:
    with thrift_client(metastore) as client:
        partition = client.get_partition("fscommit", name, ["2026-11-20", hour])
    return Path(partition.sd.location.removeprefix("file:"))


def ids(files: list[Path]) -> Counter:
    return Counter(i for f in files for i in pq.read_table(f, columns=["id"])["id"].to_pylist())


def data_files(directory: Path, recursive: bool) -> list[Path]:
    """The Parquet files a reader of ``directory`` sees (hidden names skipped): a catalog
    reader lists the location itself, a reader of paths every directory under it."""
    found = directory.rglob("*.parquet") if recursive else directory.glob("*.parquet")
    return sorted(f for f in found if not f.name.startswith((".", "_")))


def test_late_data_that_would_fragment_a_partition_is_compacted_again_with_it(
    spark, metastore, tmp_path
):
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", range(4)))
    stream.run(spark)
    table = tmp_path / "table"
    create_table(metastore, "rewritten", table)
    spec = spec_of(stream, table, "rewritten")
    ledger = CommitLedger(str(table))
    run(spec, metastore)
    for number in range(2):  # published beside the first compaction, then compacted again
        stream.add_batches(late(number))
        stream.run(spark)
        run(spec, metastore)
    records = ledger.read(HOUR00)
    rewrite = records.latest_rewrite
    assert rewrite is not None and rewrite.directory == f"rewrite-{rewrite.seq:05d}"
    assert len(rewrite.staged_inputs) == 1 and len(rewrite.replaces) == 2  # folded in
    first = table / HOUR00 / rewrite.directory
    assert location(metastore, "rewritten") == first
    assert len(data_files(first, recursive=False)) == 1
    # The replaced files are gone: the partition's readers by path see the rewrite's only.
    assert data_files(table / HOUR00, recursive=True) == data_files(first, recursive=False)
    assert not records.superseded and records.retirements
    staged = staged_ids(stream.staging)[HOUR00]
    assert ids(data_files(first, recursive=False)) == staged
    through_hive = hive_sql(
        metastore, "SELECT id FROM fscommit.rewritten WHERE dt = '2026-11-20' AND hour = '00'"
    )
    assert Counter(r["id"] for r in through_hive) == staged
    by_path = spark.read.option("basePath", str(table)).parquet(str(table / "dt=2026-11-20"))
    hour00 = by_path.where("hour = '00'").select("id").collect()  # Spark's partition discovery
    assert Counter(r["id"] for r in hour00) == staged
    with thrift_client(metastore) as client:
        parameters = client.get_partition("fscommit", "rewritten", ["2026-11-20", "00"]).parameters
    assert parameters["numFiles"] == "1" and parameters["numRows"] == str(sum(staged.values()))

    run(spec, metastore)  # a rerun: nothing to do
    assert ledger.read(HOUR00).next_seq == records.next_seq

    # Late data after the rewrite is published into its directory; once that would make
    # the partition fragmented again, it is rewritten again and the first rewrite retired.
    for number in range(2, 4):
        stream.add_batches(late(number))
        stream.run(spark)
        run(spec, metastore)
        if number == 2:
            assert len(data_files(first, recursive=False)) == 2
            assert location(metastore, "rewritten") == first
    second = ledger.read(HOUR00).latest_rewrite
    assert second is not None and second.seq > rewrite.seq
    assert location(metastore, "rewritten") == table / HOUR00 / second.directory
    assert not first.exists()
    staged = staged_ids(stream.staging)[HOUR00]
    assert ids(data_files(table / HOUR00, recursive=True)) == staged
    assert ledger.state().get(HOUR00).published_compactions == 1
    assert ledger.read(HOUR00).summary() == ledger.state().get(HOUR00)


@pytest.fixture(scope="module")
def fragmented(spark, tmp_path_factory) -> tuple[StreamingTable, Path]:
    """A table whose hour 00 holds four compactions' files (committed without a catalog,
    so nothing compacted it again) and the stream it came from."""
    base = tmp_path_factory.mktemp("fragmented")
    stream = StreamingTable(base / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", range(4)))
    stream.run(spark)
    spec = spec_of(stream, base / "table", None)
    run(spec, None)
    for number in range(3):
        stream.add_batches(late(number))
        stream.run(spark)
        run(spec, None)
    assert CommitLedger(str(base / "table")).state().get(HOUR00).published_compactions == 4
    return stream, base / "table"


@pytest.mark.slow  # two worker processes per kill point: ~3 s each
def test_killed_at_every_step_of_a_rewrite_the_catalog_reads_each_row_once_and_the_rerun_finishes(
    fragmented, metastore, tmp_path, monkeypatch
):
    stream, base = fragmented
    staged = staged_ids(stream.staging)[HOUR00]
    monkeypatch.setenv("FSCOMMIT_TEST_METASTORE_PORT", str(metastore.port))
    for number, point in enumerate(FAULT_POINTS + REWRITE_FAULT_POINTS):
        table, name = tmp_path / f"trial-{number}", f"rewrite_trial_{number}"
        shutil.copytree(base, table)
        create_table(metastore, name, table)
        spec = spec_of(stream, table, name)
        policy = MetastoreCommitPolicy(lambda: thrift_client(metastore), "fscommit", name)
        policy.commit_all([context(spec, "2026-11-20", "00")])  # the catalog has it as it is
        assert location(metastore, name) == table / HOUR00

        assert run_worker(spec.to_json(), fault=point) == -signal.SIGKILL, point
        # Whatever step it died at, the catalog's readers see every row once: the old
        # files or the new ones, never both, never neither.
        read = ids(data_files(location(metastore, name), recursive=False))
        assert read == staged, f"killed at {point}: the catalog reads {read - staged}"

        assert run_worker(spec.to_json()) == 0, point
        records = CommitLedger(str(table)).read(HOUR00)
        assert location(metastore, name) == table / HOUR00 / records.directory != table / HOUR00
        assert ids(data_files(location(metastore, name), recursive=False)) == staged, point
        assert ids(data_files(table / HOUR00, recursive=True)) == staged, point
        assert len(data_files(table / HOUR00, recursive=True)) == 1, point
        hidden = [p for p in (table / HOUR00).rglob(".*")]
        assert not hidden, f"killed at {point}: left {hidden}"
        assert not records.open_plans and records.policies_current and not records.superseded
        assert [p.name for p in (table / HOUR00).iterdir() if p.is_dir()] == [records.directory]
        success = json.loads((table / HOUR00 / "_SUCCESS").read_text())
        assert success["compaction_seq"] == records.latest_commit, point


def test_status_and_the_status_page_show_a_fragmented_partition_and_what_becomes_of_it(
    fragmented, capsys
):
    stream, table = fragmented
    without_catalog = spec_of(stream, table, None)
    assert (
        main(["status", *table_flags(without_catalog), "--json", "--stall-timeout", "365 d"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    marks = {
        p["partition"]: (p["fragmented"], p["one_compaction_files"]) for p in out["partitions"]
    }
    assert marks[HOUR00] == (True, 1) and marks["dt=2026-11-20/hour=01"] == (False, 0)
    assert "needs compaction.rewrite-fragmented and a catalog policy" in out["fragmented_outlook"]

    assert main(["status", *table_flags(without_catalog), "--stall-timeout", "365 d"]) == 0
    human = capsys.readouterr().out
    row00 = next(line for line in human.splitlines() if line.startswith(HOUR00))
    assert "4 / " in row00 and "(fragmented: 1)" in row00
    assert "1 fragmented: late data left them files of several compactions" in human

    with_catalog_spec = spec_of(stream, table, "status_only")  # read, never run
    size = sum(f.stat().st_size for f in data_files(table / HOUR00, recursive=True))
    assert main(["plan", *table_flags(with_catalog_spec)]) == 0
    assert capsys.readouterr().out.startswith(
        f"{HOUR00}: 4 file(s), {size} bytes -> 1 output file(s) in "
        "rewrite-00004/, compacted again: 4 of the inputs are its published files"
    )
    with_catalog = read_table_report(with_catalog_spec)
    assert with_catalog.fragmented_outlook == "the next compaction run compacts them again"
    page = parse(render_page([TableEntry("events", "/specs/e.yaml", report=with_catalog)], 0, ""))
    titles = [a.get("title") or "" for tag, a in page.tags if a.get("class") == "fragmented"]
    assert len(titles) == 1 and titles[0].endswith("the next compaction run compacts them again")
    assert "(fragmented: 1)" in "".join(page.text)


def test_a_sorted_tables_rewrite_deals_the_partitions_rows_in_order_across_its_files(
    fragmented, metastore, tmp_path
):
    stream, base = fragmented
    table = tmp_path / "table"
    shutil.copytree(base, table)
    create_table(metastore, "rewrite_sorted", table)
    spec = spec_of(
        stream,
        table,
        "rewrite_sorted",
        **{"compaction.sort-by": "id", "compaction.file-size": "2KB"},
    )
    run(spec, metastore)
    records = CommitLedger(str(table)).read(HOUR00)
    rewrite = records.latest_rewrite
    assert rewrite is not None and rewrite.seq == records.latest_commit
    files = [location(metastore, "rewrite_sorted") / unit.output for unit in rewrite.units]
    assert data_files(location(metastore, "rewrite_sorted"), recursive=False) == sorted(files)
    replaced = sum(f.size for f in rewrite.inputs)
    assert 2 <= len(files) <= -(-replaced // 2048) + 1  # rows dealt out, not files packed
    in_order = [i for f in files for i in pq.read_table(f, columns=["id"])["id"].to_pylist()]
    assert in_order == sorted(staged_ids(stream.staging)[HOUR00].elements())
    sorting = pq.ParquetFile(files[0]).metadata.row_group(0).sorting_columns
    assert [c.column_index for c in sorting] == [pq.read_schema(files[0]).names.index("id")]


def test_on_s3_the_rewrite_is_copied_into_place_and_glue_switches_to_it(
    fragmented, s3_env, tmp_path
):
    stream, base = fragmented
    bucket = s3_env.create_bucket("rewrites")
    s3 = s3_env.client()
    for local in base.rglob("*"):  # the fragmented table, as it would be on S3
        if local.is_file():
            s3.upload_file(str(local), bucket, f"table/{local.relative_to(base)}")
    glue = s3_env.client("glue")
    create_glue_table(glue, "fscommit", "rewritten_on_s3", f"s3://{bucket}/table")
    options = hourly_table(
        stream.staging,
        stream.checkpoint,
        table_path=f"s3://{bucket}/table",
        **{
            "sink.partition-commit.policy.kind": "glue,success-file",
            "metastore_database": "fscommit",
            "metastore_table": "rewritten_on_s3",
            "compaction.file-size": "1MB",
        },
    )
    run(TableSpec.from_options(options), None, glue=lambda: s3_env.client("glue"))
    rewrite = CommitLedger(f"s3://{bucket}/table").read(HOUR00).latest_rewrite
    assert rewrite is not None
    partition = glue_partitions(glue, "fscommit", "rewritten_on_s3")[("2026-11-20", "00")]
    where = f"s3://{bucket}/table/{HOUR00}/{rewrite.directory}"
    assert partition["StorageDescriptor"]["Location"] == where
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=f"table/{HOUR00}/")["Contents"]
    # pyarrow keeps a directory's marker object (a key ending in "/") once its last file goes
    keys = sorted(o["Key"].removeprefix(f"table/{HOUR00}/") for o in listed)
    keys = [k for k in keys if not k.endswith("/") and k]
    assert keys == ["_SUCCESS", f"{rewrite.directory}/{rewrite.units[0].output}"]
    read = pq.read_table(f"{where}/{rewrite.units[0].output}", columns=["id"])
    assert Counter(read["id"].to_pylist()) == staged_ids(stream.staging)[HOUR00]
