"""The table state: a routine run reads what changed, whatever the table's age, and a
table of the per-partition layout is upgraded once, surviving a kill half-way."""

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_provider_fscommit.cli.arguments import DEPRECATED_FLAGS
from airflow_provider_fscommit.core.commit import success_file_policy
from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction import compactor, readers
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import LedgerError
from airflow_provider_fscommit.core.faults import FAULT_ENV
from airflow_provider_fscommit.core.formats import file_format
from airflow_provider_fscommit.core.ledger import ledger as ledger_module
from airflow_provider_fscommit.core.ledger import lock
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.ledger.table_state import (
    CHECKPOINT_INTERVAL,
    PartitionSummary,
    TableState,
)
from airflow_provider_fscommit.core.maintenance.expiration import expire_partitions
from airflow_provider_fscommit.core.maintenance.retention import clean_staging
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.spark import checkpoint, sink_log, staging
from airflow_provider_fscommit.core.status.table_report import read_table_report
from fscommit_dev.aged_table import AgedTable
from fscommit_dev.counting_fs import counting
from fscommit_dev.synthetic_log import FIRST_HOUR, write_checkpoint_batch
from fscommit_dev.tables import table_flags

# Every module of a run that opens, lists or writes a file.
COUNTED = (ledger_module, lock, sink_log, checkpoint, staging, file_format, compactor)
COUNTED += (readers, success_file_policy)
# What may differ between a day-old and a 100-day-old table: the table state's
# checkpoint cadence (a checkpoint, its hint and a clean-up listing).
SLACK = 5


def run_units(tasks):
    return compact_units(tasks)


def commit_run(spec, partitions=None):
    """``fscommit commit``'s work: compact (the units in this process), then commit."""
    summary = CompactionPublisher(spec).run(run_units, partitions)
    ready = [o.partition for o in summary.outcomes if not o.failed]
    return summary, PartitionCommitter(spec, create_policies(spec)).commit(ready)


def committed(root: Path, hours: int) -> tuple[AgedTable, TableSpec]:
    """An aged table of ``hours``, upgraded and committed by one run of this release."""
    aged = AgedTable(root, hours)
    aged.write()
    spec = aged.spec()
    commit_run(spec)
    return aged, spec


def routine_counts(aged: AgedTable, monkeypatch) -> dict[str, int]:
    """Files opened, listed and written by each routine run on ``aged`` (upgraded first).

    The counting filesystem is not the local one, so it offers no create-once writes: the
    table declares a single writer (each create is then a look and a write).
    """
    spec = aged.spec(single_writer=True)
    counts = {}
    with counting(monkeypatch, *COUNTED) as calls:
        # The first run under this release upgrades the table. Counted from the next: the
        # process's readers of the table, which later runs share, are made here.
        commit_run(spec)
        calls.clear()
        summary, outcomes = commit_run(spec)
        # Nothing to do: counted, not listed, and the committer is given none of them.
        assert (summary.outcomes, summary.unchanged, outcomes) == ((), aged.hours, [])
        counts["no-op commit"] = len(calls)
        # One process, one reader of the stream: the run and the committer look once each
        # (the committer's completeness step and its freshness use its look), and the
        # table state's checkpoint is decoded once, then only looked at.
        listed = [path.rpartition("/")[2] for op, path in calls if op == "list"]
        assert {name: listed.count(name) for name in ("commits", "offsets", "_spark_metadata")} == {
            "commits": 2,
            "offsets": 2,
            "_spark_metadata": 2,
        }
        opened = [p for op, p in calls if op.startswith("open") and ".checkpoint." in p]
        assert opened == []  # decoded by the first run of this process
        calls.clear()
        report = read_table_report(spec)
        assert report.counts() == {"committed": aged.hours}
        counts["status"] = len(calls)
        calls.clear()
        hour = aged.add_hour()
        assert [p.partition for p in CompactionPublisher(spec).preview(None).plans] == [hour]
        counts["plan"] = len(calls)
        calls.clear()
        summary, outcomes = commit_run(spec)
        assert [(o.partition, o.state) for o in summary.outcomes] == [(hour, "published")]
        assert summary.unchanged == aged.hours
        assert [(o.partition, o.state) for o in outcomes] == [(hour, "committed")]
        counts["one-hour commit"] = len(calls)
        # Of the partitions' records, only the new hour's were read.
        read = {path.partition("/_fscommit/partitions/")[2] for _, path in calls}
        assert {p for p in read if p and not p.startswith(hour)} == set()
    return counts


