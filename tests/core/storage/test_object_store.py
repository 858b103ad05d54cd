"""S3 settings and clients: explicit settings win in their context only, secrets are never
shown, and a missing bucket is named at once (against a real S3 API server)."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.errors import StoreError
from airflow_provider_fscommit.core.storage.object_store import (
    S3Credentials,
    S3Settings,
    current_settings,
    is_s3,
    s3_client,
    s3_filesystem,
    task_settings,
    use_s3_settings,
)

CONNECTION = S3Settings(
    "http://127.0.0.1:9", "eu-west-1", S3Credentials("AKIACONN", "conn-secret", "conn-token")
)


def test_s3_uris_are_told_by_scheme_in_any_case():
    assert is_s3("s3://b/k") and is_s3("/local", "S3A://b/k") and is_s3("s3n://b")
    assert not is_s3("file:///t", "/data/s3/table", "hdfs://nn/s3a")


def test_explicit_settings_win_inside_their_context_over_the_environment(monkeypatch):
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://minio:9000")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    from_environment = S3Settings(
        "http://minio:9000", "us-west-2", S3Credentials("AKIAENV", "env-secret")
    )
    assert current_settings() == from_environment
    with use_s3_settings(CONNECTION):
        assert current_settings() == CONNECTION
        assert task_settings() == CONNECTION  # static keys travel with the tasks
    assert current_settings() == from_environment


def test_the_chain_alone_is_left_to_each_executor(monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    assert current_settings().credentials is None
    assert task_settings() is None


def test_secrets_are_never_shown():
    shown = [repr(CONNECTION), CONNECTION.describe()]
    assert "AKIACONN" in shown[1] and "endpoint http://127.0.0.1:9" in shown[1]
    assert not [s for s in shown if "conn-secret" in s or "conn-token" in s]
    assert S3Settings().describe() == "AWS S3, the standard AWS credential chain"


def test_a_missing_bucket_is_named_with_where_requests_went(s3_env):
    bucket = s3_env.create_bucket("object-store-present")
    assert s3_filesystem(bucket) is s3_filesystem(bucket)  # one per settings and bucket
    assert s3_client() is s3_client()
    with pytest.raises(StoreError, match=r"bucket s3://object-store-absent does not exist") as e:
        s3_filesystem("object-store-absent")
    assert f"endpoint {s3_env.env()['AWS_ENDPOINT_URL']}" in str(e.value)
