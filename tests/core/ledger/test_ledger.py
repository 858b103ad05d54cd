"""The ledger tells open from committed plans and what is published."""

import pytest

from airflow_provider_fscommit.core.compaction.planner import (
    plan_partition,
)
from airflow_provider_fscommit.core.errors import LedgerError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.spark.staging import StagedFile


def make_plan(seq, files):
    return plan_partition(
        "dt=2026-11-20/hour=03",
        [StagedFile(f, 10) for f in files],
        set(),
        seq=seq,
        target_file_size=100,
        auto_compaction=True,
        codec="snappy",
        sink_latest_batch=1,
        watermark_ms=2,
        created_ms=3,
    )


def test_open_and_committed_plans_and_published_inputs(tmp_path):
    ledger = CommitLedger(str(tmp_path / "table"))
    partition = "dt=2026-11-20/hour=03"
    first, second = make_plan(0, ["file:///a", "file:///b"]), make_plan(1, ["file:///c"])
    ledger.write_plan(first)
    ledger.write_commit(first, {"seq": 0})
    ledger.write_plan(second)
    records = ledger.read(partition)
    assert records.committed_plans == [first]
    assert records.open_plans == [second]
    assert records.published_inputs == {"file:///a", "file:///b"}
    assert records.next_seq == 2
    assert ledger.abandon(second, "crashed")
    records = ledger.read(partition)
    assert records.open_plans == [] and records.committed_plans == [first]
    assert records.next_seq == 2  # an abandoned plan's number is never reused
    # Hidden from readers of the table: the ledger lives under _fscommit.
    assert (tmp_path / "table" / "_fscommit" / "partitions" / partition).is_dir()
    assert not list((tmp_path / "table" / "_fscommit").rglob("*.tmp"))


def test_the_commit_point_is_created_once_by_whoever_comes_first(tmp_path):
    """Finishing a plan and abandoning it race for one name: exactly one of them wins."""
    ledger = CommitLedger(str(tmp_path))
    late, early = make_plan(0, ["file:///a"]), make_plan(1, ["file:///b"])
    for plan in (late, early):
        assert ledger.write_plan(plan)
        assert not ledger.write_plan(plan.__class__(**{**plan.__dict__, "plan_id": "other"}))
    assert ledger.abandon(late, "its lease expired")
    assert not ledger.write_commit(late, {"seq": 0, "plan_id": late.plan_id})
    assert ledger.write_commit(early, {"seq": 1, "plan_id": early.plan_id})
    assert ledger.write_commit(early, {"seq": 1, "plan_id": early.plan_id})  # a retried write
    assert not ledger.abandon(early, "too late")
    records = ledger.read(late.partition)
    assert list(records.abandoned) == [0] and list(records.commits) == [1]
    assert records.published_inputs == {"file:///b"}


def test_a_commit_record_without_its_plan_is_an_error(tmp_path):
    ledger = CommitLedger(str(tmp_path))
    plan = make_plan(4, ["file:///a"])
    ledger.write_commit(plan, {"seq": 4})
    with pytest.raises(LedgerError, match=r"commit records \[4\] without their plans"):
        ledger.read(plan.partition)


def test_an_unreadable_record_is_an_error(tmp_path):
    ledger = CommitLedger(str(tmp_path))
    plan = make_plan(0, ["file:///a"])
    ledger.write_plan(plan)
    (tmp_path / "_fscommit" / "partitions" / plan.partition / "plan-00000000.json").write_text("{")
    with pytest.raises(LedgerError, match="is unreadable"):
        ledger.read(plan.partition)


def test_run_summaries(tmp_path):
    ledger = CommitLedger(str(tmp_path))
    assert ledger.read_run("r1") is None
    ledger.write_run("r1", {"rows": 3})
    assert ledger.read_run("r1") == {"rows": 3}


def test_a_policy_record_written_from_held_records_never_takes_another_runs_number(tmp_path):
    """The committer writes from the records it read: a number another run took meanwhile
    moves it on, and the held records then lag (the table state corrects them later)."""
    partition = "dt=2026-11-20/hour=03"
    ours, theirs = CommitLedger(str(tmp_path)), CommitLedger(str(tmp_path))
    plan = make_plan(0, ["file:///a"])
    ours.write_plan(plan)
    ours.write_commit(plan, {"seq": 0, "plan_id": plan.plan_id})
    held = ours.read(partition)
    ours.write_policy_commit(partition, {"compaction_seq": 0, "run": "ours"}, held)
    assert held.summary() == ours.read(partition).summary()  # summarized without a read
    held = ours.read(partition)
    theirs.write_policy_commit(partition, {"compaction_seq": 0, "run": "theirs"})
    ours.write_policy_commit(partition, {"compaction_seq": 0, "run": "ours again"}, held)
    runs = {n: r["run"] for n, r in ours.read(partition).policy_commits.items()}
    assert runs == {0: "ours", 1: "theirs", 2: "ours again"}
    assert set(held.policy_commits) == {0}  # behind the records, never ahead of them
