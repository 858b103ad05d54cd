"""The metastore policy against a real Hive metastore Thrift server, in the chain: a
location the metastore's server cannot use is one error naming the fix, and the chain's
later policies do not run. (How the table writes, in one batch call, altered partitions,
escaped values: tests/core/catalogs/test_metastore_table.py.)"""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.errors import MetastoreError
from fscommit_dev.metastore.client import create_table, metastore_table_spec, thrift_client


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
