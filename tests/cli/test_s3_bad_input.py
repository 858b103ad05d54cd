"""Bad S3 input: wrong or missing credentials, a missing bucket, an endpoint that does not
answer, a prefix without permission. Each gets one clear message naming the location and
the fix; nothing is published and no lease is left behind.

Against an S3 server that checks IAM credentials and policies: a user whose policy allows
everything under ``s3://guarded/allowed/`` (and listing the bucket), nothing else.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from fscommit_dev.listeners import free_port
from fscommit_dev.s3_server import REGION, S3Server
from fscommit_dev.s3_tables import place_on_s3
from tests.support.compaction import FSCOMMIT

BUCKET = "guarded"


@pytest.fixture(scope="module")
def guarded(hourly_stream_module, tmp_path_factory):
    """An IAM-enforcing server, the stream under ``allowed/``, and the user's keys."""
    server = S3Server(tmp_path_factory.mktemp("s3-iam"))
    try:
        server.create_bucket(BUCKET)
        place_on_s3(hourly_stream_module, server, BUCKET, "allowed/events")
        iam = server.client("iam")
        etl = create_user(
            iam,
            "etl",
            [
                {"Action": "s3:*", "Resource": f"arn:aws:s3:::{BUCKET}/allowed/*"},
                {"Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{BUCKET}"},
            ],
        )
        admin = create_user(iam, "admin", [{"Action": "s3:*", "Resource": "*"}])
        server.set_auth(True)
        yield server, {"etl": etl, "admin": admin}
    finally:
        server.stop()


def create_user(iam, name: str, allowed: list[dict[str, str]]) -> tuple[str, str]:
    """An IAM user allowed ``allowed`` (Action, Resource) and nothing else; its keys."""
    iam.create_user(UserName=name)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    statements = [{"Effect": "Allow", **statement} for statement in allowed]
    iam.put_user_policy(
        UserName=name,
        PolicyName=f"{name}-policy",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}),
    )
    return key["AccessKeyId"], key["SecretAccessKey"]


@pytest.fixture(scope="module")
def hourly_stream_module(spark, tmp_path_factory):
    from fscommit_dev.streams import StreamingTable, hourly_batches

    stream = StreamingTable(tmp_path_factory.mktemp("s3-bad-input"))
    stream.add_batches(*hourly_batches("2026-11-20", range(4)))
    stream.run(spark)
    return stream


def run_commit(
    tmp_path, env: dict[str, str], bucket: str, table: str
) -> subprocess.CompletedProcess:
    spec = {
        "staging_path": f"s3a://{bucket}/allowed/events/staging",
        "checkpoint_path": f"s3a://{bucket}/allowed/events/checkpoint",
        "table_path": f"s3://{bucket}/{table}",
        "partition_keys": "dt,hour",
        "timestamp_pattern": "$dt $hour:00:00",
        "delay": "1 h",
        "policy_kind": "success-file",
    }
    spec_file = tmp_path / "table.json"
    spec_file.write_text(json.dumps(spec))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return subprocess.run(
        [FSCOMMIT, "commit", "--spec", str(spec_file), "--spark-master", "local[1]"],
        env=clean | {"AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": REGION} | env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def keys_of(user: str, **env: str):
    """The environment of ``user``'s keys, plus ``env``."""
    return lambda users: (
        {
            "AWS_ACCESS_KEY_ID": users[user][0],
            "AWS_SECRET_ACCESS_KEY": users[user][1],
        }
        | env
    )


CASES = [
    # (id, environment from the users' keys, bucket, table prefix, message)
    (
        "unknown access key",
        lambda users: {"AWS_ACCESS_KEY_ID": "AKIANOSUCHKEY0000000", "AWS_SECRET_ACCESS_KEY": "x"},
        BUCKET,
        "allowed/table",
        "the store rejects the credentials used for s3://guarded",
    ),
    (
        "wrong secret",
        lambda users: {"AWS_ACCESS_KEY_ID": users["etl"][0], "AWS_SECRET_ACCESS_KEY": "wrong"},
        BUCKET,
        "allowed/table",
        "fix the access key and secret",
    ),
    (
        "no credentials at all",
        lambda users: {
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
            "AWS_CONFIG_FILE": "/nonexistent",
        },
        BUCKET,
        "allowed/table",
        "no AWS credentials found for s3://guarded",
    ),
    (
        "prefix without permission",
        keys_of("etl"),
        BUCKET,
        "denied/table",
        "access to s3://guarded/denied/table/_fscommit",
    ),
    (
        "bucket that does not exist",
        keys_of("admin"),
        "no-such-bucket",
        "t",
        "bucket s3://no-such-bucket does not exist",
    ),
    (
        "endpoint that does not answer",
        keys_of("etl", AWS_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}"),
        BUCKET,
        "allowed/table",
        "cannot reach the store",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("environment", "bucket", "table", "message"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_one_clear_message_and_nothing_written(
    guarded, tmp_path, environment, bucket, table, message
):
    server, users = guarded
    before = keys(server)
    env = {"AWS_ENDPOINT_URL": server.endpoint} | environment(users)
    result = run_commit(tmp_path, env, bucket, table)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("fscommit: error")]
    assert len(lines) == 1 and message in lines[0], result.stderr[-2000:]
    assert "Traceback" not in output
    assert keys(server) == before  # nothing published, no lease, no probe left


def keys(server: S3Server) -> list[str]:
    server.set_auth(False)
    try:
        listing = server.client().list_objects_v2(Bucket=BUCKET)
        return sorted(item["Key"] for item in listing.get("Contents", []))
    finally:
        server.set_auth(True)
