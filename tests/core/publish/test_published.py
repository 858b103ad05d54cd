"""What every policy is given of a run's published partitions: one batch with the table's
completeness beside them (the value the ledger then records), and what it says of each
partition kept under its kind."""

from __future__ import annotations

from typing import ClassVar

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.published import (
    CommitBatch,
    CommitContext,
    Receipts,
    as_batch,
)
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.completeness import Completeness
from airflow_provider_fscommit.core.status.table_report import read_table_report
from tests.support.compaction import table_options

PARTITIONS = [f"dt=2026-11-20/hour={h:02d}" for h in range(3)]


class BatchRecorder(PartitionCommitPolicy):
    """A custom policy written against ``commit_all(contexts)``: what it was handed."""

    batches: ClassVar[list[tuple[list[str], dict[str, str] | None]]] = []

    def commit(self, context: CommitContext) -> None:
        raise AssertionError("the committer hands the whole batch to commit_all")

    def commit_all(self, contexts: list[CommitContext]) -> Receipts:
        completeness = as_batch(contexts).completeness
        BatchRecorder.batches.append(
            ([c.path for c in contexts], None if completeness is None else dict(completeness))
        )
        return {c.path: {"rows": c.summary["rows"]} for c in contexts}


def test_every_policy_gets_the_runs_completeness_and_its_receipts_are_kept_under_its_kind(
    compacted_stream, tmp_path
):
    options = table_options(compacted_stream, str(tmp_path / "table"))
    spec = TableSpec.from_options(options | {"sink.partition-commit.policy.kind": "success-file"})
    CompactionPublisher(spec).run(compact_units, PARTITIONS)
    BatchRecorder.batches.clear()
    committer = PartitionCommitter(spec, [*create_policies(spec), BatchRecorder()])
    committer.commit(PARTITIONS)
    ((paths, completeness),) = BatchRecorder.batches
    assert paths == PARTITIONS
    # The value the ledger records after the policies: the same, computed once.
    record = CommitLedger(spec.table_path).read_completeness()
    assert record is not None
    assert completeness == Completeness.from_record(record).table_parameters()
    assert completeness["fscommit.complete-through"].startswith("2026-11-20T02:00")
    rows = {p.partition: p.receipts for p in read_table_report(spec).partitions}
    assert {p: rows[p] for p in PARTITIONS} == {p: {"custom": {"rows": 3}} for p in PARTITIONS}

    # A rerun has nothing to commit: an empty batch, with the completeness as it stands.
    committer.commit(PARTITIONS)
    assert BatchRecorder.batches[1] == ([], completeness)
    # Called directly, outside a committer's run, a policy gets no completeness.
    assert as_batch([]).completeness is None
    assert isinstance(as_batch([]), CommitBatch)
