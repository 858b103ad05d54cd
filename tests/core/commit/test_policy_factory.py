"""The policy factory: the chain a spec names, refused when it cannot commit anything."""

from __future__ import annotations

import pytest

from airflow_provider_fscommit.core.commit.policy_factory import create_policies
from airflow_provider_fscommit.core.errors import ConfigError
from fscommit_dev.metastore.client import metastore_table_spec


def test_no_policy_or_no_metastore_connection_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"policy\.kind is empty"):
        create_policies(metastore_table_spec(tmp_path / "t", "x"))
    spec = metastore_table_spec(
        tmp_path / "t", "x", **{"sink.partition-commit.policy.kind": "metastore"}
    )
    with pytest.raises(ConfigError, match="needs a metastore connection"):
        create_policies(spec)
