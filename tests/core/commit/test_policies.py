"""Commit policies against a real Hive metastore Thrift server."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import pytest

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.mark_event_policy import LOAD_DONE, MarkEventCommitPolicy
from airflow_provider_fscommit.core.commit.metastore_policy import MetastoreCommitPolicy
from airflow_provider_fscommit.core.commit.policy import (
    CommitContext,
    CommitSummary,
    PartitionCommitPolicy,
)
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError, MetastoreError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from fscommit_dev.metastore.client import (
    create_table,
    metastore_committer,
    metastore_table_spec,
    thrift_client,
)
from tests.support.compaction import published_ledger


def context(spec: TableSpec, dt: str, hour: str, rows: int = 10) -> CommitContext:
    path = PartitionSpec(("dt", "hour"), (dt, hour)).path()
    Path(spec.table_path, path).mkdir(parents=True, exist_ok=True)
    return CommitContext(
        spec,
        PartitionSpec(("dt", "hour"), (dt, hour)),
        path,
        f"{spec.table_path}/{path}",
        CommitSummary(
            files=1,
            bytes=100,
            rows=rows,
            watermark_ms=5,
            max_batch_id=7,
            compaction_seq=None,
            committed_at_ms=9,
            format=None,
        ),
    )


class CountingClient:
    """Counts the Thrift calls made through a real client (a spy, not a fake)."""

    calls: ClassVar[list[str]] = []

    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        CountingClient.calls.append(name)
        return getattr(self._client, name)


def counting_factory(server):
    @contextmanager
    def factory():
        with thrift_client(server) as client:
            yield CountingClient(client)

    return factory


def test_500_partitions_commit_in_one_batch_call(metastore, tmp_path):
    create_table(metastore, "batch500", tmp_path / "table")
    spec = metastore_table_spec(tmp_path / "table", "batch500")
    contexts = [context(spec, f"2026-11-{1 + i // 24:02d}", f"{i % 24:02d}") for i in range(500)]
    CountingClient.calls.clear()
    MetastoreCommitPolicy(counting_factory(metastore), "fscommit", "batch500").commit_all(contexts)
    assert CountingClient.calls.count("add_partitions_req") == 1
    with thrift_client(metastore) as client:
        names = client.get_partition_names("fscommit", "batch500", -1)
        assert len(names) == 500 and "dt=2026-11-01/hour=00" in names
        partition = client.get_partition_by_name("fscommit", "batch500", "dt=2026-11-03/hour=07")
    assert partition.sd.location.endswith("table/dt=2026-11-03/hour=07")
    assert partition.parameters["numRows"] == "10"
    assert partition.parameters["fscommit.max-batch-id"] == "7"


def test_an_existing_partition_is_altered_to_the_new_location_and_stats(metastore, tmp_path):
    create_table(metastore, "alter", tmp_path / "table")
    spec = metastore_table_spec(tmp_path / "table", "alter")
    policy = MetastoreCommitPolicy(counting_factory(metastore), "fscommit", "alter")
    policy.commit(context(spec, "2026-11-20", "03", rows=10))
    moved = metastore_table_spec(tmp_path / "elsewhere", "alter")
    CountingClient.calls.clear()
    policy.commit(context(moved, "2026-11-20", "03", rows=12))
    assert "alter_partitions_with_environment_context" in CountingClient.calls
    with thrift_client(metastore) as client:
        partition = client.get_partition_by_name("fscommit", "alter", "dt=2026-11-20/hour=03")
    assert partition.sd.location.endswith("elsewhere/dt=2026-11-20/hour=03")
    assert partition.parameters["numRows"] == "12"


def test_values_that_need_escaping_and_nulls_travel_as_values(metastore, tmp_path):
    create_table(metastore, "awkward", tmp_path / "table", keys=("dt", "k"))
    spec = TableSpec.from_options(
        {
            "staging_path": "/s",
            "checkpoint_path": "/c",
            "partition_keys": "dt,k",
            "table_path": str(tmp_path / "table"),
        }
    )
    contexts = []
    for value in ("a b:c/d%e=f#g", None, "x'); DROP TABLE t; --"):
        partition = PartitionSpec(("dt", "k"), ("2026-11-20", value))
        contexts.append(
            CommitContext(
                spec,
                partition,
                partition.path(),
                f"{spec.table_path}/{partition.path()}",
                CommitSummary(
                    files=0,
                    bytes=0,
                    rows=0,
                    watermark_ms=0,
                    max_batch_id=0,
                    compaction_seq=None,
                    committed_at_ms=0,
                    format=None,
                ),
            )
        )
    MetastoreCommitPolicy(counting_factory(metastore), "fscommit", "awkward").commit_all(contexts)
    with thrift_client(metastore) as client:
        values = {tuple(p.values) for p in client.get_partitions("fscommit", "awkward", -1)}
    assert values == {
        ("2026-11-20", "a b:c/d%e=f#g"),
        ("2026-11-20", "__HIVE_DEFAULT_PARTITION__"),
        ("2026-11-20", "x'); DROP TABLE t; --"),
    }


def test_a_missing_table_or_other_partition_keys_are_clear_errors(metastore, tmp_path):
    spec = metastore_table_spec(tmp_path / "table", "nope")
    with pytest.raises(MetastoreError, match=r"table fscommit.nope does not exist"):
        MetastoreCommitPolicy(counting_factory(metastore), "fscommit", "nope").commit(
            context(spec, "2026-11-20", "00")
        )
    create_table(metastore, "daily", tmp_path / "daily", keys=("dt",))
    with pytest.raises(MetastoreError, match=r"partitioned by \['dt'\]"):
        MetastoreCommitPolicy(counting_factory(metastore), "fscommit", "daily").commit(
            context(spec, "2026-11-20", "00")
        )


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


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sink.partition-commit.policy.kind": "success-file,metastore"}, "success-file before"),
        ({"sink.partition-commit.policy.kind": "mark-event,metastore"}, "mark-event before"),
        (
            {"sink.partition-commit.policy.kind": "mark-event", "metastore_table": None},
            "includes 'mark-event' but no metastore table",
        ),
        ({"sink.partition-commit.policy.kind": "metastore,hive-event"}, "unknown policies"),
        (
            {"sink.partition-commit.policy.kind": "metastore", "metastore_table": None},
            "no metastore table",
        ),
    ],
)
def test_policy_configuration_errors(tmp_path, options, message):
    with pytest.raises(ConfigError, match=message):
        metastore_table_spec(tmp_path / "t", "x", **options)


def test_no_policy_or_no_metastore_connection_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"policy\.kind is empty"):
        create_policies(metastore_table_spec(tmp_path / "t", "x"))
    spec = metastore_table_spec(
        tmp_path / "t", "x", **{"sink.partition-commit.policy.kind": "metastore"}
    )
    with pytest.raises(ConfigError, match="needs a metastore connection"):
        create_policies(spec)


def test_s3_locations_on_a_metastore_without_the_s3a_connector_are_a_clear_error(
    metastore, s3_env, tmp_path
):
    """A real metastore checks each location with its own Hadoop client; pyspark's jars
    carry no S3A connector, as a bare Hive install does not: the message says what to add."""
    create_table(metastore, "on_s3", tmp_path / "table")
    bucket = s3_env.create_bucket("metastore-locations")
    spec = metastore_table_spec(
        tmp_path / "table",
        "on_s3",
        table_path=f"s3a://{bucket}/table",
        **{"sink.partition-commit.policy.kind": "metastore,success-file"},
    )
    committer = PartitionCommitter(spec, create_policies(spec, lambda: thrift_client(metastore)))
    with pytest.raises(MetastoreError) as error:
        committer.commit(["dt=2026-11-20/hour=00"], commit_empty=True)
    message = str(error.value)
    assert (
        f"cannot use the partition location s3a://{bucket}/table/dt=2026-11-20/hour=00" in message
    )
    assert "hadoop-aws" in message and "rerun" in message
    keys = [o["Key"] for o in s3_env.client().list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert not [k for k in keys if k.endswith("_SUCCESS") or "/policy-" in k]


def test_mark_event_marks_committed_partitions_load_done(metastore, tmp_path):
    """Hive-world consumers poll isPartitionMarkedForEvent; only committed partitions say so,
    null values are marked under the default partition name, and marking again is safe."""
    create_table(metastore, "marked", tmp_path / "table")
    spec = metastore_table_spec(tmp_path / "table", "marked")
    policy = MarkEventCommitPolicy(counting_factory(metastore), "fscommit", "marked")
    done = context(spec, "2026-11-20", "03")
    null = CommitContext(
        spec,
        PartitionSpec(("dt", "hour"), ("2026-11-20", None)),
        "dt=2026-11-20/hour=__HIVE_DEFAULT_PARTITION__",
        f"{spec.table_path}/dt=2026-11-20/hour=__HIVE_DEFAULT_PARTITION__",
        done.summary,
    )
    policy.commit_all([done, null])
    policy.commit(done)
    with thrift_client(metastore) as client:

        def marked(hour: str) -> bool:
            values = {"dt": "2026-11-20", "hour": hour}
            return client.isPartitionMarkedForEvent("fscommit", "marked", values, LOAD_DONE)

        assert marked("03") and marked("__HIVE_DEFAULT_PARTITION__")
        assert not marked("04")


def test_mark_event_on_a_missing_table_names_it(metastore, tmp_path):
    spec = metastore_table_spec(tmp_path / "table", "never_created")
    policy = MarkEventCommitPolicy(counting_factory(metastore), "fscommit", "never_created")
    with pytest.raises(MetastoreError, match=r"table fscommit.never_created does not exist"):
        policy.commit(context(spec, "2026-11-20", "00"))


def test_mark_event_follows_the_metastore_policy(metastore, metastore_connection, tmp_path):
    """Paimon's key names the chain; the event is there once the partition is, and a
    committed partition is recorded once."""
    create_table(metastore, "marked_chain", tmp_path / "table")
    spec = metastore_table_spec(
        tmp_path / "table",
        "marked_chain",
        **{"partition.mark-done-action": "metastore,mark-event,success-file"},
    )
    published_ledger(spec, "dt=2026-11-20/hour=05", rows=2)
    committer = metastore_committer(spec)
    assert [o.state for o in committer.commit(["dt=2026-11-20/hour=05"])] == ["committed"]
    with thrift_client(metastore) as client:
        values = {"dt": "2026-11-20", "hour": "05"}
        assert client.isPartitionMarkedForEvent("fscommit", "marked_chain", values, LOAD_DONE)
        assert client.get_partition_by_name("fscommit", "marked_chain", "dt=2026-11-20/hour=05")
    assert [o.state for o in committer.commit(["dt=2026-11-20/hour=05"])] == ["up-to-date"]


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
