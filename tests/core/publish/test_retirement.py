"""Retiring what a committed rewrite replaced: the replaced files and the directories of
earlier rewrites go, only after the policies committed the rewrite, and a run killed
halfway leaves the rest to the next."""

from __future__ import annotations

from pathlib import Path

from airflow_provider_fscommit.core.compaction.planner import plan_partition, plan_rewrite
from airflow_provider_fscommit.core.formats.file_format import FileFormat
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.ledger.lock import TableLock
from airflow_provider_fscommit.core.publish.retirement import retire
from airflow_provider_fscommit.core.spark.staging import StagedFile

HOUR = "dt=2026-11-20/hour=00"


def published(ledger: CommitLedger, table: Path, name: str, rewrite: bool) -> int:
    """Record a committed compaction of one staged file (a rewrite of every published
    one when ``rewrite``) with one output ``name``, and write that output; its seq."""
    records = ledger.read(HOUR)
    common = {
        "seq": records.next_seq,
        "target_file_size": 100,
        "codec": "snappy",
        "sink_latest_batch": 3,
        "watermark_ms": 4,
        "created_ms": 5,
    }
    staged = [StagedFile(f"file:///staging/{HOUR}/{name}", 10)]
    if rewrite:
        live = [o["name"] for r in records.live_commits for o in r["outputs"]]
        files = [StagedFile(f"file://{table}/{HOUR}/{n}", 10) for n in live]
        plan = plan_rewrite(HOUR, files, staged, set(), file_format=FileFormat.PARQUET, **common)
    else:
        plan = plan_partition(
            HOUR, staged, set(), auto_compaction=True, directory=records.directory, **common
        )
    assert plan is not None
    ledger.write_plan(plan)
    output = "/".join(x for x in (plan.directory, name) if x)
    ledger.write_commit(plan, {"seq": plan.seq, "rows": 1, "outputs": [{"name": name}]})
    path = table / HOUR / output
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PAR1")
    return plan.seq


def committed_by_policies(ledger: CommitLedger, seq: int) -> None:
    ledger.write_policy_commit(HOUR, {"compaction_seq": seq, "committed_at_ms": 6})


def files(table: Path) -> list[str]:
    return sorted(str(p.relative_to(table / HOUR)) for p in (table / HOUR).rglob("*.parquet"))


def test_the_files_a_committed_rewrite_replaced_go_once_the_policies_committed_it(tmp_path):
    table = tmp_path / "table"
    ledger = CommitLedger(str(table))
    published(ledger, table, "a.parquet", rewrite=False)
    first = published(ledger, table, "b.parquet", rewrite=True)
    committed_by_policies(ledger, first)
    with TableLock(str(table), "commit") as lock:
        retire(ledger, HOUR, ledger.read(HOUR), lock)
    assert files(table) == [f"rewrite-{first:05d}/b.parquet"]
    second = published(ledger, table, "c.parquet", rewrite=True)
    # Before the policies commit the second rewrite, the catalog reads the first's
    # directory: nothing is to be retired yet.
    assert not ledger.read(HOUR).retire_pending
    committed_by_policies(ledger, second)
    records = ledger.read(HOUR)
    assert records.retire_pending
    assert records.superseded == [f"rewrite-{first:05d}/b.parquet"]
    with TableLock(str(table), "commit") as lock:
        retire(ledger, HOUR, records, lock)
    # The earlier rewrite's directory, emptied, goes with its files.
    assert files(table) == [f"rewrite-{second:05d}/c.parquet"]
    assert not (table / HOUR / f"rewrite-{first:05d}").exists()
    records = ledger.read(HOUR)
    assert not records.retire_pending and not records.superseded
    assert len(records.retirements) == 2


def test_a_retirement_killed_halfway_is_finished_and_recorded_by_the_next_run(tmp_path):
    table = tmp_path / "table"
    ledger = CommitLedger(str(table))
    published(ledger, table, "a.parquet", rewrite=False)
    published(ledger, table, "b.parquet", rewrite=False)
    seq = published(ledger, table, "c.parquet", rewrite=True)
    committed_by_policies(ledger, seq)
    (table / HOUR / "a.parquet").unlink()  # the killed run deleted one file, recorded nothing
    records = ledger.read(HOUR)
    assert records.retire_pending and records.superseded == ["a.parquet", "b.parquet"]
    with TableLock(str(table), "commit") as lock:
        retire(ledger, HOUR, records, lock)
    assert files(table) == [f"rewrite-{seq:05d}/c.parquet"]
    (retirement,) = ledger.read(HOUR).retirements.values()
    assert retirement["files"] == ["a.parquet", "b.parquet"]
    assert retirement["rewrite_seq"] == seq