def test_a_routine_run_reads_the_same_on_a_day_old_and_a_hundred_day_old_table(
    tmp_path, monkeypatch
):
    """Counts, not times: 24 and 2,400 committed hours, every run in its own reader."""
    day = AgedTable(tmp_path / "day", 24)
    hundred_days = AgedTable(tmp_path / "hundred-days", 2400)
    for aged in (day, hundred_days):
        aged.write()
    young, old = routine_counts(day, monkeypatch), routine_counts(hundred_days, monkeypatch)
    print({"24 hours": young, "2,400 hours": old})
    for run, count in young.items():
        assert old[run] <= count + SLACK, (run, young, old)
    assert young["no-op commit"] < 100


def test_an_old_layout_table_is_upgraded_once_and_a_killed_upgrade_changes_nothing(tmp_path):
    aged = AgedTable(tmp_path, 6)
    aged.write()
    spec = aged.spec()
    ledger = CommitLedger(str(aged.table))
    published = sorted(p for p in aged.table.rglob("*") if "_fscommit" not in p.parts)
    # A reader of a table not upgraded yet reads every partition's records, writes nothing.
    assert ledger.state().version == -1 and len(ledger.state().partitions) == 6
    assert not (aged.table / "_fscommit" / "state").exists()

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_UPGRADE, str(aged.root)],
        env=os.environ | {FAULT_ENV: "during-upgrade"},
        start_new_session=True,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[3],  # the checkout, where fscommit_dev is
    )
    assert killed.returncode == -9, killed.stderr
    assert ledger.state().version == -1  # nothing of the upgrade is there
    assert not list((aged.table / "_fscommit").glob("state/*.json"))

    summary, outcomes = commit_run(spec)
    assert (summary.outcomes, summary.unchanged, outcomes) == ((), 6, [])
    state = ledger.state()
    assert state.checkpoint_version == 0 and set(state.partitions) == {
        aged.partition(h) for h in range(6)
    }
    for partition, recorded in state.partitions.items():
        assert recorded == ledger.read(partition).summary()
        assert recorded.policies_current and recorded.settled_files == 1
    # Nothing was published again, and the records stay where a release before wrote them.
    assert sorted(p for p in aged.table.rglob("*") if "_fscommit" not in p.parts) == published
    names = {p.name for p in (aged.table / "_fscommit/partitions" / aged.partition(0)).iterdir()}
    assert names == {"plan-00000000.json", "commit-00000000.json", "policy-00000000.json"}


KILLED_UPGRADE = """
import sys
from datetime import timedelta
from pathlib import Path
from fscommit_dev.aged_table import AgedTable
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
CompactionPublisher(AgedTable(Path(sys.argv[1]), 6).spec()).run(lambda tasks: [])
"""


def test_late_data_after_an_upgrade_is_published_once_and_recorded(tmp_path):
    aged, spec = committed(tmp_path, 4)
    late = aged.add_batch(1)
    summary, outcomes = commit_run(spec)
    assert [(o.partition, o.state, o.files_in) for o in summary.outcomes if o.files_in] == [
        (late, "published", 1)
    ]
    assert [(o.partition, o.state) for o in outcomes if o.state == "committed"] == [
        (late, "committed")
    ]
    recorded = CommitLedger(str(aged.table)).state().get(late)
    assert recorded is not None
    assert (recorded.settled_files, recorded.policy_commits, recorded.latest_commit) == (2, 2, 1)
    assert read_table_report(spec).counts() == {"committed": 3, "re-committed": 1}
    again, _ = commit_run(spec)
    assert (again.outcomes, again.unchanged) == ((), 4)


