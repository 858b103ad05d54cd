"""`fscommit quarantine`: a staged file that cannot be read is given up by the user, once,
and compaction publishes around it from then on."""

from __future__ import annotations

import json
from pathlib import Path

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.tables import table_flags
from tests.support.compaction import compact, table_options
from tests.support.damage import truncate


def test_an_unreadable_staged_file_is_published_around_only_once_the_user_quarantines_it(
    spark, hourly_stream, tmp_path, capsys
):
    from tests.support.compaction import check_exactly_once, ids_by_partition, visible_data_files

    hour = ("2026-11-20", "01")
    directory = Path(hourly_stream.staging, "dt=2026-11-20", "hour=01")
    victim = sorted(directory.glob("*.parquet"))[0]
    staged = ids_by_partition(spark, hourly_stream.staging)[hour]
    lost = ids_by_partition(spark, hourly_stream.staging, [victim])[hour]
    intact = victim.read_bytes()
    truncate(victim, len(intact) // 2)
    table = tmp_path / "table"
    flags = table_flags(table_options(hourly_stream, str(table)))

    failed = compact(hourly_stream.staging, hourly_stream.checkpoint, str(table))
    assert failed.returncode == 1
    (error,) = [
        p["error"] for p in json.loads(failed.stdout)["partitions"] if p["state"] == "failed"
    ]
    assert f"{victim.name} is not a readable Parquet file" in error
    assert "fscommit quarantine" in error and "--reason" in error
    uri = error.split("staged file ", 1)[1].split(" ", 1)[0]
    assert not list((table / "dt=2026-11-20" / "hour=01").glob("*"))

    # Files that are not committed staged files, or published ones, are refused: nothing
    # is recorded.
    ledger = CommitLedger(str(table))
    hour_00 = sorted(Path(hourly_stream.staging, "dt=2026-11-20", "hour=00").glob("*.parquet"))
    for wrong in (str(tmp_path / "elsewhere.parquet"), str(hour_00[0])):  # 00 is published
        assert main(["quarantine", *flags, wrong, "--reason", "lost disk"]) == 1
        assert wrong in capsys.readouterr().err
    assert main(["quarantine", *flags, uri, "--reason", "  "]) == 1
    assert "--reason" in capsys.readouterr().err
    assert not ledger.read("dt=2026-11-20/hour=01").quarantines

    assert main(["quarantine", *flags, uri, "--reason", "lost disk", "--json"]) == 0
    (recorded,) = json.loads(capsys.readouterr().out)["files"]
    assert recorded["partition"] == "dt=2026-11-20/hour=01" and recorded["new"]
    # By path too, and again: recorded once.
    assert main(["quarantine", *flags, str(victim), "--reason", "lost disk"]) == 0
    assert "quarantined already" in capsys.readouterr().out
    (record,) = ledger.read("dt=2026-11-20/hour=01").quarantines.values()
    assert record["reason"] == "lost disk" and record["files"][0]["uri"] == uri

    again = compact(hourly_stream.staging, hourly_stream.checkpoint, str(table))
    assert again.returncode == 0, again.stderr[-3000:]
    # Restored later, the file is still never published: the user gave its rows up.
    victim.write_bytes(intact)
    last = compact(hourly_stream.staging, hourly_stream.checkpoint, str(table))
    assert last.returncode == 0, last.stderr[-3000:]
    assert {p["state"] for p in json.loads(last.stdout)["partitions"]} <= {"up-to-date"}
    published_ids = ids_by_partition(spark, str(table), visible_data_files(str(table)))
    assert published_ids[hour] == staged - lost and lost
    others = {p for p in published_ids if p != hour}
    check_exactly_once(spark, hourly_stream.staging, str(table), complete=others)
    assert main(["status", *flags, "--json", "--stall-timeout", "365 d"]) == 0
    reported = {p["partition"]: p for p in json.loads(capsys.readouterr().out)["partitions"]}
    assert reported["dt=2026-11-20/hour=01"]["quarantined_files"] == 1
    assert reported["dt=2026-11-20/hour=01"]["unpublished_files"] == 0
