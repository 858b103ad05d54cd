"""The partition committer: its policy chain runs in order, once per published change, and
stops before the success file when a policy fails; the table's completeness is one value
per run, which no failure after a catalog's commit moves back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy import PartitionCommitPolicy
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.quantities import iso_ms
from airflow_provider_fscommit.core.errors import LedgerError, MetastoreError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.publish.published import CommitContext
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from airflow_provider_fscommit.core.status.completeness import COMPLETE_THROUGH_PARAMETER
from fscommit_dev.metastore.client import (
    create_table,
    metastore_committer,
    metastore_table_spec,
    thrift_client,
)
from tests.core.commit.test_iceberg_policy import PARTITIONS
from tests.support.compaction import published_ledger
from tests.support.iceberg_catalog import catalog, iceberg_spec


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


def test_a_ledger_failing_after_an_iceberg_commit_never_moves_the_completeness_back(
    compacted_stream, tmp_path, monkeypatch
):
    """One completeness value per run: the Iceberg transaction's, recorded after it."""

    def failing(*_args, **_kwargs):
        raise LedgerError("the store refused the write (injected)")

    def held(directory: Path) -> str:
        properties = catalog(directory).load_table("lake.events").properties
        return properties[COMPLETE_THROUGH_PARAMETER]

    def recorded(spec) -> int | None:
        record = CommitLedger(spec.table_path).read_completeness()
        return None if record is None else record["complete_through_ms"]

    # The table state's record of the run fails (logged, not raised): the state lags the
    # commit, and the run's completeness is still the one the transaction wrote with the data.
    spec = iceberg_spec(compacted_stream, tmp_path)
    CompactionPublisher(spec).run(compact_units, PARTITIONS)
    PartitionCommitter(spec, create_policies(spec)).commit(PARTITIONS[:1])
    assert held(tmp_path).startswith("2026-11-20T00:00")
    with monkeypatch.context() as patched:
        patched.setattr(CommitLedger, "record", failing)
        PartitionCommitter(spec, create_policies(spec)).commit(PARTITIONS[1:])
    through = held(tmp_path)
    assert through.startswith("2026-11-20T02:00")  # every partition committed counts
    assert iso_ms(recorded(spec)) == through
    PartitionCommitter(spec, create_policies(spec)).commit(PARTITIONS)
    assert held(tmp_path) == through

    # The partitions' policy records fail after the Iceberg commit: the run fails; the next
    # one commits nothing again and records what the catalog holds.
    second = tmp_path / "second"
    second.mkdir()
    spec = iceberg_spec(compacted_stream, second)
    CompactionPublisher(spec).run(compact_units, PARTITIONS)
    with monkeypatch.context() as patched:
        patched.setattr(CommitLedger, "write_policy_commit", failing)
        with pytest.raises(LedgerError, match="injected"):
            PartitionCommitter(spec, create_policies(spec)).commit(PARTITIONS)
    through = held(second)
    assert through.startswith("2026-11-20T02:00") and recorded(spec) is None
    PartitionCommitter(spec, create_policies(spec)).commit(PARTITIONS)
    assert held(second) == through
    assert iso_ms(recorded(spec)) == through
    table = catalog(second).load_table("lake.events")
    assert len(table.metadata.snapshots) == 1
