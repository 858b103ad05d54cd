"""The table report on a real stream and a real ledger: every state a partition goes through.

The stream is a real Spark query; compaction runs the real ``compact_units`` in this process
(the unit Spark's executors run) and the real committer writes the ledger, with and
without an Airflow origin. ``fscommit status`` must say the same as the report.
"""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path

import pytest

from airflow_provider_fscommit.cli.main import main
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.committable import PartitionState
from airflow_provider_fscommit.core.status.table_report import (
    POLICY_GRACE,
    TableReport,
    read_partition_states,
    read_table_report,
)
from fscommit_dev.streams import StreamingTable, hourly_batches, row
from tests.support.compaction import publish_and_commit, table_options

DAY = "dt=2026-11-20"
RUN_1 = {"dag_id": "fscommit_sweep", "run_id": "scheduled__2026-11-20T05:00:00+00:00"}
RUN_2 = {"dag_id": "fscommit_manual", "run_id": "manual__2026-11-20T06:00:00+00:00"}


def commit(spec: TableSpec, partitions: list[str], origin: dict | None = None) -> None:
    publish_and_commit(spec, partitions, origin)


def states(report: TableReport) -> dict[str, str]:
    """Each partition's state; the completeness step's lean read must give the same."""
    lean = read_partition_states(report.spec, report.status, report.now_ms)
    assert lean == report.states()
    return {p.partition: p.state.value for p in report.partitions}


@pytest.fixture
def stream(spark, tmp_path) -> StreamingTable:
    """Hours 00 to 04 of three rows each; safe watermark 03:10 (00 to 02 committable)."""
    stream = StreamingTable(tmp_path / "stream")
    stream.add_batches(*hourly_batches("2026-11-20", range(5)))
    stream.run(spark)
    return stream