def test_a_settled_hour_is_unchanged_whatever_its_trigger_says_now(tmp_path):
    """A run judges only what the table state does not settle (of a year-old table, what
    changed): a committed hour stays unchanged when the trigger would call it pending
    again, as a query restarted on a new checkpoint starts its watermark over."""
    aged, spec = committed(tmp_path, 4)
    write_checkpoint_batch(aged.checkpoint, 1, int(FIRST_HOUR.timestamp() * 1000))
    summary, outcomes = commit_run(spec)
    assert (summary.outcomes, summary.unchanged, outcomes) == ((), 4, [])
    assert read_table_report(spec).counts() == {"committed": 4}


def test_an_expired_hour_is_unchanged_until_late_data_for_it_is_refused(tmp_path):
    """A year of expiration drops thousands of hours: a run counts them, and names only
    the one whose late data it refuses."""
    aged, _ = committed(tmp_path, 4)
    spec = aged.spec(**{"partition.expiration-time": "1 d"})
    assert len(expire_partitions(spec, dry_run=False).partitions) == 4
    summary, outcomes = commit_run(spec)
    assert (summary.outcomes, summary.unchanged, outcomes) == ((), 4, [])
    late = aged.add_batch(1)
    summary, outcomes = commit_run(spec)
    assert [(o.partition, o.state) for o in summary.outcomes] == [(late, "expired")]
    assert summary.unchanged == 3
    assert [(o.partition, o.state) for o in outcomes] == [(late, "expired")]


def test_records_behind_the_state_are_refused_and_nothing_is_published(tmp_path):
    aged, spec = committed(tmp_path, 3)
    records = aged.table / "_fscommit" / "partitions" / aged.partition(1)
    for record in records.iterdir():
        record.unlink()  # a partition's records lost (a bad restore, a hand clean-up)
    late = aged.add_batch(1)
    before = sorted(p for p in (aged.table / late).iterdir())
    with pytest.raises(LedgerError, match=f"records of {late} in .*{late} miss what the table"):
        commit_run(spec)
    assert sorted(p for p in (aged.table / late).iterdir()) == before


def test_an_unreadable_record_is_named_by_the_run_that_needs_it(tmp_path):
    aged, spec = committed(tmp_path, 3)
    late = aged.add_batch(2)
    policy = aged.table / "_fscommit" / "partitions" / late / "policy-00000000.json"
    policy.write_text("{")
    with pytest.raises(LedgerError, match=r"policy-00000000\.json is unreadable"):
        commit_run(spec)
    assert len(list((aged.table / late).glob("*.parquet"))) == 1


def test_the_state_checkpoints_and_its_folder_stays_small(tmp_path, monkeypatch):
    aged = AgedTable(tmp_path, 3)
    aged.write()
    ledger = CommitLedger(str(aged.table))
    for n in range(3 * CHECKPOINT_INTERVAL + 4):
        ledger.record([aged.partition(n % 3)])
    folder = sorted(p.name for p in (aged.table / "_fscommit" / "state").iterdir())
    checkpoints = [n for n in folder if n.endswith(".checkpoint.arrow")]
    assert len(checkpoints) == 2 and len(folder) <= 2 * CHECKPOINT_INTERVAL + 3, folder
    with counting(monkeypatch, ledger_module) as calls:
        state = CommitLedger(str(aged.table)).state()
    assert len(calls) <= CHECKPOINT_INTERVAL + 3, calls
    assert state.partitions == {
        aged.partition(h): ledger.read(aged.partition(h)).summary() for h in range(3)
    }


