"""S3 settings from an Airflow AWS connection."""

from __future__ import annotations

from airflow_provider_fscommit.hooks.aws import s3_settings


def test_a_connection_gives_endpoint_region_and_keys(aws_tables_secret):
    settings = s3_settings("aws_tables")
    assert settings.endpoint_url == "http://127.0.0.1:9" and settings.region == "eu-west-3"
    assert settings.credentials.access_key == "AKIATABLES"
    assert settings.credentials.secret_key == aws_tables_secret
    assert aws_tables_secret not in repr(settings)  # secrets never print
    assert s3_settings(None) is None  # the standard chain, without the Amazon provider