def test_states_follow_a_partition_from_pending_to_re_committed(stream, spark, tmp_path, capsys):
    table = tmp_path / "table"
    spec = TableSpec.from_options(
        table_options(stream, str(table)) | {"sink.partition-commit.policy.kind": "success-file"}
    )
    before = read_table_report(spec)
    assert states(before) == {
        f"{DAY}/hour=00": "committable",
        f"{DAY}/hour=01": "committable",
        f"{DAY}/hour=02": "committable",
        f"{DAY}/hour=03": "pending",
        f"{DAY}/hour=04": "pending",
    }

    # 00 committed by an Airflow run, 01 from the CLI (no origin), 2026-11-19 23 empty.
    commit(spec, [f"{DAY}/hour=00"], RUN_1)
    commit(spec, [f"{DAY}/hour=01"])
    PartitionCommitter(spec, create_policies(spec)).commit(
        ["dt=2026-11-19/hour=23"], commit_empty=True
    )
    # This process's reader (a long-lived one's: shared) settles 00 and 01 now; the late
    # rows below unsettle 00 for it.
    settled = read_table_report(spec, shared=True, list_settled=False).settled.states
    assert [path for path, _, _ in settled] == [f"{DAY}/hour=00", f"{DAY}/hour=01"]
    # Late rows for 00 (and 01's hour moves the watermark to 04:10).
    stream.add_batches([row(900, "2026-11-20T00:50:00Z"), row(901, "2026-11-20T04:50:00Z")])
    stream.run(spark)
    late = read_table_report(spec)
    assert states(late) == {
        "dt=2026-11-19/hour=23": "committed",
        f"{DAY}/hour=00": "late-data",
        f"{DAY}/hour=01": "committed",
        f"{DAY}/hour=02": "committable",
        f"{DAY}/hour=03": "committable",
        f"{DAY}/hour=04": "pending",
    }
    hour_00 = next(p for p in late.partitions if p.partition == f"{DAY}/hour=00")
    assert (hour_00.staged_files, hour_00.unpublished_files, hour_00.published_rows) == (2, 1, 3)
    assert hour_00.last_origin is not None and hour_00.last_origin.run_id == RUN_1["run_id"]

    # The CLI says the same, as a table and as JSON.
    args = ["status", "--spec", _spec_file(tmp_path, spec), "--stall-timeout", "365 d"]
    assert main(args) == 0
    human = capsys.readouterr().out
    assert f"{DAY}/hour=00  late-data" in human
    assert f"{RUN_1['dag_id']} {RUN_1['run_id']}" in human
    assert "6 partition(s): 1 pending, 2 committable, 2 committed, 1 late-data" in human
    # 01 is settled (nothing staged since its commit): counted, listed only with --all; the
    # empty 23 has nothing staged to settle against, so it is listed.
    assert f"{DAY}/hour=01" not in human and "dt=2026-11-19/hour=23" in human
    assert "1 of them settled, not listed" in human
    assert main([*args, "--all"]) == 0
    assert f"{DAY}/hour=01  committed" in capsys.readouterr().out
    lean = read_table_report(spec, shared=True, list_settled=False)
    assert [p.partition for p in lean.partitions] == sorted(set(states(late)) - {f"{DAY}/hour=01"})
    assert lean.settled.states == [(f"{DAY}/hour=01", PartitionState.COMMITTED, None)]
    assert lean.states().states == late.states().states and lean.counts() == late.counts()
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {p["partition"]: p["state"] for p in out["partitions"]} == states(late)
    assert out["states"] == late.counts()

    # The next run commits the late rows: 00 is committed a second time, by RUN_2.
    commit(spec, [f"{DAY}/hour=00"], RUN_2)
    again = read_table_report(spec)
    hour_00 = next(p for p in again.partitions if p.partition == f"{DAY}/hour=00")
    assert hour_00.state == PartitionState.RECOMMITTED
    assert (hour_00.commits, hour_00.unpublished_files, hour_00.published_rows) == (2, 0, 4)
    assert hour_00.published_inputs == 2 and hour_00.published_files == 2
    assert hour_00.published_bytes == sum(
        p.stat().st_size for p in (table / DAY / "hour=00").glob("*.parquet")
    )
    assert hour_00.to_dict()["committed_by"] == RUN_2 | {"task_id": None}
    lean = read_table_report(spec, shared=True, list_settled=False)  # 00's summary changed
    assert lean.states().states == again.states().states and lean.counts() == again.counts()
    hour_01 = next(p for p in again.partitions if p.partition == f"{DAY}/hour=01")
    assert hour_01.state == PartitionState.COMMITTED and hour_01.last_origin is None
    assert hour_01.last_commit_ms is not None and hour_01.published_rows == 3

    # Published by a compaction whose commit has not run yet (a DAG run between its compact
    # and commit tasks): no alert for a monitor looking then; one once the grace is over.
    CompactionPublisher(spec).run(compact_units, [f"{DAY}/hour=02"])
    waiting = read_table_report(spec, timedelta(days=365))
    (hour_02,) = [p for p in waiting.partitions if p.partition == f"{DAY}/hour=02"]
    assert hour_02.published_files == 1 and hour_02.published_ms is not None
    assert waiting.unfinished_policies == [hour_02] and waiting.attention == []
    grace_ms = int(POLICY_GRACE.total_seconds() * 1000)
    overdue = read_table_report(spec, timedelta(days=365), now_ms=hour_02.published_ms + grace_ms)
    assert overdue.attention == [
        f"1 partition(s) published with policies unfinished for more than 15 min, e.g. "
        f"{DAY}/hour=02 (a commit run finishes them)"
    ]

    # Files of failed batches: looked for in the partitions not committed yet, unless
    # asked for everywhere (a listing of the whole directory grows with the table's age).
    for hour in ("01", "02"):
        orphan = Path(stream.staging) / DAY / f"hour={hour}" / "part-failed-attempt.parquet"
        orphan.write_bytes(b"PAR1")
        os.utime(orphan, (1, 1))
    assert read_table_report(spec).status.orphan_files == [
        f"{DAY}/hour=02/part-failed-attempt.parquet"
    ]
    # Orphans need a person's look: status exits "attention needed" (4) and says why.
    assert main([*args, "--orphans", "--json"]) == 4
    shown = json.loads(capsys.readouterr().out)
    assert shown["orphan_files"] == [
        f"{DAY}/hour={hour}/part-failed-attempt.parquet" for hour in ("01", "02")
    ]
    assert "2 orphan file(s) of failed batches in staging" in shown["attention"]

    # Stalled: the watermark has not moved for longer than the timeout.
    since = again.progress_since_ms
    assert since is not None and not again.stalled
    later = read_table_report(spec, timedelta(hours=1), now_ms=since + 2 * 3600 * 1000)
    assert later.stalled
    assert later.watermark_lag_ms == since + 7200_000 - stream.last_watermark_ms
    time.sleep(max(0.0, since / 1000 + 1.5 - time.time()))  # let one second pass
    assert main([*args, "--stall-timeout", "1 s"]) == 4  # attention needed
    assert "Stalled    no progress since" in capsys.readouterr().out

    # The report reads the table state, not each partition's records: an unreadable
    # record is found by the run that acts on its partition (tests/core/ledger), while an
    # unreadable state says so, naming the file, and the stream's view still shows.
    state_dir = table / "_fscommit" / "state"
    (state_dir / "_last_checkpoint.json").unlink()
    for checkpoint in state_dir.glob("*.checkpoint.arrow"):
        checkpoint.write_text("{")
    broken = read_table_report(spec)
    assert broken.ledger_error is not None and ".checkpoint.arrow" in broken.ledger_error
    assert "is unreadable" in broken.ledger_error
    assert states(broken)[f"{DAY}/hour=03"] == "committable"


def test_without_a_table_path_the_trigger_decides_alone(stream):
    options = table_options(stream, "")
    del options["table_path"]
    report = read_table_report(TableSpec.from_options(options))
    assert set(states(report).values()) == {"committable", "pending"}
    assert report.watermark_lag_ms is not None and report.watermark_lag_ms > 0
    assert all(p.commits == 0 and p.last_commit_ms is None for p in report.partitions)


def _spec_file(tmp_path, spec: TableSpec) -> str:
    path = tmp_path / "table.json"
    path.write_text(spec.to_json())
    return str(path)
