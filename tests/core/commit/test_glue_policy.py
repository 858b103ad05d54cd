"""The glue policy against a real Glue Data Catalog API (moto's server), in the chain: the
per-partition errors of a batch answer, done partitions, and the errors that name the fix.
(How the table writes, in Glue's chunks, retried when throttled:
tests/core/catalogs/test_glue_table.py.)"""

from __future__ import annotations

import boto3
import pytest

from airflow_provider_fscommit.core.commit.committer import PartitionCommitter
from airflow_provider_fscommit.core.commit.glue_policy import GlueCommitPolicy
from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.errors import GlueCatalogError
from airflow_provider_fscommit.core.ledger.ledger import CommitLedger
from fscommit_dev.s3_server import ACCESS_KEY, REGION
from tests.support.compaction import published_ledger
from tests.support.glue import ORC, create_glue_table, glue_partitions, glue_table_spec
from tests.support.metastore_calls import context

WRITES = {"BatchCreatePartition", "BatchUpdatePartition", "BatchDeletePartition", "UpdateTable"}


def policy(s3_server, name: str, **client: str) -> GlueCommitPolicy:
    return GlueCommitPolicy(lambda: s3_server.client("glue", **client), "fscommit", name)


def writes(s3_server, since: int) -> list[str]:
    return [c for c in s3_server.glue_calls()[since:] if c in WRITES]


def test_a_refused_partition_fails_the_commit_the_rest_are_in_glue_once_and_the_rerun_completes(
    s3_server, tmp_path
):
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "refused", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "refused", policy_kind="glue,success-file")
    hours = [f"dt=2026-11-20/hour={h:02d}" for h in range(4)]
    for hour in hours:
        published_ledger(spec, hour, rows=3)
    committer = PartitionCommitter(
        spec, create_policies(spec, glue_client=lambda: s3_server.client("glue"))
    )
    s3_server.inject_glue_fault(
        "BatchCreatePartition", "InvalidInputException", values=["2026-11-20", "02"]
    )
    with pytest.raises(GlueCatalogError) as error:
        committer.commit(hours)
    message = str(error.value)
    assert "refused 1 of 4 partition(s) of fscommit.refused" in message
    assert "dt=2026-11-20/hour=02: InvalidInputException" in message
    assert set(glue_partitions(glue, "fscommit", "refused")) == {
        ("2026-11-20", h) for h in ("00", "01", "03")
    }
    ledger = CommitLedger(spec.table_path)
    assert not any(ledger.read(hour).policies_current for hour in hours)  # none recorded
    assert not (tmp_path / "table" / "dt=2026-11-20" / "hour=00" / "_SUCCESS").exists()

    start = len(s3_server.glue_calls())
    outcomes = committer.commit(hours)
    assert [o.state for o in outcomes] == ["committed"] * 4
    assert writes(s3_server, start) == ["BatchCreatePartition"]  # only the refused one
    assert len(glue_partitions(glue, "fscommit", "refused")) == 4
    start = len(s3_server.glue_calls())
    assert {o.state for o in committer.commit(hours)} == {"up-to-date"}
    assert s3_server.glue_calls()[start:] == []  # recorded: Glue is not even asked


def test_done_partitions_point_at_an_empty_hidden_directory_and_go_with_their_partition(
    s3_server, tmp_path
):
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "done", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "done", policy_kind="glue,done-partition")
    contexts = [context(spec, "2026-11-20", h) for h in ("00", "01")]
    for chain_policy in create_policies(spec, glue_client=lambda: s3_server.client("glue")):
        chain_policy.commit_all(contexts)
        chain_policy.commit_all(contexts)  # idempotent
    partitions = glue_partitions(glue, "fscommit", "done")
    assert set(partitions) == {("2026-11-20", h) for h in ("00", "01", "00.done", "01.done")}
    done = partitions[("2026-11-20", "01.done")]
    assert done["StorageDescriptor"]["Location"] == (
        f"{tmp_path}/table/_fscommit/done/dt=2026-11-20/hour=01.done"
    )
    assert done["Parameters"] == {}

    dropped = policy(s3_server, "done").drop(spec, [["2026-11-20", "00"], ["2026-11-20", "07"]])
    assert dropped == 1  # hour 07 was never there
    assert set(glue_partitions(glue, "fscommit", "done")) == {
        ("2026-11-20", "01"),
        ("2026-11-20", "01.done"),
    }


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("no database", "database nowhere does not exist in the Glue Data Catalog (us-east-1)"),
        (
            "no table",
            "table fscommit.missing does not exist in the Glue Data Catalog (us-east-1); "
            "create it partitioned by (dt string, hour string)",
        ),
        ("wrong region", "database fscommit does not exist in the Glue Data Catalog (eu-west-1)"),
        ("other keys", "partitioned by ['day'], but the table spec's partition keys are"),
        ("other format", "is declared as org.apache.hadoop.hive.ql.io.orc.OrcInputFormat (orc)"),
        ("no region", "cannot make an AWS Glue client"),
    ],
)
def test_bad_catalog_settings_are_one_message_and_nothing_is_recorded(
    s3_server, tmp_path, monkeypatch, setup, message
):
    glue = s3_server.client("glue")
    name = f"bad_{setup.replace(' ', '_')}"
    database = "nowhere" if setup == "no database" else "fscommit"
    if setup == "other keys":
        create_glue_table(glue, "fscommit", name, tmp_path / "table", keys=("day",))
    elif setup == "other format":
        create_glue_table(glue, "fscommit", name, tmp_path / "table", storage=ORC)
    elif setup != "no table":
        create_glue_table(glue, "fscommit", name, tmp_path / "table")
    spec = glue_table_spec(
        tmp_path / "table",
        "missing" if setup == "no table" else name,
        metastore_database=database,
        format="parquet",
    )
    region = {"wrong region": "eu-west-1"}.get(setup, REGION)

    def client():
        if setup == "no region":
            monkeypatch.delenv("AWS_REGION", raising=False)
            monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
            monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
            return boto3.client("glue", endpoint_url=s3_server.endpoint)
        return boto3.client(
            "glue",
            endpoint_url=s3_server.endpoint,
            region_name=region,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key="x",
        )

    published_ledger(spec, "dt=2026-11-20/hour=00", rows=3)
    committer = PartitionCommitter(spec, create_policies(spec, glue_client=client))
    with pytest.raises(GlueCatalogError) as error:
        committer.commit(["dt=2026-11-20/hour=00"])
    assert message in str(error.value)
    assert not CommitLedger(spec.table_path).read("dt=2026-11-20/hour=00").policies_current


def test_refused_credentials_are_one_message_naming_the_permissions(s3_server, tmp_path):
    glue = s3_server.client("glue")
    create_glue_table(glue, "fscommit", "guarded", tmp_path / "table")
    spec = glue_table_spec(tmp_path / "table", "guarded")
    unknown = {"access_key": "AKIAUNKNOWNUSER00001", "secret_key": "not-a-secret"}
    s3_server.set_auth(True)
    try:
        with pytest.raises(GlueCatalogError) as error:
            policy(s3_server, "guarded", **unknown).commit(context(spec, "2026-11-20", "00"))
    finally:
        s3_server.set_auth(False)
    assert "refused the AWS credentials for fscommit.guarded" in str(error.value)
    assert "glue:BatchCreatePartition" in str(error.value)
    assert "not-a-secret" not in str(error.value)
    assert glue_partitions(glue, "fscommit", "guarded") == {}
