"""``AwsStorageHook``: S3 settings from an Airflow AWS connection."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.errors import MissingExtraError
from airflow_provider_fscommit.core.storage.object_store import current_settings
from airflow_provider_fscommit.hooks.aws import AwsStorageHook, aws_storage, s3_settings
from tests.support.extras import without_extra


def test_a_connection_gives_endpoint_region_and_keys(aws_tables_secret):
    settings = AwsStorageHook("aws_tables").get_s3_settings()
    assert settings.endpoint_url == "http://127.0.0.1:9" and settings.region == "eu-west-3"
    assert settings.credentials.access_key == "AKIATABLES"
    assert settings.credentials.secret_key == aws_tables_secret
    assert aws_tables_secret not in repr(settings)  # secrets never print
    # the standard chain, without the Amazon provider
    assert AwsStorageHook(None).get_s3_settings() is None
    assert s3_settings("aws_tables") == settings and s3_settings(None) is None  # the shorthand


def test_the_connection_is_in_effect_for_the_core_inside_storage_only(aws_tables_secret):
    with AwsStorageHook("aws_tables").storage() as settings:
        assert current_settings() == settings and settings.region == "eu-west-3"
    assert current_settings() != settings  # the environment's again
    with aws_storage("aws_tables") as shorthand:
        assert current_settings() == shorthand == settings


def test_without_the_s3_extra_a_connection_names_the_extra(aws_tables_secret, monkeypatch):
    """The Amazon provider is the ``s3`` extra's: the standard chain needs none of it, a
    named connection says to install it."""
    without_extra(monkeypatch, "s3")
    assert AwsStorageHook(None).get_s3_settings() is None
    with pytest.raises(MissingExtraError) as refused:
        AwsStorageHook("aws_tables").get_s3_settings()
    assert str(refused.value).endswith("pip install 'airflow-provider-fscommit[s3]'")
    assert aws_tables_secret not in str(refused.value)
