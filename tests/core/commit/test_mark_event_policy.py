"""The mark-event policy against a real Hive metastore: LOAD_DONE for committed partitions."""

from __future__ import annotations

import pytest
from hmsclient.genthrift.hive_metastore.ttypes import PartitionEventType

from airflow_provider_fscommit.core.commit.mark_event_policy import MarkEventCommitPolicy
from airflow_provider_fscommit.core.errors import MetastoreError
from airflow_provider_fscommit.core.partition.partition_spec import PartitionSpec
from airflow_provider_fscommit.core.publish.published import CommitContext
from fscommit_dev.metastore.client import (
    create_table,
    metastore_committer,
    metastore_table_spec,
    thrift_client,
)
from tests.support.compaction import published_ledger
from tests.support.metastore_calls import context, counting_factory

LOAD_DONE = PartitionEventType.LOAD_DONE


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
