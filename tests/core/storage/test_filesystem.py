"""Logged URIs and configured paths name the same places across schemes and encodings."""

import pytest

from airflow_provider_fscommit.core.storage.filesystem import (
    is_within,
    normalize_uri,
    relative_path,
)


@pytest.mark.parametrize(
    ("logged", "configured", "relative"),
    [
        ("file:///t/staging/dt=1/a.parquet", "/t/staging", "dt=1/a.parquet"),
        ("file:/t/staging/dt=1/a.parquet", "/t/staging/", "dt=1/a.parquet"),
        ("file:///t/staging/k=a%20b%253Ac/a.parquet", "file:///t/staging", "k=a b%3Ac/a.parquet"),
        ("s3a://bucket/t/staging/dt=1/a.parquet", "s3://bucket/t/staging", "dt=1/a.parquet"),
        ("s3n://bucket/t/staging/dt=1/a.parquet", "s3a://bucket/t/staging", "dt=1/a.parquet"),
        ("hdfs://nn:8020/t/staging/dt=1/a.parquet", "/t/staging", "dt=1/a.parquet"),
        ("hdfs://nn:8020/t/staging/dt=1/a.parquet", "hdfs://nn:8020/t/staging", "dt=1/a.parquet"),
        ("hdfs://nn:8020/t/staging/dt=1/a.parquet", "hdfs://other:8020/t/staging", None),
        ("s3a://bucket/t/staging/dt=1/a.parquet", "s3://another/t/staging", None),
        ("file:///t/staging-old/dt=1/a.parquet", "/t/staging", None),
        ("file:///moved/staging/dt=1/a.parquet", "/t/staging", None),
    ],
)
def test_logged_files_are_matched_to_the_configured_staging_root(logged, configured, relative):
    assert relative_path(normalize_uri(logged), normalize_uri(configured)) == relative


def test_relative_bare_paths_are_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert normalize_uri("staging").path == str(tmp_path / "staging")
    assert is_within(normalize_uri("staging/dt=1"), normalize_uri(str(tmp_path / "staging")))
