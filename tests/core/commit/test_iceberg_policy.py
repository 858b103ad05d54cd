"""The iceberg policy on a real stream's compacted files and pyiceberg's SQL catalog on
SQLite: the files registered as they are (no rewrite), every staged row once with the
types Spark wrote, partition pruning by the keys, exactly one snapshot per run and none
on a rerun, late data in one more snapshot, and refusals that record nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.expressions import EqualTo, IsNull
from pyiceberg.schema import Schema
from pyiceberg.types import NestedField, StringType

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.catalogs.iceberg_table import COMMIT_ID, TABLE_PATH, WATERMARK
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.iceberg_policy import snapshot_of
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, IcebergError
from airflow_provider_fscommit.core.faults import FAULT_POINTS
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.table_overview import TableEntry
from airflow_provider_fscommit.core.status.table_report import read_table_report
from airflow_provider_fscommit.plugins.render import render_page
from fscommit_dev.streams import StreamingTable, TypedTable, hourly_batches, row
from fscommit_dev.tables import table_flags
from tests.support.compaction import (
    committable,
    ids_by_partition,
    publish_and_commit,
    table_options,
)
from tests.support.duckdb_iceberg import duckdb_python, duckdb_query, duckdb_scan
from tests.support.fault_worker import run_worker
from tests.support.iceberg import iceberg_ids
from tests.support.iceberg_catalog import catalog, catalog_options, iceberg_spec

PARTITIONS = [f"dt=2026-11-20/hour={h:02d}" for h in range(3)]


def test_partitions_are_registered_once_with_sparks_types_and_prune_by_their_keys(
    spark, compacted_stream, tmp_path, capsys
):
    stream = compacted_stream
    spec = iceberg_spec(stream, tmp_path)
    CompactionPublisher(spec).run(compact_units, PARTITIONS)
    (policy,) = create_policies(spec)
    calls: list[list] = []
    commit_all = policy.commit_all

    def recorded(contexts, *rest):
        calls.append(list(contexts))
        return commit_all(contexts, *rest)

    policy.commit_all = recorded
    PartitionCommitter(spec, [policy]).commit(PARTITIONS)
    table = catalog(tmp_path).load_table("lake.events")
    assert [(f.name, str(f.field_type), f.required) for f in table.schema().fields] == [
        ("id", "long", False),
        ("ts", "timestamptz", False),
        ("k", "string", False),
        ("v", "double", False),
        ("dt", "string", False),
        ("hour", "string", False),
    ]
    staged = ids_by_partition(spark, stream.staging)
    assert iceberg_ids(table) == {p: staged[p] for p in iceberg_ids(table)}
    assert len(iceberg_ids(table)) == 3
    # The compaction's outputs are the data files, where the ledger published them.
    ledger = CommitLedger(spec.table_path)
    published = {
        f"file://{spec.table_path}/{p}/{o['name']}"
        for p in PARTITIONS
        for r in ledger.read(p).live_commits
        for o in r["outputs"]
    }
    files = {t.file.file_path: t.file for t in table.scan().plan_files()}
    assert set(files) == published
    assert all(
        f.record_count > 0 and f.lower_bounds and f.null_value_counts for f in files.values()
    )
    # The values Spark reads from those files, pyiceberg reads from the table.
    spark_rows = sorted(
        (r["id"], r["ts"], r["k"], r["v"]) for r in spark.read.parquet(*files).collect()
    )
    iceberg_rows = sorted(
        (r["id"], r["ts"].astimezone().replace(tzinfo=None), r["k"], r["v"])
        for r in table.scan(selected_fields=("id", "ts", "k", "v")).to_arrow().to_pylist()
    )
    assert spark_rows == iceberg_rows
    # An independent reader: DuckDB's iceberg_scan of the table's metadata file.
    types, read = duckdb_scan(duckdb_python(tmp_path), table.metadata_location)
    assert read == iceberg_ids(table)
    assert types == {"id": "BIGINT", "ts": "TIMESTAMP WITH TIME ZONE", "k": "VARCHAR",
                     "v": "DOUBLE", "dt": "VARCHAR", "hour": "VARCHAR"}  # fmt: skip
    # One snapshot, saying what it committed; a filter on a key plans that partition only.
    (snapshot,) = table.metadata.snapshots
    assert snapshot.summary[TABLE_PATH] == spec.table_path
    assert len(snapshot.summary[COMMIT_ID]) == 32 and int(snapshot.summary[WATERMARK]) > 0
    # The completeness came with the data: one commit after the table's creation.
    assert table.properties["fscommit.complete-through"].startswith("2026-11-20T")
    assert table.properties["fscommit.watermark"].startswith("2026-11-20T")
    assert len(table.metadata.metadata_log) == 1
    planned = list(table.scan(row_filter="hour = '01'").plan_files())
    assert planned and {tuple(t.file.partition) for t in planned} == {("2026-11-20", "01")}
    # The ledger keeps the snapshot of each partition; status and the status page show it.
    receipt = {"iceberg_snapshot_id": snapshot.snapshot_id}
    assert all(snapshot_of(ledger.read(p).summary().receipts) == snapshot.snapshot_id
               for p in PARTITIONS)  # fmt: skip
    report = read_table_report(spec)
    shown = {p.partition: snapshot_of(p.receipts) for p in report.partitions}
    assert {shown[p] for p in PARTITIONS} == {snapshot.snapshot_id}
    flags = table_flags(table_options(stream, spec.table_path))
    assert main(["status", *flags, "--all", "--stall-timeout", "365 d"]) == 0  # settled: --all
    lines = [line for line in capsys.readouterr().out.splitlines() if "hour=01" in line]
    assert len(lines) == 1 and f"(snapshot {snapshot.snapshot_id})" in lines[0]
    page = render_page([TableEntry("events", "events.yaml", report=report)], report.now_ms, "")
    assert page.count(f"Iceberg snapshot {snapshot.snapshot_id}<") == len(PARTITIONS)

    # The same call again (its answer lost): its id is in the history. A call for a part
    # of it (another id): the table holds those files already. Neither commits; both say
    # where the partitions are.
    (contexts,) = calls
    assert commit_all(contexts) == {c.path: receipt for c in contexts}
    assert commit_all(contexts[:1]) == {contexts[0].path: receipt}
    assert len(catalog(tmp_path).load_table("lake.events").metadata.snapshots) == 1


def test_late_data_adds_its_files_in_one_more_snapshot_and_a_drop_removes_a_partition(
    spark, tmp_path
):
    stream = StreamingTable(tmp_path / "late-stream")
    stream.add_batches(*hourly_batches("2026-11-20", range(4)))
    stream.run(spark)
    spec = iceberg_spec(stream, tmp_path)
    publish_and_commit(spec, PARTITIONS[:2])
    stream.add_batches([row(900, "2026-11-20T00:40:00Z"), row(901, "2026-11-20T01:50:00Z")])
    stream.run(spark)
    assert {("2026-11-20", "00"), ("2026-11-20", "01")} <= committable(
        stream.staging, stream.checkpoint
    )
    publish_and_commit(spec, PARTITIONS[:2])
    table = catalog(tmp_path).load_table("lake.events")
    assert len(table.metadata.snapshots) == 2
    staged = ids_by_partition(spark, stream.staging)
    assert iceberg_ids(table) == {
        p: staged[p] for p in (("2026-11-20", "00"), ("2026-11-20", "01"))
    }
    assert 900 in iceberg_ids(table)[("2026-11-20", "00")]
    # Expiration's drop: the partition's files leave the table in one snapshot, once.
    (policy,) = create_policies(spec)
    assert policy.drop(spec, [("2026-11-20", "00")]) == 1
    assert policy.drop(spec, [("2026-11-20", "00")]) == 0
    table = catalog(tmp_path).load_table("lake.events")
    assert len(table.metadata.snapshots) == 3 and set(iceberg_ids(table)) == {("2026-11-20", "01")}


def test_a_table_that_cannot_take_the_files_is_refused_naming_the_column(
    compacted_stream, tmp_path
):
    stream = compacted_stream
    lake = catalog(tmp_path)
    lake.create_namespace("lake")
    lake.create_table(
        "lake.events",
        schema=Schema(
            NestedField(1, "id", StringType(), required=False),
            NestedField(2, "dt", StringType(), required=False),
            NestedField(3, "hour", StringType(), required=False),
        ),
    )
    spec = iceberg_spec(stream, tmp_path, **{"iceberg.create-table": "false"})
    with pytest.raises(IcebergError) as refused:
        publish_and_commit(spec, PARTITIONS[:1])
    assert "lake.events is partitioned by unpartitioned" in str(refused.value)
    ledger = CommitLedger(spec.table_path)
    assert not ledger.read(PARTITIONS[0]).policies_current  # nothing recorded as committed


def test_a_missing_table_or_a_credential_in_the_spec_is_refused_with_the_fix(
    compacted_stream, tmp_path
):
    stream = compacted_stream
    spec = iceberg_spec(stream, tmp_path, **{"iceberg.create-table": "false"})
    with pytest.raises(
        IcebergError, match=r"does not exist in catalog .*iceberg\.create-table: true"
    ):
        publish_and_commit(spec, PARTITIONS[:1])
    with pytest.raises(
        ConfigError, match=r"iceberg\.catalog\.s3\.secret-access-key is a credential"
    ):
        iceberg_spec(stream, tmp_path, **{"iceberg.catalog.s3.secret-access-key": "x"})
    with pytest.raises(ConfigError, match="'done-partition' and 'iceberg'"):
        iceberg_spec(
            stream, tmp_path, **{"sink.partition-commit.policy.kind": "iceberg,done-partition"}
        )


def test_an_error_inside_pyiceberg_is_raised_as_itself_not_as_the_catalogs_refusal(
    compacted_stream, tmp_path, monkeypatch
):
    """Only the catalog's own refusals become "the catalog refused": an error from inside
    pyiceberg while it commits (a bug, fault-injected here) reaches the user as it is,
    with its traceback, and nothing is recorded as committed."""
    from pyiceberg.table import Transaction

    spec = iceberg_spec(compacted_stream, tmp_path)
    CompactionPublisher(spec).run(compact_units, PARTITIONS[:1])

    def broken(self, *args, **kwargs):
        raise AttributeError("'NoneType' object has no attribute 'snapshot_id'")

    monkeypatch.setattr(Transaction, "update_snapshot", broken)
    with pytest.raises(AttributeError, match="no attribute 'snapshot_id'") as raised:
        PartitionCommitter(spec, create_policies(spec)).commit(PARTITIONS[:1])
    assert "refused" not in str(raised.value)
    assert raised.traceback[-1].name == "broken"  # where it was raised, not reworded above
    assert not CommitLedger(spec.table_path).read(PARTITIONS[0]).policies_current


def staged_ids(spark, stream) -> dict[tuple, Counter]:
    ready = committable(stream.staging, stream.checkpoint)
    return {p: ids for p, ids in ids_by_partition(spark, stream.staging).items() if p in ready}


@pytest.mark.slow  # two worker processes per kill point: ~3 s each
def test_killed_at_every_step_of_a_commit_run_the_table_holds_each_row_once_in_one_snapshot(
    spark, fault_stream, tmp_path
):
    """A run killed anywhere, the Iceberg commit made and the ledger's record not included,
    then rerun: one snapshot, every committable row once (two files per partition, so
    every unit is written, not copied)."""
    staged = staged_ids(spark, fault_stream)
    for number, point in enumerate(FAULT_POINTS):
        trial = tmp_path / f"trial-{number}"
        spec = iceberg_spec(fault_stream, trial)
        assert run_worker(spec.to_json(), fault=point) == -signal.SIGKILL, point
        held = _held(trial)
        for partition, ids in held.items():  # never a row twice, never one not staged
            assert ids <= staged[partition] and max(ids.values()) == 1, point
        assert run_worker(spec.to_json()) == 0, point
        table = catalog(trial).load_table("lake.events")
        assert iceberg_ids(table) == staged, point
        assert len(table.metadata.snapshots) == 1, f"killed at {point}: committed twice"


def test_three_concurrent_runs_commit_each_row_once_in_one_snapshot(
    spark, compacted_stream, tmp_path
):
    spec = iceberg_spec(compacted_stream, tmp_path)
    runs = [
        subprocess.Popen(
            [sys.executable, "tests/support/fault_worker.py", spec.to_json()],
            cwd=Path(__file__).resolve().parents[3],
        )
        for _ in range(3)
    ]
    assert [run.wait(timeout=300) for run in runs] == [0, 0, 0]
    table = catalog(tmp_path).load_table("lake.events")
    assert iceberg_ids(table) == staged_ids(spark, compacted_stream)
    assert len(table.metadata.snapshots) == 1


def _held(directory: Path) -> dict[tuple, Counter]:
    """What the Iceberg table holds now (nothing if the run died before creating it)."""
    try:
        return iceberg_ids(catalog(directory).load_table("lake.events"))
    except NoSuchTableError:
        return {}


def plain(value):
    """A value as both readers can be compared by: naive local datetimes, maps (pyarrow's
    pairs) and rows as dicts."""
    if isinstance(value, datetime):
        return value.astimezone().replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return {k: plain(v) for k, v in value}  # a map, as pyarrow gives it
        return [plain(v) for v in value]
    return value


def test_every_type_family_and_a_column_added_mid_stream_read_back_as_spark_wrote_them(
    spark, tmp_path
):
    typed = TypedTable(tmp_path / "typed")
    typed.add_batch(spark, [(i, f"2026-11-20T00:{10 * i:02d}:00Z") for i in range(1, 5)], False)
    typed.add_batch(spark, [(i, f"2026-11-20T01:{5 * i:02d}:00Z") for i in range(5, 8)], False)
    typed.run(spark, with_extra=False)
    typed.add_batch(spark, [(i, f"2026-11-20T01:{2 * i:02d}:00Z") for i in range(11, 14)], True)
    typed.add_batch(spark, [(19, "2026-11-20T05:00:00Z")], True)
    typed.add_batch(spark, [(20, "2026-11-20T06:00:00Z")], True)  # its batch moves the mark
    typed.run(spark, with_extra=True)
    spec = iceberg_spec(typed, tmp_path)
    publish_and_commit(spec, PARTITIONS[:2])
    table = catalog(tmp_path).load_table("lake.events")
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types == {
        "id": "long", "ts": "timestamptz", "d": "date", "flag": "boolean", "i": "int",
        "f": "float", "x": "double", "small_dec": "decimal(5, 2)", "dec": "decimal(12, 3)",
        "big_dec": "decimal(30, 6)", "s": "string", "bin": "binary",
        "st": "struct<19: a: optional int, 20: t: optional timestamptz, "
              "21: tags: optional list<string>>",
        "arr": "list<double>", "m": "map<string, int>",
        "nested": "list<struct<27: k: optional string, 28: v: optional long>>",
        "dt": "string", "hour": "string", "extra": "string",
    }  # fmt: skip
    # The column the stream added came in as an optional column, named for readers.
    assert list(types)[-1] == "extra" and not table.schema().find_field("extra").required
    staged = (
        spark.read.option("mergeSchema", "true").parquet(typed.staging)
        .where("hour in ('00', '01')").collect()
    )  # fmt: skip
    read = table.scan().to_arrow().to_pylist()
    assert len(read) == len(staged) == 10
    by_id = {r["id"]: r for r in read}
    for spark_row in staged:
        theirs = plain(spark_row.asDict(recursive=True))
        if theirs["nested"] is None:  # pyiceberg reads a null list of structs as [] (its
            theirs["nested"] = []  # apache/iceberg-python#3833); DuckDB shows the null below
        assert plain(by_id[spark_row["id"]]) == theirs, spark_row["id"]
    # DuckDB, independent of pyiceberg: the same nulls as Spark, in every column.
    columns = [c for c in types if c not in ("dt", "hour")]
    nulls = ", ".join(f"count(*) FILTER (WHERE {c} IS NULL)" for c in columns)
    _, ((*counted,),) = duckdb_query(
        duckdb_python(tmp_path), table.metadata_location, f"SELECT {nulls} FROM {{scan}}"
    )
    expected = [sum(r[c] is None for r in staged) for c in columns]
    assert counted == expected and expected[columns.index("nested")] > 0


def test_escaped_and_null_partition_values_of_two_keys_are_each_one_partition(spark, tmp_path):
    stream = StreamingTable(tmp_path / "odd", partition_by=("dt", "k"))
    odd = ["a/b", "x=y", "ü ß", "50%", None, "plain"]
    stream.add_batches(
        [row(i, "2026-11-20T01:00:00Z", k=k) for i, k in enumerate(odd)],
        [row(100, "2026-11-22T12:00:00Z")],
        [row(101, "2026-11-22T13:00:00Z")],  # the batch that records the moved watermark
    )
    stream.run(spark)
    options = table_options(stream, str(tmp_path / "table")) | {
        "partition_keys": "dt,k",
        "partition.time-extractor.timestamp-pattern": "$dt 00:00:00",
        "sink.partition-commit.delay": "1 d",
    }
    spec = TableSpec.from_options(
        options
        | catalog_options(tmp_path)
        | {
            "sink.partition-commit.policy.kind": "iceberg",
            "metastore_database": "lake",
            "metastore_table": "odd",
            "iceberg.create-table": "true",
        }
    )
    paths = [p.partition for p in read_table_report(spec).partitions if "2026-11-20" in p.partition]
    assert len(paths) == len(odd)
    publish_and_commit(spec, paths)
    table = catalog(tmp_path).load_table("lake.odd")
    rows = table.scan(selected_fields=("id", "dt", "k")).to_arrow().to_pylist()
    assert sorted(((r["k"] or ""), r["id"]) for r in rows) == sorted(
        ((k or ""), i) for i, k in enumerate(odd)
    )
    assert all(r["dt"] == "2026-11-20" for r in rows)
    # DuckDB finds the files under their escaped directory names too.
    _, read = duckdb_query(
        duckdb_python(tmp_path), table.metadata_location, "SELECT k, id FROM {scan}"
    )
    assert sorted((k or "", i) for k, i in read) == sorted((k or "", i) for i, k in enumerate(odd))
    # Each value is its own partition, found by its value (the null one by IS NULL).
    for k in odd:
        found = table.scan(row_filter=IsNull("k") if k is None else EqualTo("k", k)).plan_files()
        (task,) = list(found)
        assert tuple(task.file.partition) == ("2026-11-20", k) and task.file.record_count == 1