def test_a_json_checkpoint_of_an_earlier_build_is_read_and_the_next_one_is_arrow(tmp_path):
    aged = AgedTable(tmp_path, 3)
    aged.write()
    ledger = CommitLedger(str(aged.table))
    upgraded = ledger.upgrade()
    folder = aged.table / "_fscommit" / "state"
    # The table as an earlier build left it: a JSON checkpoint, a hint without a format.
    (folder / "0000000000.checkpoint.arrow").unlink()
    document = {
        "format": 1,
        "version": 0,
        "partitions": {p: s.to_dict() for p, s in upgraded.partitions.items()},
    }
    (folder / "0000000000.checkpoint.json").write_text(json.dumps(document))
    (folder / "_last_checkpoint.json").write_text(json.dumps({"version": 0}))
    assert CommitLedger(str(aged.table)).state().partitions == upgraded.partitions
    for n in range(CHECKPOINT_INTERVAL):
        ledger.record([aged.partition(n % 3)])
    assert (folder / f"{CHECKPOINT_INTERVAL:010d}.checkpoint.arrow").exists()
    assert json.loads((folder / "_last_checkpoint.json").read_text())["format"] == 2
    state = CommitLedger(str(aged.table)).state()
    assert state.checkpoint_version == CHECKPOINT_INTERVAL
    assert state.partitions == {
        aged.partition(h): ledger.read(aged.partition(h)).summary() for h in range(3)
    }
    # Every fact survives the columns, the documents (who committed, receipts) included.
    receipted = PartitionSummary(
        settled_files=2,
        latest_commit=1,
        policies_current=True,
        last_origin={"dag_id": "hourly", "run_id": "scheduled__1", "task_id": "commit"},
        receipts={"iceberg": {"snapshot_id": 7, "files": ["a.parquet"]}},
        format="parquet",
    )
    written = TableState(20, {**state.partitions, aged.partition(0): receipted}, 20)
    ledger.state_log.create_checkpoint(written, ledger.store)
    assert CommitLedger(str(aged.table)).state().partitions == written.partitions
    # A newer format than this release reads is refused, naming the fix.
    (folder / "_last_checkpoint.json").write_text(json.dumps({"format": 3, "version": 10}))
    with pytest.raises(LedgerError, match="newer format than this release reads; upgrade"):
        CommitLedger(str(aged.table)).state()


def test_a_checkpoints_rows_are_the_summaries_written_asked_one_by_one_or_all_at_once(
    tmp_path,
):
    """A routine run asks a year-old table's state for the few partitions with work, each
    made from its checkpoint row; a step that walks every partition has them made at once.
    Both give the summaries written, every fact, null and document included, and an entry
    after the checkpoint wins over its row."""
    variants = [
        PartitionSummary(),
        PartitionSummary(settled_files=3, latest_commit=2, policies_current=True, format="json"),
        PartitionSummary(
            policy_commits=2,
            last_commit_ms=1_700_000_000_000,
            last_origin={"dag_id": "hourly", "run_id": "manual__1"},
            receipts={"iceberg": {"snapshot_id": 7}},
            published_compactions=2,
            retire_pending=True,
            expired_at_ms=5,
        ),
    ]
    written = {
        f"dt=2026-11-{1 + n % 28:02d}/hour={n % 24:02d}/n={n}": variants[n % 3] for n in range(200)
    }
    root = tmp_path / "_fscommit"
    ledger = CommitLedger(str(tmp_path))
    log, store = ledger.state_log, ledger.store
    (root / "state").mkdir(parents=True)
    log.create_checkpoint(TableState(0, written, 0), store)
    state = log.read()
    assert state is not None and state.columns is not None
    # One by one (the first rows asked are made alone, the rest at once), then all.
    assert {path: state.partitions[path] for path in written} == written
    assert state.get("dt=2026-12-01/hour=00/n=0") is None and len(state.partitions) == 200
    changed = {next(iter(written)): variants[1]}
    after = log.append(changed, state, store)
    assert dict(after.partitions.items()) == written | changed and after.changed == changed.keys()
    # A document the checkpoint holds unreadably is named when asked for, with the fix.
    arrow = root / "state" / "0000000000.checkpoint.arrow"
    table = pa.ipc.open_file(arrow.read_bytes()).read_all()
    broken = table.set_column(
        table.schema.get_field_index("receipts"),
        "receipts",
        pa.array(["{"] * table.num_rows, pa.string()),
    )
    other = tmp_path / "broken"
    (other / "_fscommit" / "state").mkdir(parents=True)
    with pa.ipc.new_file(
        other / "_fscommit/state/0000000000.checkpoint.arrow", broken.schema
    ) as out:
        out.write_table(broken)
    broken_state = CommitLedger(str(other)).state()
    with pytest.raises(LedgerError, match=r"0000000000\.checkpoint\.arrow is unreadable.*restore"):
        broken_state.partitions[next(iter(written))]


