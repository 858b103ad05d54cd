"""The policy contract: the commit summary policies, readers and records share."""

from __future__ import annotations

import json
from pathlib import Path

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.metastore.client import metastore_table_spec
from tests.support.compaction import published_ledger


def test_the_commit_summary_keeps_its_json_form_in_the_success_file_ledger_and_outcome(tmp_path):
    """The summary is typed inside; its JSON keys are what readers of these records know."""
    spec = metastore_table_spec(
        tmp_path / "table", "unused", **{"sink.partition-commit.policy.kind": "success-file"}
    )
    hour = "dt=2026-11-20/hour=00"
    published_ledger(spec, hour, rows=3)
    (outcome,) = PartitionCommitter(spec, create_policies(spec)).commit([hour])
    facts = {
        "files": 1,
        "bytes": 50,
        "rows": 3,
        "watermark_ms": 4,
        "max_batch_id": 3,
        "compaction_seq": 0,
        "committed_at_ms": outcome.summary.committed_at_ms,
        "format": "parquet",
    }
    success = json.loads(Path(spec.table_path, hour, "_SUCCESS").read_text())
    assert success == {"partition": hour, **facts}
    assert outcome.to_dict() == {"partition": hour, "state": "committed", **facts}
    (record,) = CommitLedger(spec.table_path).read(hour).policy_commits.values()
    assert record == facts
    assert dict(outcome.summary) == facts  # the mapping custom policies read
