"""A table spec holds no credential: the property names that carry one, in any case, are
recognised and refused with where the value belongs instead."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.config.secret_keys import holds_secret
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.errors import ConfigError

# pyiceberg's catalog and FileIO properties.
SECRETS = [
    "credential",
    "token",
    "s3.secret-access-key",
    "S3.Secret-Access-Key",
    "s3.access-key-id",
    "adls.account-key",
    "gcs.oauth2.token",
]
PLAIN = ["type", "uri", "warehouse", "s3.endpoint", "s3.region", "adls.account-name"]


@pytest.mark.parametrize("name", SECRETS)
def test_the_properties_that_carry_a_credential_hold_a_secret(name):
    assert holds_secret(name)


@pytest.mark.parametrize("name", PLAIN)
def test_the_properties_that_say_where_a_catalog_is_hold_none(name):
    assert not holds_secret(name)


def test_a_spec_with_a_credential_is_refused_naming_it_and_where_it_belongs():
    options = {
        "staging_path": "/data/staging",
        "checkpoint_path": "/data/ckpt",
        "partition_keys": "dt",
        "iceberg.catalog.type": "rest",
        "iceberg.catalog.S3.Secret-Access-Key": "hunter2",
    }
    with pytest.raises(ConfigError) as refused:
        TableSpec.from_options(options)
    message = str(refused.value)
    assert message.startswith("iceberg.catalog.S3.Secret-Access-Key is a credential")
    assert "Airflow connection" in message and "PYICEBERG_CATALOG__" in message
    assert "hunter2" not in message
