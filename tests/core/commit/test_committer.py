"""The partition committer: its policy chain runs in order, once per published change, and
stops before the success file when a policy fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.errors import MetastoreError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.published import CommitContext
from fscommit_dev.metastore.client import (
    create_table,
    metastore_committer,
    metastore_table_spec,
    thrift_client,
)
from tests.support.compaction import published_ledger


class RecordingPolicy(PartitionCommitPolicy):
    """A custom policy: records its parameters and what was visible when it ran."""

    seen: ClassVar[list[dict]] = []

    def __init__(self, *parameters: str) -> None:
        self.parameters = parameters

    def commit(self, context: CommitContext) -> None:
        success = Path(context.spec.table_path, context.path, "_SUCCESS")
        RecordingPolicy.seen.append(
            {
                "parameters": self.parameters,
                "partition": context.path,
                "rows": context.summary["rows"],  # read as the dict it was before
                "success_file_existed": success.exists(),
            }
        )


def test_policies_run_in_order_and_reruns_change_nothing(metastore, metastore_connection, tmp_path):
    create_table(metastore, "chain", tmp_path / "table")
    spec = metastore_table_spec(
        tmp_path / "table",
        "chain",
        **{
            "sink.partition-commit.policy.kind": "metastore,custom,success-file",
            "sink.partition-commit.policy.class": f"{__name__}.RecordingPolicy",
            "sink.partition-commit.policy.class.parameters": "a;b=c",
        },
    )
    published_ledger(spec, "dt=2026-11-20/hour=00", rows=3)
    RecordingPolicy.seen.clear()
    committer = metastore_committer(spec)
    (outcome,) = committer.commit(["dt=2026-11-20/hour=00"])
    assert outcome.state == "committed"
    assert RecordingPolicy.seen == [
        {
            "parameters": ("a", "b=c"),
            "partition": "dt=2026-11-20/hour=00",
            "rows": 3,
            "success_file_existed": False,
        }
    ]
    success = json.loads(Path(spec.table_path, "dt=2026-11-20/hour=00", "_SUCCESS").read_text())
    assert success["rows"] == 3 and success["partition"] == "dt=2026-11-20/hour=00"
    assert [o.state for o in committer.commit(["dt=2026-11-20/hour=00"])] == ["up-to-date"]
    assert len(RecordingPolicy.seen) == 1
    published_ledger(spec, "dt=2026-11-20/hour=00", rows=2)  # late data, compacted again
    assert [o.state for o in committer.commit(["dt=2026-11-20/hour=00"])] == ["committed"]
    success = json.loads(Path(spec.table_path, "dt=2026-11-20/hour=00", "_SUCCESS").read_text())
    assert success["rows"] == 5 and success["files"] == 2
    with thrift_client(metastore) as client:
        partition = client.get_partition_by_name("fscommit", "chain", "dt=2026-11-20/hour=00")
    assert partition.parameters["numRows"] == "5" and partition.parameters["numFiles"] == "2"


def test_an_unreachable_metastore_fails_before_the_success_file(metastore, tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_METASTORE_DEFAULT", "hive-metastore://127.0.0.1:1")
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow-home"))
    spec = metastore_table_spec(
        tmp_path / "table",
        "chain",
        **{"sink.partition-commit.policy.kind": "metastore,success-file"},
    )
    published_ledger(spec, "dt=2026-11-20/hour=00", rows=3)
    committer = metastore_committer(spec)
    with pytest.raises(MetastoreError, match=r"cannot reach the metastore.*a retry is safe"):
        committer.commit(["dt=2026-11-20/hour=00"])
    assert not Path(spec.table_path, "dt=2026-11-20/hour=00", "_SUCCESS").exists()
    assert CommitLedger(spec.table_path).read("dt=2026-11-20/hour=00").policy_commits == {}