def test_entries_of_runs_that_raced_both_land_in_order(tmp_path):
    aged = AgedTable(tmp_path, 2)
    aged.write()
    first, second = CommitLedger(str(aged.table)), CommitLedger(str(aged.table))
    base = first.upgrade()
    zero, one = aged.partition(0), aged.partition(1)
    summary = PartitionSummary(settled_files=7)
    assert first.state_log.append({zero: summary}, base, first.store).version == 1
    # The second run read the state before the first appended: its version moves on.
    state = second.state_log.append({one: summary}, base, second.store)
    assert state.version == 2 and state.get(zero) == summary and state.get(one) == summary
    assert first.state() == state


def test_staging_retention_looks_only_at_partitions_with_files_left_to_clean(tmp_path, monkeypatch):
    aged, spec = committed(tmp_path, 6)
    first = clean_staging(spec, timedelta(0), dry_run=False)
    assert len(first.files) == 6 and not list(aged.staging.rglob("*.parquet"))
    records = aged.table / "_fscommit" / "partitions" / aged.partition(0)
    assert (records / "clean-00000000.json").exists()
    late = aged.add_batch(2)
    with counting(monkeypatch, ledger_module) as calls:
        second = clean_staging(spec, timedelta(0), dry_run=True)
    assert second.files == []  # the late file is not published yet
    read = {path.partition("/_fscommit/partitions/")[2] for _, path in calls}
    assert {p for p in read if p and not p.startswith(late)} == set()
    summary, _ = commit_run(spec)
    assert [o.partition for o in summary.outcomes if o.state == "published"] == [late]
    assert [f["path"] for f in clean_staging(spec, timedelta(0), dry_run=False).files] == [
        f"{late}/part-00001-00000002-aged.c000.snappy.parquet"
    ]


# The last release before the table state: what a worker not upgraded yet runs.
RELEASE_BEFORE = "1d913da"


def test_a_worker_on_the_release_before_reads_an_upgraded_table_and_publishes_nothing_twice(
    tmp_path,
):
    """A rolling upgrade: the release before keeps reading the records where it always did."""
    checkout = Path(__file__).parents[3]
    before = tmp_path / "release-before"
    before.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(checkout), "archive", RELEASE_BEFORE, "airflow_provider_fscommit"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
    aged, spec = committed(tmp_path / "aged", 4)  # upgraded by this release
    new = aged.add_hour()
    commit_run(spec)  # and one hour committed into the table state
    published = sorted(p for p in aged.table.rglob("*") if "_fscommit" not in p.parts)
    # The release before names the flags as it did (this one keeps those as aliases).
    old_names = {new: old for old, new in DEPRECATED_FLAGS.items()}
    flags = [old_names.get(flag, flag) for flag in table_flags(spec)]

    def old(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", OLD_CLI, str(before), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    status = old("status", *flags, "--json")
    assert status.returncode == 0, status.stderr
    states = {p["partition"]: p["state"] for p in json.loads(status.stdout)["partitions"]}
    assert states == {p.partition: p.state for p in read_table_report(spec).partitions}
    assert states[new] == "committed"
    commit = old("commit", *flags, "--spark-submit", "/bin/false", "--json")
    assert commit.returncode == 0, commit.stderr
    assert {o["state"] for o in json.loads(commit.stdout)["commits"]} == {"up-to-date"}
    assert sorted(p for p in aged.table.rglob("*") if "_fscommit" not in p.parts) == published


OLD_CLI = """
import sys
sys.path.insert(0, sys.argv[1])
import airflow_provider_fscommit as release
assert release.__file__.startswith(sys.argv[1]), release.__file__
from airflow_provider_fscommit.cli.main import main
sys.exit(main(sys.argv[2:]))
"""
