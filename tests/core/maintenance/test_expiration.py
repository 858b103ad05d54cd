"""Partition expiration: metastore drop, then files, then the ledger; never anything younger."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hmsclient.genthrift.hive_metastore import ttypes

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.commit.policy_factory import catalog_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError
from airflow_provider_fscommit.core.faults import EXPIRE_FAULT_POINTS
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.maintenance.expiration import expire_partitions
from airflow_provider_fscommit.core.status.table_overview import TableEntry
from airflow_provider_fscommit.core.status.table_report import read_table_report
from airflow_provider_fscommit.hooks.metastore import connection_metastore_client
from airflow_provider_fscommit.plugins.render import render_page
from fscommit_dev.metastore.client import (
    create_table,
    metastore_committer,
    metastore_table_spec,
    thrift_client,
)
from fscommit_dev.streams import row
from fscommit_dev.tables import hourly_table, table_flags
from tests.support.compaction import FSCOMMIT, compact, published_ledger, table_options

HOURS = [f"dt=2026-11-20/hour={h:02d}" for h in range(3)]
FUTURE = "dt=2099-01-01/hour=00"


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp() * 1000)


def committed_table(metastore, tmp_path: Path, name: str, **options):
    """A metastore table with the three hours and a future hour published and committed."""
    create_table(metastore, name, tmp_path / "table")
    spec = metastore_table_spec(
        tmp_path / "table",
        name,
        **{
            "sink.partition-commit.policy.kind": "metastore,success-file",
            "timestamp_pattern": "$dt $hour:00:00",
        }
        | options,
    )
    for partition in [*HOURS, FUTURE]:
        published_ledger(spec, partition, rows=3)
        Path(spec.table_path, partition, "part-0.parquet").write_bytes(b"x" * 100)
    committer = metastore_committer(spec)
    assert {o.state for o in committer.commit([*HOURS, FUTURE])} == {"committed"}
    client = connection_metastore_client("metastore_default")
    return spec, committer, catalog_policies(spec, client, None)


def metastore_partitions(metastore, name: str) -> set[str]:
    with thrift_client(metastore) as client:
        return set(client.get_partition_names("fscommit", name, -1))


def test_values_time_drops_from_the_metastore_deletes_files_and_records_only_old_ones(
    metastore, metastore_connection, tmp_path
):
    spec, committer, metastore_policy = committed_table(
        metastore, tmp_path, "expiring", expiration_time="30 d"
    )
    now = ms("2026-12-20T01:30:00")  # hours 00 and 01 are more than 30 days old, 02 is not
    dry = expire_partitions(spec, dry_run=True, catalogs=metastore_policy, now_ms=now)
    assert [p["partition"] for p in dry.partitions] == HOURS[:2]
    assert dry.partitions[0]["files"] == 2 and dry.partitions[0]["bytes"] > 100  # + _SUCCESS
    assert metastore_partitions(metastore, "expiring") == {*HOURS, FUTURE}
    assert all(Path(spec.table_path, p, "part-0.parquet").exists() for p in HOURS)

    done = expire_partitions(spec, dry_run=False, catalogs=metastore_policy, now_ms=now)
    assert [p["partition"] for p in done.partitions] == HOURS[:2]
    assert metastore_partitions(metastore, "expiring") == {HOURS[2], FUTURE}
    assert not Path(spec.table_path, HOURS[0]).exists()
    assert not Path(spec.table_path, HOURS[1]).exists()
    assert Path(spec.table_path, HOURS[2], "part-0.parquet").exists()
    ledger = CommitLedger(spec.table_path)
    record = ledger.read(HOURS[0]).expired
    assert record["expired_at_ms"] == now and record["strategy"] == "values-time"
    assert ledger.read(HOURS[2]).expired is None

    # Within the check interval an applied run does nothing; forced, it finds nothing new.
    again = expire_partitions(spec, dry_run=False, catalogs=metastore_policy, now_ms=now + 1)
    assert again.skipped_until_ms == now + 3_600_000 and again.partitions == []
    forced = expire_partitions(
        spec, dry_run=False, catalogs=metastore_policy, force=True, now_ms=now + 1
    )
    assert forced.partitions == [] and forced.skipped_until_ms is None

    # Late data compacted into an expired partition is never committed again.
    published_ledger(spec, HOURS[0], rows=2)
    (outcome,) = committer.commit([HOURS[0]])
    assert outcome.state == "expired" and "late data for it is not published" in outcome.reason
    assert metastore_partitions(metastore, "expiring") == {HOURS[2], FUTURE}


def test_update_time_counts_from_the_last_commit(metastore, metastore_connection, tmp_path):
    spec, _, metastore_policy = committed_table(
        metastore,
        tmp_path,
        "updated",
        expiration_time="1 d",
        expiration_strategy="update-time",
    )
    now = int(time.time() * 1000)
    soon = expire_partitions(spec, catalogs=metastore_policy, now_ms=now + 12 * 3_600_000)
    assert soon.partitions == []  # committed moments ago: 2099 and 2026 alike
    later = expire_partitions(spec, catalogs=metastore_policy, now_ms=now + 25 * 3_600_000)
    assert [p["partition"] for p in later.partitions] == [*HOURS, FUTURE]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"expiration_time": "-3 d"}, "expected a positive duration"),
        ({"expiration_time": "0 s"}, "expected a positive duration"),
        ({"expiration_time": "30 d", "expiration_strategy": "mtime"}, "values-time, update-time"),
        ({"partition.expiration-check-interval": "0"}, "expected a positive duration"),
        (
            {"expiration_time": "30 d", "timestamp_pattern": "$day"},
            "day",
        ),
    ],
)
def test_bad_expiration_options_are_refused(tmp_path, options, message):
    with pytest.raises(ConfigError, match=message):
        metastore_table_spec(tmp_path / "table", "t", trigger="process-time", **options)


def test_expiring_needs_the_time_and_a_metastore_connection(tmp_path):
    spec = metastore_table_spec(
        tmp_path / "table", "t", **{"sink.partition-commit.policy.kind": "metastore"}
    )
    with pytest.raises(ConfigError, match=r"partition\.expiration-time"):
        expire_partitions(spec)
    with pytest.raises(ConfigError, match="needs a metastore connection"):
        catalog_policies(spec, None, None)


def expire_command(spec: TableSpec, metastore, *extra: str) -> list[str]:
    return [
        FSCOMMIT,
        "expire",
        *table_flags(spec),
        "--metastore-uri",
        metastore.uri,
        "--json",
        *extra,
    ]


@pytest.mark.parametrize("fault", EXPIRE_FAULT_POINTS)
def test_a_run_killed_halfway_is_finished_by_the_next_and_nothing_comes_back(
    metastore, metastore_connection, tmp_path, fault
):
    name = fault.replace("-", "_")
    spec, _, _ = committed_table(metastore, tmp_path, name)
    expiring = TableSpec.from_options(spec.to_dict() | {"expiration_time": "1 d"})
    env = {k: v for k, v in os.environ.items() if k != "FSCOMMIT_FAULT"}
    killed = subprocess.run(
        expire_command(expiring, metastore, "--apply"),
        env=env | {"FSCOMMIT_FAULT": fault},
        start_new_session=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr
    assert metastore_partitions(metastore, name) == {FUTURE}  # dropped first
    ledger = CommitLedger(spec.table_path)
    assert all(ledger.read(p).expired is None for p in HOURS)
    if fault == "after-expire-drop":
        assert all(Path(spec.table_path, p, "part-0.parquet").exists() for p in HOURS)
    else:
        assert not Path(spec.table_path, HOURS[0]).exists()
        assert Path(spec.table_path, HOURS[1], "part-0.parquet").exists()

    # Meanwhile a commit of late data must not bring a half-expired partition back.
    published_ledger(spec, HOURS[1], rows=1)
    committer = metastore_committer(expiring)
    assert {o.state for o in committer.commit(HOURS)} == {"expired"}
    assert metastore_partitions(metastore, name) == {FUTURE}

    finished = subprocess.run(
        expire_command(expiring, metastore, "--apply"),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    assert [p["partition"] for p in report["partitions"]] == HOURS
    assert not any(Path(spec.table_path, p).exists() for p in HOURS)
    assert all(ledger.read(p).expired for p in HOURS)
    assert Path(spec.table_path, FUTURE, "part-0.parquet").exists()
    assert metastore_partitions(metastore, name) == {FUTURE}
    with thrift_client(metastore) as client, pytest.raises(ttypes.NoSuchObjectException):
        client.get_partition_by_name("fscommit", name, HOURS[0])


def tree(root: str) -> dict[str, int]:
    return {
        os.path.relpath(os.path.join(d, f), root): os.stat(os.path.join(d, f)).st_mtime_ns
        for d, _, files in os.walk(root)
        for f in files
    }


def cli(capsys, *args: str) -> tuple[int, dict]:
    code = main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_late_rows_of_an_expired_partition_are_never_published(
    spark, hourly_stream, tmp_path, capsys
):
    stream, table = hourly_stream, str(tmp_path / "table")
    committed = compact(
        stream.staging, stream.checkpoint, table, "--policy", "success-file", command="commit"
    )
    assert committed.returncode == 0, committed.stderr
    flags = table_flags(hourly_table(stream.staging, stream.checkpoint, table_path=table))
    staging_before = tree(stream.staging)
    code, dry = cli(capsys, "expire", *flags, "--expiration-time", "1 d")
    assert code == 0 and dry["dry_run"] and dry["count"] == 3
    assert all(Path(table, p).exists() for p in HOURS)
    code, done = cli(capsys, "expire", *flags, "--expiration-time", "1 d", "--apply")
    assert code == 0 and [p["partition"] for p in done["partitions"]] == HOURS
    assert not any(Path(table, p).exists() for p in HOURS)
    assert tree(stream.staging) == staging_before  # staging is clean-staging's business

    stream.add_batches([row(70, "2026-11-20T00:20:00Z")])  # late rows for an expired hour
    stream.run(spark)
    # Even with the expiration option gone from the spec, the ledger's record holds.
    again = compact(stream.staging, stream.checkpoint, table)
    assert again.returncode == 0, again.stderr
    states = {p["partition"]: p for p in json.loads(again.stdout)["partitions"]}
    assert states[HOURS[0]]["state"] == "expired"
    assert "late data for it is not published" in states[HOURS[0]]["error"]
    assert not Path(table, HOURS[0]).exists()

    code, status = cli(capsys, "status", *flags, "--expiration-time", "1 d")
    by_partition = {p["partition"]: p for p in status["partitions"]}
    assert {by_partition[p]["state"] for p in HOURS} == {"expired"}
    assert by_partition[HOURS[0]]["unpublished_files"] == 1
    assert by_partition[HOURS[0]]["published_files"] == 0 and by_partition[HOURS[0]]["expired"]
    assert by_partition["dt=2026-11-20/hour=03"]["state"] != "expired"  # never published
    main(["status", *flags, "--expiration-time", "1 d"])
    text = capsys.readouterr().out
    assert "Expiration 1 d after the partition time (values-time)" in text
    assert "3 expired" in text
    spec = TableSpec.from_options(
        table_options(stream, table) | {"partition.expiration-time": "1 d"}
    )
    report = read_table_report(spec)
    page = render_page([TableEntry("events", "events.yaml", report=report)], report.now_ms, "")
    assert page.count('data-state="expired"') == 3
    assert "(1 late, not published)" in page and "1 d after the partition time" in page
