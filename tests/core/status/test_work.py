"""One answer to "what work does this partition need?" (#57): discovery, the table report,
the status page, the publisher, the committer and expiry all give it, for every case a
table's partitions are in; a sweep built on discovery finishes each, an interrupted
retirement included."""

from __future__ import annotations

import signal
from collections import Counter

from airflow_provider_fscommit.core.commit.committer import CommitState, PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.compaction.summary import CompactionState
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.maintenance.expiration import expire_partitions
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.discovery import partitions_to_commit
from airflow_provider_fscommit.core.status.table_overview import TableEntry
from airflow_provider_fscommit.core.status.table_report import read_table_report
from airflow_provider_fscommit.core.status.work import Work
from airflow_provider_fscommit.plugins.render import render_page
from fscommit_dev.metastore.client import create_table, thrift_client
from fscommit_dev.streams import row
from tests.core.commit.test_rewrite import data_files, ids, run, spec_of
from tests.support.fault_worker import run_worker
from tests.test_fault_injection import staged_ids

HOURS = [f"dt=2026-11-20/hour={h:02d}" for h in range(6)]


def late(hour: int, number: int) -> dict:
    """A late row for ``hour`` (the watermark is past it: the stateless query writes it)."""
    return row(1000 + 10 * hour + number, f"2026-11-20T{hour:02d}:5{number}:00Z")


def publish_and_commit(spec: TableSpec, metastore, partitions: list[str], commit: list[str]):
    """Compact and publish ``partitions`` only; run the policies for ``commit`` only."""
    summary = CompactionPublisher(spec).run(compact_units, partitions)
    published = {o.partition for o in summary.outcomes if o.state == CompactionState.PUBLISHED}
    assert published == set(partitions)
    policies = create_policies(spec, lambda: thrift_client(metastore))
    PartitionCommitter(spec, policies).commit(commit)


def test_every_caller_gives_each_partition_the_same_work_and_a_sweep_finishes_it(
    spark, metastore, hourly_stream, tmp_path, monkeypatch
):
    stream, table = hourly_stream, tmp_path / "table"
    create_table(metastore, "work_cases", table)
    spec = spec_of(stream, table, "work_cases")  # the metastore: fragmented ones are rewritten
    kept = spec_of(stream, table, "work_cases", **{"compaction.rewrite-fragmented": "false"})
    run(spec, metastore)  # hours 00-02 committed
    # Hour 00: late data published beside the first compaction, then more of it rewrites the
    # partition, killed once the catalog reads the rewrite and before the replaced files go.
    stream.add_batches([late(0, 0)])
    stream.run(spark)
    run(spec, metastore)
    stream.add_batches([late(0, 1)])
    stream.run(spark)
    monkeypatch.setenv("FSCOMMIT_TEST_METASTORE_PORT", str(metastore.port))
    assert run_worker(spec.to_json(), fault="during-retire") == -signal.SIGKILL
    # Hour 01: three compactions (kept beside each other); hour 02: late data published, its
    # policies not run; hour 03: committed, then late data; hour 04: committed; 05 pending.
    stream.add_batches([late(1, 0), late(2, 0), row(9040, "2026-11-20T04:40:00Z")], [late(2, 1)])
    stream.run(spark)
    publish_and_commit(kept, metastore, [HOURS[1], HOURS[2], HOURS[3]], [HOURS[1], HOURS[3]])
    stream.add_batches([late(1, 1), late(3, 0), row(9050, "2026-11-20T05:40:00Z")], [late(3, 1)])
    stream.run(spark)
    publish_and_commit(kept, metastore, [HOURS[1], HOURS[4]], [HOURS[1], HOURS[4]])

    expected = {
        HOURS[0]: Work.RETIRE,
        HOURS[1]: Work.REWRITE,
        HOURS[2]: Work.COMMIT,
        HOURS[3]: Work.COMPACT,
        HOURS[4]: Work.NONE,
        HOURS[5]: Work.NONE,  # not committable yet
    }
    report = read_table_report(spec)
    assert {p.partition: p.work for p in report.partitions} == expected
    assert {p["partition"]: p["work"] for p in report.to_dict()["partitions"] if p["work"]} == {
        HOURS[0]: ["retire"],
        HOURS[1]: ["rewrite"],
        HOURS[2]: ["commit"],
        HOURS[3]: ["compact"],
    }
    discovered = partitions_to_commit(spec)
    assert {p.partition: p.work for p in discovered} == {p: w for p, w in expected.items() if w}
    assert {p.partition: p.reason for p in discovered} == {
        HOURS[0]: "retire-pending",
        HOURS[1]: "fragmented",
        HOURS[2]: "policies-pending",
        HOURS[3]: "late-data",
    }
    preview = CompactionPublisher(spec).preview(None)
    assert sorted(p.partition for p in preview.plans) == [HOURS[1], HOURS[3]]
    # Counted, not judged: hour 04 (hour 05 has no records yet, and is pending).
    assert preview.unchanged == 1
    assert [p.rewrites for p in sorted(preview.plans, key=lambda p: p.partition)] == [True, False]
    page = render_page([TableEntry("work", "work.yaml", report=report)], report.now_ms, "")
    for partition, work in expected.items():
        shown = f'data-partition="{partition}" data-work="{",".join(work.names)}"'
        assert shown in page, partition

    # Past its expiration, every partition is expired to every caller.
    expiring = spec_of(stream, table, "work_cases", **{"partition.expiration-time": "1 d"})
    expired = read_table_report(expiring)
    assert {p.partition: p.work for p in expired.partitions if p.work} == {
        p: Work.EXPIRED for p in HOURS[:5]
    }
    assert partitions_to_commit(expiring) == []
    refused = CompactionPublisher(expiring).preview(None)
    assert not refused.plans
    assert {o.partition for o in refused.settled if o.state == CompactionState.EXPIRED} == set(
        HOURS[:5]
    )
    assert {p["partition"] for p in expire_partitions(expiring).partitions} == set(HOURS[:5])

    # The sweep (discovery, then a compaction and a commit run of what it found) finishes
    # every partition: the rewrite's replaced files retired, the fragmented one rewritten.
    pending = [p.partition for p in discovered]
    CompactionPublisher(spec).run(compact_units, pending)
    outcomes = PartitionCommitter(
        spec, create_policies(spec, lambda: thrift_client(metastore))
    ).commit(pending)
    assert {o.partition: o.state for o in outcomes} == {
        HOURS[0]: CommitState.UP_TO_DATE,
        HOURS[1]: CommitState.COMMITTED,
        HOURS[2]: CommitState.COMMITTED,
        HOURS[3]: CommitState.COMMITTED,
    }
    assert partitions_to_commit(spec) == []
    assert {p.work for p in read_table_report(spec).partitions} == {Work.NONE}
    ledger = CommitLedger(str(table))
    for hour in HOURS[:2]:
        records = ledger.read(hour)
        assert records.retirements and not records.superseded, hour
        assert data_files(table / hour, recursive=True) == data_files(
            table / hour / records.directory, recursive=False
        )
    staged = staged_ids(stream.staging)
    for hour in HOURS[:5]:
        assert ids(data_files(table / hour, recursive=True)) == Counter(staged[hour]), hour
